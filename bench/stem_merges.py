#!/usr/bin/env python3
"""Words Snowball merges with a different word: candidates for ``talos/data/stem_exceptions.txt``.

Snowball (Porter2) strips derivational suffixes, so a derived word can land on the stem of a
word of another sense: ``production`` and ``productivity`` on ``product``, ``settings`` on
``set``, ``several`` on ``sever``. This lists the candidates: the Snowball groups of
wordfreq's small English list, down to a frequency of ``10^(-BUCKETS/100)``, whose stem is
spelled as a word of its own (``product``; or with a final ``e``/``y``: ``severe``) and that
hold a member that is not that word with an inflection (``-s``, ``-ed``, ``-ing``, ``-ly`` …).
Each candidate is judged by hand; the split ones are the exceptions file, whose header says
how. Marks the groups the shipped file splits with ``*``.

    pip install wordfreq==3.1.1      # the list (without it: the 1,111 words talos ships)
    python3 bench/stem_merges.py                  # 293 groups at 500 buckets (1e-5)
    python3 bench/stem_merges.py --buckets 600    # rarer words too
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

__all__ = ["candidates", "main", "word_list"]

#: An inflection: what may follow a word in its own group without making it a candidate.
_INFLECTION = re.compile(r"^(s|es|ed|d|ing|ings|ly|'s)?$")


def word_list(buckets: int) -> dict[str, int]:
    """``{word: bucket}`` of wordfreq's small English list (alphabetic ASCII words of three
    letters or more) down to bucket ``buckets``; talos's shipped 401 buckets when wordfreq is
    not installed."""
    try:
        import wordfreq  # type: ignore[import-not-found]

        listed: list[list[str]] = wordfreq.get_frequency_list("en", "small")[:buckets]
    except ImportError:
        from talos import data

        listed = [line.split() for line in data.lines("wordfreq_en.txt")][:buckets]
    rank: dict[str, int] = {}
    for i, bucket in enumerate(listed):
        for w in bucket:
            if w.isascii() and w.isalpha() and len(w) > 2:
                rank.setdefault(w, i)
    return rank


def candidates(rank: dict[str, int]) -> list[tuple[str, str, list[str]]]:
    """``(stem, base word, derived members)`` per candidate group (the module docstring),
    most frequent base first; plain Snowball, not talos's exceptions."""
    import Stemmer  # type: ignore[import-not-found]

    snowball = Stemmer.Stemmer("english").stemWord
    groups: dict[str, list[str]] = {}
    for w in rank:
        groups.setdefault(snowball(w), []).append(w)
    out: list[tuple[int, str, str, list[str]]] = []
    for stem, words in groups.items():
        if len(words) < 2:
            continue
        words.sort(key=lambda w: rank[w])
        bases = [w for w in words if w in (stem, stem + "e", stem + "y")]
        if not bases:
            continue
        base = bases[0]
        derived = [
            w
            for w in words
            if not (w.startswith(base) and _INFLECTION.match(w[len(base) :]))
            and not (w.startswith(stem) and _INFLECTION.match(w[len(stem) :]))
        ]
        if derived:
            out.append((rank[base], stem, base, derived))
    return [(s, b, d) for _r, s, b, d in sorted(out)]


def main(argv: Sequence[str] | None = None) -> int:
    """Print the candidates, one group a line: stem, base word, derived members."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--buckets", type=int, default=500, help="wordfreq buckets (500: 1e-5)")
    args = ap.parse_args(argv)
    from talos.ranking.analyzer import stem_exceptions

    split = stem_exceptions()
    found = candidates(word_list(args.buckets))
    for stem, base, derived in found:
        mark = "*" if any(w in split or w[:-1] in split for w in derived) else " "
        print(f"{mark} {stem:14} {base:14} {' '.join(derived)}")
    print(f"{len(found)} groups, {sum(1 for _s, _b, d in found if any(w in split for w in d))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
