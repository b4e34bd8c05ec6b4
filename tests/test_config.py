"""Issue 12.4 (config values, the trace path) and 12.7 (init from a pattern, unknown keys,
``--version``).

* ``talos.toml`` values with a NUL byte in a path, ``state_dir = "/proc"`` and deeply nested
  arrays raised tracebacks (``ValueError``, ``OperationalError``, ``RecursionError``), and
  ``talos index`` crashed on a ``lang``/``model`` every other command refused: every command
  now ends with a message that names the file (and line), exit 1, and the JSON envelope.
* A trace path with a NUL byte raised ``ValueError`` out of ``recall`` and
  ``talos.compat.recall``: a trace failure never fails a recall (design §6.1).
* A ``~user`` that does not exist, a name too long for the file system, a number too long to
  parse, a BOM, a key given twice: each is named with its file, line and what to do.
* ``talos init`` with ``sessions_dir = "~/.claude/projects/**"`` made a folder named ``**``
  in the other agent's folder; unknown keys (``modle``) were silently ignored; ``talos
  --version`` did not exist.
"""

from __future__ import annotations

import asyncio
import json
import pwd
from importlib.metadata import version
from pathlib import Path

import click.testing
import pytest
import typer
from helpers import envelope, invoke, sentence, session_line
from typer.testing import CliRunner

import talos
from talos import Memory, compat
from talos.cli import app
from talos.errors import InputError


