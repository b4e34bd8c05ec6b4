"""The ``talos`` command line: a thin Typer layer over :class:`talos.Memory` (SPEC §9.1)."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup

from talos.cli import forget as _forget
from talos.cli import index as _index
from talos.cli import init as _init
from talos.cli import mcp as _mcp
from talos.cli import recall as _recall
from talos.cli import report as _report
from talos.cli import scan as _scan
from talos.cli import trust as _trust

__all__ = ["app", "main"]


class TalosGroup(TyperGroup):
    """Click's usage errors exit 2; SPEC §9.1 gives usage and input errors exit code 1."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().main(*args, **kwargs)
        except SystemExit as e:
            if e.code == 2:
                raise SystemExit(1) from None
            raise


app = typer.Typer(
    cls=TalosGroup,
    name="talos",
    help="Personal long-term memory for AI agents: recall what matters for a task from "
    "memory.md, skills/ and past sessions, by spreading activation over a keyword graph.",
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command("init")(_init.init)
app.command("index")(_index.index)
app.command("recall")(_recall.recall)
app.command("explain")(_recall.explain)
app.command("dead")(_forget.dead)
app.command("forget")(_forget.forget)
app.command("scan")(_scan.scan)
app.command("mcp")(_mcp.mcp)
app.command("report")(_report.report)
for _name in ("remember", "get", "conflicts", "resolve", "history", "restore", "revoke"):
    app.command(_name)(getattr(_trust, _name))


def main() -> None:
    """Console entry point."""
    app()
