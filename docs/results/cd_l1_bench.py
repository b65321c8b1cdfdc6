"""CoordinateDescent on L1 and elastic-net problems against skglm and scikit-learn, one thread.

Every job is one optframe model, ``EmpiricalRisk(data, loss, penalty=L1() or ElasticNet(0.5),
C=1 / (n alpha))``, i.e. ``C sum_i l(a_i) + |w|_1`` (or the elastic net), the peers' objective
``(1/n) sum_i l(a_i) + alpha |w|_1`` divided by ``alpha``. ``alpha`` is a fraction
(``ratio``) of ``alpha_max``, the smallest value with the all-zero solution. Every method's
objective is recomputed by the model from its coefficients; ``rel`` is its distance to the
best objective any method reached, relative; ``gap`` the relative gap of optframe's certificate
(the model's own Fenchel dual) at that method's solution.

The methods are

* optframe ``CoordinateDescent`` (``of.solve(model, driver=CoordinateDescent())``, the
  model built inside the timing, its default certified relative gap 1e-6), and
  ``of.solve(model)`` (auto's choice) with ``--auto``;
* skglm 0.5: ``Lasso``, ``ElasticNet``, ``SparseLogisticRegression`` (proximal Newton),
  ``GeneralizedLinearEstimator(Huber, L1)``;
* scikit-learn: ``Lasso``, ``ElasticNet``, ``LogisticRegression(penalty="l1",
  solver="liblinear")``, ``LinearSVC(penalty="l1", loss="squared_hinge", dual=False)``.

Each peer runs at tolerances 1e-4, 1e-6, 1e-8 and 1e-10 (``max_iter`` high enough that
the tolerance stops it; liblinear with ``random_state=0``: with a random coordinate order, an
occasional run on reuters at 1e-10 took minutes); the table gives the fastest run whose
objective is within 1e-6 (relative) of the best, with its tolerance. Times are medians of
``--repeats`` rounds after a warm-up (numba kernels compiled before any timing); each round
runs every method once. Every thread pool is limited to one thread. Run from the repository
root::

    export OPTFRAME_DATA=../shared/datasets
    .venv/bin/python docs/results/cd_l1_bench.py --repeats 3 --auto \
        --out docs/results/cd_l1_runs.jsonl
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import optframe as of  # noqa: E402
from optframe.bench.peer_methods import l1_alpha_max  # noqa: E402
from optframe.data import Dataset, load_dataset  # noqa: E402
from optframe.drivers import CoordinateDescent  # noqa: E402
from optframe.losses import Huber, Logistic, PLQLoss, SquaredHinge  # noqa: E402
from optframe.models import EmpiricalRisk  # noqa: E402
from optframe.penalties import L1, ElasticNet  # noqa: E402

LEAST_SQUARES = PLQLoss(rehu=[(1.0, 0.0, np.inf), (-1.0, 0.0, np.inf)], kind="regression")
TOLS = (1e-4, 1e-6, 1e-8, 1e-10)
MATCH = 1e-6

#: (job, dataset, loss name, penalty name, ratio of alpha_max, intercept, standardize)
JOBS = [
    ("lasso-a9a", "a9a", "ls", "l1", 0.05, True, False),
    ("enet-a9a", "a9a", "ls", "enet", 0.05, True, False),
    ("lasso-reuters", "reuters_lasvm", "ls", "l1", 0.05, True, False),
    ("lasso-colon", "colon-cancer", "ls", "l1", 0.05, True, True),
    ("logistic-a9a", "a9a", "logistic", "l1", 0.05, False, False),
    ("logistic-w8a", "w8a", "logistic", "l1", 0.05, False, False),
    ("logistic-reuters", "reuters_lasvm", "logistic", "l1", 0.05, False, False),
    ("sqhinge-a9a", "a9a", "sqhinge", "l1", 0.05, False, False),
    ("huber-fried", "564_fried", "huber", "l1", 0.01, True, True),
]


def load(name: str, standardize: bool) -> tuple[Any, np.ndarray]:
    """Features and labels (multiclass labels: class of the first row against the rest)."""
    data = load_dataset(name)
    X, y = data.X, np.asarray(data.y, dtype=np.float64)
    if len(np.unique(y)) > 2 and name != "564_fried":
        y = np.where(y == y[0], 1.0, -1.0)
    elif len(np.unique(y)) == 2:
        y = np.where(y == y.max(), 1.0, -1.0)
    if standardize:
        X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        X = (X - X.mean(axis=0)) / np.maximum(X.std(axis=0), 1e-12)
    return X, y


def alpha_max(X: Any, y: np.ndarray, loss: str, intercept: bool) -> float:
    """The smallest alpha with w = 0 optimal (the gradient of the loss term at w = 0, b*)."""
    return l1_alpha_max(X, y, loss, intercept)


def model_of(X: Any, y: np.ndarray, loss: str, penalty: str, C: float, intercept: bool) -> Any:
    """The optframe model of a job."""
    losses = {"ls": LEAST_SQUARES, "logistic": Logistic(), "sqhinge": SquaredHinge(),
              "huber": Huber(1.0)}  # fmt: skip
    pen = L1() if penalty == "l1" else ElasticNet(0.5)
    return EmpiricalRisk(Dataset(X=X, y=y), losses[loss], penalty=pen, C=C,
                         fit_intercept=intercept)  # fmt: skip


def peers(loss: str, penalty: str, alpha: float, intercept: bool) -> dict[str, Callable]:
    """Builders ``tol -> estimator`` of the peers that state the job's problem."""
    import skglm
    from sklearn.linear_model import ElasticNet as SkElasticNet
    from sklearn.linear_model import Lasso as SkLasso
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    out: dict[str, Callable] = {}
    if loss == "ls" and penalty == "l1":
        out["skglm Lasso"] = lambda tol: skglm.Lasso(alpha=alpha, tol=tol, max_iter=1000,
                                                     fit_intercept=intercept)  # fmt: skip
        out["sklearn Lasso"] = lambda tol: SkLasso(alpha=alpha, tol=tol, max_iter=100_000,
                                                   fit_intercept=intercept)  # fmt: skip
    if loss == "ls" and penalty == "enet":
        out["skglm ElasticNet"] = lambda tol: skglm.ElasticNet(
            alpha=alpha, l1_ratio=0.5, tol=tol, max_iter=1000, fit_intercept=intercept
        )
        out["sklearn ElasticNet"] = lambda tol: SkElasticNet(
            alpha=alpha, l1_ratio=0.5, tol=tol, max_iter=100_000, fit_intercept=intercept
        )
    if loss == "logistic" and not intercept:
        out["skglm SparseLogisticRegression"] = lambda tol: skglm.SparseLogisticRegression(
            alpha=alpha, tol=tol, max_iter=1000, fit_intercept=False
        )
    if loss == "logistic" and not intercept:
        out["sklearn liblinear L1"] = lambda tol: LogisticRegression(
            penalty="l1",
            C=1.0 / alpha,
            solver="liblinear",
            tol=tol,
            max_iter=100_000,
            fit_intercept=False,
            random_state=0,  # liblinear's coordinate order is random: some take minutes
        )  # C_sklearn = 1 / (n alpha) * n: liblinear sums the loss; rescaled in fit_peer
    if loss == "sqhinge" and not intercept:
        out["sklearn LinearSVC L1"] = lambda tol: LinearSVC(
            penalty="l1", loss="squared_hinge", dual=False, C=1.0 / alpha, tol=tol,
            max_iter=100_000, fit_intercept=False, random_state=0,
        )  # fmt: skip
    if loss == "huber":
        from skglm.datafits import Huber as HuberFit
        from skglm.penalties import L1 as SKGLM_L1
        from skglm.solvers import AndersonCD

        out["skglm Huber+L1"] = lambda tol: skglm.GeneralizedLinearEstimator(
            HuberFit(1.0), SKGLM_L1(alpha), AndersonCD(tol=tol, max_iter=1000,
                                                    fit_intercept=intercept),
        )  # fmt: skip
    return out


