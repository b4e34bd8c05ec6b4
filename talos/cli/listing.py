"""How listing commands print their records (design §9.1; docs/cli.md "Output"): explain,
dead, conflicts, history, scan, report and doctor.

* **A terminal** gets a table that fits its width (``COLUMNS``, else the terminal's): a column
  of stored text (:attr:`Column.how` ``"cut"``) is shortened with ``…``, the longest first,
  so each record stays on one line (``talos history`` wrapped a raw tag one word a line in
  80 columns, ~60 lines for 3 events); a column of prose (``"wrap"``) wraps at words; ids,
  numbers and dates (``"keep"``) are never broken. ``--wide`` lets the table be as wide as
  its content (the terminal wraps or ``less -S`` scrolls), nothing shortened.
* **Anything else** (a pipe, a file) and ``--plain``: one record a line, its fields separated
  by a TAB, no header, no box, no colour, nothing shortened — what ``gh``, ``kubectl`` and
  ``git`` print to a pipe, so ``cut``, ``grep``, ``sort`` and ``awk`` work on it. A field of
  several lines is joined with spaces; a TAB in a field becomes a space; control characters
  are shown, never obeyed (:func:`talos.text.printable`).
* **JSON** only with ``--json`` (:func:`talos.cli.common.emit`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from talos.cli.common import Stream, err, isatty, out
from talos.text import printable

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["Column", "Listing", "fit_widths", "note", "plain_line", "to_pipe"]

#: A shortened column keeps at least this many cells (its header may be shorter).
MIN_CUT = 8
#: Cells between two columns: no box, as ``kubectl`` and ``gh`` lay out a listing (a box
#: took 3 cells a column, 19 of 80 for history's six).
GAP = 2


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its header ``name``; ``how`` its cells give way when the table is too wide
    for the terminal (``keep``: never, ``cut``: shortened with ``…``, ``wrap``: wrapped at
    words); ``right``: right-aligned (numbers); ``main``: the column a person reads the
    listing for (a record's text): the other ``cut`` columns give way first (:func:`fit_widths`);
    ``drop``: a column of little worth left out of a terminal's table (a caption says
    ``--wide`` shows it) when, with it, the ``main`` column would be shortened.
    """

    name: str
    how: Literal["keep", "cut", "wrap"] = "keep"
    right: bool = False
    main: bool = False
    drop: bool = False


@dataclass(slots=True)
class Listing:
    """A titled list of records, each a row of cells (``str``, or a Rich ``Text`` for a style;
    a cell may hold several lines), printed by :meth:`show`; ``section``, when a command
    prints several, starts each of its plain lines."""

    title: str
    columns: Sequence[Column]
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    caption: str | None = None
    #: Starts each plain line when one command prints several listings (``report``).
    section: str | None = None

    def add(self, *cells: Any) -> None:
        """Append one record (one cell per column)."""
        self.rows.append(cells)

    def show(self, plain: bool = False, wide: bool = False, stream: Stream = out) -> None:
        """Print on ``stream``: plain lines when it is not a terminal or ``plain`` (module
        docstring), else the table, fit to the terminal unless ``wide``."""
        if plain or to_pipe(stream):
            file = sys.stderr if stream is not out else sys.stdout
            head = () if self.section is None else (self.section,)
            for row in self.rows:
                file.write(plain_line((*head, *row)) + "\n")
            return
        console = stream.console
        if not wide:
            self._drop_for(console.width)
        table = self.table(None if wide else console.width)
        if not wide:
            console.print(table)
            return
        width = console.width  # Rich caps a print at the console's width: widen it for this one
        console.width = max(table_width(table, console), width)
        try:
            console.print(table, crop=False)
        finally:
            console.width = width

    def _drop_for(self, width: int) -> None:
        """Leave the ``drop`` columns out when, with them, a ``main`` column would be shortened
        to fit ``width`` cells; a note names them and ``--wide``."""
        dropped = [i for i, c in enumerate(self.columns) if c.drop]
        mains = [i for i, c in enumerate(self.columns) if c.main]
        if not dropped or not self.rows:
            return
        caps = fit_widths(self.columns, self.rows, width)
        if all(caps[i] is None for i in mains):
            return
        keep = [i for i in range(len(self.columns)) if i not in dropped]
        names = ", ".join(self.columns[i].name for i in dropped)
        self.columns = [self.columns[i] for i in keep]
        self.rows = [tuple(row[i] for i in keep) for row in self.rows]
        self.caption = f"({names} left out at {width} columns: --wide shows it)"

    def table(self, width: int | None) -> Table:
        """The Rich table, its ``cut`` and ``wrap`` columns narrowed to fit ``width`` cells
        (``None``: as wide as the content)."""
        from rich.table import Table  # imported on use: start-up of every command

        table = Table(
            title=self.title,
            caption=self.caption,
            title_justify="left",
            caption_justify="left",
            box=None,
            padding=(0, GAP, 0, 0),
            pad_edge=False,
            header_style="bold",
        )
        caps = fit_widths(self.columns, self.rows, width) if width else [None] * len(self.columns)
        for col, cap in zip(self.columns, caps, strict=True):
            table.add_column(
                col.name,
                justify="right" if col.right else "left",
                no_wrap=col.how != "wrap" or cap is None,
                overflow="ellipsis" if col.how == "cut" else "fold",
                max_width=cap,
                min_width=min(cap, len(col.name)) if cap else None,
            )
        for row in self.rows:
            table.add_row(*row)
        return table


