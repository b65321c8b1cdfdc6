"""Benchmark records grouped by cell and by problem: medians, spreads and ratios to a baseline.

A suite describes its records to the report with an optional ``REPORT`` mapping (see
:class:`ReportSpec`). Records are flat dictionaries: the cell's parameters, ``run_cell``'s output,
``repeat`` (0, 1, ... over repetitions of the same cell) and ``cell_key`` (the sorted JSON of the
cell's parameters, the same for every repeat).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from optframe.errors import OptframeError

SPEC_KEYS = ("method", "baseline", "problem", "metric", "replicates", "scaling", "memory", "path")
PATH_KEYS = ("x", "y", "by", "label")


def _names(value: Any, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Iterable) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise OptframeError(f"REPORT[{what!r}] must be a string or strings; got {value!r}")


@dataclass(frozen=True)
class PathSpec:
    """Curves along a parameter path stored in the records (lists of equal length).

    Attributes
    ----------
    x : str
        Record key of the parameter values (a list).
    y : tuple of str
        Record keys of the curves (lists, one value per parameter value); the plot shows each and
        their sum.
    by : tuple of str
        Keys identifying one figure (one line per method in it).
    label : str
        The quantity on the vertical axis.
    """

    x: str
    y: tuple[str, ...]
    by: tuple[str, ...] = ()
    label: str = "value"


@dataclass(frozen=True)
class ReportSpec:
    """How a suite's records are read by the report: the suite module's optional ``REPORT``.

    Attributes
    ----------
    method : str or None
        Record key naming the method (one line or bar per value).
    baseline : tuple of str
        Method names of the baseline, in order of preference: in each problem the first one
        measured is the reference of the ratios.
    problem : tuple of str
        Record keys identifying the same problem (the methods of one problem are compared).
    metric : str
        The time column of the ratios; ratio = baseline's / method's (above 1: faster than the
        baseline).
    replicates : tuple of str
        Cell parameters pooled with the repeats (for example random seeds or data splits).
    scaling : str or None
        Record key of the problem size for the scaling curves.
    memory : str or None
        Record key of the peak memory (MB) for the scaling curves.
    path : PathSpec or None
        Curves along a parameter path.
    """

    method: str | None = None
    baseline: tuple[str, ...] = ()
    problem: tuple[str, ...] = ()
    metric: str = "seconds"
    replicates: tuple[str, ...] = ()
    scaling: str | None = None
    memory: str | None = None
    path: PathSpec | None = None

    @classmethod
    def of(cls, suite: ModuleType | None) -> ReportSpec:
        """Read ``suite.REPORT``; without it, ``method`` is ``"method"`` if a column is so named."""
        columns = list(getattr(suite, "COLUMNS", []))
        report = getattr(suite, "REPORT", None)
        if report is None:
            return cls(method="method" if "method" in columns else None)
        return cls.from_mapping(report)

    @classmethod
    def from_mapping(cls, report: Mapping[str, Any]) -> ReportSpec:
        """Validate a ``REPORT`` mapping and build the spec; unknown keys are an error."""
        unknown = sorted(set(report) - set(SPEC_KEYS))
        if unknown:
            raise OptframeError(f"unknown REPORT keys {unknown}; known: {list(SPEC_KEYS)}")
        path = report.get("path")
        if path is not None:
            bad = sorted(set(path) - set(PATH_KEYS))
            if bad or "x" not in path or "y" not in path:
                raise OptframeError(
                    f"REPORT['path'] takes x, y and optionally by, label; got {sorted(path)}"
                )
            path = PathSpec(
                x=path["x"],
                y=_names(path["y"], "path.y"),
                by=_names(path.get("by", report.get("problem")), "path.by"),
                label=str(path.get("label", "value")),
            )
        return cls(
            method=report.get("method", "method"),
            baseline=_names(report.get("baseline"), "baseline"),
            problem=_names(report.get("problem"), "problem"),
            metric=str(report.get("metric", "seconds")),
            replicates=_names(report.get("replicates"), "replicates"),
            scaling=report.get("scaling"),
            memory=report.get("memory"),
            path=path,
        )


# --------------------------------------------------------------------------------- numbers
def is_number(value: Any) -> bool:
    """Whether ``value`` is an int or float (not a bool)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


@dataclass(frozen=True)
class Spread:
    """Median, minimum and maximum of the finite values among ``count`` numbers."""

    median: float
    low: float
    high: float
    count: int
    integral: bool = False

    @classmethod
    def of(cls, values: Sequence[Any]) -> Spread | None:
        """The spread of the numbers in ``values`` (``None`` entries ignored); ``None`` if none."""
        numbers = [v for v in values if is_number(v)]
        if not numbers:
            return None
        integral = all(isinstance(v, (int, np.integer)) for v in numbers)
        a = np.asarray(numbers, dtype=np.float64)
        finite = a[np.isfinite(a)]
        if finite.size == 0:
            return cls(math.nan, math.nan, math.nan, a.size, False)
        return cls(
            float(np.median(finite)), float(finite.min()), float(finite.max()), a.size, integral
        )

    @property
    def finite(self) -> bool:
        """Whether the median is a finite number."""
        return math.isfinite(self.median)


