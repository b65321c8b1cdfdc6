"""A solve's history as JSON-able rows, thinned, for benchmark records and convergence plots."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from optframe.result import IterationRecord, Result, relative_gap

BASE_KEYS = ("iteration", "seconds", "objective", "bound", "gap")


def _plain(value: Any) -> Any:
    """A JSON-able scalar, or ``None`` for non-finite floats; ``...`` for what cannot be stored."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return ...


def _kept(count: int, max_points: int) -> np.ndarray:
    """Indices of the rows kept: geometric (early iterations move fast) and even, ends included."""
    if count <= max_points:
        return np.arange(count)
    half = max(max_points // 2, 2)
    geometric = np.round(np.geomspace(1, count, half)).astype(np.int64) - 1
    even = np.round(np.linspace(0, count - 1, max_points - half)).astype(np.int64)
    return np.unique(np.r_[geometric, even, 0, count - 1])


def history_rows(
    source: Result | Sequence[IterationRecord], max_points: int = 200
) -> list[dict[str, Any]]:
    """Convert a result's history into at most about ``max_points`` flat dictionaries.

    Parameters
    ----------
    source : Result or sequence of IterationRecord
        The solve (its ``history``) or the history itself.
    max_points : int
        Longer histories keep a geometric and an even selection of rows, the first and the last.

    Returns
    -------
    list of dict
        One dictionary per kept row with ``iteration``, ``seconds``, ``objective``, ``bound`` and
        ``gap`` (the relative gap of :func:`optframe.result.relative_gap`), then the driver's
        extras whose names do not clash with those (an extra named ``gap`` is stored as
        ``extra_gap``). Non-finite numbers become ``None``; extras that are not scalars are left
        out.
    """
    history = source.history if isinstance(source, Result) else tuple(source)
    rows = []
    for index in _kept(len(history), max_points):
        record = history[int(index)]
        row = {
            "iteration": int(record.iteration),
            "seconds": _plain(float(record.seconds)),
            "objective": _plain(float(record.objective)),
            "bound": None if record.bound is None else _plain(float(record.bound)),
            "gap": _plain(relative_gap(float(record.objective), record.bound)),
        }
        for name, value in record.extras.items():
            value = _plain(value)
            if value is not ...:
                row["extra_" + name if name in BASE_KEYS else name] = value
        rows.append(row)
    return rows
