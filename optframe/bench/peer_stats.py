"""The ``peers`` suite's arithmetic: success flags, ratios to the best peer, qpbenchmark summary.

Records are those of :mod:`optframe.bench.suites.peers`: one per (cell, repeat) with ``job``,
the problem keys, ``method``, ``status``, ``seconds`` and ``objective`` (recomputed by the
optframe model from the method's solution). Nothing here imports a peer package.

* :func:`mark_success`: ``rel_objective`` = (objective - best) / max(1, |best|), best being the
  lowest objective any method reached on the same problem in the same records, and ``success``
  = the run finished and ``rel_objective <= tol`` (the job's tolerance).
* :func:`cell_table`: per problem and method, the median seconds with [min, max] over the
  repeats, the median objective, the success count, and the ratio of the median seconds to the
  best peer's (the fastest method that is not optframe's and succeeded in every repeat) and to
  the fastest peer's (whatever objective it reached).
* :func:`shifted_geometric_mean` and :func:`method_summary`: qpbenchmark's per-solver figures
  over the problems: success rate and the shifted geometric mean of the time (shift 10 s), a run
  that failed counted at the time limit, as qpbenchmark does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

SHIFT = 10.0  # seconds, qpbenchmark's shift
FINISHED = ("optimal", "converged", "done", "sklearn")


def is_ours(method: str) -> bool:
    """Whether ``method`` is one of optframe's (its name starts with ``optframe``)."""
    return method.startswith("optframe")


BAD_STATUS = ("failed", "time_limit", "unavailable", "skipped", "error")


def ran(record: Mapping[str, Any]) -> bool:
    """The run returned (not failed, stopped at a limit, unavailable) with its seconds."""
    status = str(record.get("status", ""))
    return isinstance(record.get("seconds"), int | float) and not any(
        status.startswith(b) for b in BAD_STATUS
    )


def _finite_objective(record: Mapping[str, Any]) -> bool:
    value = record.get("objective")
    return isinstance(value, int | float) and math.isfinite(value)


def finished(record: Mapping[str, Any]) -> bool:
    """:func:`ran`, with a finite recomputed objective."""
    value = record.get("objective")
    return ran(record) and isinstance(value, int | float) and math.isfinite(value)


def mark_success(
    records: list[dict[str, Any]],
    problem: Callable[[Mapping[str, Any]], tuple],
    tolerance: Callable[[Mapping[str, Any]], float],
) -> None:
    """Fill ``best_objective``, ``rel_objective`` and ``success`` in place (see module doc).

    Every finite objective counts for the best one and gets its ``rel_objective``, also from a
    run stopped at a time limit (the objective is the model's at the point returned, an upper
    bound whatever the status); ``success`` needs a run that returned (:func:`ran`). A record
    whose
    job declares no objective comparison (``tolerance`` returns ``nan``) is judged by
    ``accuracy`` instead: success when it is within 0.2 percentage points of the best.
    """
    best: dict[tuple, float] = {}
    best_accuracy: dict[tuple, float] = {}
    for r in records:
        key = problem(r)
        if _finite_objective(r):
            best[key] = min(best.get(key, math.inf), float(r["objective"]))
        if isinstance(r.get("accuracy"), int | float) and ran(r):
            best_accuracy[key] = max(best_accuracy.get(key, -math.inf), float(r["accuracy"]))
    for r in records:
        key = problem(r)
        tol = tolerance(r)
        r["success"] = False
        if math.isnan(tol):
            acc = r.get("accuracy")
            if ran(r) and isinstance(acc, int | float) and key in best_accuracy:
                r["success"] = bool(acc >= best_accuracy[key] - ACCURACY_POINTS)
            continue
        if not _finite_objective(r) or key not in best:
            continue
        reference = best[key]
        rel = (float(r["objective"]) - reference) / max(1.0, abs(reference))
        r["best_objective"] = reference
        r["rel_objective"] = rel
        r["success"] = bool(ran(r) and rel <= tol)


ACCURACY_POINTS = 0.2  # percentage points of test accuracy that count as "equal accuracy"


def shifted_geometric_mean(values: Iterable[float], shift: float = SHIFT) -> float:
    r""":math:`\bigl(\prod_i (t_i + s)\bigr)^{1/n} - s` (qpbenchmark's, shift ``s`` = 10 s).

    Raises ValueError for an empty input or a negative value.
    """
    array = np.asarray(list(values), dtype=np.float64)
    if array.size == 0:
        raise ValueError("the shifted geometric mean of no values is undefined")
    if np.any(array < 0) or not np.all(np.isfinite(array)):
        raise ValueError(f"times must be finite and non-negative; got {array.tolist()}")
    return float(np.exp(np.mean(np.log(array + shift))) - shift)


def _spread(values: Sequence[float]) -> tuple[float, float, float]:
    array = np.asarray(values, dtype=np.float64)
    return float(np.median(array)), float(array.min()), float(array.max())