def number_text(value: float, integral: bool = False) -> str:
    """``value`` in 4 significant digits, integers in full."""
    if integral and math.isfinite(value) and float(value).is_integer():
        return str(int(value))
    return f"{value:.4g}"


def spread_text(spread: Spread | None) -> str:
    """``median`` alone, or ``median [min, max]`` when the values differ."""
    if spread is None:
        return ""
    text = number_text(spread.median, spread.integral)
    if spread.count > 1 and spread.finite and spread.low != spread.high:
        low, high = number_text(spread.low), number_text(spread.high)
        text += f" [{low}, {high}]"
    return text


def value_text(values: Sequence[Any]) -> str:
    """A table entry for one column over the records of one cell."""
    present = [v for v in values if v is not None]
    if not present:
        return ""
    if all(is_number(v) for v in present):
        return spread_text(Spread.of(present))
    counts: dict[str, int] = {}
    for v in present:
        counts[str(v)] = counts.get(str(v), 0) + 1
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join(f"{k} ({n})" for k, n in counts.items())


def label(keys: Sequence[str], values: Sequence[Any]) -> str:
    """``"lad setA n=200000 m=100"``: strings as they are, numbers as ``key=value``."""
    parts = []
    for key, value in zip(keys, values, strict=True):
        if value is None:
            continue
        parts.append(f"{key}={value}" if is_number(value) or isinstance(value, bool) else value)
    return " ".join(str(p) for p in parts) or "all"


# ----------------------------------------------------------------------------------- cells
@dataclass
class CellGroup:
    """The records of one cell (its repeats, and its replicates if the spec pools any)."""

    params: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)


def _cell_params(record: Mapping[str, Any], spec: ReportSpec) -> dict[str, Any]:
    if "cell_key" in record:
        params = json.loads(record["cell_key"])
    else:  # records without a key: the problem and the method identify the cell
        keys = spec.problem + ((spec.method,) if spec.method else ())
        params = {k: record.get(k) for k in keys}
    return {k: v for k, v in params.items() if k not in spec.replicates}


def group_cells(records: Iterable[Mapping[str, Any]], spec: ReportSpec) -> list[CellGroup]:
    """Group records by cell (replicate parameters pooled), in the order of first appearance."""
    groups: dict[str, CellGroup] = {}
    for record in records:
        params = _cell_params(record, spec)
        key = json.dumps(params, sort_keys=True, default=str)
        groups.setdefault(key, CellGroup(params)).records.append(dict(record))
    return list(groups.values())


def shown_columns(
    columns: Sequence[str], groups: Sequence[CellGroup], spec: ReportSpec
) -> list[str]:
    """The table's columns, replicate parameters left out.

    First the cell parameters missing from ``columns`` that vary between cells, then the suite's
    columns that hold a value in some record.
    """
    records = [r for g in groups for r in g.records]
    extra = []
    for group in groups:
        for key in group.params:
            if key not in columns and key not in extra:
                values = {json.dumps(g.params.get(key), default=str) for g in groups}
                if len(values) > 1:
                    extra.append(key)
    shown = [c for c in columns if any(r.get(c) is not None for r in records)]
    return [c for c in extra + shown if c not in spec.replicates]


def distinguishing_columns(
    records: Sequence[Mapping[str, Any]], columns: Sequence[str]
) -> list[str]:
    """``columns`` (those holding a value), after every cell parameter that tells rows apart.

    The parameters come from each record's ``cell_key``. A parameter missing from ``columns``
    goes first when two cells that agree on the parameters shown so far differ in it, so no two
    cells print as identical rows (the S3VM cells of the ``aid`` suite differ only by
    ``labeled``, which its ``COLUMNS`` leave out); one that is the same wherever the rest agree
    (a single data split) is left out.
    """
    groups = group_cells(records, ReportSpec())
    shown = [c for c in columns if any(r.get(c) is not None for g in groups for r in g.records)]
    every = list(dict.fromkeys(k for g in groups for k in g.params))
    identity = [k for k in every if k in shown]
    extra = []
    for key in every:
        if key in shown:
            continue
        seen: dict[str, set[str]] = {}
        for group in groups:
            same = json.dumps([group.params.get(k) for k in identity], default=str)
            seen.setdefault(same, set()).add(json.dumps(group.params.get(key), default=str))
        if any(len(values) > 1 for values in seen.values()):
            extra.append(key)
            identity.append(key)
    return extra + shown


