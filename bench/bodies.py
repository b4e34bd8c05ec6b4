#!/usr/bin/env python3
"""The skill body gate on a labelled set (issue 15 acceptance "Bodies", item 3).

``bench/bodies_home/`` is a realistic home written for this bench: 15 how-to skills (Python
project setup with lint, Kubernetes rollout, Postgres restore, csv merge, git bisect, slim
Docker images, TLS renewal, SSH key rotation, release notes, flaky tests, log triage, nightly
rsync backups; 周报, 部署服务, 数据库迁移) and a short memory.md (headings included, as people
write them). :data:`LABELS` holds 40 queries, each with the skill whose body the block should
carry, or ``None``: 20 ask for a skill's procedure (some in other words: "restoring
databases", "fails randomly"), 20 ask for none — unrelated chores and queries that share a
common word with a skill ("merge these two paragraphs", "write a new poem").

A query is *decided right* when the block carries the expected skill's body, or no body when
none is expected. The labels come in pairs (a body query, a none query); pairs alternate
between a *tune* half (pairs 0, 2, 4, …: what a gate's constants may be chosen on) and a
*check* half (pairs 1, 3, 5, …), each 10 + 10, so a gate fitted here can be reported on
queries it was not fitted to.

    python3 bench/bodies.py                 # the shipped gate, every model
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rich import box
from rich.console import Console
from rich.table import Table

from talos import Memory
from talos.ranking.activation import MODEL_NAMES

__all__ = ["HOME", "LABELS", "copy_home", "decided_right", "half", "score", "today_gate"]

#: The labelled home (skills/ and memory.md).
HOME = Path(__file__).resolve().parent / "bodies_home"

#: ``(query, skill name whose body the block should carry, or None)``.
LABELS: tuple[tuple[str, str | None], ...] = (
    ("set up a new python project with lint", "python-project-setup"),
    ("what's the weather like in Berlin tomorrow", None),
    ("restoring databases from last night's dump", "postgres-restore"),
    ("write a new poem about spring", None),
    ("roll out the new version of the api to the kubernetes cluster", "kubernetes-rollout"),
    ("rename this variable to something clearer", None),
    ("merge these two csv exports on the customer id", "csv-merge"),
    ("merge these two paragraphs into one", None),
    ("find which commit broke the login test with git bisect", "git-bisect"),
    ("explain what a python decorator is", None),
    ("our docker image is 2 GB, make it smaller", "docker-slim-image"),
    ("restore my mood after a long day", None),
    ("the https certificate expires next week, renew it", "tls-cert-renew"),
    ("the cat knocked my coffee over", None),
    ("rotate the ssh keys on the build servers", "ssh-key-rotation"),
    ("translate this sentence into French", None),
    ("write the release notes for version 2.3", "release-notes"),
    ("how many days until christmas", None),
    ("this test fails randomly in CI, how do I pin it down", "flaky-test-triage"),
    ("summarize this article for me", None),
    ("search the service logs for errors since midnight", "log-triage"),
    ("帮我写一首关于秋天的诗", None),
    ("帮我整理一下本周的周报", "weekly-report"),
    ("今天晚饭吃什么", None),
    ("把服务部署到生产环境", "deploy-service"),
    ("把这个函数改成异步的", None),
    ("set up nightly backups of my home folder with rsync", "backup-rsync"),
    ("fix the typo in the page title", None),
    ("给数据库加一个迁移脚本", "db-migration"),
    ("what does this regex match", None),
    ("roll back the kubernetes deployment, the new pods crash", "kubernetes-rollout"),
    ("book a table for two at an italian restaurant", None),
    ("restore the postgres backup into a staging database", "postgres-restore"),
    ("add a new column to this pandas dataframe", None),
    ("configure ruff and pytest for this python repo", "python-project-setup"),
    ("the new intern starts on monday", None),
    ("combine several csv files into one table", "csv-merge"),
    ("解释一下这段代码", None),
    ("git bisect between v1.2 and main", "git-bisect"),
    ("convert this json file to yaml", None),
)

#: A gate: ``query -> the skill name whose body the block carries, or None``.
Gate = Callable[[str], "str | None"]


def copy_home(dest: Path) -> Path:
    """A fresh copy of :data:`HOME` in ``dest`` (recall writes trace and usage into a home)."""
    shutil.copytree(HOME, dest / "home", ignore=shutil.ignore_patterns(".talos"))
    return dest / "home"


def today_gate(memory: Memory) -> Gate:
    """The gate as it ships: the skill ``Memory.recall`` delivers with its body (design §6.1)."""

    def gate(query: str) -> str | None:
        got = memory.recall(query)
        return next((r.node.name for r in got.picked if r.body), None)

    return gate


def half(i: int) -> str:
    """``tune`` or ``check``: the half label ``i`` belongs to (module docstring)."""
    return "tune" if (i // 2) % 2 == 0 else "check"


def decided_right(got: str | None, want: str | None) -> bool:
    """The expected body, or no body when none is expected."""
    return got == want


def score(gate: Gate, labels: Sequence[tuple[str, str | None]] = LABELS) -> dict[str, float]:
    """Decided-right shares of ``gate``: ``all``, ``tune`` / ``check`` halves, and among the
    queries that want a body (``want body``: the right one delivered) and those that do not
    (``want none``: no body delivered)."""
    right = [decided_right(gate(q), want) for q, want in labels]

    def share(idx: Sequence[int]) -> float:
        return sum(right[i] for i in idx) / len(idx) if idx else float("nan")

    n = range(len(labels))
    return {
        "all": share(list(n)),
        "tune": share([i for i in n if half(i) == "tune"]),
        "check": share([i for i in n if half(i) == "check"]),
        "want body": share([i for i in n if labels[i][1] is not None]),
        "want none": share([i for i in n if labels[i][1] is None]),
        "n": float(len(labels)),
    }


def table(title: str, rows: Sequence[tuple[str, dict[str, float]]]) -> Table:
    """A markdown table of :func:`score` results."""
    t = Table(title=title, box=box.MARKDOWN, title_justify="left")
    for c in (
        "gate",
        "decided right (all 40)",
        "tune half",
        "check half",
        "want a body",
        "want none",
    ):
        t.add_column(c, justify="left" if c == "gate" else "right")
    for name, s in rows:
        t.add_row(
            name,
            *(f"{100 * s[k]:.0f}%" for k in ("all", "tune", "check", "want body", "want none")),
        )
    return t


def main(argv: list[str] | None = None) -> int:
    console = Console(width=max(Console().width, 140))
    rows = []
    misses: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="talos-bodies-") as tmp:
        for model in MODEL_NAMES:
            home = copy_home(Path(tmp) / model)
            with Memory(home, model=model) as mem:
                gate = today_gate(mem)
                rows.append((f"today ({model})", score(gate)))
                misses[model] = [
                    f"{q!r}: got {gate(q)}, want {w}"
                    for q, w in LABELS
                    if not decided_right(gate(q), w)
                ]
    console.print(
        table(f"Skill body gate on bench/bodies_home ({len(LABELS)} labelled queries)", rows)
    )
    for model in MODEL_NAMES:
        console.print(f"\nwrong with today's {model}:")
        for m in misses[model]:
            console.print(f"  {m}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
