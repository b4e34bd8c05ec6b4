"""Load the third-party evaluation sets of ``../shared/bench`` into one shape, and write them as
talos homes. Shared by ``bench/locomo.py`` and ``bench/quality.py``.

The protocol is the one in ``../shared/bench/README.md`` (so numbers compare):

- **LoCoMo** (English): one store per conversation; every dialog turn is one memory, text
  ``"<speaker>: <text>"``, id = its ``dia_id``, date = its session date. Query = ``question``.
  Gold = ``evidence`` ids, cleaned: entries split on ``;`` ``,`` and spaces, ``D:11:26`` fixed to
  ``D11:26``, ids not in the conversation dropped, questions left with none skipped.
  Categories 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
- **MADial** (``zh``, ``en``): one store per dialogue (pool = the memories of its ``user-id``;
  text = ``event``). Query = the dialogue turns before the first ``test-turn``, joined (category
  ``context``), and again the last user turn only (category ``last-turn``). Gold = ``relevant-id``.
- **MemoryBank** (``cn``): one store per user (pool = that user's query/response pairs, id
  ``MM-DD#i``, text = query + " " + response); query = the probing question; gold from
  ``gold-public.json``.

The data is research-use only (LoCoMo: CC BY-NC 4.0): it is read from ``--data DIR`` and never
copied into the repository; homes are written to temporary folders.

**The fixed dev/test split** (never tune on test). A store is *dev* when its 0-based position in
its source file is even, *test* when odd — one rule for every dataset, so the same command
splits any folder laid out like ``../shared/bench``:

- LoCoMo: by conversation (public file: dev = conv-26, conv-41, conv-43; test = conv-30,
  conv-42, conv-44).
- MADial: by dialogue line (the memory pools of its two users are shared by both halves; the
  split is over queries, which is what tuning sees).
- MemoryBank: by user (dev = 张曼婷 李雪 周立 张志强 郝明; test = 王峰 孙悦 刘琳 宫晓燕 姚国栋).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

__all__ = [
    "DEFAULT_DATA",
    "Dataset",
    "Item",
    "Question",
    "Store",
    "clean_evidence",
    "load_all",
    "load_locomo",
    "load_madial",
    "load_memorybank",
    "write_home",
]

#: Where the data lives by default: ``$TALOS_BENCH_DATA``, else ``../shared/bench`` relative to
#: the repository root (a worktree elsewhere sets the variable; tests skip without the data).
DEFAULT_DATA = Path(
    os.environ.get("TALOS_BENCH_DATA")
    or Path(__file__).resolve().parent.parent.parent / "shared" / "bench"
)

#: LoCoMo category numbers → names (the README's reporting order).
LOCOMO_CATEGORIES = {
    1: "1 multi-hop",
    2: "2 temporal",
    3: "3 open-domain",
    4: "4 single-hop",
    5: "5 adversarial",
}


@dataclass(slots=True)
class Item:
    """One memory: ``id`` (the gold-evidence id), ``text`` (one line), ``date`` (YYYY-MM-DD)."""

    id: str
    text: str
    date: str


@dataclass(slots=True)
class Question:
    """One query with its gold evidence ids and a reporting ``category``; ``answer``: the
    data set's reference answer where it has one (LoCoMo categories 1-4; "" otherwise), what a
    judge compares a reader's answer with (``bench/reader.py``)."""

    query: str
    gold: list[str]
    category: str
    answer: str = ""


@dataclass(slots=True)
class Store:
    """A memory pool with the questions asked of it; ``split`` is ``dev`` or ``test``."""

    name: str
    split: str
    items: list[Item]
    questions: list[Question]


@dataclass(slots=True)
class Dataset:
    """A named dataset: its stores, language, and the categories that form ``all`` (the union
    reported as overall; others, like LoCoMo's adversarial category, are reported apart)."""

    name: str
    lang: str
    stores: list[Store]
    union: list[str]
    extra: list[str] = field(default_factory=list)

    def questions(self, split: str | None = None) -> Iterator[tuple[Store, Question]]:
        """Every ``(store, question)`` of the split (``None``: both), in file order."""
        for s in self.stores:
            if split is None or s.split == split:
                for q in s.questions:
                    yield s, q


def one_line(text: str) -> str:
    """Fold every whitespace run to one space: a memory is one line of memory.md."""
    return " ".join(str(text).split())


# -- LoCoMo --------------------------------------------------------------------------------

_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")
_BROKEN_ID = re.compile(r"^D:(\d+):(\d+)$")