def cell_rows(groups: Sequence[CellGroup], columns: Sequence[str]) -> list[dict[str, str]]:
    """One text row per cell: each column's value (numbers: median [min, max]) and ``runs``."""
    rows = []
    for group in groups:
        row = {c: value_text([r.get(c) for r in group.records]) for c in columns}
        row["runs"] = str(len(group.records))
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------- ratios
@dataclass(frozen=True)
class Ratio:
    """One method against the baseline on one problem.

    ``ratio`` is the spread of baseline metric / method metric over the pairs of records measured
    together (same replicate values and repeat); ``pairs`` = 0 means the records could not be
    paired and ``ratio`` is the ratio of the medians.
    """

    problem: tuple[Any, ...]
    method: str
    baseline: str
    metric: Spread
    base_metric: Spread
    ratio: Spread
    pairs: int
    status: str
    base_status: str


@dataclass
class Ratios:
    """The ratios of a report and what was left without one.

    ``missing`` maps a reason to problem labels: ``"no baseline"`` (no baseline method was
    measured on the problem), ``"baseline invalid"`` (it was, but without a positive finite
    metric, e.g. failed or skipped) and ``"method invalid"`` (``"problem method"`` labels of
    methods without a valid metric).
    """

    rows: list[Ratio] = field(default_factory=list)
    missing: dict[str, list[str]] = field(default_factory=dict)


def sort_key(values: Sequence[Any]) -> tuple:
    """Order problem keys: numbers by value, then text, then ``None``, position by position."""
    return tuple(
        (0, float(v), "") if is_number(v) else (2, 0.0, "") if v is None else (1, 0.0, str(v))
        for v in values
    )


def problems(records: Iterable[Mapping[str, Any]], spec: ReportSpec) -> dict[tuple, list[dict]]:
    """Records grouped by the spec's problem keys, sorted by :func:`sort_key`."""
    out: dict[tuple, list[dict]] = {}
    for record in records:
        out.setdefault(tuple(record.get(k) for k in spec.problem), []).append(dict(record))
    return {key: out[key] for key in sorted(out, key=sort_key)}


def by_method(records: Iterable[Mapping[str, Any]], spec: ReportSpec) -> dict[str, list[dict]]:
    """Records grouped by method name, in the order of first appearance."""
    out: dict[str, list[dict]] = {}
    for record in records:
        out.setdefault(str(record.get(spec.method) if spec.method else ""), []).append(record)
    return out


def _metric(record: Mapping[str, Any], metric: str) -> float | None:
    value = record.get(metric)
    if is_number(value) and math.isfinite(value) and value > 0:
        return float(value)
    return None


def _pair_key(record: Mapping[str, Any], spec: ReportSpec) -> tuple:
    return (*(record.get(k) for k in spec.replicates), record.get("repeat", 0))


def _paired(method: list[dict], base: list[dict], spec: ReportSpec) -> list[float] | None:
    """Baseline / method over the pairs measured together, or ``None`` if keys are ambiguous."""
    values: list[dict[tuple, float]] = []
    for group in (method, base):
        found: dict[tuple, float] = {}
        for record in group:
            key = _pair_key(record, spec)
            if key in found:
                return None
            value = _metric(record, spec.metric)
            if value is not None:
                found[key] = value
        values.append(found)
    return [values[1][k] / values[0][k] for k in values[0] if k in values[1]]


def compute_ratios(records: Sequence[Mapping[str, Any]], spec: ReportSpec) -> Ratios:
    """Per problem, every method's metric against the baseline measured in the same run."""
    out = Ratios()
    if not spec.method or not spec.baseline:
        return out
    for problem, group in problems(records, spec).items():
        methods = by_method(group, spec)
        name = label(spec.problem, problem)
        present = [b for b in spec.baseline if b in methods]
        base_name = next(
            (b for b in present if any(_metric(r, spec.metric) for r in methods[b])), None
        )
        if base_name is None:
            out.missing.setdefault("baseline invalid" if present else "no baseline", []).append(
                name
            )
            continue
        base = methods[base_name]
        base_metric = Spread.of([_metric(r, spec.metric) for r in base])
        for method, rows in methods.items():
            if method == base_name:
                continue
            metric = Spread.of([_metric(r, spec.metric) for r in rows])
            if metric is None:
                out.missing.setdefault("method invalid", []).append(f"{name} {method}")
                continue
            paired = _paired(rows, base, spec)
            if paired:
                ratio, pairs = Spread.of(paired), len(paired)
            else:
                value = base_metric.median / metric.median
                ratio, pairs = Spread(value, value, value, 1), 0
            out.rows.append(
                Ratio(
                    problem=problem,
                    method=method,
                    baseline=base_name,
                    metric=metric,
                    base_metric=base_metric,
                    ratio=ratio,
                    pairs=pairs,
                    status=value_text([r.get("status") for r in rows]),
                    base_status=value_text([r.get("status") for r in base]),
                )
            )
    return out