def run(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200", **(env or {})})


#: Every command that reads a home (doctor reports instead of failing, mcp serves stdio).
COMMANDS = [
    ["recall", "kettle"],
    ["explain", "kettle"],
    ["index"],
    ["index", "--check"],
    ["index", "--rebuild"],
    ["dead"],
    ["forget", "--yes"],
    ["scan"],
    ["report"],
    ["remember", "the kettle is blue"],
    ["get", "kettle"],
    ["conflicts"],
    ["history"],
    ["init"],
]


def home_with(make_home, config: str, name: str = "home") -> Path:
    home = make_home(memory="- the kettle is in the left cupboard\n", name=name)
    (home / "talos.toml").write_text(config, encoding="utf-8")
    return home


def assert_every_command_refuses(home: Path, error: str) -> None:
    """Each command: exit 1, the envelope under --json with exactly ``error``, and the same
    message on stderr without --json; doctor: an error finding of the config check."""
    for cmd in COMMANDS:
        res = run(*cmd, "--home", str(home), "--json")
        assert res.exit_code == 1, (cmd, res.output)
        assert json.loads(res.stdout) == {
            "ok": False,
            "command": cmd[0],
            "data": None,
            "error": error,
        }, cmd
    plain = run("index", "--home", str(home))
    assert plain.exit_code == 1
    assert " ".join(plain.stderr.split()) == " ".join(f"talos index: {error}".split())
    doctor = run("doctor", "--home", str(home), "--json")
    assert doctor.exit_code == 5
    config = next(
        f for f in json.loads(doctor.stdout)["data"]["findings"] if f["check"] == "config"
    )
    assert config["status"] == "error"
    assert error.replace(f"{home}/", "") in [config["summary"], *config["details"]]


# == 12.4: values of talos.toml ==============================================================


def test_nul_byte_in_a_path_is_a_clear_error_on_every_command(make_home) -> None:
    """The failing input: ``memory_file = "a\\u0000b"`` raised ValueError (embedded null byte)."""
    home = home_with(make_home, 'lang = "en"\nmemory_file = "a\\u0000b"\n')
    assert_every_command_refuses(
        home,
        f"{home}/talos.toml:2: memory_file contains a NUL byte ('a\\x00b'); a path cannot hold "
        "one, remove it",
    )


def test_nul_byte_in_the_trace_path_of_talos_toml_is_a_clear_error(make_home) -> None:
    """Variant: the NUL in ``trace_file`` (not read before the first recall)."""
    home = home_with(make_home, 'trace_file = "t\\u0000.jsonl"\n')
    assert_every_command_refuses(
        home,
        f"{home}/talos.toml:1: trace_file contains a NUL byte ('t\\x00.jsonl'); a path cannot "
        "hold one, remove it",
    )


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc")
def test_state_dir_on_a_kernel_file_system_is_a_clear_error(make_home) -> None:
    """The failing input: ``state_dir = "/proc"`` (``index``, ``doctor``, ``dead``, ``report``
    raised OperationalError: unable to open database file)."""
    home = home_with(make_home, 'state_dir = "/proc"\n')
    assert_every_command_refuses(
        home,
        f"{home}/talos.toml:1: state_dir '/proc' is inside /proc, a kernel file system, not a "
        "place for files; point it at a file or folder of your own",
    )


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc")
def test_skills_dir_inside_proc_is_a_clear_error(make_home) -> None:
    """Variant: a folder below a kernel file system, named through a link (``/proc/self``)."""
    home = home_with(make_home, 'skills_dir = "/proc/self/fd"\n')
    assert_every_command_refuses(
        home,
        f"{home}/talos.toml:1: skills_dir '/proc/self/fd' is inside /proc, a kernel file "
        "system, not a place for files; point it at a file or folder of your own",
    )


def test_deeply_nested_arrays_are_a_clear_error(make_home) -> None:
    """The failing input: ``x = [[[[…]]]]`` 2,000 deep raised RecursionError in tomllib."""
    home = home_with(make_home, "x = " + "[" * 2000 + "]" * 2000 + "\n")
    assert_every_command_refuses(
        home,
        f"{home}/talos.toml: values nested too deeply (arrays or tables inside each other); "
        "talos.toml holds plain key = value settings",
    )


def test_deeply_nested_inline_tables_are_a_clear_error(make_home) -> None:
    """Variant: inline tables instead of arrays."""
    home = home_with(make_home, "x = " + "{a=" * 2000 + "1" + "}" * 2000 + "\n")
    res = run("recall", "kettle", "--home", str(home), "--json")
    assert res.exit_code == 1
    assert json.loads(res.stdout)["error"].endswith(
        ": values nested too deeply (arrays or "
        "tables inside each other); talos.toml "
        "holds plain key = value settings"
    )


def test_index_refuses_a_bad_lang_or_model_like_every_command(make_home) -> None:
    """The failing input: ``lang = "fr"`` / ``model = "nope"`` made ``talos index`` crash
    (ValueError) while ``recall`` said which line was wrong."""
    home = home_with(make_home, 'lang = "fr"\n')
    assert_every_command_refuses(home, f"{home}/talos.toml:1: lang must be one of en, zh, not 'fr'")
    home = make_home(name="home2")
    (home / "talos.toml").write_text('model = "nope"\n')
    res = run("index", "--home", str(home))
    assert res.exit_code == 1
    assert " ".join(res.stderr.split()) == (
        f"talos index: {home}/talos.toml:1: model must be one of classic, evidence, not 'nope'"
    )


def test_a_model_that_is_not_a_string_is_a_clear_error(make_home) -> None:
    """Variant: ``model = ["classic"]`` raised TypeError (unhashable list) on every command."""
    home = home_with(make_home, 'model = ["classic"]\n')
    assert_every_command_refuses(
        home,
        f"{home}/talos.toml:1: model must be one of classic, evidence, not ['classic']",
    )


def test_a_nul_byte_in_a_path_argument_is_an_input_error(make_home) -> None:
    """The API says which argument is wrong instead of raising ValueError at the first read."""
    home = make_home()
    with pytest.raises(InputError, match=r"^sessions_dir contains a NUL byte \('s\\x00'\)"):
        Memory(home, sessions_dir="s\0")
    with pytest.raises(InputError, match=r"^the home '.*\\x00' contains a NUL byte; remove it$"):
        Memory(f"{home}\0")


# == 12.4: a trace failure never fails a recall ==============================================


def test_nul_byte_in_the_trace_path_never_fails_recall(make_home, capfd) -> None:
    """The failing input: ``Memory(trace_file="…\\0…").recall`` raised ValueError."""
    home = make_home(memory="- the kettle is in the left cupboard\n")
    mem = Memory(home, trace_file=str(home / "trace\0.jsonl"))
    assert "- [fact] the kettle is in the left cupboard" in mem.recall("kettle").text
    assert capfd.readouterr().err == (
        f"talos: warning: {home}/trace\\0.jsonl: cannot write the recall trace (embedded null "
        "byte); recall goes on\n"
    )


def test_nul_byte_in_the_trace_path_never_fails_compat_recall(make_home, monkeypatch) -> None:
    """The failing input, second route: ``talos.compat.recall`` with such a TRACE_FILE."""
    home = make_home(memory="- the kettle is in the left cupboard\n")
    monkeypatch.setattr(compat, "MEMORY_FILE", str(home / "memory.md"))
    monkeypatch.setattr(compat, "SKILLS_DIR", str(home / "skills"))
    monkeypatch.setattr(compat, "SESS_DIR", str(home / "sessions"))
    monkeypatch.setattr(compat, "HITS_FILE", str(home / ".talos" / "recall_hits.json"))
    monkeypatch.setattr(compat, "TRACE_FILE", str(home / "trace\0.jsonl"))
    monkeypatch.setattr(compat, "_CACHED", None)
    assert "the kettle is in the left cupboard" in compat.recall("kettle")


def test_nul_byte_in_the_trace_path_never_fails_the_mcp_recall_tool(make_home) -> None:
    """Variant: the MCP ``recall`` tool over a Memory with such a trace path."""
    from talos.mcp.server import build_server

    home = make_home(memory="- the kettle is in the left cupboard\n")

    async def call() -> object:
        mem = Memory(home, trace_file=str(home / "trace\0.jsonl"))
        return await build_server(mem).call_tool("recall", {"query": "kettle"})

    result = asyncio.run(call())
    assert not getattr(result, "is_error", False)
    content = result.content if hasattr(result, "content") else result[0]  # type: ignore[index]
    assert "the kettle is in the left cupboard" in "".join(getattr(c, "text", "") for c in content)


# == 12.7: init never creates a folder from a pattern, nor outside the home ===================


def test_init_never_creates_a_folder_named_like_a_pattern(make_home, tmp_path) -> None:
    """The failing input: ``sessions_dir = "~/.claude/projects/**"`` (as the README suggests)
    made a folder literally named ``**`` inside the other agent's folder."""
    fake_home = tmp_path / "person"
    projects = fake_home / ".claude" / "projects"
    (projects / "p1").mkdir(parents=True)
    (projects / "p1" / "s.jsonl").write_text(session_line("descale the kettle"))
    home = tmp_path / "talos-home"
    home.mkdir()
    (home / "talos.toml").write_text('sessions_dir = "~/.claude/projects/**"\n')
    res = run("init", "--home", str(home), "--json", env={"HOME": str(fake_home)})
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in projects.iterdir()) == ["p1"]
    data = json.loads(res.stdout)["data"]
    assert data.pop("transcripts")["read_already"] == [str(projects)]  # read: not added again
    assert data == {
        "home": str(home),
        "created": [str(home / "skills"), str(home / ".talos"), str(home / "memory.md")],
        "kept": [],
    }
    (projects / "p1" / "s.jsonl").unlink()
    (projects / "p1").rmdir()
    projects.rmdir()  # the other agent's folder is gone: still not created, and said so
    res = run("init", "--home", str(home), "--json", env={"HOME": str(fake_home)})
    assert json.loads(res.stdout)["data"]["not_created"] == [
        {
            "path": str(projects),
            "reason": "outside the home: talos creates nothing there; create it yourself if "
            "you meant it",
        }
    ]
    assert sorted(p.name for p in (fake_home / ".claude").iterdir()) == []


