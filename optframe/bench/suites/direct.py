"""Build and solve seconds of the LAD LP through every layer, against highspy called by hand.

For each size (n rows, m = 100 features, AID's Set A generator) and each formulation (primal:
n equality rows, m + 1 + 2n columns; dual: m + 1 rows, n bounded columns), the same LP is solved by

* ``highspy by hand``: the LP assembled with scipy and passed to ``highspy.Highs`` directly, the
  baseline;
* ``matrix:highs``: ``optframe.solve(LADRegression(data), backend="matrix:highs")``;
* ``cvxpy:highs`` and ``pyomo:highs``: the same model built in CVXPY and Pyomo (primal only: the
  form a modeler writes).

All use HiGHS's interior-point method (``solver="ipm"``, then crossover, HiGHS's default after
IPM) with one thread, so differences are modeling overhead. IPM because HiGHS's default dual simplex
takes 26 s on the n = 10k primal (IPM: 5.6 s) and many minutes at 100k.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from optframe.bench.suite import Cell, compare_with_baseline

DESCRIPTION = (
    "LAD LP (Set A, m=100): build and solve seconds through native highspy, CVXPY and Pyomo, "
    "against highspy by hand"
)
COLUMNS = [
    "n",
    "m",
    "form",
    "path",
    "status",
    "objective",
    "build_s",
    "solve_s",
    "total_s",
    "rel_diff",
]
# For `optframe report`: total seconds of each path against highspy by hand.
REPORT = {
    "method": "path",
    "baseline": "highspy by hand",
    "problem": ("n", "m", "form"),
    "metric": "total_s",
    "scaling": "n",
}
SIZES = (10_000, 100_000, 200_000)
QUICK_SIZES = (2_000,)
PATHS = ("highspy by hand", "matrix:highs", "cvxpy:highs", "pyomo:highs")
HIGHS_SOLVER = "ipm"
# Seconds of one cell on one core (docs/results/direct.md; quick: measured), per (n, form, path).
KIND = ("n", "form", "path")
_SECONDS = {
    ("primal", "highspy by hand"): (0.8, 6.0, 180.0, 1230.0),
    ("primal", "matrix:highs"): (0.7, 6.0, 180.0, 600.0),
    ("primal", "cvxpy:highs"): (1.7, 7.0, 190.0, 480.0),
    ("primal", "pyomo:highs"): (2.6, 11.0, 470.0, 590.0),
    ("dual", "highspy by hand"): (0.3, 1.4, 60.0, 55.0),
    ("dual", "matrix:highs"): (0.3, 1.4, 75.0, 55.0),
}
EXPECTED_SECONDS = {
    "quick": {(n, *key): v[0] for key, v in _SECONDS.items() for n in QUICK_SIZES},
    "full": {(n, *key): v[1 + k] for key, v in _SECONDS.items() for k, n in enumerate(SIZES)},
}


def cells(quick: bool) -> list[Cell]:
    """Every (n, form, path) cell; the modeling layers only for the primal form."""
    grid = []
    for n in QUICK_SIZES if quick else SIZES:
        for form in ("primal", "dual"):
            for path in PATHS:
                if form == "dual" and path in ("cvxpy:highs", "pyomo:highs"):
                    continue
                grid.append(Cell({"n": n, "m": 100, "form": form, "path": path, "seed": 0}))
    return grid


_DATA_CACHE: dict[tuple[int, int, int], Any] = {}


def _data(n: int, m: int, seed: int) -> Any:
    from optframe.data import make_lad_set_a

    key = (n, m, seed)
    if key not in _DATA_CACHE:
        _DATA_CACHE.clear()
        _DATA_CACHE[key] = make_lad_set_a(n, m, random_state=seed)
    return _DATA_CACHE[key]


def lad_lp_by_hand(X: np.ndarray, y: np.ndarray, form: str) -> tuple[dict[str, Any], float]:
    """Assemble the LAD LP (with intercept) with scipy and pass it to highspy; return its result."""
    import highspy

    from optframe.bench.peer_methods import highs_model
    from optframe.c_output import hide_highs_banner

    hide_highs_banner()  # HiGHS prints it from the first Highs() of a process; not timed
    n, m = X.shape
    inf = highspy.kHighsInf
    start = time.perf_counter()
    if form == "primal":
        identity = sp.identity(n, format="csc")
        A = sp.hstack([sp.csc_array(X), sp.csc_array(np.ones((n, 1))), identity, -identity])
        A = sp.csc_array(A)
        cost = np.r_[np.zeros(m + 1), np.ones(2 * n)]
        lower = np.r_[np.full(m + 1, -inf), np.zeros(2 * n)]
        upper = np.full(m + 1 + 2 * n, inf)
        row_lower = row_upper = y
    else:
        A = sp.csc_array(np.vstack([X.T, np.ones((1, n))]))
        cost, lower, upper = -y, -np.ones(n), np.ones(n)
        row_lower = row_upper = np.zeros(m + 1)
    solver = highs_model(A, cost, lower, upper, row_lower, row_upper, HIGHS_SOLVER)
    built = time.perf_counter()
    solver.run()
    objective = solver.getInfo().objective_function_value
    solved = time.perf_counter()
    status = solver.modelStatusToString(solver.getModelStatus())
    objective = -objective if form == "dual" else objective
    record = {"status": status, "objective": objective, "build_s": built - start}
    record |= {"solve_s": solved - built, "total_s": solved - start}
    return record, objective


def run_cell(cell: Cell) -> dict[str, Any]:
    """Solve one cell and report its seconds (``rel_diff`` comes from :func:`complete`)."""
    import optframe as of
    from optframe.drivers import Direct
    from optframe.models import LADRegression

    data = _data(cell["n"], cell["m"], cell["seed"])
    if cell["path"] == "highspy by hand":
        record, _ = lad_lp_by_hand(np.asarray(data.X), data.y, cell["form"])
        return record | {"rel_diff": 0.0}
    result = of.solve(
        LADRegression(data),
        driver=Direct(form=cell["form"]),
        backend=cell["path"],
        threads=1,
        solver_options={"solver": HIGHS_SOLVER},
    )
    return {
        "status": result.status.value,
        "objective": result.objective,
        "build_s": result.timings.build,
        "solve_s": result.timings.solve,
        "total_s": result.timings.total,
    }


def complete(records: list[dict[str, Any]]) -> None:
    """``rel_diff``: the objective's relative difference to highspy by hand (same n and form)."""
    compare_with_baseline(
        records,
        same=("n", "m", "seed", "form"),
        is_baseline=lambda r: r["path"] == "highspy by hand",
        column="objective",
        into="rel_diff",
    )


def summarize(records: list[dict[str, Any]]) -> str:
    """Ratio of each path's total seconds to highspy by hand, per size and form."""
    lines = ["Total seconds relative to highspy by hand (same n, same form, same run):", ""]
    baseline = {
        (r["n"], r["form"]): r["total_s"] for r in records if r["path"] == "highspy by hand"
    }
    for r in records:
        base = baseline.get((r["n"], r["form"]))
        if r["path"] != "highspy by hand" and base and "total_s" in r:
            lines.append(f"- n={r['n']}, {r['form']}, {r['path']}: {r['total_s'] / base:.2f}x")
    return "\n".join(lines)
