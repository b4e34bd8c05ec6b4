"""Small data talos ships, derived from other projects (where from, licences and attribution:
``LICENSES.md`` in this folder). Read with the standard library from this package's own
folder, so that no other package's files are read by path and none is installed for its data:

=======================  ======================================================  ==========
file                     what                                                    read by
=======================  ======================================================  ==========
``stopwords_en.txt``     NLTK's English stop list, 179 words (as bm25s ships     analyzer
                         it: ``STOPWORDS_EN_PLUS``)
``stopwords_zh.txt``     NLTK's Chinese stop list, 841 words (bm25s's            analyzer
                         ``STOPWORDS_CHINESE``)
``wordfreq_en.txt``      wordfreq 3.1's small English list, words of frequency   analyzer
                         1e-4 and more: line ``i`` holds the words of frequency
                         ``10^(-i/100)``, space-separated (401 lines)
``detect_secrets.json``  detect-secrets 1.5's regexes of 18 vendor formats        secrets
``confusables.txt``      Unicode's confusables (UTS #39) of ASCII letters and    (safety)
                         digits: ``HEX ASCII`` a line, 1,315 lines
``stem_exceptions.txt``  talos's own: words Snowball stems onto a different      analyzer
                         word's stem, and the term each keeps (``TERM: WORDS``)
=======================  ======================================================  ==========

Each file is pinned against its source by a test that runs where the source package is
installed (``tests/test_analyzer.py``, ``tests/test_secrets.py``).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["confusables", "lines", "text"]

_HERE = Path(__file__).parent


def text(name: str) -> str:
    """The whole of the data file ``name`` (UTF-8). Raises FileNotFoundError for a name that
    is not shipped."""
    return (_HERE / name).read_text(encoding="utf-8")


def lines(name: str) -> list[str]:
    """The lines of the data file ``name``, without their line ends, in file order (an empty
    line is an empty string). Raises FileNotFoundError for a name that is not shipped."""
    return text(name).splitlines()


def confusables() -> dict[str, str]:
    """``{character: ASCII letter or digit}``: each non-ASCII character Unicode's confusables
    data lists as a look-alike of an ASCII letter or digit (its first such one), in the data's
    order: Cyrillic ``о`` → ``o``, Greek ``ν`` → ``v``. 1,315 characters."""
    out: dict[str, str] = {}
    for line in lines("confusables.txt"):
        code, glyph = line.split(" ")
        out[chr(int(code, 16))] = glyph
    return out
