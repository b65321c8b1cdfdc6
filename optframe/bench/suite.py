"""The benchmark-suite interface and the serial runner behind ``optframe bench SUITE``.

A suite is a module in :mod:`optframe.bench.suites` that defines:

* ``DESCRIPTION``: one line saying what it measures and against what baseline;
* ``cells(quick: bool) -> list[Cell]``: the grid, one :class:`Cell` per measurement (``quick``
  gives a small grid for smoke runs);
* ``run_cell(cell: Cell) -> dict``: runs one cell and returns a flat record (numbers and strings);
* ``COLUMNS``: the record keys to print, in order;
* optionally ``PAPER``: the paper's figures as text, printed beside ours,
  ``summarize(records) -> str``: ratios against the baseline, printed after the table, and
  ``CELL_TIME_LIMIT``: the default wall-clock limit of one cell, in seconds, and
  ``complete(records) -> None``: fills in, in place, the columns that compare a cell with
  another one of the same run (an objective difference or a speed-up against the baseline cell;
  see :func:`compare_with_baseline`). ``run_cell`` must not read other cells' results: cells may
  run in any order, in different processes, or in different runs.
* optionally ``REPORT``: how ``optframe report`` reads the records
  (:class:`optframe.bench.aggregate.ReportSpec`), a dict with ``method`` (the key naming the
  method, default ``"method"``), ``baseline`` (a method name, or a tuple in order of preference:
  in each problem the first one measured is the reference), ``problem`` (the keys identifying the
  same problem), ``metric`` (the time column of the ratios, default ``"seconds"``; ratio =
  baseline's / method's), ``replicates`` (cell parameters pooled with the repeats, e.g.
  ``("seed",)``), ``scaling`` (the size key of the log-log scaling curves), ``memory`` (the peak
  memory key drawn beside them) and ``path`` (``{"x": key of a list of parameter values, "y": keys
  of lists of curve values, "by": keys of one figure, "label": the plotted quantity}``). Unknown
  keys are an error; without ``REPORT`` the report has tables but no ratios. ``run_cell`` may
  return ``history``, :func:`optframe.bench.history.history_rows` of a Result, for the
  convergence plots.
* optionally ``KIND``: the parameter keys that make cells of one kind (default ``("problem",
  "method")``, those present): the time left in a run is estimated per kind
  (:mod:`optframe.bench.estimate`); and ``EXPECTED_SECONDS``: the seconds one cell of each kind
  takes on one core, ``{"quick": {kind: seconds}, "full": {kind: seconds}}`` with ``kind`` the
  tuple of the cell's ``KIND`` values (a missing kind: the mean of its grid's table), or instead
  a function ``expected_seconds(cell, quick) -> float``; ``optframe bench --list`` adds them up.

Cells are independent of each other, so a runner may execute them in any order or place:
:mod:`optframe.bench.runner` runs them as Dask tasks and stores each in a
:class:`~optframe.bench.store.ResultStore`; :func:`run_suite` here runs them one after another in
the current process, without a store.
"""

from __future__ import annotations

import importlib
import json
import math
import pkgutil
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from optframe.errors import OptframeError, UnknownSuite


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
    """Import the suite ``name``: a bundled one, or any importable module path with a dot.

    Raises
    ------
    UnknownSuite
        No bundled suite has that name (the message lists them), or the module path does not
        import or lacks ``cells`` and ``run_cell``.
    """
    if "." in name:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise UnknownSuite(f"cannot import the suite module {name!r}: {exc}") from exc
        missing = [attr for attr in ("cells", "run_cell", "COLUMNS") if not hasattr(module, attr)]
        if missing:
            raise UnknownSuite(f"module {name!r} is not a benchmark suite: it lacks {missing}")
        return module
    if name not in suite_names():
        raise UnknownSuite(f"no benchmark suite {name!r}; available: {suite_names()}")
    return importlib.import_module(f"optframe.bench.suites.{name}")


DEFAULT_KIND = ("problem", "method")


def cell_kind(suite: ModuleType, cell: Cell) -> tuple[Any, ...]:
    """The values of the suite's ``KIND`` keys in ``cell`` (see the module docstring)."""
    keys = getattr(suite, "KIND", DEFAULT_KIND)
    return tuple(cell.params.get(key) for key in keys if key in cell.params)


def expected_seconds(
    suite: ModuleType, cell: Cell, quick: bool, time_limit: float | None = None
) -> float | None:
    """The seconds ``cell`` should take on one core, as the suite declares them.

    From the suite's ``expected_seconds`` or ``EXPECTED_SECONDS`` (see the module docstring).
    Capped at ``time_limit`` (default: the suite's ``CELL_TIME_LIMIT``); ``None`` if the suite
    declares nothing.
    """
    function = getattr(suite, "expected_seconds", None)
    declared = getattr(suite, "EXPECTED_SECONDS", None)
    if function is not None:
        seconds = function(cell, quick)
    elif declared is None:
        return None
    else:
        table = declared.get("quick" if quick else "full") or {}
        kind = cell_kind(suite, cell)
        seconds = table.get(kind)
        if seconds is None and table:
            seconds = sum(table.values()) / len(table)
    if seconds is None:
        return None
    limit = time_limit if time_limit is not None else getattr(suite, "CELL_TIME_LIMIT", None)
    return float(seconds) if limit is None else min(float(seconds), float(limit))


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


def compare_with_baseline(
    records: list[dict[str, Any]],
    *,
    same: Iterable[str],
    is_baseline: Callable[[Mapping[str, Any]], bool],
    column: str,
    into: str,
    how: str = "rel_diff",
) -> None:
    """Fill ``into`` in each non-baseline record from the baseline record of the same problem.

    Parameters
    ----------
    records : list of dict
        Records of one suite (modified in place).
    same : iterable of str
        The keys that must be equal for two records to measure the same problem.
    is_baseline : callable
        Tells the baseline records.
    column : str
        The compared value (``"objective"``, ``"seconds"``, ...).
    into : str
        The key to fill.
    how : {"rel_diff", "signed", "speedup", "value"}
        ``|x - x0| / max(1, |x0|)``, ``(x - x0) / max(1, |x0|)``, ``x0 / x`` or ``x0`` itself, with
        ``x0`` the baseline's value.
        The baseline of the same repetition is used when there is one, else the first found.
    """
    keys = tuple(same)
    baselines: dict[tuple, dict[tuple, float]] = {}
    for record in records:
        value = record.get(column)
        if is_baseline(record) and isinstance(value, int | float) and math.isfinite(value):
            problem = tuple(record.get(k) for k in keys)
            baselines.setdefault(problem, {})[record.get("repeat", 0)] = float(value)
    for record in records:
        found = baselines.get(tuple(record.get(k) for k in keys))
        value = record.get(column)
        if is_baseline(record) or not found or not isinstance(value, int | float):
            continue
        base = found.get(record.get("repeat", 0), next(iter(found.values())))
        if how in ("rel_diff", "signed"):
            difference = (value - base) / max(1.0, abs(base))
            record[into] = abs(difference) if how == "rel_diff" else difference
        elif how == "speedup":
            record[into] = base / value if value > 0 else None
        else:
            record[into] = base


def complete(suite: ModuleType, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Apply the suite's ``complete`` hook (if any) to the records; return them."""
    hook = getattr(suite, "complete", None)
    if hook is not None:
        hook(records)
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
