"""design §9.3: the reference project's own memory tests pass against ``talos.compat``.

``talos.compat`` is a drop-in for agents built on the reference ``recall.py``; the strongest
check of that promise is the reference's own test file, run with ``import recall`` served by
talos. Nothing of the reference is in this repository: the tests read a checkout of it.

Environment variable ``TALOS_REFERENCE``: a checkout of the reference project Jerry-TZ/Talos,
the folder that holds ``tests/test_memory.py`` (and ``tests/conftest.py``, ``agent.py``,
``session.py``, which that conftest's fixtures import). Unset, or not such a folder: the tests
skip and say so. Example::

    git clone https://github.com/Jerry-TZ/Talos /path/to/ref
    TALOS_REFERENCE=/path/to/ref pytest tests/test_compat_reference.py -v

At run time, in ``tmp_path``: :data:`SHIM` as ``recall.py``, beside copies of the reference's
``agent.py`` and ``session.py`` and, under ``tests/``, of its ``test_memory.py`` and
``conftest.py``; pytest runs there in a subprocess with this interpreter, the ``talos`` of this
checkout first on the path, and ``HOME``/``XDG_DATA_HOME`` in ``tmp_path``.

Which tests: the *memory tests* of ``test_memory.py`` — the test functions that import
``recall`` and not ``agent`` (the others test the reference's agent loop: permissions, tools),
found in the file's syntax tree so a newer checkout's tests come along — less
:data:`NOT_APPLICABLE`, each with its reason. At the time of writing that is 25 tests.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

#: Tests of the memory set that cannot apply to talos.compat, with the reason.
NOT_APPLICABLE = {
    "test_body_injection_does_not_depend_on_how_many_rows_we_show": (
        "replaces the reference's private ranking function _rank with a fake ranking; "
        "talos.compat has no such seam (it would pass without testing anything)"
    ),
    "test_copying_a_bridge_node_must_not_scale_its_pull": (
        "marked xfail(strict) for the reference model's known defect (design §10), which the "
        "default model fixes: run on its own, without the mark, by "
        "test_the_defect_the_reference_records_is_fixed"
    ),
}

#: ``recall.py`` of the run: ``import recall`` is talos.compat. The path variables are
#: properties that read and write talos.compat's (the reference's fixtures reassign them with
#: ``monkeypatch``); every other public name is compat's; the private helpers the reference
#: tests reach into are mapped to talos's own rules.
SHIM = '''"""The reference's ``recall`` served by talos.compat (tests/test_compat_reference.py)."""

import json
import sys
import types

from talos import compat as _compat
from talos.sources.facts import parse_fact_line
from talos.sources.skills import parse_frontmatter
from talos.text import drop_not_for as _drop_dont_use
from talos.text import keywords as _keywords
from talos.usage.counts import query_hash as _qhash
from talos.usage.counts import today as _today

_PATHS = ("MEMORY_FILE", "SKILLS_DIR", "SESS_DIR", "HITS_FILE", "TRACE_FILE")


def _key(node):
    return node["kind"] + ":" + node["text"][:80]


