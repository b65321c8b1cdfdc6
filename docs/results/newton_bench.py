"""PrimalNewton against DCD and Direct on ridge models with a smooth loss, one thread.

The crossovers behind ``driver="auto"``'s rule for these models (docs/results/newton.md). Each
cell solves one model with every driver that takes it, timed ``--repeats`` times after a
warm-up solve (numba compiled, solver loaded); the median wall time of ``optframe.solve`` (the
certificate included) and the status are written as JSON lines. Objectives are the model's own
at each driver's solution.

Cells:

* classification on a9a (its first n rows, the bias as a constant feature, no intercept; and
  with a free intercept, which DCD does not take): squared hinge, smoothed hinge, logistic;
* regression on 564_fried, houses and cpusmall (standardized features, the target centered):
  Huber (delta 1), expectile (tau 0.3) and least squares, with an intercept;
* other shapes, every row, the bias as a feature: w8a (49,749 x 300), news20 (15,935 x 62,061,
  its first class against the rest), reuters (7,770 x 8,315), mushrooms (8,124 x 112),
  colon-cancer (62 x 2,000): squared hinge and logistic, Newton against DCD.

Rerun from the repository root::

    export OPTFRAME_DATA=../shared/datasets
    .venv/bin/python docs/results/newton_bench.py > docs/results/newton_runs.jsonl
    .venv/bin/python docs/results/newton_bench.py --only shapes >> docs/results/newton_runs.jsonl
    .venv/bin/python docs/results/newton_bench.py --only hessian >> docs/results/newton_runs.jsonl
    .venv/bin/python docs/results/newton_bench.py --report docs/results/newton_runs.jsonl
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import optframe as of  # noqa: E402
from optframe.data import Dataset, load_dataset  # noqa: E402
from optframe.losses import Huber, Logistic, PLQLoss, SquaredHinge  # noqa: E402
from optframe.models import EmpiricalRisk  # noqa: E402
from optframe.registry import drivers  # noqa: E402

TAU = 0.3
LOSSES = {
    "squared hinge": SquaredHinge,
    "smoothed hinge": lambda: PLQLoss(rehu=[(-1.0, 1.0, 1.0)], kind="classification"),
    "logistic": Logistic,
    "huber": lambda: Huber(1.0),
    "expectile": lambda: PLQLoss(
        rehu=[(math.sqrt(2 * TAU), 0.0, math.inf), (-math.sqrt(2 * (1 - TAU)), 0.0, math.inf)],
        kind="regression",
    ),
    "least squares": lambda: PLQLoss(
        rehu=[(1.0, 0.0, math.inf), (-1.0, 0.0, math.inf)], kind="regression"
    ),
}
CLASSIFICATION_SIZES = (100, 300, 1_000, 3_000, 10_000, 32_561)
REGRESSION_SIZES = (300, 1_000, 3_000, None)  # None: every row
DRIVERS = ("newton", "dcd", "direct")
DIRECT_MAX_ROWS = 10_000  # Direct beyond this: minutes on the exponential cone, not measured


def classification_cells():
    """(cell, model) of a9a's margin losses, with the bias as a feature or a free intercept."""
    a9a = load_dataset("a9a")
    X = sp.hstack([sp.csr_array(a9a.X), np.ones((a9a.n_samples, 1))], format="csr")
    y = np.where(np.asarray(a9a.y) > 0, 1.0, -1.0)
    for n in CLASSIFICATION_SIZES:
        for name in ("squared hinge", "smoothed hinge", "logistic"):
            for intercept in (False, True):
                data = Dataset(X=X[:n, :-1] if intercept else X[:n], y=y[:n])
                model = EmpiricalRisk(data, LOSSES[name](), C=1.0, fit_intercept=intercept)
                yield {"data": "a9a", "n": n, "loss": name, "intercept": intercept}, model


def regression_cells():
    """(cell, model) of the residual losses on three regression sets."""
    for set_name in ("564_fried", "houses", "cpusmall"):
        full = load_dataset(set_name)
        X = full.X.toarray() if sp.issparse(full.X) else np.asarray(full.X, dtype=np.float64)
        X = (X - X.mean(axis=0)) / np.maximum(X.std(axis=0), 1e-12)
        y = np.asarray(full.y, dtype=np.float64)
        y = (y - np.median(y)) / max(float(np.std(y)), 1e-12)
        for n in REGRESSION_SIZES:
            rows = y.size if n is None else min(n, y.size)
            for name in ("huber", "expectile", "least squares"):
                data = Dataset(X=X[:rows], y=y[:rows])
                model = EmpiricalRisk(data, LOSSES[name](), C=1.0, fit_intercept=True)
                yield {"data": set_name, "n": rows, "loss": name, "intercept": True}, model


SHAPES = ("w8a", "news20_multiclass", "reuters_lasvm", "mushrooms", "colon-cancer")