def test_init_creates_nothing_outside_the_home(make_home, tmp_path) -> None:
    """Variant: configured paths outside the home (a memory file, a state folder) and a
    pattern inside it are listed as not created; the home's own folders are made."""
    home = tmp_path / "h"
    home.mkdir()
    (home / "talos.toml").write_text(
        'memory_file = "../notes/memory.md"\nstate_dir = "../state"\nsessions_dir = "logs/*"\n'
    )
    res = run("init", "--home", str(home))
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h"]
    assert sorted(p.name for p in home.iterdir()) == ["skills", "talos.toml"]
    text = " ".join(res.stderr.split())
    for path, reason in (
        (home / "logs/*", "a pattern, not a folder"),
        # paths are canonical (talos.home.canonical, issue 12 item 7): h/../state is ./state
        (tmp_path / "state", "outside the home"),
        (tmp_path / "notes" / "memory.md", "outside the home"),
    ):
        assert f"not created {path}: {reason}" in text
    inside = tmp_path / "i"
    inside.mkdir()
    (inside / "talos.toml").write_text('sessions_dir = "logs/**"\n')
    assert run("init", "--home", str(inside)).exit_code == 0
    assert sorted(p.name for p in (inside / "logs").iterdir()) == []


def test_init_example_never_writes_through_a_link(tmp_path) -> None:
    """Variant: a skill of the example whose name is taken by a dangling link (into another
    folder): copying followed the link and created the file there."""
    home = tmp_path / "h"
    (home / "skills").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / "skills" / "csv-merge.md").symlink_to(elsewhere / "planted.md")
    res = run("init", "--example", "--home", str(home), "--json")
    assert res.exit_code == 0, res.output
    assert list(elsewhere.iterdir()) == []
    assert str(home / "skills" / "csv-merge.md") in json.loads(res.stdout)["data"]["kept"]


