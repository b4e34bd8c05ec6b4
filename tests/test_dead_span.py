"""``talos dead`` needs a span of time, not only ``min_seen`` recalls (design §6.4).

The failing input (a newcomer): in a new home, a fact talos wrote was seen by 8 recalls in the
first ten minutes — unrelated questions, as a first session asks — and ``talos dead`` proposed
it as "seen 8 times, never recalled". Eight recalls in ten minutes say nothing about whether a
fact is used. Now a fact is proposed only once it has been counted for at least
``dead_min_days`` days (talos.toml; default :data:`talos.home.DEAD_MIN_DAYS`, 14), counted
from the first recall that saw it. ``talos.compat`` keeps the reference rule (no span).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

import talos.memory
import talos.usage.counts
from talos import Memory, compat
from talos.cli import app
from talos.doctor import config_problems
from talos.errors import InputError
from talos.home import DEAD_MIN_DAYS, resolve_paths
from talos.usage.counts import SqliteUsage, today

pytestmark = pytest.mark.dead_span
runner = CliRunner()

NOTE = "the staging database is called pelican"
RUNNER = "- the ci runner uses ubuntu <!-- reflect 2026-01-01 -->"
MEMORY = f"- {NOTE} <!-- reflect 2026-01-01 -->\n{RUNNER}\n"
NEVER = "seen 8 times, never recalled"


def _first_session(home: Path) -> Memory:
    mem = Memory(home, index=False)
    for i in range(8):  # unrelated questions: the note is seen, never delivered
        mem.recall(f"which ubuntu version does the ci runner use {i}")
    return mem


def _later(monkeypatch: pytest.MonkeyPatch, days: int) -> None:
    now = today()
    monkeypatch.setattr(talos.memory, "today", lambda: now + days)


def test_eight_recalls_in_a_new_home_propose_nothing(make_home) -> None:
    mem = _first_session(make_home(memory=MEMORY))
    assert mem.usage()[f"fact:{NOTE}"] == (8, 0, 0)
    assert mem.usage_store.stats("global")[f"fact:{NOTE}"].first_day == today()
    assert mem.dead() == []
    assert DEAD_MIN_DAYS == 14


def test_the_fact_is_proposed_once_it_was_counted_for_min_days(
    make_home, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = _first_session(make_home(memory=MEMORY))
    _later(monkeypatch, 13)
    assert mem.dead() == []
    _later(monkeypatch, 14)
    assert [(s.text, s.reason) for s in mem.dead()] == [(NOTE, NEVER)]


def test_a_fact_that_leaves_and_comes_back_keeps_its_first_day(
    make_home, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = make_home(memory=MEMORY)
    mem = _first_session(home)
    mf = home / "memory.md"
    text = mf.read_text()
    mf.write_text(text.replace(f"- {NOTE} <!-- reflect 2026-01-01 -->\n", ""))
    mem.recall("ubuntu runner")
    mf.write_text(text)
    mem.recall("ubuntu runner once more")
    stat = mem.usage_store.stats("global")[f"fact:{NOTE}"]
    assert (stat, stat.first_day) == ((9, 0, 0), today())


def test_talos_toml_sets_the_span_and_a_bad_value_is_named(make_home) -> None:
    home = make_home(memory=MEMORY)
    (home / "talos.toml").write_text("dead_min_days = 0\n")
    mem = _first_session(home)
    assert [(s.text, s.reason) for s in mem.dead()] == [(NOTE, NEVER)]
    assert mem.dead(min_days=1) == []  # the argument wins
    (home / "talos.toml").write_text('model = "evidence"\ndead_min_days = -3\n')
    want = (
        f"{home / 'talos.toml'}:2: dead_min_days must be a whole number of days, 0 or more, not -3"
    )
    with pytest.raises(InputError) as e:
        Memory(home, index=False).dead()
    assert str(e.value) == want
    assert config_problems(resolve_paths(home)) == [want]
    res = runner.invoke(app, ["dead", "--home", str(home), "--json"])
    assert res.exit_code == 1
    assert json.loads(res.stdout)["error"] == want


def test_cli_min_days(make_home) -> None:
    home = make_home(memory=MEMORY)
    _first_session(home)
    res = runner.invoke(app, ["dead", "--home", str(home), "--json"])
    assert (res.exit_code, json.loads(res.stdout)["data"]) == (0, [])
    res = runner.invoke(app, ["dead", "--home", str(home), "--min-days", "0", "--json"])
    assert [s["text"] for s in json.loads(res.stdout)["data"]] == [NOTE]
    res = runner.invoke(app, ["forget", "--home", str(home), "--min-days", "0", "--dry-run"])
    assert res.exit_code == 0 and "dry run: 1 suggestion(s), nothing removed" in res.stderr
    res = runner.invoke(app, ["forget", "--home", str(home), "--dry-run"])
    assert (res.exit_code, res.stderr) == (0, "nothing to forget\n")
    helped = " ".join(runner.invoke(app, ["dead", "--help"], env={"COLUMNS": "300"}).stdout.split())
    assert "--min-days" in helped and "(default: 14, or dead_min_days in talos.toml)" in helped


def test_counts_from_before_the_first_day_was_kept_are_judged_as_before(make_home) -> None:
    """A usage.db of schema 1 (no first_day) is migrated; its rows keep 0 ("not known") and
    dead decides on them as it did before the span rule."""
    home = make_home(memory=MEMORY)
    db = home / ".talos" / "usage.db"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    con.executescript(
        "CREATE TABLE counters(scope TEXT PRIMARY KEY, n INTEGER NOT NULL);"
        "CREATE TABLE fingerprints(scope TEXT PRIMARY KEY, fp TEXT);"
        "CREATE TABLE usage(scope TEXT NOT NULL, key TEXT NOT NULL,"
        " base_seen INTEGER NOT NULL DEFAULT 0, since INTEGER NOT NULL DEFAULT 0,"
        " present INTEGER NOT NULL DEFAULT 0, hits INTEGER NOT NULL DEFAULT 0,"
        " last_hit_day INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(scope, key));"
        f"INSERT INTO usage(scope, key, base_seen) VALUES ('global', 'fact:{NOTE}', 8);"
        "PRAGMA user_version=1;"
    )
    con.close()
    mem = Memory(home, index=False)
    assert [(s.text, s.reason) for s in mem.dead()] == [(NOTE, NEVER)]
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == SqliteUsage.SCHEMA


def test_compat_keeps_the_reference_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """talos.compat (the reference's API and recall_hits.json) has no span: 8 recalls are
    enough, as in the reference."""
    (tmp_path / "memory.md").write_text(MEMORY)
    (tmp_path / "skills").mkdir()
    (tmp_path / "sessions").mkdir()
    monkeypatch.setattr(compat, "MEMORY_FILE", str(tmp_path / "memory.md"))
    monkeypatch.setattr(compat, "SKILLS_DIR", str(tmp_path / "skills"))
    monkeypatch.setattr(compat, "SESS_DIR", str(tmp_path / "sessions"))
    monkeypatch.setattr(compat, "HITS_FILE", str(tmp_path / "recall_hits.json"))
    monkeypatch.setattr(compat, "TRACE_FILE", str(tmp_path / "recall_trace.jsonl"))
    for i in range(8):
        compat.recall(f"which ubuntu version does the ci runner use {i}")
    assert [text for _kind, text, _reason in compat.dead()] == [NOTE]


# -- a clock that ran ahead --------------------------------------------------------------------


def _clock(monkeypatch: pytest.MonkeyPatch, day: int) -> None:
    monkeypatch.setattr(talos.usage.counts, "today", lambda now=None: day)


@pytest.mark.dead_span
def test_a_clock_that_ran_ahead_does_not_hide_a_fact_from_dead_for_years(
    make_home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dead's span is counted from a memory's first count (design §6.4): a first_day in the
    future (a clock that ran ahead) is lowered by the next recall on an earlier day."""
    real = talos.usage.counts.today()
    ahead = real + 3650  # the machine's clock said ten years ahead during the first recall
    monkeypatch.setattr(talos.usage.counts, "today", lambda now=None: ahead)
    mem = Memory(make_home(memory=MEMORY), index=False)
    mem.recall("which ubuntu version does the ci runner use")
    monkeypatch.setattr(talos.usage.counts, "today", lambda now=None: real)  # the clock is fixed
    for i in range(8):
        mem.recall(f"which ubuntu version does the ci runner use {i}")
    monkeypatch.setattr(talos.memory, "today", lambda: real + 30)  # a month later, truly
    assert [s.text for s in mem.dead()] == [NOTE]


@pytest.mark.dead_span
def test_a_hit_on_a_day_ahead_does_not_keep_a_fact_from_going_stale(
    make_home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same for the day of the last hit: a fact delivered while the clock said ten years
    ahead goes stale counted from the day the clock was fixed, not ten years later."""
    real = talos.usage.counts.today()
    _clock(monkeypatch, real + 3650)
    home = make_home(memory=MEMORY)
    mem = Memory(home, index=False)
    mem.recall("what is the staging database called")
    assert mem.usage()[f"fact:{NOTE}"] == (1, 1, real + 3650)
    _clock(monkeypatch, real)
    for i in range(8):
        mem.recall(f"which ubuntu version does the ci runner use {i}")
    stat = mem.usage_store.stats("global")[f"fact:{NOTE}"]
    assert (stat, stat.first_day) == ((9, 1, real), real)
    monkeypatch.setattr(talos.memory, "today", lambda: real + 100)
    stale = "last recalled 100 days ago"  # the runner was hit by the questions, truly
    ci = "the ci runner uses ubuntu"
    assert [(s.text, s.reason) for s in mem.dead()] == [(NOTE, stale), (ci, stale)]
    # a later recall on the right day lowers nothing more, and another scope is not touched
    _clock(monkeypatch, real + 1)
    Memory(home, index=False).recall("which ubuntu version does the ci runner use")
    stat = mem.usage_store.stats("global")[f"fact:{NOTE}"]
    assert (stat, stat.first_day) == ((10, 1, real), real)


def test_a_recall_on_an_earlier_day_lowers_only_days_after_it(tmp_path: Path) -> None:
    """SqliteUsage: days later than the recall's are lowered to it, in the recall's scope only;
    earlier days and 0 ("not known", "never") stay."""
    store = SqliteUsage(tmp_path / "usage.db")
    a, b, c = "fact:a", "fact:b", "fact:c"
    store.record({"global": frozenset({a}), "work": frozenset({a})}, {"global": {a}}, 500)
    store.record({"global": frozenset({a, b})}, {"global": {b}}, 100)
    store.record({"global": frozenset({a, b, c})}, {}, 300)
    got = {k: (st, st.first_day) for k, st in store.stats("global").items()}
    assert got == {a: ((3, 1, 100), 100), b: ((2, 1, 100), 100), c: ((1, 0, 0), 300)}
    assert store.stats("work")[a].first_day == 500  # no recall of "work" since