def _load_hits():
    try:
        with open(_compat.HITS_FILE, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _load_nodes(blocked=None, keep_fact=None):
    """The facts of MEMORY_FILE as the reference's node dicts (the tests read only facts)."""
    nodes = []
    with open(_compat.MEMORY_FILE, encoding="utf-8") as f:
        for line in f:
            fact = parse_fact_line(line)
            if fact is not None and (keep_fact is None or keep_fact(fact.text)):
                nodes.append(
                    {"kind": "事实", "text": fact.text, "src": fact.src, "born": fact.born}
                )
    return nodes


def _frontmatter_desc(raw):
    fields, _body = parse_frontmatter(raw)
    label = _compat.skill_label(fields.get("name", ""), fields.get("description", ""))
    return label or raw[:60]


class _Recall(types.ModuleType):
    def __getattr__(self, name):
        return getattr(_compat, name)


for _name in _PATHS:
    setattr(
        _Recall,
        _name,
        property(
            lambda self, n=_name: getattr(_compat, n),
            lambda self, value, n=_name: setattr(_compat, n, value),
        ),
    )

sys.modules[__name__].__class__ = _Recall  # this module's paths are compat's
'''


def reference() -> Path:
    """The reference checkout named by ``TALOS_REFERENCE``; skips the test when there is none."""
    where = os.environ.get("TALOS_REFERENCE", "")
    if not where:
        pytest.skip(
            "set TALOS_REFERENCE to a checkout of the reference project Jerry-TZ/Talos "
            "(the folder holding tests/test_memory.py) to run its memory tests against "
            "talos.compat"
        )
    ref = Path(where).expanduser()
    for needed in ("tests/test_memory.py", "tests/conftest.py", "agent.py", "session.py"):
        if not (ref / needed).is_file():
            pytest.skip(
                f"TALOS_REFERENCE={where} holds no {needed}: set TALOS_REFERENCE to a "
                "checkout of the reference project Jerry-TZ/Talos"
            )
    return ref


def memory_tests(source: str) -> list[str]:
    """Names of the test functions of ``source`` that import ``recall`` and not ``agent``."""
    names = []
    for f in ast.parse(source).body:
        if isinstance(f, ast.FunctionDef) and f.name.startswith("test_"):
            imported = {
                a.name.split(".")[0]
                for x in ast.walk(f)
                if isinstance(x, ast.Import)
                for a in x.names
            }
            if "recall" in imported and "agent" not in imported:
                names.append(f.name)
    return names


def build(ref: Path, where: Path) -> None:
    """The run folder: the shim as ``recall.py``, the reference files it needs copied."""
    (where / "tests").mkdir(parents=True)
    (where / "recall.py").write_text(SHIM, encoding="utf-8")
    (where / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # the rootdir, no config
    for name in ("agent.py", "session.py"):
        shutil.copyfile(ref / name, where / name)
    for name in ("test_memory.py", "conftest.py"):
        shutil.copyfile(ref / "tests" / name, where / "tests" / name)


def run(where: Path, names: list[str], *options: str) -> dict[str, str]:
    """Run ``names`` of the copied test_memory.py with pytest in a subprocess; returns
    ``{name: "passed" | "failed: message" | "error: message" | "skipped: message"}``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TALOS_", "PYTEST_"))}
    env.update(
        HOME=str(where / "user"),
        XDG_DATA_HOME=str(where / "xdg-data"),
        PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        PYTHONDONTWRITEBYTECODE="1",
    )
    report = where / "report.xml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
    cmd += ["--junitxml", str(report), *options]
    cmd += [f"tests/test_memory.py::{n}" for n in names]
    done = subprocess.run(
        cmd, cwd=where, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert report.is_file(), f"pytest did not run:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    results: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = f"{child.tag}: {(child.get('message') or '').strip()[:300]}"
        results[case.get("name", "")] = outcome
    return results


def test_the_reference_memory_tests_pass_against_compat(tmp_path: Path) -> None:
    ref = reference()
    names = memory_tests((ref / "tests" / "test_memory.py").read_text(encoding="utf-8"))
    chosen = [n for n in names if n not in NOT_APPLICABLE]
    assert chosen, "no memory test found in the reference's tests/test_memory.py"
    build(ref, tmp_path)
    results = run(tmp_path, chosen)
    assert sorted(results) == sorted(chosen), "pytest ran other tests than the ones asked for"
    failing = [f"  {n}: {why}" for n, why in results.items() if why != "passed"]
    head = f"{len(failing)} of {len(chosen)} reference memory tests fail:"
    assert not failing, "\n".join([head, *failing])
    print(f"{len(chosen)} of {len(chosen)} reference memory tests pass against talos.compat")


def test_the_defect_the_reference_records_is_fixed(tmp_path: Path) -> None:
    """The reference marks ``test_copying_a_bridge_node_must_not_scale_its_pull`` as its
    known defect (xfail, strict): N near-copies of a bridge node pull N times as hard (design
    §10). Through talos.compat it must pass outright (``--runxfail`` ignores the mark)."""
    ref = reference()
    name = "test_copying_a_bridge_node_must_not_scale_its_pull"
    if name not in memory_tests((ref / "tests" / "test_memory.py").read_text(encoding="utf-8")):
        pytest.skip(f"this reference checkout has no {name}")
    build(ref, tmp_path)
    assert run(tmp_path, [name], "--runxfail") == {name: "passed"}
