"""Time words in an ask: the window of days they name, and the ask without them (design §7.3).

"what did I do about the webhook **last week**", "**上周**那个 bug 怎么修的", "the lint work **in
November**": :func:`find_window` gives the days the expression names, relative to a business
date (``today``: the recall's ``--at``, else today), and the ask with the expression taken out,
so the time words do not count as query terms.

Written here rather than taken from a library: ``dateparser`` 1.5 (the well-kept choice for
both languages) was measured on twelve labelled asks (``bench/time_asks.py`` holds the set):
its import costs 0.50 s (``python -X importtime``; the hook's whole deadline is 2.5 s and a
resident hook answers in tens of milliseconds), a search 67 ms per ask, and it returns points,
not windows ("last week" → the day seven days back, "in November" → November 7), finds dates in
plain words ("what did **we** do" → Wednesday) and reads ``11月`` as January 7. A window is
what a recall needs, so the rules below build one; standard library only (``re``,
``datetime``), about a millisecond per ask.

Windows are whole days ``[start, end)`` (``end`` exclusive). A week starts on Monday (ISO
8601). "last Friday", "Friday", "周五": the latest such day before ``today``; "上周五": Friday of
last week. A month or month-and-day named without a year: the latest one not after ``today``.
"since X": from the start of X to ``today`` included. "N days ago": that day; "the last N
days", "最近N天": the N days up to ``today``. When an ask holds several expressions the first
one decides; the others are still taken out of the ask.

English needs a word boundary on both sides; "may" and "march" count as months only after
"in", "since", "during", "on", "of", "from" or beside a day or a year (``I may``, ``march on``
are not dates); a bare year counts only after "in", "since", "during", "of".
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass

__all__ = ["Window", "find_window"]


@dataclass(frozen=True, slots=True)
class Window:
    """The days an ask's time words name: ``start`` (included) to ``end`` (excluded),
    ``said`` (the expression as written, for the block's note) and ``rest`` (the ask without
    any time expression, blanks folded)."""

    start: dt.date
    end: dt.date
    said: str
    rest: str

    def holds(self, day: str | dt.date) -> bool:
        """Whether ``day`` (a date or ``YYYY-MM-DD``; "" never) is in the window."""
        if isinstance(day, str):
            if not day:
                return False
            try:
                day = dt.date.fromisoformat(day[:10])
            except ValueError:
                return False
        return self.start <= day < self.end

    def overlaps(self, first: str, last: str) -> bool:
        """Whether the days ``first`` to ``last`` (``YYYY-MM-DD``; ``last`` "" for
        ``first`` alone) meet the window."""
        try:
            a = dt.date.fromisoformat(first[:10])
            b = dt.date.fromisoformat(last[:10]) if last else a
        except ValueError:
            return False
        return a < self.end and b >= self.start

    def label(self) -> str:
        """``2026-11-30 – 2026-12-06`` (a single day: ``2026-11-10``)."""
        last = self.end - dt.timedelta(days=1)
        if last == self.start:
            return self.start.isoformat()
        return f"{self.start.isoformat()} – {last.isoformat()}"


_DAY = dt.timedelta(days=1)
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_MONTHS = [
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
]  # fmt: skip
_MON_SHORT = {m[:3]: i + 1 for i, m in enumerate(_MONTHS)} | {"sept": 9}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "a few": 3, "several": 3,
}  # fmt: skip
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}  # fmt: skip
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}


def _zh_number(text: str) -> int | None:
    """``11``, ``十一``, ``二十三``, ``两`` as a number; ``None`` otherwise."""
    if text.isdigit():
        return int(text)
    if not text or any(c not in _ZH_DIGITS and c != "十" for c in text):
        return None
    if "十" not in text:
        return _ZH_DIGITS[text] if len(text) == 1 else None
    tens, _, ones = text.partition("十")
    t = _ZH_DIGITS.get(tens, -1) if tens else 1
    o = _ZH_DIGITS.get(ones, -1) if ones else 0
    return None if t < 0 or o < 0 else t * 10 + o


def _monday(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def _month(year: int, month: int) -> tuple[dt.date, dt.date]:
    start = dt.date(year, month, 1)
    end = dt.date(year + 1, 1, 1) if month == 12 else dt.date(year, month + 1, 1)
    return start, end


def _months_back(today: dt.date, n: int) -> tuple[dt.date, dt.date]:
    y, m = today.year, today.month - n
    while m < 1:
        y, m = y - 1, m + 12
    return _month(y, m)


def _latest_month(today: dt.date, month: int, year: int | None) -> tuple[dt.date, dt.date]:
    """Month ``month`` of ``year``, else the latest one that has begun by ``today``."""
    if year is None:
        year = today.year if month <= today.month else today.year - 1
    return _month(year, month)


def _latest_day(today: dt.date, month: int, day: int, year: int | None) -> dt.date | None:
    """That day of ``year``, else the latest one not after ``today``; ``None`` if no date."""
    try:
        if year is not None:
            return dt.date(year, month, day)
        got = dt.date(today.year, month, day)
        return got if got <= today else dt.date(today.year - 1, month, day)
    except ValueError:
        return None


def _weekday_before(today: dt.date, weekday: int) -> dt.date:
    """The latest ``weekday`` (0 = Monday) strictly before ``today``."""
    back = (today.weekday() - weekday) % 7 or 7
    return today - dt.timedelta(days=back)


Span = tuple[dt.date, dt.date]

_NUM = r"(?:\d{1,3}|a couple of|a few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"  # noqa: E501
_WD = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_MON = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*"
_LEAD = r"(?:in|since|during|on|of|from)"

#: English expressions, most specific first; each compiled with word boundaries.
_EN: list[tuple[str, str]] = [
    ("iso", r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})"),
    ("day_before_yesterday", r"(?:the\s+)?day\s+before\s+yesterday"),
    ("ago", rf"({_NUM})\s+(day|week|month|year)s?\s+ago"),
    ("last_n", rf"(?:in\s+)?(?:the\s+)?(?:last|past)\s+({_NUM})\s+(day|week|month)s?"),
    ("rel_unit", r"(this|last|past|previous)\s+(week(?:end)?|month|year)"),
    ("rel_wd", rf"(last|this|past|previous)\s+({_WD})"),
    ("mon_day", rf"(?:on\s+)?({_MON})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?"),
    (
        "day_mon",
        rf"(?:on\s+)?(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MON})(?:,?\s+(\d{{4}}))?",
    ),
    ("mon_year", rf"(?:{_LEAD}\s+)?({_MON})\s+(\d{{4}})"),
    ("lead_mon", rf"{_LEAD}\s+({_MON})"),
    ("lead_year", r"(?:in|since|during|of)\s+(\d{4})"),
    (
        "word",
        r"today|tonight|this\s+morning|this\s+afternoon|earlier\s+today|yesterday|last\s+night",
    ),
    ("on_wd", rf"(?:on\s+)?({_WD})"),
    ("bare_mon", rf"({_MON})"),
]
_EN_AROUND = (r"(?<![\w-])(?:since\s+)?", r"(?![\w-])")
_SINCE = re.compile(r"^since\s+", re.I)

_ZH_NUM = r"[0-9零〇一二两三四五六七八九十]{1,3}"
#: Chinese expressions (no word boundaries: Chinese has no spaces), most specific first.
_ZH: list[tuple[str, str]] = [
    ("zh_ymd", rf"(\d{{4}})年({_ZH_NUM})月({_ZH_NUM})[日号]"),
    ("zh_md", rf"({_ZH_NUM})月({_ZH_NUM})[日号]"),
    ("zh_ym", rf"(\d{{4}})年({_ZH_NUM})月(?:份)?"),
    ("zh_ago", rf"({_ZH_NUM})(天|个?星期|周|个月|年)(?:以)?前"),
    ("zh_last_n", rf"(?:最近|过去|近)的?({_ZH_NUM})(天|个?星期|周|个月)"),
    # not "一周一次" (once a week): no number or 每 before, no 次 / 遍 after
    (
        "zh_wd",
        r"(?<![0-9零〇一二两三四五六七八九十每])(上上|上|这|本)?(?:个)?(?:周|星期|礼拜)"
        r"([一二三四五六日天末])(?![次遍个])",
    ),
    ("zh_unit", r"(上上|上|这|本|今|去|前)(?:一)?(?:个)?(周|星期|礼拜|月|年)"),
    ("zh_word", r"大前天|前天|昨天|昨日|今天|今日|昨晚|今早"),
    ("zh_m", rf"({_ZH_NUM})月(?:份)?"),
]
_ZH_AROUND = (r"(?:自从|自|从)?", r"(?:以来|至今|以后|之后|起)?")


@functools.cache
def _tables() -> tuple[list[tuple[str, re.Pattern[str]]], list[tuple[str, re.Pattern[str]]]]:
    """The English and Chinese patterns, compiled on first use (a few milliseconds to tens on
    a loaded machine: an import on the hook's path should not pay them)."""
    en = [(n, re.compile(f"{_EN_AROUND[0]}(?:{p}){_EN_AROUND[1]}", re.I)) for n, p in _EN]
    zh = [(n, re.compile(f"{_ZH_AROUND[0]}(?:{p}){_ZH_AROUND[1]}")) for n, p in _ZH]
    return en, zh


_ZH_SINCE = re.compile(r"^(?:自从|自|从)|(?:以来|至今|以后|之后|起)$")


def _en_span(name: str, m: re.Match[str], today: dt.date) -> Span | None:
    """The days of one English expression (``None``: not a date after all)."""
    g = [x.lower() if isinstance(x, str) else x for x in m.groups()]
    text = m.group(0).lower()
    if name == "iso":
        try:
            d = dt.date(int(g[0]), int(g[1]), int(g[2]))
        except ValueError:
            return None
        return d, d + _DAY
    if name == "day_before_yesterday":
        return today - 2 * _DAY, today - _DAY
    if name in ("ago", "last_n"):
        n = int(g[0]) if g[0].isdigit() else _NUMBERS.get(g[0], 0)
        if not 0 < n <= 3660:
            return None
        unit = g[1]
        if name == "ago":
            if unit == "day":
                d = today - n * _DAY
                return d, d + _DAY
            if unit == "week":
                mon = _monday(today) - 7 * n * _DAY
                return mon, mon + 7 * _DAY
            if unit == "month":
                return _months_back(today, n)
            return dt.date(today.year - n, 1, 1), dt.date(today.year - n + 1, 1, 1)
        days = {"day": n, "week": 7 * n, "month": 30 * n}[unit]
        return today - (days - 1) * _DAY, today + _DAY
    if name == "rel_unit":
        which, unit = g
        last = which != "this"
        if unit == "week":
            mon = _monday(today) - (7 * _DAY if last else dt.timedelta(0))
            return mon, mon + 7 * _DAY
        if unit == "weekend":
            sat = _monday(today) - (7 * _DAY if last else dt.timedelta(0)) + 5 * _DAY
            if not last and sat > today:
                sat -= 7 * _DAY
            return sat, sat + 2 * _DAY
        if unit == "month":
            return _months_back(today, 1 if last else 0)
        y = today.year - (1 if last else 0)
        return dt.date(y, 1, 1), dt.date(y + 1, 1, 1)
    if name == "on_wd" and not _SINCE.match(text):
        return None  # "the intern starts on Monday": maybe the next one; "since Monday" only
    if name in ("rel_wd", "on_wd"):
        wd = _weekday(g[-1])
        if wd is None:
            return None
        if name == "rel_wd" and g[0] == "this":
            d = _monday(today) + wd * _DAY
            return (d, d + _DAY) if d <= today else None
        d = _weekday_before(today, wd)
        return d, d + _DAY
    if name in ("mon_day", "day_mon"):
        mon_s, day_s = (g[0], g[1]) if name == "mon_day" else (g[1], g[0])
        month = _month_no(mon_s)
        year = int(g[2]) if g[2] else None
        if month is None:
            return None
        got = _latest_day(today, month, int(day_s), year)
        return None if got is None else (got, got + _DAY)
    if name == "mon_year":
        month = _month_no(g[0])
        return None if month is None else _month(int(g[1]), month)
    if name in ("lead_mon", "bare_mon"):
        month = _month_no(g[0])
        if month is None or (
            name == "bare_mon"
            and g[0] in ("may", "mar", "march", "jan", "jun", "sat", "sun", "dec")
        ):
            return None  # fmt: skip
        if name == "bare_mon" and len(g[0]) < 4 and g[0] not in ("sept",):
            return None  # "nov", "oct" alone: too short to be sure
        return _latest_month(today, month, None)
    if name == "lead_year":
        y = int(g[0])
        return (dt.date(y, 1, 1), dt.date(y + 1, 1, 1)) if 1970 <= y <= 9999 else None
    if name == "word":
        if "yesterday" in text or "last night" in text:
            return today - _DAY, today
        return today, today + _DAY
    return None


def _weekday(word: str) -> int | None:
    w = word.lower()
    return _WEEKDAYS.index(w) if w in _WEEKDAYS else None


def _month_no(word: str) -> int | None:
    w = word.lower().rstrip(".")
    for i, full in enumerate(_MONTHS):
        if w == full:
            return i + 1
    return _MON_SHORT.get(w) if len(w) <= 4 else None


def _zh_span(name: str, m: re.Match[str], today: dt.date) -> Span | None:
    """The days of one Chinese expression (``None``: not a date after all)."""
    g = m.groups()
    if name in ("zh_ymd", "zh_md"):
        year = int(g[0]) if name == "zh_ymd" else None
        mo, da = (g[1], g[2]) if name == "zh_ymd" else (g[0], g[1])
        month, number = _zh_number(mo), _zh_number(da)
        if month is None or number is None or not 1 <= month <= 12:
            return None
        got = _latest_day(today, month, number, year)
        return None if got is None else (got, got + _DAY)
    if name in ("zh_ym", "zh_m"):
        year = int(g[0]) if name == "zh_ym" else None
        month = _zh_number(g[-1])
        if month is None or not 1 <= month <= 12:
            return None
        return _month(year, month) if year is not None else _latest_month(today, month, None)
    if name in ("zh_ago", "zh_last_n"):
        n = _zh_number(g[0])
        if n is None or not 0 < n <= 3660:
            return None
        unit = g[1].lstrip("个")
        if name == "zh_ago":
            if unit == "天":
                d = today - n * _DAY
                return d, d + _DAY
            if unit in ("星期", "周"):
                mon = _monday(today) - 7 * n * _DAY
                return mon, mon + 7 * _DAY
            if unit == "月":
                return _months_back(today, n)
            return dt.date(today.year - n, 1, 1), dt.date(today.year - n + 1, 1, 1)
        days = {"天": n, "星期": 7 * n, "周": 7 * n, "月": 30 * n}[unit]
        return today - (days - 1) * _DAY, today + _DAY
    if name == "zh_wd":
        which, day = g
        if not which and not _ZH_SINCE.search(m.group(0)):
            return None  # "周五开会": maybe the next Friday; "上周五", "自从周五" say which
        wd = _ZH_WEEKDAY[str(day)]
        if which in ("上", "上上"):
            d = _monday(today) - (7 if which == "上" else 14) * _DAY + wd * _DAY
        elif which in ("这", "本"):
            d = _monday(today) + wd * _DAY
            if d > today:
                return None
        else:
            d = _weekday_before(today, wd)
        if day == "末":
            return d, d + 2 * _DAY
        return d, d + _DAY
    if name == "zh_unit":
        which, unit = g
        back = {"上上": 2, "上": 1, "这": 0, "本": 0, "今": 0, "去": 1, "前": 2}[which]
        if unit in ("周", "星期", "礼拜"):
            if which in ("今", "去", "前"):
                return None
            mon = _monday(today) - 7 * back * _DAY
            return mon, mon + 7 * _DAY
        if unit == "月":
            if which in ("今", "去", "前"):
                return None
            return _months_back(today, back)
        if which in ("上上", "上"):
            return None  # 上年: rare; 去年 says it
        y = today.year - back
        return dt.date(y, 1, 1), dt.date(y + 1, 1, 1)
    if name == "zh_word":
        word = m.group(0)
        back = 3 if "大前天" in word else 2 if "前天" in word else 1 if "昨" in word else 0
        d = today - back * _DAY
        return d, d + _DAY
    return None


def find_window(ask: str, today: dt.date) -> Window | None:
    """The window of days the first time expression of ``ask`` names, relative to ``today``,
    and ``ask`` without its time expressions (module docstring); ``None`` when it holds none.

    Args:
        ask: the query as the person wrote it. today: the business date (``--at``).

    Returns:
        A :class:`Window`, or ``None``.
    """
    found: list[tuple[int, int, Span]] = []
    taken = [False] * len(ask)
    en, zh = _tables()
    for table, span_of in ((en, _en_span), (zh, _zh_span)):
        for name, rx in table:
            for m in rx.finditer(ask):
                a, b = m.span()
                if any(taken[a:b]):
                    continue
                span = span_of(name, m, today)
                if span is None:
                    continue
                if _since(m.group(0), table is zh):
                    span = (span[0], today + _DAY)
                if span[0] > today:
                    continue  # the future holds no session yet
                found.append((a, b, span))
                for i in range(a, b):
                    taken[i] = True
    if not found:
        return None
    found.sort()
    a, b, (start, end) = found[0]
    rest = ask
    for x, y, _span in sorted(found, reverse=True):
        rest = rest[:x] + " " + rest[y:]
    rest = re.sub(r"\s+", " ", rest).strip()
    return Window(start, min(end, today + _DAY) if start <= today else end, ask[a:b], rest)


def _since(text: str, zh: bool) -> bool:
    """Whether the expression reads "since …" (English) or "自…" / "…以来" (Chinese)."""
    return bool(_ZH_SINCE.search(text)) if zh else bool(_SINCE.match(text))