def note(text: str) -> None:
    """A message about a listing on stderr: wrapped at words on a terminal (a note cut in
    mid-word read "holdi / ng"), one line anywhere else (a log keeps it whole)."""
    err.print(text, soft_wrap=to_pipe(err))


def to_pipe(stream: Stream = out) -> bool:
    """Whether ``stream``'s file (stdout, or stderr for :data:`talos.cli.common.err`) is not a
    terminal: a pipe, a file, a test runner."""
    return not isatty(sys.stdout if stream is out else sys.stderr)


def plain_line(cells: Sequence[Any]) -> str:
    """One record as a plain line: each cell's lines joined with a space (a Rich ``Text`` by
    its plain text), TABs made spaces, control characters shown; cells joined by TABs."""
    fields = []
    for cell in cells:
        text = getattr(cell, "plain", cell)
        one = " ".join(part.strip() for part in str(text).splitlines() if part.strip())
        fields.append(printable(one, keep=""))
    return "\t".join(fields)


def _cells(cell: Any) -> int:
    """The widest line of a cell, in terminal cells."""
    from rich.cells import cell_len

    text = getattr(cell, "plain", cell)
    return max((cell_len(printable(line)) for line in str(text).split("\n")), default=0)


def fit_widths(
    columns: Sequence[Column], rows: Sequence[Sequence[Any]], width: int
) -> list[int | None]:
    """The most cells each column may take so the table (:data:`GAP` cells between columns)
    fits ``width``: ``None`` for a ``keep`` column and for every column when the table fits
    as it is; else the ``cut`` and ``wrap`` columns share what the ``keep`` columns leave,
    max-min fair (a column narrower than an equal share keeps its content, the widest are
    narrowed), each at least :data:`MIN_CUT` cells or its content when narrower. A ``main``
    column first takes what the others leave at that least: history at 80 columns cut the new
    value to "default shell is fi…", the very word that changed, to keep a scope and a key
    whole."""
    natural = [max([len(c.name), *(_cells(r[i]) for r in rows)]) for i, c in enumerate(columns)]
    frame = GAP * (len(columns) - 1)
    if sum(natural) + frame <= width:
        return [None] * len(columns)
    flexible = [i for i, c in enumerate(columns) if c.how != "keep"]
    room = width - frame - sum(n for i, n in enumerate(natural) if i not in flexible)
    caps: dict[int, int] = {}
    least = {i: min(natural[i], max(MIN_CUT, len(columns[i].name))) for i in flexible}
    for i in [i for i in flexible if columns[i].main]:  # the record's text before the others
        others = sum(least[j] for j in flexible if j != i and j not in caps)
        caps[i] = max(least[i], min(natural[i], room - others))
        room -= caps[i]
        flexible.remove(i)
    # max-min fair: the narrow ones first, each keeps its content when it fits an equal share
    # of what is left (an id in a reason stays whole), the widest takes the rest
    for n, i in enumerate(sorted(flexible, key=lambda i: natural[i])):
        share = room // (len(flexible) - n)
        caps[i] = min(natural[i], max(share, MIN_CUT, min(len(columns[i].name), natural[i])))
        room -= caps[i]
    return [caps[i] if i in caps and caps[i] < natural[i] else None for i in range(len(columns))]


def table_width(table: Table, console: Any) -> int:
    """The cells ``table`` takes with no width limit (``--wide``)."""
    from rich.measure import Measurement

    return Measurement.get(console, console.options.update(width=10**6), table).maximum