# == 12.7: unknown keys ======================================================================


def test_unknown_key_is_warned_with_a_suggestion_and_shown_by_doctor(make_home) -> None:
    """The failing input: ``modle = "classic"`` was silently ignored."""
    home = home_with(make_home, 'lang = "en"\nmodle = "classic"\n')
    res = run("recall", "kettle", "--home", str(home))
    assert res.exit_code == 0
    assert res.stderr == (
        f"talos: warning: {home}/talos.toml:2: unknown key 'modle' (did you mean 'model'?); "
        "ignored\n"
    )
    doctor = run("doctor", "--home", str(home), "--json")
    assert doctor.exit_code == 5
    config = next(
        f for f in json.loads(doctor.stdout)["data"]["findings"] if f["check"] == "config"
    )
    assert config == {
        "check": "config",
        "status": "warn",
        "summary": "talos.toml: 1 setting not used as written",
        "details": ["talos.toml:2: unknown key 'modle' (did you mean 'model'?); ignored"],
        "hint": "fix the spelling, the type or the value, or remove the key",
    }


def test_unknown_keys_without_a_near_name_and_in_tables(make_home) -> None:
    """Variant: a key with no close name gets no suggestion; a table is a key too."""
    home = home_with(make_home, 'colour = "red"\nstatedir = ".t"\n[hooks]\nx = 1\n')
    doctor = json.loads(run("doctor", "--home", str(home), "--json").stdout)["data"]
    config = next(f for f in doctor["findings"] if f["check"] == "config")
    assert config["details"] == [
        "talos.toml:1: unknown key 'colour'; ignored",
        "talos.toml:2: unknown key 'statedir' (did you mean 'state_dir'?); ignored",
        "talos.toml:4: unknown key 'hooks.x'; ignored",
    ]


def test_hooks_table_is_known_and_its_keys_are_checked(make_home) -> None:
    """``[hooks]`` (issue 16) is a known table: a person who configures the agent hooks is not
    told the table is unknown; a misspelt key in it, or a value of the wrong type, is named."""
    home = home_with(make_home, '[hooks]\ntimeout = 2\nbudgte = 5000\nserver = "yes"\nk = true\n')
    doctor = json.loads(run("doctor", "--home", str(home), "--json").stdout)["data"]
    config = next(f for f in doctor["findings"] if f["check"] == "config")
    assert config["details"] == [
        "talos.toml:3: unknown key 'hooks.budgte' (did you mean 'hooks.budget'?); ignored",
        "talos.toml:4: hooks.server = 'yes' has the wrong type; the hook uses its default",
        "talos.toml:5: hooks.k = True has the wrong type; the hook uses its default",
    ]
    good = home_with(make_home, "[hooks]\ntimeout = 2\nk = 3\n", name="good")
    doctor = json.loads(run("doctor", "--home", str(good), "--json").stdout)["data"]
    assert next(f for f in doctor["findings"] if f["check"] == "config")["status"] == "ok"


# == 12.7: --version =========================================================================


def test_version_from_the_package_metadata() -> None:
    res = run("--version")
    assert res.exit_code == 0
    assert res.stdout == f"talos {version('talos-memory')}\n"
    assert version("talos-memory") == talos.__version__


def test_version_under_json_is_the_envelope() -> None:
    """Variant: a script that asked for JSON gets the envelope, and the option is in --help."""
    res = run("--version", "--json")
    assert res.exit_code == 0
    assert json.loads(res.stdout) == {
        "ok": True,
        "command": "version",
        "data": {"version": version("talos-memory")},
        "error": None,
    }
    assert "--version" in run("--help").stdout


