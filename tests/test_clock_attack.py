"""Clocks, attacked again (design §3.3, §7.1): a date after tomorrow is a clock error wherever
a date is read. The tag's date was handled; a transcript's time stamp and a session file named
by a day were not: a session stamped 2226-12-07 (a device's clock 200 years ahead) was shown
in the block as "(Claude Code, 2226-12-07)", the most recent session of all to an agent.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import invoke
from test_episode_lines import claude_lines, lines_of, talos_line

from talos import Memory
from talos.errors import InputError
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


# -- a home of invisible characters is an empty path ------------------------------------------

EMPTY = "is an empty path (an unset variable?); name the home folder, or leave it out"


@pytest.mark.parametrize("home", ["\u200b", "\ufeff", "\u2060", " \u200b\n"])
def test_a_home_of_invisible_characters_is_refused_on_every_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: str
) -> None:
    """``--home`` of a zero-width space, a byte-order mark (a TALOS_HOME read from a file
    saved with one) or a word joiner made a home folder in the working folder whose name shows
    as nothing; the spaces-only home was refused. Format characters are as empty as spaces."""
    monkeypatch.chdir(tmp_path)
    result = invoke("remember", "--json", "--home", home, "the deploy region is eu-west-1")
    assert result.exit_code != 0
    assert EMPTY in json.loads(result.output)["error"]
    with pytest.raises(InputError, match=r"^the home is an empty path"):
        Memory(home)
    monkeypatch.setenv("TALOS_HOME", home)
    with pytest.raises(InputError, match=r"^TALOS_HOME is an empty path"):
        Memory()
    assert os.listdir(tmp_path) == []


def test_a_home_with_a_visible_name_beside_a_format_character_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with Memory(tmp_path / "notes\u200b") as mem:
        mem.remember("the deploy region is eu-west-1")
    assert os.listdir(tmp_path) == ["notes\u200b"]
