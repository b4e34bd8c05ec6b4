"""The command line as people expect it (docs/cli.md "Output"): what the README says works as
written, help texts show every character, tables fit an 80-column terminal, a pipe gets plain
text one record a line, explain shows which query words each row matched."""

from __future__ import annotations

import re
from pathlib import Path

import typer
from rich.text import Text

from tests.helpers import invoke


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
