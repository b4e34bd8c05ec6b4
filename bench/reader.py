#!/usr/bin/env python3
"""The reader protocol: what a block is worth to a model that answers from it.

Block gold recall (``block_worth.py``) is a proxy; the measure is whether a reader answers the
question from the block. This writes plain JSONL files that a person runs through any model,
and scores what comes back:

1. ``prompts``: a seeded sample of answerable LoCoMo questions (categories 1-4, those with a
   reference answer; dev split by default), each asked under every *condition* (the records a
   reader sees: :data:`CONDITIONS`). Items are shuffled and carry an opaque id; the key file
   (``OUT/key.jsonl``: id → condition, question, gold ids and answer, the records' gold
   recall) is written apart from the batches (``OUT/prompts/reader-NNN.jsonl``, ``--batch``
   items each), so a reader cannot tell the conditions apart. Every condition shows its
   records the same way, one a line, ``- (DATE) TEXT`` in the order the method gives them:
   only *which* records differ.
2. A person runs each item's ``prompt`` and collects ``{"id": ..., "answer": ...}`` lines.
3. ``judge-prompts``: one judge item per answer (question, reference answer, candidate, the
   same opaque id), shuffled again, in ``judge-NNN.jsonl``; the verdicts come back as
   ``{"id": ..., "verdict": "CORRECT" | "WRONG"}`` lines.
4. ``score``: accuracy per condition with a 95% bootstrap CI over questions, the share of
   "unknown" answers, and the proxy beside it (mean gold recall of the records shown).

    python3 bench/reader.py prompts --data ../shared/bench --n 60 --out /tmp/reader
    python3 bench/reader.py judge-prompts --key /tmp/reader/key.jsonl \\
        --answers /tmp/reader/answers --out /tmp/reader/judge
    python3 bench/reader.py score --key /tmp/reader/key.jsonl --answers /tmp/reader/answers \\
        --verdicts /tmp/reader/verdicts

``--answers`` and ``--verdicts`` take a file or a folder (every ``*.jsonl`` in it). The data
is read in place; the files hold LoCoMo text (CC BY-NC 4.0, research use only): write them
outside the repository.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from datasets import DEFAULT_DATA, Dataset, Store, load_locomo

__all__ = [
    "CONDITIONS",
    "DEFAULT_CONDITIONS",
    "JUDGE_INSTRUCTIONS",
    "READER_INSTRUCTIONS",
    "ReaderError",
    "judge_items",
    "make_items",
    "read_jsonl",
    "sample_questions",
    "score",
    "write_batches",
]

#: What each condition shows the reader (every one as ``- (DATE) TEXT`` lines).
CONDITIONS: dict[str, str] = {
    "talos-block": "talos's block: Memory.recall(q, k=CAP, budget=B)'s rows",
    "talos-top10": "talos's ranking: the top 10 rows of Memory.explain(q, k=10)",
    "bm25-budget": "tuned BM25's rows filled to the same budget (block_worth.fill_to_budget)",
    "bm25-top5": "tuned BM25's top 5 rows",
    "bm25-top10": "tuned BM25's top 10 rows",
    "fts5-budget": "SQLite FTS5 (porter)'s rows filled to the same budget",
    "gold": "the gold evidence turns only, in conversation order",
}
#: The four conditions ``prompts`` writes by default.
DEFAULT_CONDITIONS = ("talos-block", "talos-top10", "bm25-budget", "gold")

READER_INSTRUCTIONS = (
    "Below are records from a person's memory: lines of past conversations, each with the "
    "date it was said. Answer the question from the records only, in a few words. If the "
    "records do not say, answer exactly: unknown. Do not use outside knowledge."
)
JUDGE_INSTRUCTIONS = (
    "Compare a candidate answer with the reference answer to a question. Reply CORRECT when "
    "the candidate gives the same information as the reference (wording, format and extra "
    "detail do not matter; a date may be written another way, and a relative date counts when "
    "it names the same day or period); reply WRONG otherwise, also when the candidate says "
    "unknown, hedges between answers, or contradicts the reference. Reply with one word: "
    "CORRECT or WRONG."
)
READER_REPLY = 'Reply as one JSON line: {"id": "<the id>", "answer": "<your answer>"}'
JUDGE_REPLY = 'Reply as one JSON line: {"id": "<the id>", "verdict": "CORRECT" or "WRONG"}'


class ReaderError(Exception):
    """Bad input to the protocol (a missing or malformed file, an unknown id or verdict): the
    message says which file and line and what was expected."""


# -- sampling and conditions -----------------------------------------------------------------


@dataclass(slots=True)
class Sampled:
    """One sampled question: ``qid`` (``conv#index`` among the store's questions), its store."""

    qid: str
    store: Store
    query: str
    gold: list[str]
    answer: str
    category: str


def sample_questions(ds: Dataset, split: str, n: int, seed: int = 0) -> list[Sampled]:
    """``n`` questions of ``ds`` drawn without replacement (``random.Random(seed)``) from the
    answerable ones of ``split`` (``dev``, ``test`` or ``both``): categories of ``ds.union``
    with a reference answer; all of them when fewer. In file order."""
    pool = [
        Sampled(f"{s.name}#{i}", s, q.query, q.gold, q.answer, q.category)
        for s in ds.stores
        if split == "both" or s.split == split
        for i, q in enumerate(s.questions)
        if q.category in ds.union and q.answer
    ]
    if n >= len(pool):
        return pool
    keep = set(random.Random(seed).sample(range(len(pool)), n))
    return [x for i, x in enumerate(pool) if i in keep]


def _engines(store: Store, conditions: Sequence[str], tmp: Path, cap: int) -> dict[str, Any]:
    """The block sources the conditions need for one store (``block_worth`` engines)."""
    import block_worth as bw

    out: dict[str, Any] = {}
    if any(c.startswith("talos") for c in conditions):
        out["talos"] = bw.make_engine("talos", store, "en", tmp / "talos", cap)
    if any(c.startswith("bm25") for c in conditions):
        out["bm25"] = bw.make_engine("bm25", store, "en", tmp / "bm25", cap)
    if "fts5-budget" in conditions:
        out["fts5"] = bw.make_engine("fts5-porter", store, "en", tmp / "fts5", cap)
    return out


def _rows(condition: str, q: Sampled, engines: dict[str, Any], budget: int) -> list[list[str]]:
    """The rows (memory ids each) a condition shows for ``q``, in order."""
    if condition == "gold":
        want = set(q.gold)
        return [[it.id] for it in q.store.items if it.id in want]
    source, _, how = condition.partition("-")
    asked = engines[source].ask(q.query, [budget])
    if how == "budget" or how == "block":
        return asked.blocks[budget][0]
    return asked.ranking[: int(how[3:])]  # top5 / top10


def make_items(
    questions: Sequence[Sampled],
    conditions: Sequence[str],
    budget: int = 2000,
    cap: int = 50,
    seed: int = 0,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Reader items and key rows for every question under every condition.

    Returns:
        ``(items, key)``: ``items`` shuffled (``random.Random(seed)``), each ``{"id",
        "records": ["- (DATE) TEXT", ...], "question", "prompt"}``; ``key`` in question order,
        each ``{"id", "condition", "qid", "category", "question", "gold", "answer", "records",
        "proxy"}`` (``proxy``: gold ids among the records / gold ids). Ids are 12 hex digits
        drawn from the same generator, distinct.

    Raises:
        ReaderError: an unknown condition.
    """
    bad = [c for c in conditions if c not in CONDITIONS]
    if bad:
        raise ReaderError(f"unknown condition {bad[0]!r}: choose from {', '.join(CONDITIONS)}")
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    key: list[dict[str, Any]] = []
    seen: set[str] = set()
    by_store: dict[int, list[Sampled]] = {}
    for q in questions:
        by_store.setdefault(id(q.store), []).append(q)
    order = {q.qid: i for i, q in enumerate(questions)}
    for qs in by_store.values():
        store = qs[0].store
        items_of = {it.id: it for it in store.items}
        with tempfile.TemporaryDirectory(prefix="talos-reader-") as tmp:
            engines = _engines(store, conditions, Path(tmp), cap)
            for q in qs:
                for c in conditions:
                    ids = list(
                        dict.fromkeys(i for row in _rows(c, q, engines, budget) for i in row)
                    )
                    records = [f"- ({items_of[i].date}) {items_of[i].text}" for i in ids]
                    oid = f"{rng.getrandbits(48):012x}"
                    while oid in seen:
                        oid = f"{rng.getrandbits(48):012x}"
                    seen.add(oid)
                    items.append(
                        {
                            "id": oid,
                            "records": records,
                            "question": q.query,
                            "prompt": reader_prompt(oid, records, q.query),
                        }
                    )
                    key.append(
                        {
                            "id": oid,
                            "condition": c,
                            "qid": q.qid,
                            "category": q.category,
                            "question": q.query,
                            "gold": q.gold,
                            "answer": q.answer,
                            "records": len(records),
                            "proxy": len(set(ids) & set(q.gold)) / len(set(q.gold)),
                        }
                    )
            for e in engines.values():
                e.close()
    key.sort(key=lambda k: (order[k["qid"]], conditions.index(k["condition"])))
    rng.shuffle(items)
    return items, key


def reader_prompt(oid: str, records: Sequence[str], question: str) -> str:
    """The text a reader model gets for one item (:data:`READER_INSTRUCTIONS`)."""
    body = "\n".join(records) if records else "(no records)"
    return (
        f"{READER_INSTRUCTIONS}\n\nRecords:\n{body}\n\nQuestion: {question}\n\n"
        f"{READER_REPLY.replace('<the id>', oid)}"
    )


def judge_prompt(oid: str, question: str, reference: str, candidate: str) -> str:
    """The text a judge model gets for one item (:data:`JUDGE_INSTRUCTIONS`)."""
    return (
        f"{JUDGE_INSTRUCTIONS}\n\nQuestion: {question}\nReference answer: {reference}\n"
        f"Candidate answer: {candidate}\n\n{JUDGE_REPLY.replace('<the id>', oid)}"
    )


# -- files ------------------------------------------------------------------------------------


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """One JSON object a line, UTF-8, non-ASCII kept."""
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )


def write_batches(
    items: Sequence[dict[str, Any]], out: Path, prefix: str, batch: int
) -> list[Path]:
    """``items`` in files ``out/PREFIX-001.jsonl``… of ``batch`` items each; their paths.

    Raises:
        ReaderError: ``batch`` below 1, or ``out`` already holds files of that prefix (a new
            run never mixes with an old one's items).
    """
    if batch < 1:
        raise ReaderError(f"--batch must be at least 1 (got {batch})")
    out.mkdir(parents=True, exist_ok=True)
    old = sorted(out.glob(f"{prefix}-*.jsonl"))
    if old:
        raise ReaderError(f"{out} already holds {old[0].name}: choose an empty --out folder")
    paths = []
    for n, i in enumerate(range(0, len(items), batch), 1):
        p = out / f"{prefix}-{n:03d}.jsonl"
        write_jsonl(p, items[i : i + batch])
        paths.append(p)
    return paths


def read_jsonl(source: Path) -> list[tuple[str, int, dict[str, Any]]]:
    """Every object of a JSONL file, or of every ``*.jsonl`` file of a folder (sorted), with
    its file and line number; blank lines skipped.

    Raises:
        ReaderError: a missing path, an empty folder, a line that is not a JSON object.
    """
    if source.is_dir():
        files = sorted(source.glob("*.jsonl"))
        if not files:
            raise ReaderError(f"{source}: no *.jsonl file in this folder")
    elif source.is_file():
        files = [source]
    else:
        raise ReaderError(f"{source}: no such file or folder")
    out = []
    for f in files:
        try:
            text = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ReaderError(f"{f}: cannot read it as UTF-8 text ({e})") from None
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise ReaderError(f"{f}:{n}: not a JSON line ({e.msg})") from None
            if not isinstance(obj, dict):
                raise ReaderError(f'{f}:{n}: expected a JSON object like {{"id": ...}}')
            out.append((str(f), n, obj))
    return out


def _by_id(
    rows: Sequence[tuple[str, int, dict[str, Any]]], field: str, known: set[str]
) -> dict[str, str]:
    """``{id: value of field}`` from answer or verdict lines.

    Raises:
        ReaderError: a line without ``id`` or ``field`` (or not a string), an id not in the
            key, one id given twice with different values.
    """
    out: dict[str, str] = {}
    for f, n, obj in rows:
        oid, value = obj.get("id"), obj.get(field)
        if not isinstance(oid, str) or not isinstance(value, str):
            raise ReaderError(
                f'{f}:{n}: expected {{"id": "...", "{field}": "..."}} with string values'
            )
        if oid not in known:
            raise ReaderError(f"{f}:{n}: id {oid!r} is not in the key file")
        if oid in out and out[oid] != value:
            raise ReaderError(f"{f}:{n}: id {oid!r} has two different {field}s")
        out[oid] = value
    return out


def load_key(path: Path) -> list[dict[str, Any]]:
    """The key rows of ``prompts``.

    Raises:
        ReaderError: a missing file, a row without the key's fields.
    """
    rows = []
    for f, n, obj in read_jsonl(path):
        if not {"id", "condition", "qid", "question", "answer", "proxy"} <= obj.keys():
            raise ReaderError(f"{f}:{n}: not a key row (written by 'reader.py prompts')")
        rows.append(obj)
    return rows


def judge_items(
    key: Sequence[dict[str, Any]], answers: dict[str, str], seed: int = 0
) -> list[dict[str, Any]]:
    """One judge item per answered key row, shuffled (``random.Random(seed + 1)``): ``{"id",
    "question", "reference", "candidate", "prompt"}``."""
    items = [
        {
            "id": k["id"],
            "question": k["question"],
            "reference": k["answer"],
            "candidate": answers[k["id"]],
            "prompt": judge_prompt(k["id"], k["question"], k["answer"], answers[k["id"]]),
        }
        for k in key
        if k["id"] in answers
    ]
    random.Random(seed + 1).shuffle(items)
    return items


def verdict_of(text: str, where: str) -> bool:
    """``CORRECT`` → True, ``WRONG`` → False (case and surrounding spaces or punctuation
    ignored).

    Raises:
        ReaderError: anything else (``where`` names the id).
    """
    word = text.strip().strip(".!\"' ").upper()
    if word in ("CORRECT", "WRONG"):
        return word == "CORRECT"
    raise ReaderError(f"{where}: verdict {text!r} is neither CORRECT nor WRONG")


def is_unknown(answer: str) -> bool:
    """The reader said the records do not say (its answer is ``unknown``, any case)."""
    return answer.strip().strip(".!\"' ").casefold() == "unknown"


def score(
    key: Sequence[dict[str, Any]],
    answers: dict[str, str],
    verdicts: dict[str, str],
    boot: int = 1000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Accuracy per condition (in key order of first appearance).

    Returns:
        One dict per condition: ``n`` (key rows), ``judged`` (rows with a verdict),
        ``accuracy`` (CORRECT / judged), ``ci`` (95% percentile bootstrap over the judged
        rows, ``boot`` resamples of ``numpy.random.default_rng([seed, judged])``, the same
        resamples for every condition of that size), ``unknown`` (share of answered rows whose
        answer is "unknown"), ``proxy`` (mean gold recall of the records over the judged rows).

    Raises:
        ReaderError: a verdict that is neither CORRECT nor WRONG.
    """
    conds = list(dict.fromkeys(k["condition"] for k in key))
    out = []
    for c in conds:
        rows = [k for k in key if k["condition"] == c]
        judged = [k for k in rows if k["id"] in verdicts]
        ok = np.array([verdict_of(verdicts[k["id"]], f"id {k['id']}") for k in judged], float)
        answered = [answers[k["id"]] for k in rows if k["id"] in answers]
        lo, hi = math.nan, math.nan
        if len(ok) and boot > 0:
            rng = np.random.default_rng([seed, len(ok)])
            idx = rng.integers(0, len(ok), size=(boot, len(ok)))
            lo, hi = (float(x) for x in np.percentile(ok[idx].mean(axis=1), [2.5, 97.5]))
        out.append(
            {
                "condition": c,
                "n": len(rows),
                "judged": len(judged),
                "accuracy": float(ok.mean()) if len(ok) else math.nan,
                "ci": (lo, hi),
                "unknown": (
                    sum(map(is_unknown, answered)) / len(answered) if answered else math.nan
                ),
                "proxy": (
                    sum(float(k["proxy"]) for k in judged) / len(judged) if judged else math.nan
                ),
            }
        )
    return out


# -- command line -----------------------------------------------------------------------------


def _prompts(args: argparse.Namespace) -> int:
    ds = load_locomo(args.data)
    if ds is None:
        raise ReaderError(f"{args.data}: no LoCoMo data (expected locomo/locomo*.json there)")
    if args.n < 1:
        raise ReaderError(f"--n must be at least 1 (got {args.n})")
    if args.budget < 200:
        raise ReaderError(f"--budget {args.budget} is too small: a block needs at least 200")
    conditions = args.condition or list(DEFAULT_CONDITIONS)
    out: Path = args.out
    if (out / "key.jsonl").exists():
        raise ReaderError(f"{out} already holds key.jsonl: choose an empty --out folder")
    qs = sample_questions(ds, args.split, args.n, args.seed)
    items, key = make_items(qs, conditions, args.budget, args.cap, args.seed)
    # the key beside, not among, the batches: a loop over prompts/*.jsonl never shows it
    paths = write_batches(items, out / "prompts", "reader", args.batch)
    write_jsonl(out / "key.jsonl", key)
    (out / "README.txt").write_text(
        f"Reader prompts: {len(qs)} LoCoMo {args.split} questions x {len(conditions)} "
        f"conditions = {len(items)} items in {len(paths)} files prompts/reader-NNN.jsonl "
        f"(seed {args.seed}, budget {args.budget}).\n"
        "Run each item's 'prompt' through the reader model and collect its replies as JSON "
        'lines {"id": ..., "answer": ...} in a folder (e.g. answers/).\n'
        "Do NOT show key.jsonl to the reader or the judge: it maps each id to its condition.\n"
        "Then: python3 bench/reader.py judge-prompts --key key.jsonl --answers answers "
        "--out judge\n",
        encoding="utf-8",
    )
    print(
        f"{len(items)} items ({len(qs)} questions x {', '.join(conditions)}) in {len(paths)} "
        f"files under {out}; key: {out / 'key.jsonl'}"
    )
    return 0


def _judge(args: argparse.Namespace) -> int:
    key = load_key(args.key)
    answers = _by_id(read_jsonl(args.answers), "answer", {k["id"] for k in key})
    items = judge_items(key, answers, args.seed)
    if not items:
        raise ReaderError(f"{args.answers}: no answers for the ids of {args.key}")
    paths = write_batches(items, args.out, "judge", args.batch)
    print(
        f"{len(items)} judge items in {len(paths)} files under {args.out} "
        f"({len(key) - len(items)} key rows without an answer)"
    )
    return 0


def _score(args: argparse.Namespace) -> int:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    key = load_key(args.key)
    ids = {k["id"] for k in key}
    answers = _by_id(read_jsonl(args.answers), "answer", ids)
    verdicts = _by_id(read_jsonl(args.verdicts), "verdict", ids)
    rows = score(key, answers, verdicts, args.bootstrap, args.seed)
    t = Table(
        title="Reader accuracy per condition (95% bootstrap CI over questions; proxy = gold "
        "ids among the records / gold ids)",
        box=box.MARKDOWN,
        title_justify="left",
    )
    for c in ("condition", "judged / n", "accuracy", "unknown", "proxy"):
        t.add_column(c, justify="left" if c == "condition" else "right")
    for r in rows:
        lo, hi = r["ci"]
        t.add_row(
            r["condition"],
            f"{r['judged']} / {r['n']}",
            f"{r['accuracy']:.3f} [{lo:.3f}, {hi:.3f}]",
            f"{100 * r['unknown']:.0f}%" if r["unknown"] == r["unknown"] else "-",
            f"{r['proxy']:.3f}",
        )
    Console(width=120).print(t)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prompts", help="write blind reader prompt files and the key")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--split", choices=["dev", "test", "both"], default="dev")
    p.add_argument("--n", type=int, default=60, help="questions sampled (default 60)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--condition",
        action="append",
        choices=list(CONDITIONS),
        help=f"repeatable (default: {', '.join(DEFAULT_CONDITIONS)})",
    )
    p.add_argument("--budget", type=int, default=2000, help="characters (default 2000)")
    p.add_argument("--cap", type=int, default=50, help="k of talos's recall (default 50)")
    p.add_argument("--batch", type=int, default=20, help="items per file (default 20)")
    p.add_argument("--out", type=Path, required=True, help="an empty folder outside the repo")
    j = sub.add_parser("judge-prompts", help="write judge prompt files for the answers")
    j.add_argument("--key", type=Path, required=True)
    j.add_argument("--answers", type=Path, required=True, help="a JSONL file or a folder")
    j.add_argument("--seed", type=int, default=0)
    j.add_argument("--batch", type=int, default=20)
    j.add_argument("--out", type=Path, required=True)
    s = sub.add_parser("score", help="accuracy per condition")
    s.add_argument("--key", type=Path, required=True)
    s.add_argument("--answers", type=Path, required=True, help="a JSONL file or a folder")
    s.add_argument("--verdicts", type=Path, required=True, help="a JSONL file or a folder")
    s.add_argument("--bootstrap", type=int, default=1000)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--json", type=Path, help="write the numbers here as JSON")
    args = ap.parse_args(argv)
    try:
        return {"prompts": _prompts, "judge-prompts": _judge, "score": _score}[args.command](args)
    except (ReaderError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
