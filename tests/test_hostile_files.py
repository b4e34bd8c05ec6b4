"""Issue 12, the hostile pass over items 3, 4 and 7: what broke in the fixed code.

Each test starts from the exact input that broke it (found by driving every command, with and
without ``--json``, over a home made hostile one file at a time), then a variant of our own the
fix must also catch. Families: bad ``talos.toml`` values and home paths (a ``~user`` that does
not exist, a name too long for the file system, a number too long to parse, a BOM), broken
state files (a JSON line nested too deeply, a trace line from the year 9999 or with NaN scores,
reference counts of ``1e400``, a trace line torn by a full disk, another program's SQLite file
at ``index.db``), and files that are not regular (a lock file that is a FIFO, a device, a link).

Every failure must end in one sentence naming the file (and line) and what to do, exit 1 (5
for doctor), the envelope under ``--json``, no traceback, nothing half-written; recall never
fails for a trace or usage problem (SPEC §6.1).
"""

from __future__ import annotations

import errno
import json
import os
import pwd
from pathlib import Path

import click.testing
import pytest
import typer

from talos import Memory
from talos.cli import app
from talos.errors import InputError

runner = click.testing.CliRunner()
COMMAND = typer.main.get_command(app)

MEMORY = "- the kettle is in the left cupboard\n- an old note about the zebra crossing\n"

#: A user name no system has: ``~NOBODY`` cannot be expanded.
NOBODY = "nosuchuser-talos-h12a"


def cli(*args: str) -> click.testing.Result:
    """``talos ARGS`` in-process; stdout and stderr are kept apart."""
    return runner.invoke(COMMAND, list(args))


def envelope(result: click.testing.Result, command: str) -> str:
    """The error of a failed ``--json`` run: exit 1, one envelope, no traceback."""
    assert result.exit_code == 1, (result.output, result.exception)
    env = json.loads(result.stdout)
    assert (env["ok"], env["command"], env["data"]) == (False, command, None)
    assert "Traceback" not in result.output
    return str(env["error"])


def sentence(result: click.testing.Result, command: str) -> str:
    """The message of a failed plain run: exit 1, its last stderr line, no traceback."""
    assert result.exit_code == 1, (result.output, result.exception)
    assert "Traceback" not in result.output
    last = result.stderr.splitlines()[-1]
    assert last.startswith(f"talos {command}: "), result.stderr
    return last.removeprefix(f"talos {command}: ")


def doctor_config(home: Path) -> dict[str, object]:
    """The ``config`` finding of ``talos doctor --json`` (exit 5)."""
    r = cli("doctor", "--home", str(home), "--json")
    assert r.exit_code == 5, (r.output, r.exception)
    found = [f for f in json.loads(r.stdout)["data"]["findings"] if f["check"] == "config"]
    assert len(found) == 1
    return found[0]


@pytest.fixture
def home(make_home) -> Path:  # type: ignore[no-untyped-def]
    return make_home(memory=MEMORY)


# -- home paths and talos.toml values -----------------------------------------------------------


@pytest.fixture
def nobody() -> str:
    try:
        pwd.getpwnam(NOBODY)
    except KeyError:
        return NOBODY
    pytest.skip(f"a user {NOBODY} exists here")


def test_a_tilde_user_that_does_not_exist_in_talos_toml_is_named(home: Path, nobody: str) -> None:
    """The failing input: ``memory_file = "~nosuchuser/memory.md"``. Every command ended in
    "unexpected error RuntimeError: Could not determine home directory. — a bug in talos"
    (doctor too). It is a value of talos.toml: named with its line, and what to do."""
    (home / "talos.toml").write_text(f'model = "classic"\nmemory_file = "~{nobody}/memory.md"\n')
    want = (
        f"{home / 'talos.toml'}:2: memory_file '~{nobody}/memory.md': there is no user "
        f"{nobody!r}, so ~{nobody} cannot be expanded; write the path in full"
    )
    for command, *extra in (("recall", "kettle"), ("remember", "the kettle is blue"), ("dead",)):
        assert envelope(cli(command, *extra, "--home", str(home), "--json"), command) == want
        assert sentence(cli(command, *extra, "--home", str(home)), command) == want
    found = doctor_config(home)
    assert (found["status"], found["summary"]) == ("error", want.replace(f"{home}/", ""))
    with pytest.raises(InputError, match="write the path in full"):
        Memory(home)


