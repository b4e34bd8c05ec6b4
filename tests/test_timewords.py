"""Time words of an ask and the window of days they name (design §7.3, talos/view/timewords.py).

Every window is relative to a Monday, 2026-12-07, the business date ``--at`` would give.
"""

from __future__ import annotations

import datetime as dt

import pytest

from talos.view.timewords import find_window

TODAY = dt.date(2026, 12, 7)  # a Monday


@pytest.mark.parametrize(
    ("ask", "first", "last", "rest"),
    [
        ("what did I do yesterday", "2026-12-06", "2026-12-06", "what did I do"),
        ("what did I do the day before yesterday", "2026-12-05", "2026-12-05", "what did I do"),
        ("fix from two days ago", "2026-12-05", "2026-12-05", "fix from"),
        ("the stripe webhook timeouts last week", "2026-11-30", "2026-12-06",
         "the stripe webhook timeouts"),
        ("what happened last Friday", "2026-12-04", "2026-12-04", "what happened"),
        ("the lint work in November", "2026-11-01", "2026-11-30", "the lint work"),
        ("what did we do on 2026-11-10", "2026-11-10", "2026-11-10", "what did we do on"),
        ("what did I do on Nov 10", "2026-11-10", "2026-11-10", "what did I do"),
        ("everything since Monday", "2026-11-30", "2026-12-07", "everything"),
        ("the cron jobs in October 2025", "2025-10-01", "2025-10-31", "the cron jobs"),
        ("dashboards in 2025", "2025-01-01", "2025-12-31", "dashboards"),
        ("what did I do in the last 3 days", "2026-12-05", "2026-12-07", "what did I do"),
        ("the postgres upgrade two weeks ago", "2026-11-23", "2026-11-29", "the postgres upgrade"),
        ("what did I do last weekend", "2026-12-05", "2026-12-06", "what did I do"),
        ("this week", "2026-12-07", "2026-12-07", ""),
        ("昨天做了什么", "2026-12-06", "2026-12-06", "做了什么"),
        ("前天的会议", "2026-12-05", "2026-12-05", "的会议"),
        ("上周那个 bug 怎么修的", "2026-11-30", "2026-12-06", "那个 bug 怎么修的"),
        ("上个月的部署", "2026-11-01", "2026-11-30", "的部署"),
        ("11月的发布", "2026-11-01", "2026-11-30", "的发布"),
        ("十一月十日做了什么", "2026-11-10", "2026-11-10", "做了什么"),
        ("上周五的发布", "2026-12-04", "2026-12-04", "的发布"),
        ("三天前做了什么", "2026-12-04", "2026-12-04", "做了什么"),
        ("最近三天做了什么", "2026-12-05", "2026-12-07", "做了什么"),
        ("自从周一以来做了什么", "2026-11-30", "2026-12-07", "做了什么"),
        ("去年的 monitoring", "2025-01-01", "2025-12-31", "的 monitoring"),
        ("2026年11月10日的 lint", "2026-11-10", "2026-11-10", "的 lint"),
        ("上上周的 postgres", "2026-11-23", "2026-11-29", "的 postgres"),
    ],
)  # fmt: skip
def test_each_expression_names_its_days(ask: str, first: str, last: str, rest: str) -> None:
    w = find_window(ask, TODAY)
    assert w is not None
    assert (w.start.isoformat(), (w.end - dt.timedelta(days=1)).isoformat()) == (first, last)
    assert w.rest == rest  # the time words are no query terms


@pytest.mark.parametrize(
    "ask",
    [
        "I may march on the parade ground",  # may, march: verbs without a day or a year
        "the sun sat down on the marketing plan",
        "decide which port 8080 uses",
        "deploy the billing service",
        "一周一次的部署",  # once a week: no day named
        "the new intern starts on monday",  # a bare weekday may be the next one
        "周五开会",  # (a meeting on Friday): the same
    ],
)
def test_words_that_only_look_like_dates_name_no_days(ask: str) -> None:
    assert find_window(ask, TODAY) is None


def test_a_future_day_is_no_window_and_a_window_never_reaches_past_today() -> None:
    assert find_window("the launch on 2027-01-05", TODAY) is None
    w = find_window("what did I do this month", TODAY)
    assert w is not None and (w.start, w.end) == (dt.date(2026, 12, 1), dt.date(2026, 12, 8))
    # a month named without a year that has not come yet this year is last year's
    w = find_window("the audit in December", dt.date(2026, 3, 2))
    assert w is not None and w.start == dt.date(2025, 12, 1)
