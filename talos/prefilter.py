"""A cheap trigger prefilter shared by the safety rules and the secret detectors (SPEC §8).

Every pattern of :mod:`talos.safety` and :mod:`talos.secrets` is a :class:`Pat`: a regular
expression plus *triggers*, lower-case substrings one of which a text must contain for the
pattern to match at all. One pass over a text (:func:`triggers_in`) finds the triggers present;
patterns whose triggers are absent are never run (``tests/test_properties.py`` checks that no
match is ever skipped that way).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["Pat", "P", "fold", "triggers_in"]

#: The only non-ASCII characters Python's ``re.IGNORECASE`` matches to an ASCII letter, mapped
#: to it (``ı``/``İ`` → i, ``ſ`` → s; ``K`` lower-cases to k anyway), so that the folded text
#: contains a trigger whenever a case-insensitive pattern matches (``tests/test_properties.py``
#: checks prefiltered and unfiltered scans agree).
_FOLD = str.maketrans({"ı": "i", "İ": "i", "ſ": "s"})


def fold(text: str) -> str:
    """``text`` lower-cased for the trigger prefilter of :class:`Pat`."""
    return text.translate(_FOLD).lower()


class Pat:
    """A pattern and its ``triggers``: lower-case substrings, one of which the folded text
    must contain for the pattern to match at all. Patterns whose triggers are absent are not
    run; ``tests/test_properties.py`` checks that no match is ever skipped that way.

    The regex is compiled on first use: a recall whose skills and facts were scanned before
    (the verdicts are kept in the index) compiles none of them (SPEC §11, 25 ms a process).
    """

    __slots__ = ("_regex", "flags", "pattern", "triggers")

    def __init__(self, triggers: tuple[str, ...], pattern: str, flags: int = 0) -> None:
        self.triggers = triggers
        self.pattern = pattern
        self.flags = flags
        self._regex: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        """The compiled pattern."""
        if self._regex is None:
            self._regex = re.compile(self.pattern, self.flags)
        return self._regex

    def may_match(self, present: frozenset[str]) -> bool:
        """Whether the regex can match a text whose triggers (:func:`triggers_in`) are
        ``present``; when not, it is not run."""
        return not present.isdisjoint(self.triggers)


class _TriggerIndex:
    """All triggers in one trie-shaped regex, so one pass over a text finds which are present.

    The regex is a lookahead, so it reports, at every position, the longest trigger starting
    there; the shorter ones starting there are its prefixes (``_also``). Measured on the 3,000
    facts of ``make_home.py --sessions 30000``: the whole fact filter took 230 µs a line with
    every regex run, 47 µs with this prefilter (169 ``in`` checks alone cost 70 µs).
    """

    def __init__(self) -> None:
        self.words: set[str] = set()
        self._regex: re.Pattern[str] | None = None
        self._also: dict[str, frozenset[str]] = {}

    def add(self, triggers: tuple[str, ...]) -> None:
        self.words.update(triggers)
        self._regex = None

    def _build(self) -> re.Pattern[str]:
        trie: dict[str, Any] = {}
        for w in self.words:
            node = trie
            for ch in w:
                node = node.setdefault(ch, {})
            node[""] = {}

        def emit(node: dict[str, Any]) -> str:
            alts = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
            if not alts:
                return ""
            body = "(?:" + "|".join(alts) + ")"
            return body + "?" if "" in node else body

        self._also = {t: frozenset(u for u in self.words if t.startswith(u)) for t in self.words}
        return re.compile("(?=(" + emit(trie) + "))")

    def present(self, low: str) -> frozenset[str]:
        """The triggers occurring in ``low`` (a :func:`fold`-ed text)."""
        if self._regex is None:
            self._regex = self._build()
        found: set[str] = set()
        for t in set(self._regex.findall(low)):
            found |= self._also[t]
        return frozenset(found)


_TRIGGERS = _TriggerIndex()


def triggers_in(text: str) -> frozenset[str]:
    """Which pattern triggers occur in ``text`` (case-folded, see :func:`fold`)."""
    return _TRIGGERS.present(fold(text))


def P(triggers: str, pattern: str, flags: int = 0) -> Pat:
    """A :class:`Pat` from space-separated ``triggers`` and a regular expression."""
    pat = Pat(tuple(triggers.split()), pattern, flags)
    _TRIGGERS.add(pat.triggers)
    return pat