def fit_peer(make: Callable, tol: float, X: Any, y: np.ndarray, n: int) -> tuple[Any, float]:
    """A fitted peer at ``tol`` and its seconds (liblinear's C is per sum: scaled by 1/n)."""
    est = make(tol)
    if hasattr(est, "C"):
        est.set_params(C=est.C / n)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return est, time.perf_counter() - start


def solution_of(est: Any) -> dict[str, np.ndarray]:
    """The peer's coefficients as an optframe solution."""
    w = np.asarray(est.coef_, dtype=np.float64).reshape(-1)
    b = float(np.ravel(getattr(est, "intercept_", 0.0))[0]) if np.size(est.intercept_) else 0.0
    return {"w": w, "intercept": np.array([b])}


def run_job(job: tuple, repeats: int, auto: bool) -> list[dict[str, Any]]:
    """Every method on one job; one row per (method, tolerance) with median seconds."""
    name, dataset, loss, penalty, ratio, intercept, standardize = job
    X, y = load(dataset, standardize)
    n, m = X.shape
    alpha = ratio * alpha_max(X, y, loss, intercept) * (2.0 if penalty == "enet" else 1.0)
    C = 1.0 / (n * alpha)
    Xp = sp.csc_array(X) if sp.issparse(X) else X
    model = model_of(Xp, y, loss, penalty, C, intercept)
    of.solve(model, driver=CoordinateDescent(), max_iter=1)  # compile before timing
    builders = peers(loss, penalty, alpha, intercept)
    times: dict[tuple[str, float], list[float]] = {}
    solutions: dict[tuple[str, float], dict[str, np.ndarray]] = {}
    extra: dict[tuple[str, float], dict[str, Any]] = {}
    for make in builders.values():  # warm-up (skglm's numba)
        fit_peer(make, 1e-2, Xp, y, n)
    for _ in range(repeats):
        start = time.perf_counter()
        result = of.solve(model_of(Xp, y, loss, penalty, C, intercept),
                          driver=CoordinateDescent())  # fmt: skip
        key = ("optframe CoordinateDescent", 1e-6)
        times.setdefault(key, []).append(time.perf_counter() - start)
        solutions[key] = dict(result.solution)
        extra[key] = {"status": result.status.value, "certified_gap": result.gap,
                      "screened": result.stats["screened"], "outer": result.iterations,
                      "driver_seconds": [*extra.get(key, {}).get("driver_seconds", []),
                                         result.timings.solve + result.timings.build],
                      "certificate_seconds": [
                          *extra.get(key, {}).get("certificate_seconds", []),
                          result.stats.get("certificate_seconds", math.nan)]}  # fmt: skip
        if auto:
            start = time.perf_counter()
            result = of.solve(model_of(Xp, y, loss, penalty, C, intercept), time_limit=600)
            key = (f"optframe auto ({result.driver})", 0.0)
            times.setdefault(key, []).append(time.perf_counter() - start)
            solutions[key] = dict(result.solution)
            extra[key] = {"status": result.status.value, "certified_gap": result.gap}
        for label, make in builders.items():
            for tol in TOLS:
                est, seconds = fit_peer(make, tol, Xp, y, n)
                times.setdefault((label, tol), []).append(seconds)
                solutions[(label, tol)] = solution_of(est)
    objectives = {key: model.objective(sol) for key, sol in solutions.items()}
    best = min(objectives.values())
    for values in extra.values():  # medians of the rounds
        for field_ in ("driver_seconds", "certificate_seconds"):
            if field_ in values:
                values[field_] = statistics.median(values[field_])
    rows = []
    for key, sol in solutions.items():
        label, tol = key
        objective = objectives[key]
        bound = model.dual_bound(sol)
        rows.append({
            "job": name, "data": dataset, "n": n, "m": m, "loss": loss, "penalty": penalty,
            "ratio": ratio, "intercept": intercept, "alpha": alpha, "C": C,
            "method": label, "tol": tol, "seconds": statistics.median(times[key]),
            "objective": objective, "rel": (objective - best) / max(abs(best), 1e-300),
            "gap": (objective - bound) / max(abs(objective), 1e-300),
            "nnz": int(np.count_nonzero(sol["w"])), **extra.get(key, {}),
        })  # fmt: skip
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: per job, optframe against each peer's fastest run that matches it.

    Two matches: the objective within 1e-6 (relative) of the best, and optframe's certificate
    at the peer's solution within 1e-6 (what optframe's own ``optimal`` asserts).
    """
    lines = [
        "| job | n x m | nnz(w) | optframe CD s (driver s; status) | peer | peer s, objective "
        "within 1e-6 (tol) | ratio | peer s, certified gap <= 1e-6 (tol) | ratio |",
        "|---|---|---:|---|---|---|---:|---|---:|",
    ]
    for job in dict.fromkeys(r["job"] for r in rows):
        mine = [r for r in rows if r["job"] == job]
        cd = next(r for r in mine if r["method"] == "optframe CoordinateDescent")
        for label in dict.fromkeys(r["method"] for r in mine):
            if label.startswith("optframe"):
                continue
            cells = []
            for test in (lambda r: r["rel"] <= MATCH, lambda r: r["gap"] <= MATCH):
                ok = [r for r in mine if r["method"] == label and test(r)]
                if ok:
                    fast = min(ok, key=lambda r: r["seconds"])
                    cells += [f"{fast['seconds']:.3f} ({fast['tol']:g})",
                              f"{fast['seconds'] / cd['seconds']:.2f}"]  # fmt: skip
                else:
                    cells += ["never", "-"]
            inner = cd.get("driver_seconds")
            spent = f"{inner:.3f}; " if inner is not None else ""
            lines.append(
                f"| {job} | {cd['n']:,} x {cd['m']:,} | {cd['nnz']} | {cd['seconds']:.3f} "
                f"({spent}{cd['status']}) | {label} | " + " | ".join(cells) + " |"
            )
    return "\n".join(lines)


def crossover(repeats: int, sizes: tuple[int, ...]) -> list[dict[str, Any]]:
    """Direct (auto's route before CoordinateDescent) against it on the first rows of a9a."""
    X, y = load("a9a", False)
    X = sp.csr_array(X)
    rows = []
    for loss, penalty, intercept in (("logistic", "l1", True), ("sqhinge", "l1", False),
                                     ("ls", "enet", True), ("huber", "l1", True)):  # fmt: skip
        for n in sizes:
            Xn, yn = X[:n], y[:n]
            alpha = 0.05 * alpha_max(Xn, yn, loss, intercept)
            C = 1.0 / (n * alpha)
            model = model_of(Xn, yn, loss, penalty, C, intercept)
            of.solve(model, driver=CoordinateDescent(), max_iter=1)
            seconds: dict[str, list[float]] = {"cd": [], "direct": []}
            statuses: dict[str, str] = {}
            for _ in range(repeats):
                for name in ("cd", "direct"):
                    driver = CoordinateDescent() if name == "cd" else "direct"
                    start = time.perf_counter()
                    result = of.solve(model_of(Xn, yn, loss, penalty, C, intercept), driver)
                    seconds[name].append(time.perf_counter() - start)
                    statuses[name] = result.status.value
            row = {"job": f"crossover-{loss}-{penalty}", "n": n, "m": X.shape[1],
                   "intercept": intercept,
                   "cd": statistics.median(seconds["cd"]), "cd_status": statuses["cd"],
                   "direct": statistics.median(seconds["direct"]),
                   "direct_status": statuses["direct"]}  # fmt: skip
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def crossover_table(rows: list[dict[str, Any]]) -> str:
    """Markdown: Direct against CoordinateDescent by loss and size."""
    lines = [
        "| job | n | intercept | CoordinateDescent s (status) | Direct s (status) | Direct / CD |",
        "|---|---:|---|---|---|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['job'].removeprefix('crossover-')} | {r['n']:,} | {r['intercept']} | "
            f"{r['cd']:.3f} ({r['cd_status']}) | {r['direct']:.3f} ({r['direct_status']}) | "
            f"{r['direct'] / r['cd']:.1f} |"
        )
    return "\n".join(lines)


def report(path: str) -> str:
    """Both tables from the rows of a JSONL file (the peers' and the crossover's)."""
    with open(path) as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    cross = [r for r in rows if r["job"].startswith("crossover-")]
    peers_rows = [r for r in rows if not r["job"].startswith("crossover-")]
    return table(peers_rows) + "\n\n" + crossover_table(cross)


def main() -> None:
    """Run the jobs, append rows to ``--out`` and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--auto", action="store_true", help="also time of.solve(model)")
    parser.add_argument("--jobs", nargs="*", default=[job[0] for job in JOBS])
    parser.add_argument("--out", default=None, help="a JSONL file for the rows")
    parser.add_argument(
        "--crossover",
        action="store_true",
        help="Direct against CoordinateDescent on 100 to 10,000 rows of a9a",
    )
    parser.add_argument("--report", default=None, help="print the tables of a JSONL file")
    args = parser.parse_args()
    if args.report:
        print(report(args.report))
        return
    if args.crossover:
        got = crossover(args.repeats, (100, 300, 1000, 3000, 10000))
        if args.out:
            with open(args.out, "a") as handle:
                for row in got:
                    handle.write(json.dumps(row) + "\n")
        return
    rows: list[dict[str, Any]] = []
    for job in JOBS:
        if job[0] not in args.jobs:
            continue
        got = run_job(job, args.repeats, args.auto)
        rows += got
        if args.out:
            with open(args.out, "a") as handle:
                for row in got:
                    handle.write(json.dumps(row) + "\n")
        print(table(got), flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
