"""The benchmark-suite interface and the serial runner behind ``optframe bench SUITE``.

A suite is a module in :mod:`optframe.bench.suites` that defines:

* ``DESCRIPTION``: one line saying what it measures and against what baseline;
* ``cells(quick: bool) -> list[Cell]``: the grid, one :class:`Cell` per measurement (``quick``
  gives a small grid for smoke runs);
* ``run_cell(cell: Cell) -> dict``: runs one cell and returns a flat record (numbers and strings);
* ``COLUMNS``: the record keys to print, in order;
* optionally ``PAPER``: the paper's figures as text, printed beside ours, and
  ``summarize(records) -> str``: ratios against the baseline, printed after the table.

Cells are independent of each other, so a runner may execute them in any order or place; this one
runs them one after another in the current process.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from optframe.errors import OptframeError


@dataclass(frozen=True)
class Cell:
    """One point of a suite's grid: its parameters, as plain JSON-able values."""

    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """A stable text key (sorted JSON of the parameters)."""
        return json.dumps(dict(self.params), sort_keys=True)

    def __getitem__(self, name: str) -> Any:
        return self.params[name]


def suite_names() -> list[str]:
    """Return the names of the bundled suites."""
    import optframe.bench.suites as suites

    return sorted(info.name for info in pkgutil.iter_modules(suites.__path__))


def load_suite(name: str) -> ModuleType:
    """Import the suite module ``name``, or raise :class:`OptframeError` listing the known ones."""
    if name not in suite_names():
        raise OptframeError(f"no benchmark suite {name!r}; available: {suite_names()}")
    return importlib.import_module(f"optframe.bench.suites.{name}")


def run_suite(
    suite: ModuleType,
    *,
    quick: bool = False,
    select: Callable[[Cell], bool] | None = None,
    progress: Callable[[int, int, Cell], None] | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Run every cell of ``suite`` serially and return one record per cell.

    A cell that raises is recorded with ``status="failed"`` and the error text; the run goes on.
    ``on_record`` receives each record as soon as its cell is done.
    """
    cells: Iterable[Cell] = suite.cells(quick)
    chosen = [cell for cell in cells if select is None or select(cell)]
    records = []
    for index, cell in enumerate(chosen):
        if progress is not None:
            progress(index, len(chosen), cell)
        start = time.perf_counter()
        try:
            record = dict(cell.params) | dict(suite.run_cell(cell))
        except Exception as exc:
            record = dict(cell.params) | {
                "status": "failed",
                "error": f"{type(exc).__name__}: {exc}",
            }
        record.setdefault("cell_seconds", time.perf_counter() - start)
        records.append(record)
        if on_record is not None:
            on_record(record)
    return records


def parse_filters(filters: Iterable[str]) -> Callable[[Cell], bool]:
    """``["method=aid,direct", "n=100000"]`` -> a cell predicate (values compared as text)."""
    wanted: dict[str, set[str]] = {}
    for text in filters:
        key, sep, values = text.partition("=")
        if not sep or not key:
            raise OptframeError(f"a filter is KEY=VALUE[,VALUE...]; got {text!r}")
        wanted.setdefault(key, set()).update(values.split(","))

    def select(cell: Cell) -> bool:
        return all(str(cell.params.get(key)) in values for key, values in wanted.items())

    return select


def read_records(paths: Iterable[str]) -> list[dict[str, Any]]:
    """The records of JSON-lines files written by ``optframe bench --jsonl``."""
    records = []
    for path in paths:
        with open(path) as handle:
            records += [json.loads(line) for line in handle if line.strip()]
    return records


def markdown_table(records: list[Mapping[str, Any]], columns: list[str]) -> str:
    """Format records as a markdown table with the given columns."""

    def text(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.4g}"
        return "" if value is None else str(value)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(text(r.get(c)) for c in columns) + " |" for r in records]
    return "\n".join(lines)
