"""A ``talos`` process imports what its command uses (bench/README.md, "Start-up").

Every ``talos`` process outside the hook server pays for its imports before it answers: on a
small home they were most of ``talos recall``'s 0.3 s. Each test runs one command line as
``python -m talos`` does, in a fresh interpreter, and lists ``sys.modules`` at exit; the
modules named here were imported by that command line once and are not used by it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click.testing
import pytest
import typer
from helpers import session_line
from helpers import session_line as _session

from talos.cli import app, app_for

#: ``python -m talos ARGS``, then ``sys.modules`` (sorted, JSON) into the file ``$MODULES``.
RUN = (
    "import atexit, json, os, runpy, sys\n"
    "atexit.register(lambda: open(os.environ['MODULES'], 'w').write("
    "json.dumps(sorted(sys.modules))))\n"
    "sys.argv = ['talos', *sys.argv[1:]]\n"
    "runpy.run_module('talos', run_name='__main__', alter_sys=True)\n"
)

#: Never used by a lexical recall or explain (the dense leg is off by default).
NOT_FOR_RECALL = [
    "talos.doctor",  # talos.toml's check lived there: cli.common imported the doctor
    "talos.writer.audit",  # ... and with it the audit log reader
    "talos.scan",  # ... and talos scan's report
    "talos.report",
    "talos.writer.edits",  # recall never writes memory.md
    "talos.ranking.hybrid",  # the dense leg, off
    "talos.ranking.dense",
    "talos.ranking.vectors",
    "talos.mcp.server",
    "mcp",
    "platformdirs",  # --home names the home
    "rich.table",  # a plain block is not a table
    "numpy.ma",  # np.unique imports it (numpy 2): talos.ranking.arrays.unique
    "urllib.request",  # confusable_homoglyphs' modules imported it to download their data
]

MEMORY = (
    "- The billing service deploys from eu-west-1 — ask Ana before a Friday deploy\n"
    "- Run the migrations before the billing deploy <!-- reflect 2026-01-02 -->\n"
    "- 部署前先运行数据库迁移\n"
)
SKILL = (
    "---\nname: deploy-billing\ndescription: Deploy the billing service to production\n---\n"
    "1. Build the image.\n2. Run the migrations.\n3. Deploy.\n"
)


def modules(args: list[str], cwd: Path) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """The modules a ``talos ARGS`` process imported, and the process (it must succeed)."""
    out = cwd / "modules.json"
    env = {k: v for k, v in os.environ.items() if k not in ("TALOS_HOME", "TALOS_SCOPE")}
    env["MODULES"] = str(out)
    proc = subprocess.run(
        [sys.executable, "-c", RUN, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(out.read_text(encoding="utf-8"))), proc


@pytest.fixture
def small(make_home, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """A small home, indexed (``talos index``): the recalls below are warm ones. Reading a new
    file scans it for secrets, and detect-secrets imports ``requests`` (talos.safety.secrets)."""
    home = make_home(
        memory=MEMORY,
        skills={"deploy-billing.md": SKILL},
        sessions={"s1.jsonl": session_line("deploy the billing service to staging")},
    )
    modules(["index", "--home", str(home)], tmp_path)
    return home


def test_recall_on_an_empty_home(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    got, proc = modules(["recall", "--home", str(tmp_path / "empty"), "deploy billing"], tmp_path)
    assert "nothing recalled" in proc.stderr
    assert "talos.memory" in got  # the command ran
    assert sorted(m for m in NOT_FOR_RECALL if m in got) == []


def test_recall_of_a_block_imports_only_what_it_uses(small: Path, tmp_path: Path) -> None:
    """A block of rows: the ranking ran (np.unique's place), the block was rendered (a
    non-ASCII character that is not CJK loads the confusables data)."""
    got, proc = modules(["recall", "--home", str(small), "deploy the billing service"], tmp_path)
    assert "eu-west-1 — ask Ana" in proc.stdout
    assert "deploy-billing" in proc.stdout
    assert "talos.ranking.evidence" in got and "talos.data" in got  # the rules ran (confusables)
    assert sorted(m for m in NOT_FOR_RECALL if m in got) == []


def test_explain_imports_no_dense_leg_and_no_doctor(small: Path, tmp_path: Path) -> None:
    got, proc = modules(["explain", "--home", str(small), "--json", "billing deploy"], tmp_path)
    assert json.loads(proc.stdout)["data"]["rows"][0]["kind"] in ("fact", "skill")
    absent = [m for m in NOT_FOR_RECALL if m != "urllib.request"]  # JSON renders nothing
    assert sorted(m for m in absent if m in got) == []


def test_click_is_not_imported_when_typer_vendors_it(small: Path, tmp_path: Path) -> None:
    """typer 0.28 carries its own Click: ``import click`` was 5 ms of every command."""
    vendors = subprocess.run(
        [sys.executable, "-c", "import sys, typer.main; print('click' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if vendors != "False":
        pytest.skip("this typer imports click itself")
    got, _proc = modules(["recall", "--home", str(small), "deploy the billing service"], tmp_path)
    assert "click" not in got


def test_init_opens_no_memory(tmp_path: Path) -> None:
    """``talos init`` writes files: no ranking (numpy), no renderer, no Memory; talos.toml's
    check imports the label and model tables only when it names a lang or a model."""
    got, _proc = modules(["init", "--home", str(tmp_path / "new")], tmp_path)
    assert (tmp_path / "new" / "memory.md").exists()
    unused = ["talos.memory", "talos.render", "talos.ranking.activation", "numpy", "talos.doctor"]
    assert sorted(m for m in unused if m in got) == []


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ('lang = "fr"\nmodel = "bm42"\n', ":1: lang must be one of en, zh, not 'fr'"),
        (
            'model = "bm42"\n',
            ":1: model must be one of classic, evidence, not 'bm42'",
        ),
    ],
)
def test_a_bad_lang_or_model_in_talos_toml_is_still_refused(
    small: Path, tmp_path: Path, toml: str, says: str
) -> None:
    """The check moved (talos.doctor → talos.home) and imports its tables on use: the message
    is the one it was."""
    (small / "talos.toml").write_text(toml, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "TALOS_HOME"}
    proc = subprocess.run(
        [sys.executable, "-m", "talos", "recall", "--home", str(small), "deploy"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert f"{small / 'talos.toml'}{says}" in proc.stderr


# -- a command's app built alone behaves as the full app ---------------------------------------


CLI_CASES = [
    ["recall"],
    ["recall", "kettle", "-k", "x", "--json"],
    ["recall", "kettle tea"],
    ["recall", "kettle tea", "--json"],
    ["recall", "q", "--at", "2025-13-01", "--json"],
    ["recall", "q", "--lang", "fr", "--json"],
    ["recall", "q", "--scope", "", "--json"],
    ["recall", "--", "--help"],
    ["recall", "q", "--json", "--", "x"],
    ["recall", "-h", "--json"],
    ["recall", "q", "--home"],
    ["recall", "--install-completion"],
    ["explain", "kettle", "--why-not", "--json"],
    ["explain", "kettle", "--plain"],
    ["explain", "q", "-k", "-1", "--json"],
    ["get", "editor"],
    ["get", "editor", "--json"],
    ["get", "region", "--json"],
    ["conflicts", "--plain"],
    ["remember", "x y z", "--source", "tool", "--json"],
    ["remember", "kettle is hot", "--key", "k.x", "--json"],
    ["remember", "editor = nano", "--key", "editor", "--source", "reflect", "--json"],
    ["resolve", "editor", "--keep", "nosuch", "--json"],
    ["restore", "nosuch", "--json"],
    ["revoke", "--ref", "nothing", "--json"],
    ["history", "editor", "--json"],
    ["index", "--check", "--json"],
    ["index", "--rebuild", "--json"],
    ["dead", "--json"],
    ["forget", "--dry-run", "--json"],
    ["scan", "--json"],
    ["doctor", "--json"],
    ["report", "--json"],
    ["init", "--example", "--json"],
    ["mcp", "extra"],
    ["--json", "recall", "q"],
    ["nosuch", "--json"],
]


def _cli_home(root: Path) -> Path:
    home = root
    (home / ".talos" / "sessions").mkdir(parents=True)
    (home / "memory.md").write_text(
        "- kettle tea is oolong\n"
        "- editor = helix <!-- user 2025-01-01 key=editor -->\n"
        "- editor = vim <!-- user 2025-02-01 key=editor -->\n"
        "- region eu <!-- reflect 2025-01-01 until=2025-02-01 key=region -->\n"
    )
    (home / ".talos" / "sessions" / "a.jsonl").write_text(_session("kettle tea brew"))
    return home


def test_one_command_app_runs_like_the_full_app_on_a_populated_home(tmp_path: Path) -> None:
    runner = click.testing.CliRunner()
    full = typer.main.get_command(app)
    for n, args in enumerate(CLI_CASES):
        seen = {}
        for which, command in (("want", full), ("got", typer.main.get_command(app_for(args)))):
            home = _cli_home(tmp_path / f"{which}-{n}")
            res = runner.invoke(
                command, args, env={"COLUMNS": "100", "TALOS_HOME": str(home)}, input="n\n"
            )
            seen[which] = (
                res.exit_code,
                *(
                    re.sub(
                        r'"seconds": [0-9.]+|\br[0-9a-f]{10}\b',
                        "X",
                        text.replace(str(home), "HOME"),
                    )
                    for text in (res.stdout, res.stderr)
                ),
            )
            assert res.exception is None or isinstance(res.exception, SystemExit), args
        assert seen["got"] == seen["want"], args