def test_hook_settings_out_of_range_or_of_the_wrong_kind_are_named_by_doctor(tmp_path) -> None:
    """A newcomer's talos.toml: ``budget = 50`` (the hook silently used 200), ``k = -3`` and a
    scope that is not a string passed as 'config ok'; a wrong type was called unknown."""
    from talos.home import HOOK_RANGES, unknown_keys
    from talos.hooks.state import RANGES

    assert HOOK_RANGES == RANGES  # one range for the hook and for doctor
    (tmp_path / "talos.toml").write_text(
        '[hooks]\nbudget = 50\nk = -3\ntimeout = "fast"\nidle = 60\n[hooks.scopes]\n"~/work" = 5\n',
        encoding="utf-8",
    )
    from talos.home import load_config

    got = unknown_keys(tmp_path, load_config(tmp_path))
    toml = tmp_path / "talos.toml"
    assert got == [
        f"{toml}:2: hooks.budget = 50 is below 200; the hook uses 200",
        f"{toml}:3: hooks.k = -3 is below 0; the hook uses 0",
        f"{toml}:4: hooks.timeout = 'fast' has the wrong type; the hook uses its default",
        f"{toml}:7: hooks.scopes.'~/work' = 5 must be a scope name (a string); ignored",
    ]


def test_a_hook_setting_that_is_not_finite_is_named_by_doctor(tmp_path) -> None:
    """``timeout = nan`` was called "above 30; the hook uses nan": the hook uses its default."""
    from talos.home import load_config, unknown_keys

    (tmp_path / "talos.toml").write_text("[hooks]\ntimeout = nan\nidle = -inf\n", encoding="utf-8")
    toml = tmp_path / "talos.toml"
    assert unknown_keys(tmp_path, load_config(tmp_path)) == [
        f"{toml}:2: hooks.timeout = nan is not a finite number; the hook uses its default",
        f"{toml}:3: hooks.idle = -inf is not a finite number; the hook uses its default",
    ]


def test_a_path_setting_of_another_type_names_its_line(tmp_path) -> None:
    from talos.errors import InputError
    from talos.home import resolve_paths

    (tmp_path / "talos.toml").write_text('lang = "en"\nsessions_dir = 42\n', encoding="utf-8")
    with pytest.raises(InputError) as e:
        resolve_paths(tmp_path)
    assert (
        str(e.value) == f"{tmp_path / 'talos.toml'}:2: sessions_dir must be a path string, not 42"
    )


def test_init_on_an_existing_home_lists_what_it_kept(tmp_path) -> None:
    """A second ``init`` printed only ``home: H``: nothing said the home was already set up.
    Now every file and folder found is listed as kept, and one line says so; a folder of the
    first run is never listed as kept by that run (``.talos/sessions`` makes ``.talos``)."""
    home = tmp_path / "h"
    first = run("init", "--home", str(home), "--json")
    assert json.loads(first.stdout)["data"]["kept"] == []
    res = run("init", "--home", str(home))
    assert res.exit_code == 0, res.output
    assert res.stderr.splitlines() == [
        f"home: {home}",
        f"  kept existing {home / 'skills'}",
        f"  kept existing {home / '.talos' / 'sessions'}",
        f"  kept existing {home / '.talos'}",
        f"  kept existing {home / 'memory.md'}",
        "  nothing to create: the home is already set up",
    ]


# -- home paths and talos.toml values a person cannot see are wrong ----------------------------


runner = click.testing.CliRunner()


COMMAND = typer.main.get_command(app)


#: A user name no system has: ``~NOBODY`` cannot be expanded.
NOBODY = "nosuchuser-talos-h12a"


def doctor_config(home: Path) -> dict[str, object]:
    """The ``config`` finding of ``talos doctor --json`` (exit 5)."""
    r = invoke("doctor", "--home", str(home), "--json")
    assert r.exit_code == 5, (r.output, r.exception)
    found = [f for f in json.loads(r.stdout)["data"]["findings"] if f["check"] == "config"]
    assert len(found) == 1
    return found[0]


@pytest.fixture
def nobody() -> str:
    try:
        pwd.getpwnam(NOBODY)
    except KeyError:
        return NOBODY
    pytest.skip(f"a user {NOBODY} exists here")