def clean_evidence(evidence: list[str], known: set[str]) -> list[str]:
    """Clean LoCoMo ``evidence`` (README protocol): split entries on ``;``/``,``/spaces, fix
    ``D:11:26`` → ``D11:26``, drop ids that do not exist, keep first occurrences in order.

    >>> clean_evidence(["D8:6; D9:17", "D:11:26", "D", "D8:6"], {"D8:6", "D9:17", "D11:26"})
    ['D8:6', 'D9:17', 'D11:26']
    """
    out: list[str] = []
    for entry in evidence:
        for part in _EVIDENCE_SPLIT.split(str(entry)):
            m = _BROKEN_ID.match(part)
            if m:
                part = f"D{m.group(1)}:{m.group(2)}"
            if part in known and part not in out:
                out.append(part)
    return out


def locomo_date(text: str) -> str:
    """``"1:56 pm on 8 May, 2023"`` → ``"2023-05-08"``."""
    day = text.split(" on ", 1)[-1].strip()
    return dt.datetime.strptime(day, "%d %B, %Y").date().isoformat()


def load_locomo(data: Path) -> Dataset | None:
    """LoCoMo from ``data/locomo/locomo-public.json`` (any ``locomo*.json`` there), or ``None``."""
    folder = data / "locomo"
    files = sorted(folder.glob("locomo*.json")) if folder.is_dir() else []
    if not files:
        return None
    convs = []
    for f in files:
        convs.extend(json.loads(f.read_text(encoding="utf-8")))
    stores: list[Store] = []
    for ci, conv in enumerate(convs):
        c = conv["conversation"]
        sessions = sorted(
            (int(k.split("_")[1]), k)
            for k, v in c.items()
            if re.fullmatch(r"session_\d+", k) and isinstance(v, list)
        )
        items: list[Item] = []
        for _, key in sessions:
            date = locomo_date(c[f"{key}_date_time"])
            for turn in c[key]:
                items.append(
                    Item(turn["dia_id"], one_line(f"{turn['speaker']}: {turn['text']}"), date)
                )
        known = {it.id for it in items}
        questions: list[Question] = []
        for qa in conv["qa"]:
            gold = clean_evidence(qa.get("evidence") or [], known)
            if gold:
                cat = LOCOMO_CATEGORIES.get(qa["category"], str(qa["category"]))
                # category 5 has no "answer" (its "adversarial_answer" is the trap, not the truth)
                answer = one_line(qa["answer"]) if qa.get("answer") is not None else ""
                questions.append(Question(str(qa["question"]), gold, cat, answer))
        name = conv.get("sample_id", f"conv-{ci}")
        stores.append(Store(name, "dev" if ci % 2 == 0 else "test", items, questions))
    union = [LOCOMO_CATEGORIES[i] for i in (1, 2, 3, 4)]
    return Dataset("locomo", "en", stores, union, [LOCOMO_CATEGORIES[5]])


# -- MADial --------------------------------------------------------------------------------

_MARKER = re.compile(r"^\s*<(BOD|EOD)>\s*$")
_TURN = re.compile(r"^\s*<([^>]+)>\s*:\s*(.*)$", re.S)


