"""``talos recall`` and ``talos explain`` (SPEC §6.1, §6.2)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from talos.cli.common import HomeOpt, JsonOpt, LangOpt, emit, err, handle_errors, open_memory, out
from talos.memory import node_identity, node_provenance
from talos.render import kind_label

__all__ = ["explain", "recall"]

QueryArg = Annotated[str, typer.Argument(help="The task or question to recall memories for.")]
SessionsDirOpt = Annotated[
    str | None,
    typer.Option(
        "--sessions-dir",
        help="Read past sessions from this folder (Talos, Claude Code or Codex CLI .jsonl "
        "transcripts; quote 'DIR/**' to include its subfolders; relative to the home). Default: "
        "sessions_dir in talos.toml, else .talos/sessions.",
        show_default=False,
    ),
]


@handle_errors("recall")
def recall(
    query: QueryArg,
    k: Annotated[int, typer.Option("-k", "--k", min=0, help="How many rows to deliver.")] = 5,
    home: HomeOpt = None,
    lang: LangOpt = None,
    sessions_dir: SessionsDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the context block of memories relevant to QUERY, for an agent's prompt.

    Writes one trace line and updates usage counts. Prints nothing (exit 0) when nothing is
    recalled.

    Example: talos recall "merge two csv files by user id" -k 5
    """
    result = open_memory(home, lang, sessions_dir=sessions_dir).recall(query, k=k)
    if as_json:
        emit(
            "recall",
            {
                "text": result.text,
                "bodies": result.bodies,
                "picked": [
                    {
                        "key": r.key,
                        "kind": r.kind,
                        "text": r.text,
                        "score": r.score,
                        "body": r.body,
                        **node_identity(r.node),
                        "provenance": node_provenance(r.node),
                    }
                    for r in result.picked
                ],
            },
        )
    elif result.text:
        out.out(result.text)
    else:
        err.print("nothing recalled")


@handle_errors("explain")
def explain(
    query: QueryArg,
    k: Annotated[int, typer.Option("-k", "--k", min=0, help="How many rows to show.")] = 8,
    home: HomeOpt = None,
    lang: LangOpt = None,
    sessions_dir: SessionsDirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show how QUERY ranks the memories: score, kind and text of the top K rows.

    No side effects: no trace line, no usage change. --json adds, per row, the node's identity,
    seed activation, per-hop gain, the edges that carried it, merged members and provenance.

    Example: talos explain "upgrade rust dependencies" -k 10 --json
    """
    mem = open_memory(home, lang, sessions_dir=sessions_dir)
    rows = mem.explain(query, k=k)
    if as_json:
        emit("explain", [r.to_json() for r in rows])
        return
    if not rows:
        err.print("nothing ranked above the threshold")
        return
    table = Table(title=f"explain · top {k}", show_lines=False)
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("kind")
    table.add_column("text", overflow="fold")
    for no, r in enumerate(rows, 1):
        table.add_row(str(no), f"{r.score:.2f}", kind_label(r.kind, mem.lang), r.text)
    out.print(table)