def test_a_tilde_user_that_does_not_exist_in_talos_toml_is_named(
    kettle_home: Path, nobody: str
) -> None:
    """The failing input: ``memory_file = "~nosuchuser/memory.md"``. Every command ended in
    "unexpected error RuntimeError: Could not determine home directory. — a bug in talos"
    (doctor too). It is a value of talos.toml: named with its line, and what to do."""
    (kettle_home / "talos.toml").write_text(
        f'model = "classic"\nmemory_file = "~{nobody}/memory.md"\n'
    )
    want = (
        f"{kettle_home / 'talos.toml'}:2: memory_file '~{nobody}/memory.md': there is no user "
        f"{nobody!r}, so ~{nobody} cannot be expanded; write the path in full"
    )
    for command, *extra in (("recall", "kettle"), ("remember", "the kettle is blue"), ("dead",)):
        assert (
            envelope(invoke(command, *extra, "--home", str(kettle_home), "--json"), command) == want
        )
        assert sentence(invoke(command, *extra, "--home", str(kettle_home)), command) == want
    found = doctor_config(kettle_home)
    assert (found["status"], found["summary"]) == ("error", want.replace(f"{kettle_home}/", ""))
    with pytest.raises(InputError, match="write the path in full"):
        Memory(kettle_home)


def test_a_tilde_home_that_cannot_be_expanded_is_a_usage_error(tmp_path: Path, nobody: str) -> None:
    """Variant: the same ``~user`` as ``--home``, ``TALOS_HOME`` or an API argument. As
    ``--home`` it was a full traceback and no envelope under --json (the option's check ran
    outside the command's error handling)."""
    spelled = f"~{nobody}/talos"
    r = invoke("recall", "kettle", "--home", spelled, "--json")
    assert r.exit_code == 1, (r.output, r.exception)
    env = json.loads(r.stdout)
    assert env["ok"] is False and env["command"] == "recall"
    assert f"there is no user {nobody!r}" in env["error"]
    r = runner.invoke(COMMAND, ["get", "x", "--json"], env={"TALOS_HOME": spelled})
    assert r.exit_code == 1 and f"there is no user {nobody!r}" in json.loads(r.stdout)["error"]
    with pytest.raises(InputError, match=f"there is no user {nobody!r}"):
        Memory(spelled)
    with pytest.raises(InputError, match="state_dir"):
        Memory(tmp_path, state_dir=f"~{nobody}")