def read_jsonl_dict(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(key, value)`` of every ``{key: value}`` line of a JSON-lines file."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield from json.loads(line).items()


def madial_owners(data: Path) -> dict[str, str]:
    """Memory id → ``user-id`` from the Chinese memory file. The English ``memory.jsonl`` has
    no ``user-id``; its ids are the Chinese ones (same memories translated), so the owner is
    taken from there; without it an English memory goes to the shared pool ``""``."""
    zh = data / "madial" / "zh" / "memory.jsonl"
    if not zh.is_file():
        return {}
    return {str(k): str(v.get("user-id", "")) for k, v in read_jsonl_dict(zh)}


def speaker(turn: str) -> str:
    """The speaker of a MADial turn ``<Name>:"..."`` ("" when the turn has no prefix)."""
    m = _TURN.match(turn)
    return m.group(1).strip() if m else ""


def load_madial(data: Path, lang: str) -> Dataset | None:
    """MADial-Bench ``data/madial/<lang>/`` (``zh`` or ``en``), or ``None`` when absent.

    One store per dialogue. The ``<BOD>``/``<EOD>`` markers are not turns and are left out of
    the query; turns keep their ``<Speaker>:`` prefix (the README says "turns joined").
    """
    folder = data / "madial" / lang
    mem_file, dlg_file = folder / "memory.jsonl", folder / "dialogue-public.jsonl"
    if not (mem_file.is_file() and dlg_file.is_file()):
        return None
    owners = madial_owners(data)
    pools: dict[str, list[Item]] = {}
    for mid, m in read_jsonl_dict(mem_file):
        owner = str(m.get("user-id", owners.get(str(mid), "")))
        pools.setdefault(owner, []).append(
            Item(str(mid), one_line(m["event"]), str(m["time"])[:10])
        )
    stores: list[Store] = []
    lines = [x for x in dlg_file.read_text(encoding="utf-8").splitlines() if x.strip()]
    for di, line in enumerate(lines):
        d = json.loads(line)
        first = min(d["test-turn"])
        turns = [t.strip() for t in d["dialogue"][:first] if not _MARKER.match(t)]
        user_turns = [t for t in turns if speaker(t) != "Assistant"]
        gold = [str(g) for g in d["relevant-id"]]
        pool = pools.get(str(d["user-id"])) or pools.get("", [])
        known = {it.id for it in pool}
        gold = [g for g in gold if g in known]
        if not gold:
            continue
        qs = [Question(" ".join(one_line(t) for t in turns), gold, "context")]
        if user_turns:
            qs.append(Question(one_line(user_turns[-1]), gold, "last-turn"))
        split = "dev" if di % 2 == 0 else "test"
        stores.append(Store(f"madial-{lang}/{d.get('id', di + 1)}", split, pool, qs))
    return Dataset(f"madial-{lang}", lang, stores, ["context"], ["last-turn"])


# -- MemoryBank ----------------------------------------------------------------------------


def load_memorybank(data: Path) -> Dataset | None:
    """MemoryBank ``data/memorybank/cn/``, or ``None`` when absent. One store per user."""
    folder = data / "memorybank" / "cn"
    bank_f = folder / "memory_bank-public.json"
    gold_f = folder / "gold-public.json"
    probe_f = folder / "probing_questions-public.jsonl"
    if not (bank_f.is_file() and gold_f.is_file() and probe_f.is_file()):
        return None
    bank = json.loads(bank_f.read_text(encoding="utf-8"))
    gold = json.loads(gold_f.read_text(encoding="utf-8"))
    probes: dict[str, list[str]] = {}
    for line in probe_f.read_text(encoding="utf-8").splitlines():
        if line.strip():
            probes.update(json.loads(line))
    stores: list[Store] = []
    for ui, (user, rec) in enumerate(bank.items()):
        items: list[Item] = []
        for date, pairs in rec.get("history", {}).items():
            for i, p in enumerate(pairs):
                text = one_line(f"{p.get('query', '')} {p.get('response', '')}")
                items.append(Item(f"{date[5:10]}#{i}", text, date[:10]))
        known = {it.id for it in items}
        questions = []
        for q, g in zip(probes.get(user, []), gold.get(user, []), strict=False):
            ids = [x for x in g if x in known]
            if ids:
                questions.append(Question(one_line(q), ids, "probe"))
        stores.append(
            Store(f"memorybank/{user}", "dev" if ui % 2 == 0 else "test", items, questions)
        )
    return Dataset("memorybank-cn", "zh", stores, ["probe"])


def load_all(data: Path, names: list[str] | None = None) -> list[Dataset]:
    """Every dataset found under ``data`` (optionally only those named), in a fixed order."""
    loaders = {
        "locomo": lambda: load_locomo(data),
        "madial-zh": lambda: load_madial(data, "zh"),
        "memorybank-cn": lambda: load_memorybank(data),
        "madial-en": lambda: load_madial(data, "en"),
    }
    out = []
    for name, load in loaders.items():
        if names and name not in names:
            continue
        ds = load()
        if ds is not None:
            out.append(ds)
    return out


# -- homes ---------------------------------------------------------------------------------


def fact_line(item: Item) -> str:
    """``- TEXT <!-- import DATE ref=ID -->``: a memory as a tagged memory.md line (design §3.1,
    §7.1; the ref is URL-encoded where needed so it stays one ``field=value`` token)."""
    return f"- {item.text} <!-- import {item.date} ref={quote(item.id, safe=':#-.')} -->"


def write_home(store: Store, home: Path) -> Path:
    """Write ``store`` as a talos home in ``home`` (facts only) and return it."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "memory.md").write_text(
        "\n".join(fact_line(it) for it in store.items) + "\n", encoding="utf-8"
    )
    return home