def test_a_tilde_home_that_cannot_be_expanded_is_a_usage_error(tmp_path: Path, nobody: str) -> None:
    """Variant: the same ``~user`` as ``--home``, ``TALOS_HOME`` or an API argument. As
    ``--home`` it was a full traceback and no envelope under --json (the option's check ran
    outside the command's error handling)."""
    spelled = f"~{nobody}/talos"
    r = cli("recall", "kettle", "--home", spelled, "--json")
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
    home: Path, nobody: str, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Variant: an overriding ``trace_file`` (API, talos.compat) is the trace writer's to
    refuse with a warning (SPEC §6.1); nothing named ``~user`` is created. A relative home
    (``--home .``) still gets its trace."""
    monkeypatch.chdir(home)
    got = Memory(home, trace_file=f"~{nobody}/trace.jsonl").recall("kettle")
    assert "kettle" in got.text
    assert capfd.readouterr().err == (
        f"talos: warning: ~{nobody}/trace.jsonl: cannot write the recall trace (its ~ cannot "
        "be expanded; write the path in full); recall goes on\n"
    )
    assert not any(p.name.startswith("~") for p in home.rglob("*"))
    r = cli("recall", "kettle", "--home", ".")
    assert (r.exit_code, r.stderr) == (0, "")
    assert (home / ".talos" / "recall_trace.jsonl").read_text().count("\n") == 1


def test_a_home_name_too_long_for_the_file_system_is_a_usage_error() -> None:
    """The failing input: ``--home`` of 300 letters. ``OSError: [Errno 36] File name too
    long`` came out as a traceback from the option's check, with no envelope."""
    name = "a" * 300
    r = cli("recall", "kettle", "--home", name, "--json")
    assert r.exit_code == 1, (r.output, r.exception)
    env = json.loads(r.stdout)
    assert (env["ok"], env["command"]) == (False, "recall")
    assert env["error"] == (
        f"Invalid value for '--home' (env var: 'TALOS_HOME'): the home '{'a' * 60}'… (300 "
        "characters): the name is too long for the file system; use a shorter path"
    )
    r = cli("doctor", "--home", name, "--plain")
    assert r.exit_code == 1 and "Traceback" not in r.output and "too long" in r.stderr


