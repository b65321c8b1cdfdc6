r"""LAD by fn (Direct and AID's inner solver) beside AID on HiGHS and pyfixest's fn and pfn.

The peers suite's heteroscedastic LAD data (``optframe.bench.suites.peers.heteroscedastic_lad``,
seed 0) at the sizes given, or a data set by name (``344_mv``). Per size, every method runs once
on a tiny problem first (no first-call cost is timed), then ``--repeat`` rounds in which the
methods alternate; one thread (set the thread variables before Python starts, as below). Each
record: wall seconds, status, the objective recomputed by ``LADRegression.objective`` at the
method's solution and, for optframe, the certificate's gap. ``--report`` prints the medians.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \
    OPTFRAME_THREADS=1 python docs/results/fn_bench.py 40000x10 200000x50 >> runs.jsonl
    python docs/results/fn_bench.py --report runs.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

import numpy as np

import optframe as of
from optframe.bench import peer_methods as pm
from optframe.bench.suites.peers import heteroscedastic_lad, recompute
from optframe.data import Dataset, load_dataset
from optframe.drivers import AggregateDisaggregate, Direct
from optframe.models import LADRegression

METHODS = (
    "optframe direct fn",
    "optframe aid highs",
    "optframe aid fn",
    "optframe auto",
    "pyfixest fn",
    "pyfixest pfn",
)


def run(method: str, data: Dataset) -> dict[str, Any]:
    """One timed solve of ``method``; the objective recomputed by the model."""
    model = LADRegression(data)
    if method.startswith("pyfixest"):
        X, y = np.asarray(data.X, dtype=np.float64), np.asarray(data.y, dtype=np.float64)
        fit = pm.pyfixest_quantreg(X, y, method.split()[1], seed=0)
        return {"status": fit.status, "seconds": fit.seconds} | recompute(model, fit.solution)
    kwargs: dict[str, Any] = {
        "optframe direct fn": {"driver": Direct(), "backend": "matrix:fn"},
        "optframe aid highs": {"driver": AggregateDisaggregate()},
        "optframe aid fn": {"driver": AggregateDisaggregate(), "backend": "matrix:fn"},
        "optframe auto": {},
    }[method]
    start = time.perf_counter()
    result = of.solve(model, threads=1, **kwargs)
    seconds = time.perf_counter() - start
    return {
        "status": result.status.value,
        "seconds": seconds,
        "objective": model.objective(result.solution) if result.has_solution else float("nan"),
        "gap": result.gap,
        "driver": result.driver,
        "backend": result.backend,
        "iterations": result.iterations,
    }


def dataset(name: str) -> Dataset:
    """``"40000x10"``: the heteroscedastic generator; otherwise a data set by name."""
    if "x" in name and name.replace("x", "").isdigit():
        n, m = (int(part) for part in name.split("x"))
        return heteroscedastic_lad(n, m)
    data = load_dataset(name)
    return Dataset(X=np.asarray(data.X, dtype=np.float64), y=data.y, name=name)


def main(sizes: list[str], repeat: int, methods: tuple[str, ...]) -> None:
    """Print one JSON line per (size, repeat, method), the methods alternating."""
    tiny = heteroscedastic_lad(2_000, 5, seed=1)
    for method in methods:
        run(method, tiny)
    for name in sizes:
        data = dataset(name)
        for rep in range(repeat):
            order = methods if rep % 2 == 0 else tuple(reversed(methods))
            for method in order:
                record = run(method, data)
                load = os.getloadavg()[0]
                row = {"data": name, "n": data.n_samples, "m": data.n_features, "repeat": rep}
                print(json.dumps(row | {"method": method, "load": load} | record), flush=True)


def report(path: str) -> None:
    """Print the median seconds, worst relative objective and gap per size and method."""
    with open(path) as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    for name in dict.fromkeys(row["data"] for row in rows):
        cell = [row for row in rows if row["data"] == name]
        best = min(row["objective"] for row in cell if np.isfinite(row["objective"]))
        print(f"\n{name} (best objective {best:.10g})")
        for method in dict.fromkeys(row["method"] for row in cell):
            runs = [row for row in cell if row["method"] == method]
            seconds = statistics.median(row["seconds"] for row in runs)
            rel = max((row["objective"] - best) / abs(best) for row in runs)
            gaps = [row.get("gap", float("nan")) for row in runs]
            loads = [row["load"] for row in runs]
            print(
                f"  {method:20s} {seconds:8.3f} s  rel.obj {rel:8.1e}  gap {max(gaps):8.1e}  "
                f"status {runs[0]['status']:10s} load {min(loads):.1f}-{max(loads):.1f}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", nargs="*", default=["40000x10"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--report")
    args = parser.parse_args()
    if args.report:
        report(args.report)
        sys.exit(0)
    main(args.sizes, args.repeat, tuple(args.methods.split(",")))