def test_an_api_trace_file_with_a_tilde_user_warns_and_recall_goes_on(
    kettle_home: Path,
    nobody: str,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Variant: an overriding ``trace_file`` (API, talos.compat) is the trace writer's to
    refuse with a warning (design §6.1); nothing named ``~user`` is created. A relative home
    (``--home .``) still gets its trace."""
    monkeypatch.chdir(kettle_home)
    got = Memory(kettle_home, trace_file=f"~{nobody}/trace.jsonl").recall("kettle")
    assert "kettle" in got.text
    assert capfd.readouterr().err == (
        f"talos: warning: ~{nobody}/trace.jsonl: cannot write the recall trace (its ~ cannot "
        "be expanded; write the path in full); recall goes on\n"
    )
    assert not any(p.name.startswith("~") for p in kettle_home.rglob("*"))
    r = invoke("recall", "kettle", "--home", ".")
    assert (r.exit_code, r.stderr) == (0, "")
    assert (kettle_home / ".talos" / "recall_trace.jsonl").read_text().count("\n") == 1


def test_a_home_name_too_long_for_the_file_system_is_a_usage_error() -> None:
    """The failing input: ``--home`` of 300 letters. ``OSError: [Errno 36] File name too
    long`` came out as a traceback from the option's check, with no envelope."""
    name = "a" * 300
    r = invoke("recall", "kettle", "--home", name, "--json")
    assert r.exit_code == 1, (r.output, r.exception)
    env = json.loads(r.stdout)
    assert (env["ok"], env["command"]) == (False, "recall")
    assert env["error"] == (
        f"Invalid value for '--home' (env var: 'TALOS_HOME'): the home '{'a' * 60}'… (300 "
        "characters): the name is too long for the file system; use a shorter path"
    )
    r = invoke("doctor", "--home", name, "--plain")
    assert r.exit_code == 1 and "Traceback" not in r.output and "too long" in r.stderr


def test_a_path_too_long_in_talos_toml_names_the_key_and_its_line(kettle_home: Path) -> None:
    """Variant: ``state_dir`` of 300 letters in talos.toml said only "File name too long:
    check the file and try again" about a path the person never typed as such, and doctor
    stopped with exit 1 instead of reporting it."""
    (kettle_home / "talos.toml").write_text(f'state_dir = "{"a" * 300}"\n')
    want = (
        f"{kettle_home / 'talos.toml'}:1: state_dir {'a' * 60!r}… (300 characters): the name "
        "is too "
        "long for the file system; use a shorter path"
    )
    assert envelope(invoke("index", "--home", str(kettle_home), "--json"), "index") == want
    assert (
        sentence(invoke("remember", "the kettle is blue", "--home", str(kettle_home)), "remember")
        == want
    )
    assert doctor_config(kettle_home)["summary"] == want.replace(f"{kettle_home}/", "")
    # one component short enough, the whole path too long: same sentence
    (kettle_home / "talos.toml").write_text(f'memory_file = "{"/".join(["b" * 200] * 30)}"\n')
    got = envelope(invoke("recall", "kettle", "--home", str(kettle_home), "--json"), "recall")
    assert got == (
        f"{kettle_home / 'talos.toml'}:1: memory_file {'b' * 60!r}… (6029 characters): the name "
        "is too "
        "long for the file system; use a shorter path"
    )


@pytest.mark.parametrize(
    "text",
    [
        "model = 1" + "0" * 5000 + "\n",  # the failing input
        'model = "classic"\nhistory = [1, 2, ' + "9" * 4400 + "]\n",  # variant: a list item
    ],
    ids=["model", "unknown-key-list"],
)
def test_a_number_too_long_to_read_in_talos_toml_is_invalid_toml(
    kettle_home: Path, text: str
) -> None:
    """The failing input: an integer of 5,000 digits. Python refuses to convert it (a
    ``ValueError`` that is not a ``TOMLDecodeError``): "unexpected error ValueError: Exceeds
    the limit (4300 digits)… a bug in talos", on all 19 commands, doctor included."""
    (kettle_home / "talos.toml").write_text(text)
    want = (
        f"{kettle_home / 'talos.toml'}: invalid TOML: a number has more than 4300 digits; "
        "shorten it"
    )
    for command, *extra in (("recall", "kettle"), ("index",), ("scan",)):
        assert (
            envelope(invoke(command, *extra, "--home", str(kettle_home), "--json"), command) == want
        )
    found = doctor_config(kettle_home)
    assert (found["status"], found["summary"]) == ("error", want.replace(f"{kettle_home}/", ""))


def test_a_talos_toml_saved_with_a_bom_is_read(kettle_home: Path) -> None:
    """The failing input: a talos.toml saved by an editor that writes a UTF-8 byte order mark
    ("Invalid statement (at line 1, column 1)" on every command: an invisible character).
    It is read; the unknown-key report still finds line 1."""
    (kettle_home / "talos.toml").write_bytes('\ufeffmodel = "classic"\n'.encode())
    assert Memory(kettle_home).model == "classic"
    (kettle_home / "talos.toml").write_bytes('\ufeffmodle = "classic"\n'.encode())
    r = invoke("recall", "kettle", "--home", str(kettle_home))
    assert r.exit_code == 0, r.output
    assert (
        f"talos: warning: {kettle_home / 'talos.toml'}:1: unknown key 'modle' (did you mean "
        "'model'?); "
        "ignored\n" in r.stderr
    )


def test_a_key_given_twice_at_the_end_of_talos_toml_names_its_line(kettle_home: Path) -> None:
    """Variant (invalid TOML names the line): a key given twice on the last line, without a
    final newline, said "(at end of document)"; it says which line."""
    (kettle_home / "talos.toml").write_text('model = "classic"\nlang = "en"\nmodel = "flow"')
    got = envelope(invoke("recall", "kettle", "--home", str(kettle_home), "--json"), "recall")
    assert got == (
        f"{kettle_home / 'talos.toml'}: invalid TOML: Cannot overwrite a value (at line 3, the "
        "last "
        "line; is a key given twice?)"
    )
