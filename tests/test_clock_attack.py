"""Clocks, attacked again (design §3.3, §7.1): a date after tomorrow is a clock error wherever
a date is read. The tag's date was handled; a transcript's time stamp and a session file named
by a day were not: a session stamped 2226-12-07 (a device's clock 200 years ahead) was shown
in the block as "(Claude Code, 2226-12-07)", the most recent session of all to an agent.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

from test_episode_lines import claude_lines, lines_of, talos_line

from talos.sources.sessions import _day_of


def test_a_transcript_stamped_200_years_ahead_shows_no_day(make_home: Callable[..., Path]) -> None:
    home = make_home(
        sessions={
            "claude-1.jsonl": claude_lines("why does the nightly backup fail", "2226-12-07T10:00Z"),
            "2226-12-07.jsonl": talos_line("rerun the nightly backup by hand"),
            "2026-11-30.jsonl": talos_line("move the nightly backup to 3am"),
        }
    )
    assert sorted(lines_of(home, "nightly backup")) == [
        "- [episode] (Claude Code) why does the nightly backup fail",
        "- [episode] (talos) rerun the nightly backup by hand",
        "- [episode] (talos, 2026-11-30) move the nightly backup to 3am",
    ]


def test_tomorrow_is_a_time_zone_not_a_clock_error() -> None:
    """A device a time zone ahead stamps tomorrow (as a tag's date may be): kept."""
    tomorrow = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
    assert _day_of(tomorrow.isoformat()) == tomorrow.date().isoformat()
    assert _day_of((tomorrow + dt.timedelta(days=2)).isoformat()) == ""
    assert _day_of("9999-12-31T23:59:59Z") == ""
    assert _day_of(9_000_000_000) == ""  # 2255 in Unix seconds