def test_a_path_too_long_in_talos_toml_names_the_key_and_its_line(home: Path) -> None:
    """Variant: ``state_dir`` of 300 letters in talos.toml said only "File name too long:
    check the file and try again" about a path the person never typed as such, and doctor
    stopped with exit 1 instead of reporting it."""
    (home / "talos.toml").write_text(f'state_dir = "{"a" * 300}"\n')
    want = (
        f"{home / 'talos.toml'}:1: state_dir {'a' * 60!r}… (300 characters): the name is too "
        "long for the file system; use a shorter path"
    )
    assert envelope(cli("index", "--home", str(home), "--json"), "index") == want
    assert sentence(cli("remember", "the kettle is blue", "--home", str(home)), "remember") == want
    assert doctor_config(home)["summary"] == want.replace(f"{home}/", "")
    # one component short enough, the whole path too long: same sentence
    (home / "talos.toml").write_text(f'memory_file = "{"/".join(["b" * 200] * 30)}"\n')
    got = envelope(cli("recall", "kettle", "--home", str(home), "--json"), "recall")
    assert got == (
        f"{home / 'talos.toml'}:1: memory_file {'b' * 60!r}… (6029 characters): the name is too "
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
def test_a_number_too_long_to_read_in_talos_toml_is_invalid_toml(home: Path, text: str) -> None:
    """The failing input: an integer of 5,000 digits. Python refuses to convert it (a
    ``ValueError`` that is not a ``TOMLDecodeError``): "unexpected error ValueError: Exceeds
    the limit (4300 digits)… a bug in talos", on all 19 commands, doctor included."""
    (home / "talos.toml").write_text(text)
    want = f"{home / 'talos.toml'}: invalid TOML: a number has more than 4300 digits; shorten it"
    for command, *extra in (("recall", "kettle"), ("index",), ("scan",)):
        assert envelope(cli(command, *extra, "--home", str(home), "--json"), command) == want
    found = doctor_config(home)
    assert (found["status"], found["summary"]) == ("error", want.replace(f"{home}/", ""))


def test_a_talos_toml_saved_with_a_bom_is_read(home: Path) -> None:
    """The failing input: a talos.toml saved by an editor that writes a UTF-8 byte order mark
    ("Invalid statement (at line 1, column 1)" on every command: an invisible character).
    It is read; the unknown-key report still finds line 1."""
    (home / "talos.toml").write_bytes('\ufeffmodel = "classic"\n'.encode())
    assert Memory(home).model == "classic"
    (home / "talos.toml").write_bytes('\ufeffmodle = "flow"\n'.encode())
    r = cli("recall", "kettle", "--home", str(home))
    assert r.exit_code == 0, r.output
    assert (
        f"talos: warning: {home / 'talos.toml'}:1: unknown key 'modle' (did you mean 'model'?); "
        "ignored\n" in r.stderr
    )


def test_a_key_given_twice_at_the_end_of_talos_toml_names_its_line(home: Path) -> None:
    """Variant (invalid TOML names the line): a key given twice on the last line, without a
    final newline, said "(at end of document)"; it says which line."""
    (home / "talos.toml").write_text('model = "classic"\nlang = "en"\nmodel = "flow"')
    got = envelope(cli("recall", "kettle", "--home", str(home), "--json"), "recall")
    assert got == (
        f"{home / 'talos.toml'}: invalid TOML: Cannot overwrite a value (at line 3, the last "
        "line; is a key given twice?)"
    )


# -- broken state files: lines talos did not write ----------------------------------------------

#: One JSON line nested 100,000 deep: ``json.loads`` raises ``RecursionError``, which is not the
#: ``ValueError`` every reader skipped an unreadable line for.
DEEP = b"[" * 100_000 + b"]" * 100_000 + b"\n"


def _strict(text: str) -> object:
    """Parse ``text`` as strict JSON (``NaN`` and ``Infinity`` are not JSON: jq refuses them)."""

    def refuse(name: str) -> object:
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def test_an_audit_line_nested_too_deeply_is_skipped_not_fatal(home: Path) -> None:
    """The failing input: one such line in ``.talos/audit.jsonl``. ``remember``, ``forget``,
    ``revoke``, ``history`` and doctor ended in "input nested too deeply to read; check the file
    you gave" (no file named): one bad line stopped every write. It is an unreadable entry,
    skipped with a warning that names its line, like a torn one."""
    mem = Memory(home)
    mem.remember("the kettle is in the right cupboard now", key="kettle.place")
    log = home / ".talos" / "audit.jsonl"
    with log.open("ab") as f:
        f.write(DEEP)
    bad = len(log.read_bytes().splitlines())
    r = cli("remember", "the teapot is on the shelf", "--key", "teapot.place", "--home", str(home))
    assert r.exit_code == 0, (r.output, r.exception)
    assert "the teapot is on the shelf" in (home / "memory.md").read_text()
    r = cli("history", "teapot.place", "--home", str(home), "--json")
    assert r.exit_code == 0, (r.output, r.exception)
    assert [e["op"] for e in json.loads(r.stdout)["data"]] == ["remember"]
    r = cli("doctor", "--home", str(home), "--json")
    found = [f for f in json.loads(r.stdout)["data"]["findings"] if f["check"] == "audit"]
    assert found[0]["details"] == [f".talos/audit.jsonl:{bad}: unreadable audit entry skipped"]
    # variant: the deep line is the last one, where the next write settles open transactions
    with log.open("ab") as f:
        f.write(DEEP)
    assert Memory(home).remember("the mugs are by the sink", key="mugs.place").status == "active"


def test_trace_lines_that_no_recall_wrote_are_counted_unreadable(home: Path) -> None:
    """The failing inputs, one trace line each: nested too deeply ("input nested too deeply"
    from report); ``"t": 1e400`` (OverflowError: "unexpected error … a bug in talos");
    ``NaN`` and ``Infinity`` scores (``report --json`` printed ``"mean": NaN``: not JSON).
    Variants: a time before 1970 and one in the year 9999 (a span of 2.9 million days: the
    report took 35 s and 3.9 GB). Each is an unreadable line; the report of the rest is
    strict JSON, and ``--html`` is written."""
    Memory(home).recall("kettle")
    trace = home / ".talos" / "recall_trace.jsonl"
    good = trace.read_bytes()
    with trace.open("ab") as f:
        f.write(DEEP)
        f.write(b'{"picked": [], "t": 1e400}\n')
        f.write(b'{"picked": [{"key": "fact:x", "score": NaN, "body": false}], "t": 1780000000}\n')
        f.write(b'{"picked": [{"key": "fact:x", "score": 1e999, "body": false}], "t": 1}\n')
        f.write(b'{"picked": [], "t": -86400}\n')
        f.write(b'{"picked": [], "t": 253402300000}\n')
    r = cli("report", "--home", str(home), "--json")
    assert r.exit_code == 0, (r.output, r.exception)
    data = _strict(r.stdout)["data"]  # type: ignore[index]
    assert (data["recalls"], data["malformed_lines"]) == (1, 6)
    assert len(data["per_day"]) == 1 and data["scores"]["count"] == 1
    page = home / "report.html"
    r = cli("report", "--home", str(home), "--html", str(page), "--plain")
    assert r.exit_code == 0, (r.output, r.exception)
    assert "NaN" not in page.read_text() and "Infinity" not in page.read_text()
    assert trace.read_bytes().startswith(good)  # report changes nothing


def test_reference_counts_too_large_for_a_number_are_read_as_zero(make_home) -> None:
    """The failing input: a reference ``recall_hits.json`` with ``1e400`` (infinity once
    read): importing it raised OverflowError, so ``dead``, ``forget``, ``report`` and doctor
    ended in "unexpected error … a bug in talos" on every run (the import never completed).
    Variant: ``1e30``, a finite number SQLite cannot store. Each unusable count is 0; the
    others are kept."""
    home = make_home(memory="- the kettle is in the left cupboard <!-- reflect 2026-01-01 -->\n")
    (home / ".talos").mkdir()
    (home / ".talos" / "recall_hits.json").write_text(
        '{"事实:the kettle is in the left cupboard": [1e400, 3, 20000],'
        ' "事实:an old note": [12, 1e30]}',
        encoding="utf-8",
    )
    for command in ("dead", "report"):
        r = cli(command, "--home", str(home), "--json")
        assert r.exit_code == 0, (command, r.output, r.exception)
    usage = Memory(home).usage()
    assert tuple(usage["fact:the kettle is in the left cupboard"]) == (0, 3, 20000)
    assert tuple(usage["fact:an old note"]) == (12, 0, 0)


def test_reference_counts_too_large_are_zero_for_talos_compat(tmp_path: Path, monkeypatch) -> None:
    """Variant through ``talos.compat``, which keeps the counts in the reference file itself:
    ``dead()`` raised OverflowError, and every ``recall()`` warned and counted nothing."""
    from talos import compat

    (tmp_path / "memory.md").write_text("- the kettle is in the left cupboard\n")
    hits = tmp_path / "recall_hits.json"
    hits.write_text('{"事实:the kettle is in the left cupboard": [1e400, 2]}', encoding="utf-8")
    for name, value in (
        ("MEMORY_FILE", tmp_path / "memory.md"),
        ("SKILLS_DIR", tmp_path / "skills"),
        ("SESS_DIR", tmp_path / "sessions"),
        ("HITS_FILE", hits),
        ("TRACE_FILE", tmp_path / "trace.jsonl"),
    ):
        monkeypatch.setattr(compat, name, value)
    assert compat.dead(min_seen=0) == []
    assert "kettle" in compat.recall("kettle")
    assert json.loads(hits.read_text(encoding="utf-8")) == {
        "事实:the kettle is in the left cupboard": [1, 3, _today()]
    }


def _today() -> int:
    from talos.usage import today

    return today()


def test_a_trace_line_cut_short_by_a_full_disk_costs_only_itself(
    home: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The failing input, found on a real full disk (a 1 MiB tmpfs): the kernel wrote part of
    the trace line and said so by a short count; ``write_trace`` did not check it, so a torn
    line was left without a word, and the next recall's line was glued onto it (two recalls
    lost). Now the rest is written or the failure warned about, and the next line starts on a
    line of its own: the torn piece is one unreadable line."""
    from talos.report import read_trace

    mem = Memory(home)
    mem.recall("kettle")
    trace = home / ".talos" / "recall_trace.jsonl"
    real_write = os.write
    calls: list[int] = []

    def short_then_full(fd: int, data: bytes) -> int:
        if os.fstat(fd).st_ino != trace.stat().st_ino:
            return real_write(fd, data)
        calls.append(len(data))
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, bytes(data[: len(data) // 2]))

    capfd.readouterr()
    monkeypatch.setattr(os, "write", short_then_full)
    assert "kettle" in mem.recall("kettle").text  # recall goes on
    assert capfd.readouterr().err == (
        f"talos: warning: {trace}: cannot write the recall trace (No space left on device); "
        "recall goes on\n"
    )
    monkeypatch.undo()
    mem.recall("zebra crossing")
    rounds, bad = read_trace(trace)
    assert (len(rounds), bad) == (2, 1)
    assert trace.read_bytes().endswith(b"\n")


def test_a_trace_line_torn_by_a_kill_is_not_glued_onto(home: Path) -> None:
    """Variant: a trace whose last line a kill left without its end (``{"picked": [``); the
    next recall's line was appended to it, so both were unreadable."""
    from talos.report import read_trace

    trace = home / ".talos" / "recall_trace.jsonl"
    trace.parent.mkdir()
    trace.write_bytes(b'{"picked": [], "t": 1780000000}\n{"picked": [')
    Memory(home).recall("kettle")
    rounds, bad = read_trace(trace)
    assert (len(rounds), bad) == (2, 1)


# -- files that are not regular: the lock files -------------------------------------------------


def test_a_lock_file_that_is_not_a_regular_file_is_refused_by_name(home: Path) -> None:
    """The failing input: ``.talos/locks/memory.lock`` a FIFO (or a device node): ``remember``
    opened it and went on, writing through whatever was there; a socket said only "No such
    device or address: check the file and try again". Every write names the lock file and
    what it is, exit 1, the envelope; memory.md is unchanged."""
    locks = home / ".talos" / "locks"
    locks.mkdir(parents=True)
    os.mkfifo(locks / "memory.lock")
    before = (home / "memory.md").read_bytes()
    want = (
        f"{locks / 'memory.lock'}: is a FIFO (named pipe), not a regular file; talos reads and "
        "writes only regular files (replace it with one, or point talos at another path)"
    )
    r = cli("remember", "the kettle is blue", "--home", str(home), "--json")
    assert envelope(r, "remember") == want
    assert sentence(cli("revoke", "--ref", "msg-1", "--home", str(home)), "revoke") == want
    assert (home / "memory.md").read_bytes() == before


def test_a_lock_file_linked_elsewhere_is_refused_and_its_target_untouched(
    home: Path, tmp_path: Path
) -> None:
    """Variant: the lock a symbolic link to a file of the person's. filelock before 3.20.1
    (CVE-2025-68146; pyproject allowed 3.12) truncated the target; newer ones say only "Too
    many levels of symbolic links". Refused by name before the lock is taken; the target is
    as it was."""
    victim = tmp_path / "notes.txt"
    victim.write_text("my notes\n")
    locks = home / ".talos" / "locks"
    locks.mkdir(parents=True)
    (locks / "memory.lock").symlink_to(victim)
    got = envelope(cli("remember", "the kettle is blue", "--home", str(home), "--json"), "remember")
    assert got.startswith(f"{locks / 'memory.lock'}: is a symbolic link, not a regular file")
    assert victim.read_text() == "my notes\n"


def test_a_fifo_as_the_compat_hits_lock_never_fails_a_recall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Variant: the lock of talos.compat's ``recall_hits.json`` a FIFO: the usage write is
    refused with a warning naming it, and the recall goes on (SPEC §6.1)."""
    from talos import compat

    (tmp_path / "memory.md").write_text("- the kettle is in the left cupboard\n")
    hits = tmp_path / "recall_hits.json"
    os.mkfifo(tmp_path / "recall_hits.json.lock")
    for name, value in (
        ("MEMORY_FILE", tmp_path / "memory.md"),
        ("SKILLS_DIR", tmp_path / "skills"),
        ("SESS_DIR", tmp_path / "sessions"),
        ("HITS_FILE", hits),
        ("TRACE_FILE", tmp_path / "trace.jsonl"),
    ):
        monkeypatch.setattr(compat, name, value)
    assert "kettle" in compat.recall("kettle")
    assert f"{hits}.lock: is a FIFO (named pipe), not a regular file" in capfd.readouterr().err
    assert not hits.exists()


# -- broken state files: another program's file at index.db ------------------------------------


def _asides(state: Path) -> list[Path]:
    return sorted(p for p in state.iterdir() if p.name.startswith("index.db.not-talos-"))


def test_another_programs_database_at_index_db_is_moved_aside_not_deleted(
    home: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The failing input: a valid SQLite file of another program at ``.talos/index.db`` (a
    ``state_dir`` pointed at a folder of one's own). talos took it for a damaged index and
    deleted it, with its data. The index is a cache of talos's; a file talos cannot tell is
    its own is moved aside, named in the warning, and the index rebuilt beside it."""
    import sqlite3

    state = home / ".talos"
    state.mkdir()
    con = sqlite3.connect(state / "index.db")
    con.execute("CREATE TABLE notes(t)")
    con.execute("INSERT INTO notes VALUES ('precious')")
    con.commit()
    con.close()
    assert "kettle" in Memory(home).recall("kettle").text
    (aside,) = _asides(state)
    con = sqlite3.connect(aside)
    assert con.execute("SELECT t FROM notes").fetchall() == [("precious",)]
    con.close()
    err = capfd.readouterr().err
    assert f"talos: warning: {state / 'index.db'}: not talos's index (" in err
    assert f"moved to {aside}; a new index is built from the files" in err


def test_bytes_that_are_not_a_database_at_index_db_are_moved_aside(home: Path) -> None:
    """Variant: a file that is not SQLite at all (it may be anyone's) is moved aside byte for
    byte; talos's own damaged index (its application id in the header) is rebuilt in place,
    leaving nothing beside it."""
    state = home / ".talos"
    state.mkdir()
    junk = b"my shopping list, not a database\n" * 50
    (state / "index.db").write_bytes(junk)
    Memory(home).recall("kettle")
    (aside,) = _asides(state)
    assert aside.read_bytes() == junk
    aside.unlink()
    ours = (state / "index.db").read_bytes()
    for extra in ("-wal", "-shm"):
        Path(f"{state / 'index.db'}{extra}").unlink(missing_ok=True)
    (state / "index.db").write_bytes(ours[:100] + b"\xff" * 3000)  # header kept, pages gone
    assert "kettle" in Memory(home).recall("kettle").text
    assert _asides(state) == []


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE facts SET fields = '{' WHERE fields != ''",  # the failing input
        "UPDATE facts SET kw = NULL",  # variant: a column SQLite gives back as NULL
        "UPDATE sessions SET kw = x'ff'",  # variant: an episode row of the wrong type
    ],
    ids=["fields", "keywords", "episode"],
)
def test_an_index_whose_rows_do_not_decode_is_not_trusted(make_home, damage: str) -> None:
    """The failing input: an index.db whose schema is right but whose rows are not what talos
    writes (a bit flipped in a page, an edit with a SQLite browser): ``recall`` and ``get``
    ended in "unexpected error JSONDecodeError … a bug in talos". The index is a cache: recall
    reads the files directly and warns, naming index.db and what to do."""
    import sqlite3

    home = make_home(
        memory="- the kettle is in the left cupboard <!-- user 2026-01-01 key=kettle.place -->\n",
        sessions={"a.jsonl": json.dumps({"role": "user", "content": "descale the kettle"}) + "\n"},
    )
    Memory(home).recall("kettle")
    con = sqlite3.connect(home / ".talos" / "index.db")
    con.execute(damage)
    con.execute("DELETE FROM blocks")  # the stored blocks hid the rows from this recall
    con.commit()
    con.close()
    r = cli("recall", "kettle", "--home", str(home))
    assert r.exit_code == 0, (r.output, r.exception)
    assert "- [fact] (2026-01-01) the kettle is in the left cupboard" in r.stdout.splitlines()
    assert "- [episode] (talos) descale the kettle" in r.stdout  # no dated name: no day
    index = home / ".talos" / "index.db"
    assert f"talos: warning: {index}: index unavailable (" in r.stderr
    assert "run talos index --rebuild); reading the files directly" in r.stderr
    r = cli("get", "kettle.place", "--home", str(home), "--json")
    assert r.exit_code == 0, (r.output, r.exception)
    assert json.loads(r.stdout)["data"]["value"] == "the kettle is in the left cupboard"
    r = cli("index", "--rebuild", "--home", str(home), "--json")
    assert r.exit_code == 0, (r.output, r.exception)
    assert "warning" not in cli("recall", "kettle", "--home", str(home)).stderr


# -- broken state files: usage.db ---------------------------------------------------------------


def test_another_programs_database_at_usage_db_is_left_alone(
    home: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The failing input: a SQLite file of another program at ``.talos/usage.db`` (schema
    version 0): talos created its three tables inside it and counted there. It is named as
    not talos's, left byte for byte as it was; recall goes on without counting (SPEC §6.1)."""
    import sqlite3

    state = home / ".talos"
    state.mkdir()
    db = state / "usage.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE notes(t)")
    con.execute("INSERT INTO notes VALUES ('precious')")
    con.commit()
    con.close()
    before = db.read_bytes()
    want = (
        f"{db}: not a talos usage database (it holds table notes); move it aside (talos then "
        "starts new counts; recall is not affected) or put back a backup"
    )
    assert envelope(cli("dead", "--home", str(home), "--json"), "dead") == want
    capfd.readouterr()
    assert "kettle" in Memory(home).recall("kettle").text
    assert capfd.readouterr().err == (
        f"talos: warning: cannot update usage counts ({want}); recall goes on\n"
    )
    assert db.read_bytes() == before


def test_another_programs_database_is_not_called_a_newer_talos(home: Path) -> None:
    """Variant: another program's database with its own application id and schema version 7
    was "written by a newer talos (usage schema 7…); upgrade talos"."""
    import sqlite3

    (home / ".talos").mkdir()
    db = home / ".talos" / "usage.db"
    con = sqlite3.connect(db)
    con.executescript("PRAGMA application_id=1234; PRAGMA user_version=7; CREATE TABLE n(t);")
    con.close()
    got = envelope(cli("report", "--home", str(home), "--json"), "report")
    assert got.startswith(f"{db}: not a talos usage database (application id 0x4d2); move it")


def test_a_usage_db_held_by_another_program_delays_recall_briefly(
    home: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The failing input: usage.db held by another program (``BEGIN EXCLUSIVE`` in a SQLite
    browser left open): every recall waited 60 s (61.4 s measured) before it warned and went
    on, longer than an agent's hook allows. A recall waits :data:`talos.usage.RECORD_WAIT`
    seconds for the counts, then warns and goes on (SPEC §6.1); the counts it could not write
    are the only loss."""
    import sqlite3

    from talos import usage

    mem = Memory(home)
    mem.recall("kettle")
    mem.close()
    monkeypatch.setattr(usage, "RECORD_WAIT", 0.05)  # seconds; the rule, made quick to test
    holder = sqlite3.connect(home / ".talos" / "usage.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        capfd.readouterr()
        assert "kettle" in Memory(home).recall("kettle").text
        err = capfd.readouterr().err
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert err == (
        f"talos: warning: cannot update usage counts ({home / '.talos' / 'usage.db'}: cannot "
        "use the usage counts (database is locked); another talos process is using it: try "
        "again); recall goes on\n"
    )
    assert usage.RECORD_WAIT < 60 and usage.RECORD_WAIT == 0.05


# -- whose file is it, while another process holds it open in WAL mode --------------------------


def _held_in_wal(path: Path, app_id: int) -> object:
    """A connection that made a WAL database of ``app_id`` at ``path`` and holds it open: the
    id lives only in the -wal file, the header still says 0 (no checkpoint yet)."""
    import sqlite3

    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute(f"PRAGMA application_id={app_id}")
    con.execute("CREATE TABLE t(x)")
    assert path.read_bytes()[68:72] == b"\0\0\0\0"  # what the header alone says
    return con


def test_talos_knows_its_own_index_while_another_process_holds_it_in_wal(tmp_path: Path) -> None:
    """Found: ``talos index --rebuild`` while the hook server held index.db open moved talos's
    own index aside as "not talos's index": the application id was read from the header.
    Read as SQLite reads it (-wal included), it is talos's; another program's WAL database
    is not; and a FIFO at the -wal name never hangs the check (the header decides)."""
    import threading

    from talos import fsutil
    from talos.index import schema

    fifo = tmp_path / "fifo.db"
    ours = tmp_path / "index.db"
    con = _held_in_wal(ours, schema.APP_ID)
    other = tmp_path / "other.db"
    con2 = _held_in_wal(other, 0x1234)
    try:
        assert fsutil.sqlite_application_id(ours) == schema.APP_ID
        assert schema.ours(ours)
        assert fsutil.sqlite_application_id(other) == 0x1234
        assert not schema.ours(other)
    finally:
        con.close()  # type: ignore[attr-defined]
        con2.close()  # type: ignore[attr-defined]
    _held_in_wal(tmp_path / "fifo.db", schema.APP_ID).close()  # type: ignore[attr-defined]
    os.mkfifo(tmp_path / "fifo.db-wal")  # a WAL database: SQLite would open its -wal
    got: list[int | None] = []
    t = threading.Thread(target=lambda: got.append(fsutil.sqlite_application_id(fifo)))
    t.start()
    t.join(10)
    if t.is_alive():  # release the open that hangs, then fail
        os.close(os.open(tmp_path / "fifo.db-wal", os.O_WRONLY | os.O_NONBLOCK))
        t.join(10)
        pytest.fail("a FIFO at the -wal name hung the check")
    assert got == [schema.APP_ID]  # the header's, checkpointed when the writer closed
    text = tmp_path / "notes.txt"
    text.write_text("no database " * 10, encoding="utf-8")
    assert fsutil.sqlite_application_id(text) is None


def test_the_vector_cache_knows_its_own_file_in_wal_too(tmp_path: Path) -> None:
    """The sibling: the vector cache told its own file from another program's by the header
    too (a damaged cache of its own was named "not talos's" while its id was in the -wal)."""
    from talos import vectors

    path = tmp_path / "vectors.db"
    con = _held_in_wal(path, vectors.APP_ID)
    try:
        cache = vectors.VectorCache(path, embedder=None)  # type: ignore[arg-type]
        assert cache._ours()
    finally:
        con.close()  # type: ignore[attr-defined]
