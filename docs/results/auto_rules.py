r"""Measure the crossovers behind ``driver="auto"`` (docs/results/auto_rules.md).

Each cell solves one model with Direct (the default back-end) and with the decomposition
drivers its structures admit, one thread, each timed twice after a warm-up solve (numba
compiled, solver loaded); the median wall time and the certified status are written as JSON
lines. A driver named ``"<driver> fn"`` runs on the ``matrix:fn`` back-end (the LP cells).
Rerun (``--only lad,quantile-lp`` for some families; a later record of a cell and driver
replaces an earlier one in the report)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \\
        OPTFRAME_DATA=../shared/datasets python docs/results/auto_rules.py > auto_rules.jsonl
    python docs/results/auto_rules.py --report auto_rules.jsonl   # the markdown table
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import numpy as np

import optframe as of
from optframe.data import load_dataset, make_lad_set_a, make_svm_aid
from optframe.kernels import RBF
from optframe.losses import EpsilonInsensitive, Pinball
from optframe.models import L2SVM, EmpiricalRisk, LADRegression, WeightedSVM


def cells():
    """(family, n, m, model, drivers) of every cell, the smallest first."""
    for n in (1_000, 2_000, 10_000, 50_000, 200_000):
        for m in (10, 50):
            data = make_lad_set_a(n, m, random_state=0)
            lp = ("direct fn", "aid", "aid fn")
            yield "lad", n, m, LADRegression(data), ("direct", *lp) if n <= 50_000 else lp
    for n in (2_000, 10_000, 50_000):
        data = make_svm_aid(n, 20, random_state=0)
        yield "svm-intercept", n, 20, WeightedSVM(data, C=1.0), ("direct", "aid", "smo")
        nb = WeightedSVM(data, C=1.0, fit_intercept=False)
        yield "svm-no-intercept", n, 20, nb, ("direct", "aid", "dcd")
    for n, drivers in ((100_000, ("direct", "aid", "dcd")), (200_000, ("aid", "dcd"))):
        nb = WeightedSVM(make_svm_aid(n, 20, random_state=0), C=1.0, fit_intercept=False)
        yield "svm-no-intercept", n, 20, nb, drivers
    for n in (2_000, 10_000, 50_000):
        data = make_lad_set_a(n, 10, random_state=1)
        quantile = EmpiricalRisk(data, Pinball(0.9), penalty=None)
        yield "quantile-lp", n, 10, quantile, ("direct", "direct fn", "aid", "aid fn")
    for n in (10_000, 50_000):
        data = make_lad_set_a(n, 10, random_state=1)
        pinball = EmpiricalRisk(data, Pinball(0.9), C=1.0)
        yield "quantile-ridge", n, 10, pinball, ("direct", "aid", "smo")
        svr = EmpiricalRisk(data, EpsilonInsensitive(0.5), C=1.0)
        yield "svr-linear", n, 10, svr, ("direct", "aid", "smo")
    a9a = load_dataset("a9a")
    for n in (1_000, 3_000, 6_000):
        data = a9a.subset(np.arange(n))
        gamma = 1.0 / data.n_features
        rbf = WeightedSVM(data, C=1.0, kernel=RBF(gamma=gamma))
        yield "svm-rbf", n, data.n_features, rbf, ("direct", "smo", "aid")
        l2 = L2SVM(data, C=4.0, kernel=RBF(gamma=gamma))
        yield "l2svm-rbf", n, data.n_features, l2, ("direct", "mfw", "cvm")


def timed(model, driver):
    """Median seconds of two solves after a warm-up, and the last result."""
    name, _, on_fn = driver.partition(" ")
    backend = "matrix:fn" if on_fn == "fn" else "auto"
    of.solve(model, driver=name, backend=backend)  # warm-up: compilation, imports, caches
    runs = []
    for _ in range(2):
        start = time.perf_counter()
        result = of.solve(model, driver=name, backend=backend)
        runs.append((time.perf_counter() - start, result))
    seconds = statistics.median(t for t, _ in runs)
    return seconds, runs[-1][1]


def main(only: set[str] | None = None) -> None:
    """Solve every cell (of the families in ``only``) with each driver; a JSON line per solve."""
    for family, n, m, model, drivers in cells():
        if only is not None and family not in only:
            continue
        for driver in drivers:
            try:
                seconds, result = timed(model, driver)
                row = {"status": result.status.value, "objective": result.objective,
                       "gap": result.gap, "seconds": round(seconds, 4)}  # fmt: skip
            except of.OptframeError as exc:
                row = {"status": "refused", "error": f"{type(exc).__name__}: {exc}"[:200]}
            print(json.dumps({"family": family, "n": n, "m": m, "driver": driver, **row}))
            sys.stdout.flush()


def report(path: str) -> None:
    """The markdown table of a run: seconds per driver, the fastest in bold, ratio to Direct."""
    rows: dict[tuple, dict[str, dict]] = {}
    with open(path) as lines:
        records = [json.loads(line) for line in lines]
    for record in records:
        key = (record["family"], record["n"], record["m"])
        rows.setdefault(key, {})[record["driver"]] = record
    from optframe.drivers.auto import choose

    def pick(model):
        choice = choose(model)
        return choice.driver.name + (" fn" if choice.backend == "matrix:fn" else "")

    picks = {(family, n, m): pick(model) for family, n, m, model, _ in cells()}
    print("| family | n | m | driver: seconds (status) | fastest / Direct | auto picks / fastest |")
    print("|---|---:|---:|---|---:|---|")
    for (family, n, m), runs in rows.items():
        timed = {d: r for d, r in runs.items() if "seconds" in r}
        best = min(timed, key=lambda d: timed[d]["seconds"])
        parts = []
        for driver, r in runs.items():
            text = f"{r['seconds']:.2f} ({r['status']})" if "seconds" in r else r["status"]
            parts.append(f"**{driver}: {text}**" if driver == best else f"{driver}: {text}")
        ratio = timed[best]["seconds"] / timed["direct"]["seconds"] if "direct" in timed else 0
        pick = picks.get((family, n, m), "?")
        versus = timed[pick]["seconds"] / timed[best]["seconds"] if pick in timed else float("nan")
        cell = f"| {family} | {n:,} | {m} | {'; '.join(parts)} | {ratio:.2f} |"
        print(f"{cell} {pick}: {versus:.2f} |")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--report":
        report(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "--only":
        main(set(sys.argv[2].split(",")))
    else:
        main()
