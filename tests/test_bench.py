"""The quality harness (bench/): protocol details that would silently skew every number.

Runs on tiny data sets written here; the real third-party data (``../shared/bench``, research
use only) is never copied into the repository, and the one test that reads it skips when it is
absent.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import datasets as bd  # noqa: E402
import rankers  # noqa: E402

from talos.ranking.activation import MODELS  # noqa: E402


def test_clean_evidence_follows_the_protocol() -> None:
    known = {"D8:6", "D9:17", "D11:26", "D1:18", "D1:20"}
    assert bd.clean_evidence(["D8:6; D9:17"], known) == ["D8:6", "D9:17"]
    assert bd.clean_evidence(["D:11:26"], known) == ["D11:26"]
    assert bd.clean_evidence(["D1:18", "D", "D1:20", "D1:18"], known) == ["D1:18", "D1:20"]
    assert bd.clean_evidence(["D99:1"], known) == []


def locomo_folder(root: Path) -> Path:
    def conv(name: str, turns: list[tuple[str, str]], qa: list[dict]) -> dict:
        return {
            "sample_id": name,
            "conversation": {
                "speaker_a": "Ann",
                "speaker_b": "Bo",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": s, "dia_id": f"D1:{i + 1}", "text": t}
                    for i, (s, t) in enumerate(turns)
                ],
            },
            "qa": qa,
        }

    turns = [
        ("Ann", "I adopted a grey cat named Miso"),
        ("Bo", "Miso is a lovely name for a grey cat"),
        ("Ann", "I adopted a grey cat named Miso"),  # same line: one memory with D1:1
        ("Ann", "Miso adopted a grey cat named I"),  # same keywords: merged with D1:1
        ("Bo", "my bike broke on the bridge"),
    ]
    qa = [
        {"question": "What is the cat called?", "evidence": ["D1:1; D1:2"], "category": 4},
        {"question": "Broken what?", "evidence": ["D:1:5", "D"], "category": 1},
        {"question": "Nothing left", "evidence": ["D7:7"], "category": 2},
        {"question": "Trick", "evidence": ["D1:5"], "category": 5},
    ]
    folder = root / "locomo"
    folder.mkdir(parents=True)
    data = [conv("conv-a", turns, qa), conv("conv-b", turns, qa[:1])]
    (folder / "locomo-public.json").write_text(json.dumps(data), encoding="utf-8")
    return root


def test_locomo_loader_split_gold_and_dates(tmp_path: Path) -> None:
    ds = bd.load_locomo(locomo_folder(tmp_path))
    assert ds is not None
    assert [(s.name, s.split) for s in ds.stores] == [("conv-a", "dev"), ("conv-b", "test")]
    a = ds.stores[0]
    assert a.items[0] == bd.Item("D1:1", "Ann: I adopted a grey cat named Miso", "2023-05-08")
    assert [(q.gold, q.category) for q in a.questions] == [
        (["D1:1", "D1:2"], "4 single-hop"),
        (["D1:5"], "1 multi-hop"),
        (["D1:5"], "5 adversarial"),  # the question with no valid id left is skipped
    ]
    assert ds.extra == ["5 adversarial"] and "5 adversarial" not in ds.union


@pytest.mark.parametrize("model", sorted(MODELS))
def test_talos_ranker_maps_merged_nodes_and_matches_explain(tmp_path: Path, model: str) -> None:
    ds = bd.load_locomo(locomo_folder(tmp_path / "data"))
    assert ds is not None
    store = ds.stores[0]
    ranker = rankers.TalosRanker(store, model, tmp_path / "work")
    lines = (tmp_path / "work" / "home" / "memory.md").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "- Ann: I adopted a grey cat named Miso <!-- import 2023-05-08 ref=D1:1 -->"
    for q in store.questions:
        full = ranker.ranking(q.query)
        assert ranker.top(q.query, 10) == full[:10]
    rows = ranker.ranking("grey cat Miso adopted")
    assert ["D1:4", "D1:1", "D1:3"] in rows  # one node: representative, member, identical line
    assert rankers.metrics(rows, ["D1:1", "D1:3", "D1:4"])["R@1"] == 1.0


def test_metrics() -> None:
    rows = [["a"], ["b", "c"], ["d"]]
    m = rankers.metrics(rows, ["c", "d", "z"], ks=(1, 2, 10))
    assert m == {"R@1": 0.0, "R@2": 1 / 3, "R@10": 2 / 3, "MRR": 0.5}
    assert rankers.metrics([], ["a"])["MRR"] == 0.0


def bench_imports() -> dict[str, set[str]]:
    """Per ``bench/*.py`` module, the bench modules it imports (``x`` or ``bench.x``, at the
    top or inside a function)."""
    mods = {p.stem for p in BENCH.glob("*.py")}
    out: dict[str, set[str]] = {}
    for path in sorted(BENCH.glob("*.py")):
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom) and node.module
                else []
            )
            for name in names:
                parts = name.split(".")
                mod = parts[1] if parts[0] == "bench" and len(parts) > 1 else parts[0]
                if mod in mods:
                    deps.add(mod)
        out[path.stem] = deps
    return out


def test_the_bench_has_no_import_cycle_and_imports_no_archived_lab() -> None:
    """The labs are archived (tag ``labs-2026-12``, ``docs/benchmarks.md``): none is in
    bench/ any more, and the maintained benchmarks import one another without a cycle."""
    graph = bench_imports()
    assert not {"dense_lab", "rank_lab", "contiguity_lab", "tune_lab"} & set(graph)
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(mod: str, path: list[str]) -> None:
        state[mod] = 1
        for dep in sorted(graph[mod]):
            assert state.get(dep) != 1, f"import cycle: {' -> '.join([*path, dep])}"
            if dep not in state:
                visit(dep, [*path, dep])
        state[mod] = 2

    for mod in graph:
        if mod not in state:
            visit(mod, [mod])


def test_shared_bench_data_loads_with_the_protocol_counts() -> None:
    data = bd.DEFAULT_DATA
    if not (data / "locomo").is_dir():
        pytest.skip(f"third-party bench data not found at {data} (research use; never copied)")
    by = {ds.name: ds for ds in bd.load_all(data)}
    loc = by["locomo"]
    assert sum(1 for _, q in loc.questions() if q.category in loc.union) == 883
    assert sum(1 for _, q in loc.questions() if q.category in loc.extra) == 272
    assert [s.name for s in loc.stores if s.split == "test"] == ["conv-30", "conv-42", "conv-44"]
    assert sum(1 for _ in by["madial-zh"].questions()) == 200  # 100 dialogues × 2 query forms
    assert sum(1 for _ in by["memorybank-cn"].questions()) == 70