@dataclass(frozen=True)
class CellRow:
    """One method on one problem, over its repeats."""

    problem: tuple
    method: str
    runs: int
    successes: int
    seconds: tuple[float, float, float] | None  # median, min, max over the finished runs
    objective: float | None  # median
    rel_objective: float | None  # median
    status: str
    ratio_to_best_peer: float | None = None
    best_peer: str | None = None
    ratio_to_fastest_peer: float | None = None
    fastest_peer: str | None = None
    extra: Mapping[str, Any] | None = None


def cell_table(
    records: Sequence[Mapping[str, Any]],
    problem: Callable[[Mapping[str, Any]], tuple],
    extra_keys: Sequence[str] = (),
) -> list[CellRow]:
    """Rows per (problem, method) in the order first seen, with the ratio to the best peer.

    The best peer of a problem is the method that is not optframe's, succeeded in every one of
    its runs, and has the lowest median seconds. The ratio is the method's median seconds over
    that peer's (below 1: faster than every peer that reached the same objective).
    """
    groups: dict[tuple, dict[str, list[Mapping[str, Any]]]] = {}
    for r in records:
        groups.setdefault(problem(r), {}).setdefault(str(r["method"]), []).append(r)
    rows: list[CellRow] = []
    for key, methods in groups.items():
        made = []
        for method, runs in methods.items():
            done = [r for r in runs if ran(r)]
            seconds = _spread([float(r["seconds"]) for r in done]) if done else None
            # objectives also of runs stopped at a limit: the model's value at their last point
            objectives = [float(r["objective"]) for r in runs if _finite_objective(r)]
            rels = [float(r["rel_objective"]) for r in runs if "rel_objective" in r]
            statuses = sorted({str(r.get("status")) for r in runs})
            extra = {}
            for name in extra_keys:
                values = [r[name] for r in done if isinstance(r.get(name), int | float)]
                if values:
                    extra[name] = float(np.median(values))
            made.append(
                CellRow(
                    problem=key,
                    method=method,
                    runs=len(runs),
                    successes=sum(bool(r.get("success")) for r in runs),
                    seconds=seconds,
                    objective=float(np.median(objectives)) if objectives else None,
                    rel_objective=float(np.median(rels)) if rels else None,
                    status="/".join(statuses),
                    extra=extra,
                )
            )
        finished_peers = [row for row in made if not is_ours(row.method) and row.seconds]
        peers = [row for row in finished_peers if row.successes == row.runs > 0]
        best = _fastest(peers)
        fastest = _fastest(finished_peers)
        for row in made:
            rows.append(
                CellRow(
                    **{
                        **row.__dict__,
                        "ratio_to_best_peer": _ratio(row, best),
                        "best_peer": best.method if best else None,
                        "ratio_to_fastest_peer": _ratio(row, fastest),
                        "fastest_peer": fastest.method if fastest else None,
                    }
                )
            )
    return rows


def _fastest(rows: Sequence[CellRow]) -> CellRow | None:
    timed = [row for row in rows if row.seconds is not None]
    return min(timed, key=lambda row: row.seconds[0]) if timed else None  # type: ignore[index]


def _ratio(row: CellRow, reference: CellRow | None) -> float | None:
    if reference is None or row.seconds is None or reference.seconds is None:
        return None
    return row.seconds[0] / reference.seconds[0] if reference.seconds[0] > 0 else None


@dataclass(frozen=True)
class MethodSummary:
    """qpbenchmark's figures for one method over the problems it ran on."""

    method: str
    problems: int
    runs: int
    successes: int
    success_rate: float
    shifted_gm: float
    relative_gm: float | None = None  # shifted_gm over the lowest among the methods


def method_summary(
    records: Sequence[Mapping[str, Any]],
    problem: Callable[[Mapping[str, Any]], tuple],
    limit: Callable[[Mapping[str, Any]], float],
    shift: float = SHIFT,
) -> list[MethodSummary]:
    """Per method: success rate over its runs, shifted geometric mean over its problems.

    The time of one problem is the median over the runs of the seconds of a successful run,
    or ``limit(record)`` (the job's time limit) for a run that failed or missed the tolerance.
    Methods that could not run (``unavailable``) count nowhere.
    """
    per_method: dict[str, dict[tuple, list[float]]] = {}
    counts: dict[str, list[int]] = {}
    for r in records:
        if str(r.get("status", "")).startswith("unavailable"):
            continue
        method = str(r["method"])
        ok = bool(r.get("success")) and isinstance(r.get("seconds"), int | float)
        seconds = float(r["seconds"]) if ok else float(limit(r))
        per_method.setdefault(method, {}).setdefault(problem(r), []).append(seconds)
        count = counts.setdefault(method, [0, 0])
        count[0] += 1
        count[1] += ok
    out = []
    for method, problems in per_method.items():
        times = [float(np.median(v)) for v in problems.values()]
        runs, successes = counts[method]
        out.append(
            MethodSummary(
                method=method,
                problems=len(problems),
                runs=runs,
                successes=successes,
                success_rate=successes / runs if runs else 0.0,
                shifted_gm=shifted_geometric_mean(times, shift),
            )
        )
    if out:
        low = min(s.shifted_gm for s in out)
        out = [
            MethodSummary(**{**s.__dict__, "relative_gm": s.shifted_gm / low if low > 0 else None})
            for s in out
        ]
    return sorted(out, key=lambda s: s.shifted_gm)
