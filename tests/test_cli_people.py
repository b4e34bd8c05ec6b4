"""The command line as people expect it (docs/cli.md "Output"): what the README says works as
written, help texts show every character, tables fit an 80-column terminal, a pipe gets plain
text one record a line, explain shows which query words each row matched."""

from __future__ import annotations

import json
import re
from pathlib import Path

import typer
from helpers import invoke
from rich.text import Text


def revoke_home(make_home) -> Path:
    return make_home(
        memory="# Memory\n- replicas: 3 <!-- tool 2026-01-02 ref=kubectl:get-deploy -->\n"
        "- the person likes short answers\n"
    )


def test_revoke_takes_the_source_ref_as_the_readme_says(make_home) -> None:
    """``talos revoke kubectl:get-deploy`` failed with "Missing option '--ref'" while the
    README and the help say "from source REF"."""
    home = revoke_home(make_home)
    r = invoke("revoke", "kubectl:get-deploy", "--home", str(home))
    assert r.exit_code == 0, r.output
    assert r.stderr.startswith("revoked 1 record(s) derived from kubectl:get-deploy: ")
    assert "replicas" not in (home / "memory.md").read_text(encoding="utf-8")


def test_revoke_still_takes_ref_as_an_option_and_refuses_two(make_home) -> None:
    home = revoke_home(make_home)
    r = invoke("revoke", "--ref", "kubectl:get-deploy", "--home", str(home), "--json")
    assert r.exit_code == 0, r.output
    r = invoke("revoke", "a:1", "--ref", "b:2", "--home", str(home))
    assert (r.exit_code, r.stderr) == (
        1,
        "talos revoke: two sources given ('a:1' and --ref 'b:2'); give one\n",
    )
    r = invoke("revoke", "--home", str(home))
    assert (r.exit_code, r.stderr) == (
        1,
        "talos revoke: give the source REF to retract, e.g. talos revoke msg:42\n",
    )


def _help_texts() -> list[tuple[str, str]]:
    """Every help text of every command: (where, text)."""
    from talos.cli import app

    group = typer.main.get_command(app)
    root = typer.Context(group, info_name="talos")
    out = [("talos", group.help or "")]
    for name in group.list_commands(root):
        sub = group.get_command(root, name)
        assert sub is not None
        out.append((name, sub.help or ""))
        ctx = typer.Context(sub, info_name=name, parent=root)
        out += [(f"{name} {p.name}", getattr(p, "help", None) or "") for p in sub.get_params(ctx)]
    return out


def test_no_help_text_loses_a_bracket_to_rich_markup() -> None:
    """Typer reads help as Rich markup: ``pip install 'talos-memory[dense]'`` was shown as
    ``pip install 'talos-memory'``. Every ``[`` meant as text is escaped (``\\[``), so what
    --help shows is the text with its escapes removed."""
    lost = [
        (where, text)
        for where, text in _help_texts()
        if Text.from_markup(text).plain != re.sub(r"\\\[", "[", text)
    ]
    assert lost == []