def shape_cells():
    """(cell, model) of the squared hinge and the logistic loss on sets of other shapes."""
    for set_name in SHAPES:
        full = load_dataset(set_name)
        X = sp.hstack([sp.csr_array(full.X), np.ones((full.n_samples, 1))], format="csr")
        y = np.asarray(full.y, dtype=np.float64)
        labels = np.unique(y)
        y = (
            np.where(y == labels[0], 1.0, -1.0)
            if labels.size > 2
            else np.where(y > labels[0], 1.0, -1.0)
        )
        for name in ("squared hinge", "logistic"):
            model = EmpiricalRisk(Dataset(X=X, y=y), LOSSES[name](), C=1.0, fit_intercept=False)
            cell = {"data": set_name, "n": int(y.size), "m": int(X.shape[1]), "loss": name}
            yield cell | {"intercept": False}, model


def hessian_cells():
    """One JSON line: a Hessian product on a9a's CSR rows, compiled pass against scipy's two."""
    from optframe.drivers import newton_core
    from optframe.drivers.dcd import as_csr

    a9a = load_dataset("a9a")
    X = sp.hstack([sp.csr_array(a9a.X), np.ones((a9a.n_samples, 1))], format="csr")
    n, m = X.shape
    rng = np.random.default_rng(0)
    curvature = rng.random(n) * (rng.random(n) < 0.6)  # the squared hinge's rows with curvature
    rows = np.flatnonzero(curvature > 0)
    d, out = rng.normal(size=m + 1), np.empty(m + 1)
    indptr, indices, data = as_csr(X)
    curved = rows.astype(np.uint64)

    def compiled():
        newton_core.hessian_product(
            indptr, indices, data, curved, curvature, d, False, 1.0, 1.0, out
        )

    def two_products():
        Xr = X[rows]  # the copy of the curved rows the products would need
        fitted = curvature[rows] * (Xr @ d[:-1])
        return Xr.T @ fitted + d[:-1]

    def two_products_on_a_copy(Xr=X[rows], weights=curvature[rows]):
        return Xr.T @ (weights * (Xr @ d[:-1])) + d[:-1]

    compiled()
    record = {"data": "a9a", "n": int(n), "m": int(m), "curved": int(rows.size), "loss": "hessian"}
    for name, run in (("compiled", compiled), ("scipy", two_products_on_a_copy),
                      ("scipy with the copy", two_products)):  # fmt: skip
        times = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(100):
                run()
            times.append((time.perf_counter() - start) / 100)
        record[f"{name} ms"] = 1e3 * statistics.median(times)
    print(json.dumps(record), flush=True)


def timed(model, driver, repeats):
    """Median seconds of ``repeats`` solves after a warm-up, and the last result."""
    of.solve(model, driver=driver)  # warm-up: compilation, imports, caches
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = of.solve(model, driver=driver)
        runs.append((time.perf_counter() - start, result))
    return statistics.median(t for t, _ in runs), runs[-1][1]


def measure(repeats: int, only: set[str]) -> None:
    """Print one JSON line per cell and driver that takes its model."""
    families = {
        "classification": classification_cells,
        "regression": regression_cells,
        "shapes": shape_cells,
    }
    if "hessian" in only:
        hessian_cells()
    for family, cells in families.items():
        if only and family not in only:
            continue
        for cell, model in cells():
            _measure_cell(cell, model, repeats)


def _measure_cell(cell, model, repeats):
    """One JSON line per driver that takes ``model`` (Direct up to ``DIRECT_MAX_ROWS``)."""
    for driver in DRIVERS:
        if driver == "direct" and (cell["n"] > DIRECT_MAX_ROWS or "m" in cell):
            continue
        if not drivers()[driver]().accepts(model):
            continue
        seconds, result = timed(model, driver, repeats)
        record = cell | {
            "driver": driver,
            "seconds": seconds,
            "status": result.status.value,
            "objective": result.objective,
            "gap": result.gap,
        }
        print(json.dumps(record), flush=True)


def report(path: str) -> None:
    """Print the markdown table of the JSON lines in ``path``."""
    with open(path) as lines:
        rows = [json.loads(line) for line in lines]
    cells: dict[tuple, dict[str, dict]] = {}
    for row in rows:
        if row["loss"] == "hessian":
            continue
        key = (row["data"], row["loss"], row["intercept"], row["n"])
        cells.setdefault(key, {})[row["driver"]] = row
    print("| data | loss | intercept | n | newton, s | dcd, s | direct, s | newton / best other |")
    print("|---|---|---|---|---|---|---|---|")
    for (data, loss, intercept, n), by in sorted(cells.items()):

        def show(name, by=by):
            row = by.get(name)
            if row is None:
                return "—"
            mark = "" if row["status"] == "optimal" else f" ({row['status']})"
            return f"{row['seconds']:.3g}{mark}"

        others = [by[d]["seconds"] for d in ("dcd", "direct") if d in by]
        ratio = f"{by['newton']['seconds'] / min(others):.2f}" if others and "newton" in by else ""
        print(
            f"| {data} | {loss} | {'yes' if intercept else 'no'} | {n:,} | {show('newton')} | "
            f"{show('dcd')} | {show('direct')} | {ratio} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--report", help="print the markdown table of a JSON-lines file")
    parser.add_argument("--only", default="classification,regression", help="families to run")
    args = parser.parse_args()
    if args.report:
        report(args.report)
        sys.exit(0)
    measure(args.repeats, set(args.only.split(",")))
