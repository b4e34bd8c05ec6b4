"""Clocks and bounds (design §2, §7.1, §9.5): a tag date in the future is a clock error that
never wins a key, the hook never runs past the limit its agent's handler allows, and an empty
home is refused on every route. Each test is a break of the fourth hostile pass, written from
the input that broke it."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import invoke

from talos import Memory
from talos.doctor import diagnose
from talos.errors import InputError

FUTURE = "2226-12-07"


def _future_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "memory.md").write_text(
        "- the deploy region is eu-west-1 "
        f"<!-- user {FUTURE} key=deploy.region id=r0000000001 -->\n"
    )
    return home


# -- a tag date in the future is a clock error ----------------------------------------------


def test_a_record_observed_at_a_clock_200_years_ahead_does_not_poison_its_key(
    tmp_path: Path,
) -> None:
    """The failing input: a line observed at 2226-12-07 (a device's clock 200 years ahead).
    ``get`` answered ``not-yet-valid`` (its date taken as its validity start), and every later
    value of the key went to "(history)" as older evidence; doctor said healthy."""
    home = _future_home(tmp_path)
    with Memory(home) as mem:
        got = mem.get("deploy.region")
        assert (got.reason, got.value) == ("ok", "the deploy region is eu-west-1")
        done = mem.remember("the deploy region is us-east-2", key="deploy.region")
        assert done.status == "active"
    with Memory(home) as mem:
        got = mem.get("deploy.region")
        assert (got.reason, got.value) == ("ok", "the deploy region is us-east-2")
    assert "eu-west-1" not in (home / "memory.md").read_text()


def test_doctor_names_a_record_observed_after_tomorrow(tmp_path: Path) -> None:
    home = _future_home(tmp_path)
    found = [f.to_json() for f in diagnose(home).findings if f.check == "tags"]
    clock = [f for f in found if f["status"] == "warn"]
    assert clock == [
        {
            "check": "tags",
            "status": "warn",
            "summary": "1 record observed after tomorrow: a clock error; the date is not used "
            "(no validity start, never newer than another value)",
            "details": [f"memory.md:1: observed {FUTURE}"],
            "hint": "fix the date in the tag (the day the evidence was seen), and the clock of "
            "the device that wrote it",
        }
    ]


def test_tomorrow_is_time_zones_not_a_clock_error(tmp_path: Path) -> None:
    """A device a time zone ahead writes tomorrow's date: it starts its record's validity as
    before (``remember --observed`` allows a day of slack too)."""
    from talos.view.trust import clock_error, observed_day

    today = dt.date.today()
    assert not clock_error(today + dt.timedelta(days=1))
    assert clock_error(today + dt.timedelta(days=2))
    assert observed_day(FUTURE) is None and observed_day("2026-01-02") == dt.date(2026, 1, 2)


def test_sync_never_settles_a_key_for_a_record_from_the_future() -> None:
    """Sibling: after a merge, a contested key is settled by authority, then the later
    observed day: the day 200 years ahead won it over today's value on every device."""
    from talos.model import Node
    from talos.sync.git import _standing

    future = Node("fact", "x", frozenset(), src="user", born=FUTURE, fields={"key": "k"})
    today = Node("fact", "y", frozenset(), src="user", born="2026-12-07", fields={"key": "k"})
    assert _standing(today) > _standing(future)


# -- the hook never outlives its handler ------------------------------------------------------


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
@pytest.mark.parametrize("timeout", ["30", "1e9", "600", "-5", "nan", "inf", "9.5"])
def test_the_hooks_timeout_stays_inside_the_handler_limit_hook_install_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str, timeout: str
) -> None:
    """The failing input: ``[hooks] timeout = 30`` made the hook run 30 s, while the handler
    ``hook install`` wrote stops it at 10 s (its context lost, the turn held). Whatever
    talos.toml says — or a talos.toml synced from another device — the hook's deadline ends
    before the handler's limit."""
    from talos.hooks.install import plan
    from talos.hooks.state import hook_state

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    change = next(c for c in plan("install", agent).changes if c.path.suffix == ".json")
    handlers = [
        h
        for groups in json.loads(change.after or "{}")["hooks"].values()
        for g in groups
        for h in g["hooks"]
    ]
    limit = min(h["timeout"] / (1000 if agent == "gemini" else 1) for h in handlers)
    home = tmp_path / "home"
    home.mkdir()
    (home / "talos.toml").write_text(f"[hooks]\ntimeout = {timeout}\n")
    used = hook_state(str(home)).settings["timeout"]
    assert 0 < used <= limit - 1.0


def test_doctor_says_which_timeout_the_hook_uses(tmp_path: Path) -> None:
    from talos.config import unknown_keys

    home = tmp_path
    (home / "talos.toml").write_text("[hooks]\ntimeout = 30\n")
    assert unknown_keys(home, {"hooks": {"timeout": 30}}) == [
        f"{home / 'talos.toml'}:2: hooks.timeout = 30 is above 9; the hook uses 9"
    ]


# -- an empty home is refused on every route --------------------------------------------------

EMPTY = "is an empty path (an unset variable?); name the home folder, or leave it out"


@pytest.mark.parametrize("home", ["", "   "])
def test_an_empty_home_on_the_command_line_is_refused_not_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: str
) -> None:
    """The failing input: ``talos remember --home "$NOTES" …`` with NOTES unset wrote
    memory.md and .talos/ into the working folder, while the hook looked in the default home.
    Siblings: spaces only, ``TALOS_HOME=""``."""
    monkeypatch.chdir(tmp_path)
    result = invoke("remember", "--json", "--home", home, "the deploy region is eu-west-1")
    assert result.exit_code != 0
    assert EMPTY in json.loads(result.output)["error"]
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("env", ["", " "])
def test_an_empty_talos_home_is_refused_not_the_default_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("TALOS_HOME", env)
    result = invoke("remember", "--json", "the deploy region is eu-west-1")
    assert result.exit_code != 0
    assert EMPTY in json.loads(result.output)["error"]
    assert os.listdir(tmp_path) == []


def test_an_empty_home_in_the_python_api_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"^the home is an empty path"):
        Memory(" ")
    with pytest.raises(InputError, match=r"^the home is an empty path"):
        Memory("")
    monkeypatch.setenv("TALOS_HOME", "")
    with pytest.raises(InputError, match=r"^TALOS_HOME is an empty path"):
        Memory()
    assert os.listdir(tmp_path) == []


def test_an_empty_home_in_the_hook_gives_no_context_and_logs_why(tmp_path: Path) -> None:
    """The hook with ``--home ""`` recalled from the default home while the CLI wrote into
    the working folder: now it gives no context, exit 0, and logs the one message."""
    data = tmp_path / "data"
    home = data / "talos"
    home.mkdir(parents=True)
    (home / "memory.md").write_text("- the deploy region is eu-west-1\n")
    env = {**os.environ, "XDG_DATA_HOME": str(data), "HOME": str(tmp_path)}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")  # the log of a hook without a home
    env.pop("TALOS_HOME", None)
    event = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "deploy region"})
    done = subprocess.run(
        [sys.executable, "-m", "talos", "hook", "claude-code", "--home", ""],
        input=event.encode(),
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert not (tmp_path / "memory.md").exists()
    log = (tmp_path / "state" / "talos" / "hook.log").read_text()
    assert "the home is an empty path (an unset variable?)" in log
