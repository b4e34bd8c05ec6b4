"""Issue 14: ``talos/index.py`` became the package ``talos/index/`` (schema, signatures, the
check, the stored blocks, fact rows, session rows). Every name the module had stays importable
from the package, and a name read from a submodule cannot be set on the package, where a
``monkeypatch.setattr`` would change nothing and let a test pass without testing."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import talos.index

#: The public names of the module talos/index.py was (before issue 14).
OLD_NAMES = [
    "APP_ID",
    "CHECK_ALL_LINES",
    "CHECK_SAMPLE",
    "COLUMNS",
    "Index",
    "MIGRATIONS",
    "Progress",
    "READERS",
    "RefreshStats",
    "SCHEMA",
    "STORE_AFTER",
    "indexed_fact",
]

#: Names tests patch, by the submodule that reads them at call time.
PATCHED = {
    "CHECK_ALL_LINES": "talos.index.check",
    "CHECK_SAMPLE": "talos.index.check",
    "STORE_AFTER": "talos.index.blocks",
}


@pytest.mark.parametrize("name", OLD_NAMES)
def test_every_name_of_the_old_module_is_importable_from_the_package(name: str) -> None:
    got = getattr(talos.index, name)
    home = PATCHED.get(name)
    if home is not None:  # the package gives the submodule's value, not a copy
        assert got is getattr(importlib.import_module(home), name)


@pytest.mark.parametrize("name", sorted(PATCHED))
def test_a_name_read_from_a_submodule_cannot_be_set_on_the_package(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    with pytest.raises(AttributeError, match=f"{name} is read from {PATCHED[name]}: set it"):
        monkeypatch.setattr(talos.index, name, 12345)
    monkeypatch.setattr(importlib.import_module(PATCHED[name]), name, 12345)
    assert getattr(talos.index, name) == 12345  # set where it is read, seen everywhere


def test_a_recall_does_not_import_the_check(make_home) -> None:  # type: ignore[no-untyped-def]
    """``talos/index/check.py`` is imported by ``Index.check`` only (doctor, ``--check``)."""
    home: Path = make_home(memory="- kettle tea fact\n")
    code = (
        "import sys\nfrom talos import Memory\n"
        f"Memory({str(home)!r}).recall('kettle')\n"
        "print(sorted(m for m in sys.modules if m.startswith('talos.index')))\n"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "talos.index.check" not in got.stdout
    assert "'talos.index.schema'" in got.stdout


# -- the readers fingerprint names the index's own row makers --------------------------------


def test_the_readers_fingerprint_covers_the_code_that_shapes_rows() -> None:
    """A line's row is made in talos/index/facts.py (parse_line, indexed_fact) and a session's
    in talos/index/sessions.py: code the fingerprint did not cover, so an index built by an
    older row maker was trusted (the plan's "known gap")."""
    from talos.index import signatures

    root = Path(talos.index.__file__).parent.parent
    files = signatures.reader_files()
    assert [p.relative_to(root).as_posix() for p in files] == [
        "sources/facts.py",
        "sources/sessions.py",
        "sources/transcripts.py",
        "safety/__init__.py",  # the safety package, every module of it
        "safety/episodes.py",  # what of a transcript an episode keeps (design §8.4)
        "safety/normalize.py",
        "safety/prefilter.py",
        "safety/rules/__init__.py",
        "safety/rules/commands.py",
        "safety/rules/forms.py",
        "safety/rules/instructions.py",
        "safety/rules/languages.py",
        "safety/scan.py",
        "safety/secret_classes.py",
        "safety/secret_patterns.py",  # the patterns talos.safety.secrets runs
        "safety/secrets.py",
        "safety/skills.py",
        "text.py",
        "view/canon.py",
        "sources/tasks.py",  # picks a session's task (design §3.3)
        "index/facts.py",
        "index/sessions.py",
        "data/detect_secrets.json",  # the data the fact filter reads
        "data/confusables.txt",
    ]
    assert all(p.is_file() for p in files)
    assert signatures.fingerprint(files) == signatures.READERS


def test_an_edit_of_the_row_code_changes_the_readers_fingerprint(tmp_path: Path) -> None:
    from talos.index import signatures

    files = signatures.reader_files()
    copies = []
    for i, path in enumerate(files):
        copies.append(tmp_path / f"{i}-{path.name}")
        copies[-1].write_bytes(path.read_bytes())
    assert signatures.fingerprint(copies) == signatures.READERS
    facts = next(
        c for c in copies if c.name.endswith("-facts.py") and b"def parse_line(" in c.read_bytes()
    )
    facts.write_bytes(facts.read_bytes().replace(b"def parse_line(", b"def parse_line_(", 1))
    assert signatures.fingerprint(copies) != signatures.READERS


def test_an_index_built_by_other_row_code_is_built_again(make_home) -> None:  # type: ignore[no-untyped-def]
    """The readers value stored in index.db is compared on every refresh: a row made by
    other code (here: a fact row with another text) is read again from the file."""
    import sqlite3

    from talos import Memory

    home: Path = make_home(memory="- kettle tea fact\n")
    Memory(home).recall("kettle")
    con = sqlite3.connect(home / ".talos" / "index.db")
    con.execute("UPDATE facts SET text='kettle stale row'")
    con.execute("UPDATE meta SET v='0123456789abcdef' WHERE k='readers'")
    con.commit()
    con.close()
    assert [r.text for r in Memory(home).explain("kettle")] == ["kettle tea fact"]


def test_a_rebuild_empties_every_table_of_the_schema() -> None:
    """``talos index --rebuild`` empties the tables in place (the hook server holds the file
    open; tests/test_hook_never_blocks.py): a table missing from ``schema.TABLES`` would
    outlive the rebuild."""
    from talos.index import schema

    assert sorted(schema.TABLES) == sorted({t for t, _c in schema.COLUMNS})
