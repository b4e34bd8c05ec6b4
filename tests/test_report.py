"""``talos report`` (design §6.6, issue 6): exact counts from a constructed trace and usage."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from talos import Memory
from talos.cli import app
from talos.report import build_report, read_trace, render_html

MEMORY = """\
- the staging database listens on port 5433
- invoices are archived to the cold bucket after ninety days
- the wiki page <Ops & Oncall> lists the pager rota
- release notes go out every second tuesday
"""
SKILLS = {
    "csv-merge.md": "---\nname: csv-merge\ndescription: merge csv files on a key column\n---\n",
    "log-triage.md": "---\nname: log-triage\ndescription: group error logs by pattern\n---\n",
}


def _t(day: str, hour: int) -> int:
    return int(dt.datetime.fromisoformat(f"{day}T{hour:02d}:00:00+00:00").timestamp())


@pytest.fixture
def home(make_home) -> Path:  # type: ignore[no-untyped-def]
    """A home with 4 facts, 2 skills, a 5-round trace over 3 UTC days (one without recalls),
    2 unreadable trace lines and usage counts written directly."""
    home = make_home(memory=MEMORY, skills=SKILLS)
    mem = Memory(home)
    keys = [n.key for n in mem.graph().nodes]
    port, invoices, wiki, release, csv, logs = keys
    assert port == "fact:the staging database listens on port 5433"
    assert csv.startswith("skill:csv-merge")

    def pick(key: str, score: float, body: bool = False) -> dict[str, object]:
        return {"key": key, "score": score, "body": body}

    rounds = [
        {
            "picked": [pick(port, 1.2), pick(csv, 0.9, True)],
            "q": "a" * 12,
            "t": _t("2026-07-01", 8),
        },
        {"picked": [], "q": "b" * 12, "t": _t("2026-07-01", 9)},
        {"picked": [pick(port, 0.3)], "q": "c" * 12, "t": _t("2026-07-01", 23)},
        {"picked": [pick(csv, 2.5), pick(invoices, 0.5)], "q": "d" * 12, "t": _t("2026-07-03", 0)},
        {"picked": [], "q": "e" * 12, "t": _t("2026-07-03", 12)},
    ]
    lines = [json.dumps(r) for r in rounds[:2]] + ["{torn", "", "[1, 2]"]
    lines += [json.dumps(r) for r in rounds[2:]]
    mem.paths.trace_file.parent.mkdir(parents=True, exist_ok=True)
    mem.paths.trace_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # Usage: wiki seen once, logs twice, release hit once (so it is not "never recalled").
    store = mem.usage_store
    store.record({"global": frozenset({wiki, logs, release})}, {"global": {release}}, 20000)
    store.record({"global": frozenset({logs})}, {}, 20000)
    return home


def test_counts(home: Path) -> None:
    r = build_report(Memory(home), top=2)
    assert (r["recalls"], r["empty_rounds"], r["body_rounds"], r["picks"]) == (5, 2, 1, 5)
    assert (r["empty_rate"], r["body_rate"]) == (0.4, 0.2)
    assert r["malformed_lines"] == 2
    assert r["picks_by_kind"] == {"fact": 3, "skill": 2, "episode": 0}
    assert (r["first_day"], r["last_day"]) == ("2026-07-01", "2026-07-03")
    assert r["per_day"] == [
        {"day": "2026-07-01", "recalls": 3, "empty": 1, "body": 1},
        {"day": "2026-07-02", "recalls": 0, "empty": 0, "body": 0},
        {"day": "2026-07-03", "recalls": 2, "empty": 1, "body": 0},
    ]
    sc = r["scores"]
    assert (sc["count"], sc["min"], sc["median"], sc["mean"], sc["max"]) == (5, 0.3, 0.9, 1.08, 2.5)
    assert [b["count"] for b in sc["bins"]] == [0, 1, 1, 1, 1, 0, 0, 0, 1]
    assert (sc["bins"][0]["lo"], sc["bins"][0]["hi"], sc["bins"][-1]["hi"]) == (0.0, 0.25, None)
    # Ties in picks: the key picked first comes first; top=2 cuts the list.
    assert [
        (m["text"], m["picks"], m["bodies"], m["mean_score"], m["last_day"])
        for m in r["most_recalled"]
    ] == [
        ("the staging database listens on port 5433", 2, 0, 0.75, "2026-07-01"),
        ("csv-merge — merge csv files on a key column", 2, 1, 1.7, "2026-07-03"),
    ]
    # Never recalled: no pick in the trace and no hit in usage; most seen first.
    assert r["memories"] == 6
    assert [(n["kind"], n["text"], n["seen"]) for n in r["never_recalled"]] == [
        ("skill", "log-triage — group error logs by pattern", 2),
        ("fact", "the wiki page <Ops & Oncall> lists the pager rota", 1),
    ]
    assert r["never_recalled"][1]["line"] == 3


def test_missing_trace_is_an_empty_report(make_home) -> None:  # type: ignore[no-untyped-def]
    home = make_home(memory="- the staging database listens on port 5433\n")
    r = build_report(Memory(home))
    assert (r["recalls"], r["picks"], r["per_day"], r["most_recalled"]) == (0, 0, [], [])
    assert (r["empty_rate"], r["scores"]["median"], r["first_day"]) == (0.0, None, None)
    assert [n["seen"] for n in r["never_recalled"]] == [0]
    assert read_trace(home / "nope.jsonl") == ([], 0)
    page = render_html(r)
    assert "No recalls in the trace yet." in page and "<svg" not in page


def test_html_is_self_contained_and_deterministic(home: Path) -> None:
    r = build_report(Memory(home))
    page = render_html(r)
    assert page == render_html(r)
    assert page.startswith("<!DOCTYPE html>")
    # Five plots: recalls per day, two rates, scores, most recalled.
    assert page.count("<svg") == 5
    for outside in ("http:", "https:", "//", "<script", "src=", "@import", "url("):
        assert outside not in page
    assert "&lt;Ops &amp; Oncall&gt;" in page and "<Ops" not in page
    # The day without recalls breaks the rate lines (no point, no 0%).
    assert "07-02: " not in page.split("Empty-round rate")[1].split("Score distribution")[0]


def test_cli_json_text_and_html(home: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["report", "--home", str(home), "--json", "--top", "1"])
    assert res.exit_code == 0, res.output
    env = json.loads(res.stdout)
    assert (env["ok"], env["command"], env["error"]) == (True, "report", None)
    assert env["data"] == build_report(Memory(home), top=1)

    res = runner.invoke(app, ["report", "--home", str(home), "--plain"])
    assert res.exit_code == 0, res.output
    assert "empty rounds" in res.stdout and "2 (40.0%)" in res.stdout

    page = tmp_path / "out" / "report.html"
    page.parent.mkdir()
    res = runner.invoke(app, ["report", "--home", str(home), "--html", str(page), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["data"]["recalls"] == 5
    assert page.read_text(encoding="utf-8") == render_html(build_report(Memory(home)))


def test_most_recalled_shows_the_whole_text_or_marks_the_cut(make_home) -> None:
    """A trace key holds 80 characters of a memory's text (design §6.3); the report showed that
    cut with no mark ("… and needs an a"). Now a memory still in view shows its whole text,
    and one that is gone shows the key's text with "…"."""
    long = "the deployment pipeline for the billing service needs an approval from on-call first"
    home = make_home(memory=f"- {long}\n")
    mem = Memory(home)
    (key,) = [n.key for n in mem.graph().nodes]
    gone = "fact:" + "x" * 80
    rounds = [{"picked": [{"key": k, "score": 1.0}], "q": "q" * 12, "t": _t("2026-07-01", 8)}
              for k in (key, gone)]  # fmt: skip
    mem.paths.trace_file.parent.mkdir(parents=True, exist_ok=True)
    mem.paths.trace_file.write_text("".join(json.dumps(r) + "\n" for r in rounds))
    texts = [m["text"] for m in build_report(Memory(home))["most_recalled"]]
    assert texts == [long, "x" * 80 + "…"]
