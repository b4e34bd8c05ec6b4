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