def test_dense_help_names_the_extra(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    r = invoke("recall", "--help")
    assert "pip install 'talos-memory[dense]'" in r.stdout


# -- tables that fit, pipes that stay text ---------------------------------------------------

LONG = "for everyone on the platform team, decided at the offsite after a long vote"


def editor_home(make_home) -> Path:
    """Three writes of team.editor (two supersedes), lines far wider than 80 columns."""
    from talos import Memory

    home = make_home(
        memory="# Memory\n- Deploy region is eu-west-1; the staging service listens on port 8080\n"
    )
    mem = Memory(home)
    mem.remember(f"team editor is helix {LONG}", key="team.editor", source="tool", ref="run:42")
    mem.remember(f"team editor is neovim {LONG}", key="team.editor")
    mem.remember(f"team editor is zed {LONG}", key="team.editor", source="tool", ref="run:43")
    return home


def on_a_terminal(monkeypatch, columns: int = 80) -> None:
    """stdout counts as a terminal of ``columns`` cells (the runner's is a buffer)."""
    import talos.cli.listing

    monkeypatch.setattr(talos.cli.listing, "isatty", lambda stream: True)
    monkeypatch.setenv("COLUMNS", str(columns))


def cells(line: str) -> int:
    from rich.cells import cell_len

    return cell_len(line)


def test_history_fits_80_columns_one_line_an_event(make_home, monkeypatch) -> None:
    """``talos history team.editor`` wrapped the raw tag about one word a line: 118 lines for
    3 events in 80 columns. Each event is one line now, the record's text shortened with …,
    the tag left to --wide and --json."""
    home = editor_home(make_home)
    on_a_terminal(monkeypatch)
    r = invoke("history", "team.editor", "--home", str(home))
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "history of team.editor"
    assert lines[1].split() == ["time", "(UTC)", "op", "id", "record"]  # the reason: --wide
    assert len(lines) == 2 + 5 + 1  # remember, supersede, remember, supersede, remember; caption
    assert max(map(cells, lines)) <= 80
    assert all("…" in line for line in lines[2:-1])
    assert "<!--" not in r.stdout
    assert [line.split()[2] for line in lines[2:-1]] == [
        "remember",
        "supersede",
        "remember",
        "supersede",
        "remember",
    ]
    wide = invoke("history", "team.editor", "--home", str(home), "--wide")
    assert "<!-- tool " in wide.stdout and "ref=run:42 -->" in wide.stdout
    assert "…" not in wide.stdout


def test_every_listing_fits_80_columns(make_home, monkeypatch) -> None:
    home = editor_home(make_home)
    with (home / "memory.md").open("a", encoding="utf-8") as f:
        f.write(f"- office colour is green {LONG} <!-- user 2026-01-01 key=office.colour -->\n")
        f.write(f"- office colour is blue {LONG} <!-- user 2026-01-02 key=office.colour -->\n")
        f.write("- aws key AKIAIOSFODNN7EXAMPLE secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")
    for q in ("team editor", "office colour", "deploy region"):
        assert invoke("recall", q, "--home", str(home)).exit_code == 0
    on_a_terminal(monkeypatch)
    h = str(home)
    for args in (
        ["explain", "which team editor do we use for everyone", "--why-not"],
        ["history"],
        ["conflicts"],
        ["dead", "--min-seen", "0", "--min-days", "0", "--stale-days", "0"],
        ["report"],
        ["scan"],
        ["doctor"],
    ):
        r = invoke(*args, "--home", h)
        assert r.exit_code in (0, 4, 5), (args, r.output)
        assert r.stdout.count("\n") > 2, args
        assert max(map(cells, r.stdout.splitlines())) <= 80, (args, r.stdout)


def test_a_pipe_gets_plain_lines_not_json(make_home) -> None:
    """Piped, listings switched to JSON by themselves; now (as gh, kubectl and git do) a
    pipe gets one record a line, fields TAB-separated, no header, no box, no colour; JSON
    only with --json."""
    home = editor_home(make_home)
    r = invoke("history", "team.editor", "--home", str(home))
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert len(lines) == 5
    fields = [line.split("\t") for line in lines]
    assert {len(f) for f in fields} == {6}  # time, op, id, key, record, reason
    assert [f[1] for f in fields] == ["remember", "supersede", "remember", "supersede", "remember"]
    assert fields[0][3:] == ["team.editor", f"team editor is helix {LONG}", "remember (tool)"]
    assert fields[1][5].startswith("superseded by r")
    for args in (
        ["history"],
        ["explain", "team editor"],
        ["conflicts"],
        ["scan"],
        ["report"],
        ["doctor"],
        ["dead", "--min-seen", "0", "--min-days", "0", "--stale-days", "0"],
    ):
        out = invoke(*args, "--home", str(home)).stdout
        assert not out.lstrip().startswith("{"), args
        assert not set(out) & set("│┃━┏┗╇\x1b"), (args, out)
    assert invoke("history", "--home", str(home), "--json").stdout.startswith("{")


def test_plain_forces_the_lines_on_a_terminal(make_home, monkeypatch) -> None:
    home = editor_home(make_home)
    on_a_terminal(monkeypatch)
    table = invoke("history", "team.editor", "--home", str(home)).stdout
    plain = invoke("history", "team.editor", "--home", str(home), "--plain").stdout
    assert "\t" not in table
    assert [len(line.split("\t")) for line in plain.splitlines()] == [6] * 5


# -- explain shows its words ------------------------------------------------------------------


def test_explain_shows_which_query_words_each_row_matched(make_home, monkeypatch) -> None:
    """Which query word matched which row was in --json only; the table has a words column,
    with the analyzer's form when it differs (deploying → deploy)."""
    home = make_home(
        memory="# Memory\n- production builds run on the product cluster\n"
        "- Deploy region is eu-west-1; the staging service listens on port 8080\n"
    )
    on_a_terminal(monkeypatch)
    r = invoke("explain", "deploying production builds", "--home", str(home))
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[1].split()[:5] == ["#", "score", "kind", "text", "words"]
    assert any("production builds run" in x and "production, builds → build" in x for x in lines)
    assert any("Deploy region" in x and "deploying → deploy" in x for x in lines)
    monkeypatch.undo()
    piped = invoke("explain", "deploying production builds", "--home", str(home)).stdout
    words = {f[3][:10]: f[4] for f in (line.split("\t") for line in piped.splitlines())}
    assert words == {"production": "production, builds → build", "Deploy reg": "deploying → deploy"}


def test_expect_says_the_expected_line_shares_no_word(make_home) -> None:
    """``--why-not`` listed five rows and never the line the person expected when it shared
    no word with the query; ``--expect`` names it and says exactly that."""
    home = make_home(
        memory="# Memory\n- Deploy region is eu-west-1; the staging service listens on port 8080\n"
        "- production builds run on the product cluster\n"
    )
    r = invoke("explain", "ship to production", "--expect", "staging port", "--home", str(home))
    assert r.exit_code == 0, r.output
    said = [line.split("\t") for line in r.stdout.splitlines() if line.startswith("expected\t")]
    assert len(said) == 1
    _section, asked, kind, _id, text, status, sentence = said[0]
    assert (asked, kind, status) == ("staging port", "fact", "no-shared-word")
    assert text == "Deploy region is eu-west-1; the staging service listens on port 8080"
    assert sentence.startswith(
        "shares no word with the query: its words are deploy, region, eu, west, "
        "staging → stage, service → servic, listens → listen, port, 8080; "
        "the query's are ship, production"
    )
    data = json.loads(
        invoke(
            "explain",
            "ship to production",
            "--expect",
            "staging port",
            "--home",
            str(home),
            "--json",
        ).stdout
    )["data"]
    assert [e["status"] for e in data["expected"][0]["found"]] == ["no-shared-word"]
    r = invoke("explain", "ship to production", "--expect", "product cluster", "--home", str(home))
    assert "\tranked\tranked #1 (a recall delivers it)" in r.stdout
    r = invoke("explain", "ship to production", "--expect", "nowhere", "--home", str(home))
    assert r.stderr.endswith(
        'expected "nowhere": no in-scope memory holds that text or id (talos scan lists '
        "lines left out as unsafe)\n"
    )


def test_a_pipe_closed_early_ends_the_command_quietly(make_home) -> None:
    """``talos history | head -1``: the reader goes away; talos said "Broken pipe: check the
    file and try again"."""
    import subprocess
    import sys

    home = editor_home(make_home)
    p = subprocess.Popen(
        [sys.executable, "-m", "talos", "history", "--home", str(home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()  # the reader is gone before talos writes
    err = p.stderr.read()
    assert (p.wait(timeout=60), err) == (1, b"")


def test_explain_gate_line_names_the_row_and_its_seed(make_home, monkeypatch) -> None:
    """The footer said "query gate: best row 1.08" while row 1 of the same table showed 1.07:
    the gate reads a row's own words before spreading (its seed), the score column is after
    spreading. The line now says "best seed" and names the row with its table score."""
    home = make_home(
        memory="# Memory\n- production builds run on the product cluster\n"
        "- Deploy region is eu-west-1; the staging service listens on port 8080\n"
    )
    on_a_terminal(monkeypatch)
    r = invoke("explain", "deploying production builds", "--home", str(home))
    assert r.exit_code == 0, r.output
    row1 = r.stdout.splitlines()[2].split()
    assert row1[:2] == ["1", "1.07"]
    gate = " ".join(r.stderr.split())
    assert "query gate: best seed 1.08 (row 1's own words, before spreading gives it 1.07)" in gate
    assert "best row" not in gate


def test_history_gives_the_record_text_the_width(make_home, monkeypatch) -> None:
    """At 80 columns history cut the new value to "default shell is fi…", the very word that
    changed, to keep the key and the reason: the record column now goes first, and the
    reason column is left out, with a caption saying --wide shows it."""
    from talos import Memory

    home = make_home(memory="# Memory\n")
    mem = Memory(home)
    mem.remember("default shell is bash on the build machines", key="default.shell")
    mem.remember("default shell is fish on the build machines", key="default.shell")
    on_a_terminal(monkeypatch)
    r = invoke("history", "--home", str(home))
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[1].split() == ["time", "(UTC)", "op", "id", "key", "record"]
    assert lines[-2].split()[-7:] == ["default", "shell", "is", "fish", "on", "the", "bui…"]
    assert lines[-1] == "(reason left out at 80 columns: --wide shows it)"
    assert max(map(cells, lines)) <= 80
    wide = invoke("history", "--home", str(home), "--wide").stdout.splitlines()
    assert "reason" in wide[1].split()
