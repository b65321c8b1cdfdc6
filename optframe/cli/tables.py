"""The comparison table of ``optframe compare`` and ``demo``, never cutting a name.

Driver, back-end and status names are printed whole. When the table is wider than the console,
the back-end layers and the long statuses are abbreviated and a legend under the table says what
the abbreviations stand for. The solver's own words (the last column, filled for the rows that are
not optimal) wrap, or go under the table when even the abbreviated one leaves them no room.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from optframe.compare import Comparison
from optframe.result import Result, Status

LAYERS = {"matrix": "mx", "cvxpy": "cx", "pyomo": "po"}
STATUSES = {"iteration_limit": "iter_lim", "time_limit": "time_lim", "converged": "conv"}
NAME_COLUMNS = ("driver", "back-end", "status")
NUMBER_COLUMNS = ("objective", "bound", "gap", "vs ref", "build s", "total s")
NOTE_COLUMN = "solver says"
NOTE_MIN_WIDTH = 12


@dataclass(frozen=True)
class Row:
    """One line of the table, as text."""

    driver: str
    backend: str
    status: str
    numbers: tuple[str, ...]
    note: str = ""


def _number(value: float | None, spec: str) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return format(value, spec)


def solver_words(result: Result) -> str:
    """The solver's own status text for a result that is not optimal ('' otherwise).

    CVXPY's own trailing parenthesis (its exception, with the advice to try another solver) is
    left out; any other parenthesis is the solver's reason (HiGHS's log, a killed solve) and
    stays.
    """
    if result.status is Status.OPTIMAL:
        return ""
    words = str(result.stats.get("solver_status") or result.stats.get("error") or "")
    words = " ".join(words.split())
    if words.endswith(")") and " (cvxpy: " in words:
        words = words[: words.rindex(" (cvxpy: ")]
    return words


def row_of(run: Comparison, reference: Result) -> Row:
    """The table row of one (driver, back-end) run."""
    result = run.result
    if result is None:
        return Row(run.pair.label, run.pair.backend, "refused", ("",) * 6, run.refusal)
    difference = run.difference(reference)
    timings = result.timings
    numbers = (
        _number(result.objective, ".8g") if result.has_solution else "—",
        _number(result.bound, ".8g"),
        _number(result.gap, ".1e"),
        _number(difference, ".1e"),
        f"{timings.build:.3f}",
        f"{timings.total:.3f}",
    )
    return Row(run.pair.label, result.backend, result.status.value, numbers, solver_words(result))


def _abbreviate(row: Row) -> Row:
    layer, sep, solver = row.backend.partition(":")
    backend = f"{LAYERS.get(layer, layer)}:{solver}" if sep else row.backend
    return Row(row.driver, backend, STATUSES.get(row.status, row.status), row.numbers, row.note)


def _widths(rows: Sequence[Row]) -> list[int]:
    """The widths of the name and number columns: their longest entry or heading."""
    texts = [(r.driver, r.backend, r.status, *r.numbers) for r in rows]
    return [
        max([len(name), *(len(t[k]) for t in texts)])
        for k, name in enumerate(NAME_COLUMNS + NUMBER_COLUMNS)
    ]


def _table(title: str, rows: Sequence[Row]) -> Table:
    table = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        padding=(0, 1, 0, 0),
    )
    widths = _widths(rows)
    for name, width in zip(NAME_COLUMNS + NUMBER_COLUMNS, widths, strict=True):
        justify = "left" if name in NAME_COLUMNS else "right"
        table.add_column(name, justify=justify, no_wrap=True, min_width=width)
    notes = any(r.note for r in rows)
    if notes:
        table.add_column(NOTE_COLUMN, overflow="fold", min_width=NOTE_MIN_WIDTH)
    for r in rows:
        table.add_row(r.driver, r.backend, r.status, *r.numbers, *([r.note] if notes else []))
    return table


def _fits(rows: Sequence[Row], width: int) -> bool:
    """Whether the whole names and numbers, and some of the solver's words, fit in ``width``."""
    needed = 2 + sum(w + 1 for w in _widths(rows))  # one space after each column, two edges
    if any(r.note for r in rows):
        needed += NOTE_MIN_WIDTH + 1
    return needed <= width


def _legend(rows: Sequence[Row]) -> str:
    used = [f"{short} = {long}" for long, short in LAYERS.items()
            if any(r.backend.startswith(f"{long}:") for r in rows)]  # fmt: skip
    used += [f"{short} = {long}" for long, short in STATUSES.items()
             if any(r.status == long for r in rows)]  # fmt: skip
    return "abbreviations: " + ", ".join(used) if used else ""


def comparison_table(
    title: str, rows: Sequence[Row], console: Console, width: int | None = None
) -> RenderableType:
    """The table of ``rows``, abbreviated with a legend if it is wider than ``width``."""
    width = width or console.width
    if _fits(rows, width):
        return _table(title, rows)
    short = [_abbreviate(r) for r in rows]
    parts: list[RenderableType] = []
    if _fits(short, width):
        parts.append(_table(title, short))
    else:  # the solver's words go under the table
        parts.append(_table(title, [Row(r.driver, r.backend, r.status, r.numbers) for r in short]))
        parts += [Text(f"{r.driver} {r.backend}: {r.note}") for r in short if r.note]
    legend = _legend(rows)
    if legend:
        parts.append(Text(legend))
    return Group(*parts) if len(parts) > 1 else parts[0]
