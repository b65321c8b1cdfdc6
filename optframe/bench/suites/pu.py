"""PU learning (double hinge): SMO (USMO, corrected) against Direct, and WeightedSVM SMO vs SVC.

Three parts, selected by the cell's ``part``:

* ``small``: the paper's Tables III-IV protocol on the small sets available: features z-scored,
  ``floor(0.2 * #positives)`` positives labeled at random (seed 0), every other row unlabeled,
  ``prior`` = the true share of positives among the unlabeled rows, lam in {1e-4, 1e-3, 1e-2,
  1e-1}, linear and Gaussian (``exp(-|x-z|^2 / 2)``, width 1) kernels. F-measure on the unlabeled
  rows, for the positive class (``f1``) and with the paper's quirk (``f1_paper``: F1 of the
  majority class of the unlabeled rows, notes/usmo.md section 4). SMO and Direct (Clarabel) solve
  the same model: their objectives must agree.
* ``scaling``: 100 labeled positives and 1k-50k unlabeled rows drawn at random from a large set;
  seconds and peak resident memory (each cell in a forked child process; ``peak_mb`` is the
  growth of VmHWM over the child's start) of SMO, Direct with Clarabel and Direct with OSQP.
* ``svm``: WeightedSVM (RBF) by SMO against scikit-learn's ``SVC`` (libsvm) on a9a and ijcnn1,
  same C and gamma, both at tol 1e-3: seconds and the objective difference.

SMO's ``history`` has no objective (``None``; ``nan`` in the Result) at the steps recorded while
shrinking had set coordinates aside: their gradients are stale there, so SMO evaluates the
primal objective only once the full gradient is rebuilt. The dual bound is exact at every step,
and the convergence plots skip the missing objectives.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing as mp
import os
import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from optframe.bench.signals import sigint_ignored
from optframe.bench.suite import Cell, compare_with_baseline

DESCRIPTION = "PU double hinge: SMO vs Direct (Clarabel, OSQP); WeightedSVM SMO vs SVC"
COLUMNS = [
    "part",
    "dataset",
    "kernel",
    "lam",
    "n_unlabeled",
    "method",
    "status",
    "objective",
    "rel_diff",
    "seconds",
    "peak_mb",
    "f1",
    "f1_paper",
    "f1_paper_init",
    "steps",
]
# For `optframe report`: seconds against Direct (small sets), Direct with Clarabel (scaling) and
# SVC (svm); scaling curves of seconds and peak memory against the number of unlabeled rows.
REPORT = {
    "method": "method",
    "baseline": ("direct", "direct:clarabel", "svc"),
    "problem": ("part", "dataset", "kernel", "lam", "n_unlabeled"),
    "scaling": "n_unlabeled",
    "memory": "peak_mb",
}
SMALL = (
    "australian",
    "pima",
    "heart_statlog",
    "ionosphere",
    "sonar",
    "german",
    "splice",
    "breast_cancer_wisconsin",
    "spambase",
    "banana",
    "twonorm",
    "ring",
)
# Which of the paper's Table III-IV sets each stands for.
PAPER_NAME = {
    "australian": "Australian",
    "pima": "Diabetes",
    "heart_statlog": "Heart-statlog",
    "ionosphere": "Ionosphere",
}
LAMBDAS = (1e-4, 1e-3, 1e-2, 1e-1)
SCALING_SETS = ("magic", "adult", "skin_nonskin", "kddcup", "shuttle")
SCALING_SIZES = (1_000, 2_000, 5_000, 10_000, 20_000, 50_000)
SVM_SETS = ("a9a", "ijcnn1")
# Direct solves form an n x n matrix (or its factor): skip them beyond this many unlabeled rows.
DIRECT_LIMIT = {"clarabel": 5_000, "osqp": 5_000}
TIME_LIMIT = 600.0
# Small part: Direct only up to this many rows (its kernel forms are dense N x N).
SMALL_DIRECT_ROWS = 3000

PAPER = """Paper (Sansone et al., Tables III-IV), USMO F-measure (%) with its evaluation quirk,
columns lam = 1e-4 / 1e-3 / 1e-2 / 1e-1:
  linear   Australian 68.3 67.6 69.3 70.2 | Diabetes 70.1 71.1 79.3 82.3 |
           Heart-statlog 54.5 55.2 53.8 60.2 | Ionosphere 65.1 72.0 73.7 75.2
  Gaussian Australian 64.7 70.6 59.4 0.0 | Diabetes 70.0 70.6 80.1 82.3 |
           Heart-statlog 53.5 56.7 56.4 75.6 | Ionosphere 65.3 74.1 65.7 74.2
No speed-up factors, seconds or memory figures are in the paper's text (figures only)."""


# The time left in a run is estimated per (part, kernel, method).
KIND = ("part", "kernel", "method")
# Seconds of one small-set cell on one core (the first one in a process also compiles SMO).
_SMALL_SECONDS = {"direct": 2.0, "smo": 0.5, "smo:paper": 0.5}
# Solve seconds at 1,000 unlabeled rows (Gaussian kernel) and the power of the size they grow
# with (docs/results/generated/pu.md); a scaling cell also starts a child process (4 s).
_SCALING_SECONDS = {
    "smo": (0.05, 1.5),
    "smo:paper": (0.5, 1.0),
    "direct:clarabel": (1.0, 2.5),
    "direct:osqp": (2.5, 2.5),
}


def expected_seconds(cell: Cell, quick: bool) -> float:
    """Seconds one cell takes on one core (see ``KIND``)."""
    part, method = cell["part"], cell["method"]
    if part == "small":
        return _SMALL_SECONDS.get(method, 1.0)
    if part == "svm":
        return 30.0 if method == "svc" else 15.0
    base, power = _SCALING_SECONDS.get(method, (1.0, 1.0))
    if cell["kernel"] == "linear":
        base /= 5.0
    return min(4.0 + base * (cell["n_unlabeled"] / 1000.0) ** power, TIME_LIMIT)


def _parts() -> tuple[str, ...]:
    chosen = os.environ.get("OPTFRAME_PU_PARTS", "small,scaling,svm")
    return tuple(part.strip() for part in chosen.split(",") if part.strip())


def cells(quick: bool) -> list[Cell]:
    """The grid; ``quick``: two small sets, lam 1e-2, and the 1k/2k Gaussian scaling cells on magic.

    ``OPTFRAME_PU_PARTS`` (comma-separated, default ``small,scaling,svm``) selects the parts, and
    ``OPTFRAME_PU_SETS`` (comma-separated) restricts the data sets and ``OPTFRAME_PU_SIZES``
    (comma-separated integers) the scaling sizes.
    """
    grid: list[Cell] = []
    parts = _parts()
    only = {s.strip() for s in os.environ.get("OPTFRAME_PU_SETS", "").split(",") if s.strip()}
    small = ("australian", "pima") if quick else SMALL
    lambdas = (1e-2,) if quick else LAMBDAS
    for name in small if "small" in parts else ():
        if only and name not in only:
            continue
        for kernel in ("linear", "gaussian"):
            for lam in lambdas:
                for method in ("direct", "smo", "smo:paper"):
                    grid.append(Cell({"part": "small", "dataset": name, "kernel": kernel,
                                      "lam": lam, "method": method}))  # fmt: skip
    sets = ("magic",) if quick else SCALING_SETS
    sizes = (1_000, 2_000) if quick else SCALING_SIZES
    if os.environ.get("OPTFRAME_PU_SIZES"):
        sizes = tuple(int(v) for v in os.environ["OPTFRAME_PU_SIZES"].split(","))
    # quick: the Gaussian kernel only, where Direct's dense kernel matrix shows (each scaling cell
    # starts a child process, a few seconds of imports and compilation)
    kernels = ("gaussian",) if quick else ("linear", "gaussian")
    for name in sets if "scaling" in parts else ():
        if only and name not in only:
            continue
        for kernel in kernels:
            for size in sizes:
                for method in ("smo", "smo:paper", "direct:clarabel", "direct:osqp"):
                    solver = method.partition(":")[2]
                    if solver in DIRECT_LIMIT and size > DIRECT_LIMIT[solver]:
                        continue
                    params = {"part": "scaling", "dataset": name, "kernel": kernel}
                    params |= {"lam": 1e-2, "n_unlabeled": size, "method": method}
                    grid.append(Cell(params))
    if not quick and "svm" in parts:
        for name in SVM_SETS:
            for method in ("svc", "smo"):
                grid.append(Cell({"part": "svm", "dataset": name, "kernel": "gaussian",
                                  "method": method}))  # fmt: skip
    return grid


# ---------------------------------------------------------------------------------- helpers
def _zscore(X: np.ndarray) -> np.ndarray:
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)


def _dense(data: Any) -> np.ndarray:
    X = data.X
    return np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)


def _positive_labels(data: Any) -> np.ndarray:
    y = np.asarray(data.y)
    if data.meta.get("task") == "multiclass":  # 1-vs-rest: the most frequent class is positive
        codes, counts = np.unique(y, return_counts=True)
        return y == codes[np.argmax(counts)]
    return y > 0


def _kernel(name: str) -> Any:
    from optframe.kernels import RBF

    return RBF(gamma=0.5) if name == "gaussian" else "linear"


def small_problem(name: str, seed: int = 0) -> tuple[Any, np.ndarray]:
    """``(Dataset, truth)`` for the small protocol: truth is True for positive unlabeled rows."""
    from optframe.data import Dataset, load_dataset

    data = load_dataset(name)
    X, positive = _zscore(_dense(data)), _positive_labels(data)
    rng = np.random.default_rng(seed)
    pos = np.flatnonzero(positive)
    labeled = rng.choice(pos, size=max(1, int(0.2 * pos.size)), replace=False)
    y = np.zeros(X.shape[0])
    y[labeled] = 1.0
    unlabeled = y == 0
    return Dataset(X=X, y=y, name=name), positive[unlabeled]


def scaling_problem(name: str, n_unlabeled: int, seed: int = 0) -> tuple[Any, np.ndarray]:
    """100 labeled positives and ``n_unlabeled`` random other rows (z-scored on the sample)."""
    from optframe.data import Dataset, load_dataset

    data = load_dataset(name)
    positive = _positive_labels(data)
    rng = np.random.default_rng(seed)
    pos = rng.choice(np.flatnonzero(positive), size=100, replace=False)
    rest = np.setdiff1d(np.arange(positive.size), pos)
    unl = rng.choice(rest, size=min(n_unlabeled, rest.size), replace=False)
    rows = np.r_[pos, unl]
    X = data.X[rows]
    X = _zscore(np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64))
    y = np.r_[np.ones(100), np.zeros(unl.size)]
    return Dataset(X=X, y=y, name=name), positive[unl]


def f_measures(predicted_positive: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """(F1 of the positive class, F1 of the majority class of ``truth``: the paper's quirk)."""
    from sklearn.metrics import f1_score

    f1 = f1_score(truth, predicted_positive, zero_division=0.0)
    majority = truth.sum() > truth.size - truth.sum()
    target = truth if majority else ~truth
    guess = predicted_positive if majority else ~predicted_positive
    return 100.0 * f1, 100.0 * f1_score(target, guess, zero_division=0.0)


def paper_start(model: Any, nu: float = 0.5, max_positives: int = 2000) -> np.ndarray:
    r"""The USMO initialization of a PULearning dual (paper section 4.5, simplified), feasible.

    1. A one-class SVM on the labeled positives (same kernel, :math:`\nu` = ``nu``): its dual
       :math:`\min \tfrac12 \gamma^\top K_{PP}\gamma`, :math:`0 \le \gamma \le 1/(\nu p)`,
       :math:`\mathbf 1^\top\gamma = 1`, by projected gradient (at most ``max_positives``
       positives, a random subset beyond).
    2. Rank the unlabeled rows by the score :math:`\sum_i \gamma_i k(x_i, x_u)`, highest first.
    3. Five groups along the ranking: :math:`\pi a n` rows at :math:`c_2`,
       :math:`\lfloor\log n\rfloor` at :math:`3c_2/4`, the middle at :math:`c_2/2`,
       :math:`\lfloor\log n\rfloor` at :math:`c_2/4`, :math:`(1-\pi) a n` at 0, with
       :math:`a = 1 - (2\lfloor\log n\rfloor + 3)/n` (the largest the paper's constraints
       allow, which its problem (18) drives to).
    4. Exact repair of :math:`\mathbf 1^\top\sigma = c_1 p`: fill the highest-ranked rows below
       :math:`c_2` (or empty the lowest-ranked ones) until the sum is exact.

    Returns :math:`\sigma` (one entry per unlabeled row), a warm start for ``SMO(warm_start=)``.
    """
    c1, c2, X = model.c1, model.c2, model.data.X
    positives, unlabeled = model.positives, model.unlabeled
    n = unlabeled.size
    P = positives
    if P.size > max_positives:
        P = np.sort(np.random.default_rng(0).choice(P, max_positives, replace=False))
    K = model.kernel.matrix(X[P])
    cap = 1.0 / (nu * P.size)
    gamma = np.full(P.size, 1.0 / P.size)
    v = np.random.default_rng(0).normal(size=P.size)
    for _ in range(30):  # power iteration: the step 1/L
        v = K @ v
        v /= np.linalg.norm(v) or 1.0
    L = max(float(v @ K @ v), 1e-12)
    for _ in range(300):
        gamma = _capped_simplex(gamma - (K @ gamma) / L, cap)
    alpha = np.zeros(model.data.n_samples)
    alpha[P] = gamma
    score = model.decision_function({"alpha": alpha, "intercept": np.zeros(1)}, X[unlabeled])
    order = np.argsort(-score, kind="stable")
    log_n = max(1, int(math.log(n))) if n > 2 else 0
    a = max(0.0, 1.0 - (2 * log_n + 3) / n)
    n5, n1 = int(model.prior * a * n), int((1 - model.prior) * a * n)
    n4 = n2 = log_n
    n3 = max(0, n - n5 - n4 - n2 - n1)
    values = np.r_[
        np.full(n5, c2), np.full(n4, 0.75 * c2), np.full(n3, 0.5 * c2), np.full(n2, 0.25 * c2)
    ][:n]
    ranked = np.zeros(n)
    ranked[: values.size] = values
    residual = c1 * positives.size - ranked.sum()
    if residual > 0:
        for k in range(n):  # fill from the top of the ranking
            add = min(c2 - ranked[k], residual)
            ranked[k] += add
            residual -= add
            if residual <= 0:
                break
    elif residual < 0:
        for k in range(n - 1, -1, -1):  # empty from the bottom
            take = min(ranked[k], -residual)
            ranked[k] -= take
            residual += take
            if residual >= 0:
                break
    sigma = np.empty(n)
    sigma[order] = ranked
    # Put the last rounding error on one interior entry so the sum is exact to an ulp.
    drift = c1 * positives.size - sigma.sum()
    inside = np.flatnonzero((sigma + drift >= 0) & (sigma + drift <= c2))
    if inside.size:
        sigma[inside[0]] += drift
    return sigma


def _capped_simplex(v: np.ndarray, cap: float) -> np.ndarray:
    """Euclidean projection onto {0 <= g <= cap, sum(g) = 1} (bisection on the shift)."""
    lo, hi = float(v.min()) - 1.0, float(v.max())
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if np.clip(v - mid, 0.0, cap).sum() > 1.0:
            lo = mid
        else:
            hi = mid
    return np.clip(v - 0.5 * (lo + hi), 0.0, cap)


def _vm_kb(field: str) -> int:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _warm_up() -> None:
    """Import the solvers and load SMO's compiled code, so cells time the solve alone."""
    import optframe as of
    from optframe.data import Dataset
    from optframe.drivers import SMO
    from optframe.kernels import RBF
    from optframe.models import PULearning

    X = np.random.default_rng(0).normal(size=(40, 3))
    model = PULearning(Dataset(X=X, y=np.r_[np.ones(5), np.zeros(35)]), prior=0.3, lam=0.1)
    for kernel in ("linear", RBF(gamma=0.5)):
        warm = PULearning(model.data, prior=0.3, lam=0.1, kernel=kernel)
        of.solve(warm, driver=SMO())
        of.solve(warm, backend="clarabel")
        of.solve(warm, backend="osqp")


def _child_main(connection: Any, function: Any, args: tuple) -> None:
    _warm_up()
    base = _vm_kb("VmRSS:")
    try:
        record = function(*args)
    except Exception as exc:  # reported as a failed cell
        record = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
    record["peak_mb"] = (_vm_kb("VmHWM:") - base) / 1024.0
    with contextlib.suppress(OSError):  # the runner is gone (stopped by Ctrl-C): nobody to tell
        connection.send(record)


def _in_child(function: Any, args: tuple, timeout: float) -> dict[str, Any]:
    """Run ``function(*args)`` in a spawned child; add ``peak_mb`` (VmHWM growth in the child).

    The child gets the cell's data already loaded and warms up (imports, compiled code) before
    its baseline, so ``peak_mb`` and the seconds are the solve's own.
    """
    context = mp.get_context("spawn")
    parent, child = context.Pipe(duplex=False)
    process = context.Process(target=_child_main, args=(child, function, args))
    with sigint_ignored():  # Ctrl-C is the runner's to handle
        process.start()
    child.close()
    record = parent.recv() if parent.poll(timeout) else {"status": "killed (time)"}
    process.join(5)
    if process.is_alive():
        process.kill()
        process.join()
    return record


# ------------------------------------------------------------------------------------ cells
_WARMED: dict[str, bool] = {}


def _solve_pu(data: Any, kernel: str, lam: float, method: str, truth: np.ndarray) -> dict:
    import optframe as of
    from optframe.bench.history import history_rows
    from optframe.drivers import SMO
    from optframe.models import PULearning

    prior = float(truth.mean())
    model = PULearning(data, prior=prior, lam=lam, kernel=_kernel(kernel))
    start = time.perf_counter()
    init: dict[str, Any] = {}
    if method == "smo":
        result = of.solve(model, driver=SMO(tol=1e-3))
    elif method == "smo:paper":
        sigma = paper_start(model)
        init["init_seconds"] = time.perf_counter() - start
        start_solution = model.solution_from_sigma(sigma)
        guess = model.predict(start_solution, data.X[model.unlabeled]) > 0
        init["f1_init"], init["f1_paper_init"] = f_measures(guess, truth)
        result = of.solve(model, driver=SMO(tol=1e-3, warm_start=sigma))
    else:
        backend = method.partition(":")[2] or "clarabel"
        result = of.solve(model, backend=backend, time_limit=TIME_LIMIT)
    seconds = time.perf_counter() - start
    record: dict[str, Any] = {
        "status": result.status.value,
        "objective": result.objective,
        "seconds": seconds,
        "n_unlabeled": int(truth.size),
        "prior": prior,
        "steps": result.iterations if method.startswith("smo") else None,
        "history": history_rows(result),
        **init,
    }
    if result.has_solution:
        X_unlabeled = data.X[model.unlabeled]
        predicted = result.predict(X_unlabeled) > 0
        record["f1"], record["f1_paper"] = f_measures(predicted, truth)
    return record


def run_cell(cell: Cell) -> dict[str, Any]:
    """Run one cell (see the module docstring)."""
    part = cell["part"]
    if part == "small":
        if not _WARMED.get("warm"):
            _warm_up()
            _WARMED["warm"] = True
        data, truth = small_problem(cell["dataset"])
        if cell["method"] == "direct" and data.n_samples > SMALL_DIRECT_ROWS:
            return {"status": "skipped (size)"}
        record = _solve_pu(data, cell["kernel"], cell["lam"], cell["method"], truth)
        record["paper_name"] = PAPER_NAME.get(cell["dataset"], "")
        return record
    if part == "scaling":
        data, truth = scaling_problem(cell["dataset"], cell["n_unlabeled"])
        args = (data, cell["kernel"], cell["lam"], cell["method"], truth)
        return _in_child(_solve_pu, args, TIME_LIMIT + 120)
    return _in_child(_svm_cell, (cell["dataset"], cell["method"]), TIME_LIMIT + 120)


def _svm_cell(name: str, method: str) -> dict[str, Any]:
    import optframe as of
    from optframe.data import load_dataset
    from optframe.drivers import SMO
    from optframe.kernels import RBF
    from optframe.models import WeightedSVM

    data = load_dataset(name)
    C, gamma = 1.0, 1.0 / data.n_features
    model = WeightedSVM(data, C=C, kernel=RBF(gamma=gamma))
    start = time.perf_counter()
    if method == "svc":
        from sklearn.svm import SVC

        # a Dataset's sparse X has the 32-bit indices libsvm's wrapper takes
        svc = SVC(C=C, gamma=gamma, tol=1e-3, cache_size=256).fit(data.X, data.y)
        seconds = time.perf_counter() - start
        coef = svc.dual_coef_
        coef = coef.toarray() if sp.issparse(coef) else np.asarray(coef)
        alpha = np.zeros(data.n_samples)
        alpha[svc.support_] = np.abs(coef.ravel())
        objective = model.dual_objective(alpha)
        return {"status": "done", "objective": objective, "seconds": seconds, "kernel": "gaussian"}
    result = of.solve(model, driver=SMO(tol=1e-3))
    seconds = time.perf_counter() - start
    return {"status": result.status.value, "objective": result.bound, "seconds": seconds,
            "steps": result.iterations, "kernel": "gaussian"}  # fmt: skip


def complete(records: list[dict[str, Any]]) -> None:
    """``rel_diff``: small sets, the objective's difference to Direct's (same set, kernel, lam)."""
    compare_with_baseline(
        [r for r in records if r.get("part") == "small"],
        same=("dataset", "kernel", "lam"),
        is_baseline=lambda r: r["method"] == "direct",
        column="objective",
        into="rel_diff",
    )


def summarize(records: list[dict[str, Any]]) -> str:
    """SMO / Direct agreement and time ratios, side by side from the same run."""
    lines = []
    small = [r for r in records if r.get("part") == "small" and r.get("method") == "smo"]
    if small:
        worst = max((r.get("rel_diff") or 0.0) for r in small)
        lines.append(f"small sets: max |objective(SMO) - objective(Direct)| / max(1, |.|) = "
                     f"{worst:.2e} over {len(small)} cells")  # fmt: skip
    by_key: dict[tuple, dict[str, Any]] = {}
    for r in records:
        if r.get("part") == "scaling":
            by_key.setdefault((r["dataset"], r["kernel"], r["n_unlabeled"]), {})[r["method"]] = r
    for (name, kernel, size), methods in sorted(by_key.items()):
        smo = methods.get("smo")
        if not smo or "seconds" not in smo:
            continue
        parts = [f"{name} {kernel} n={size}: SMO {smo['seconds']:.2f} s, "
                 f"{smo.get('peak_mb', float('nan')):.0f} MB"]  # fmt: skip
        for method in ("direct:clarabel", "direct:osqp"):
            other = methods.get(method)
            if other and "seconds" in other:
                parts.append(f"{method} {other['seconds']:.2f} s "
                             f"({other['seconds'] / smo['seconds']:.1f}x), "
                             f"{other.get('peak_mb', float('nan')):.0f} MB")  # fmt: skip
        lines.append("; ".join(parts))
    svm = {r["dataset"] + ":" + r["method"]: r for r in records if r.get("part") == "svm"}
    for name in SVM_SETS:
        a, b = svm.get(f"{name}:svc"), svm.get(f"{name}:smo")
        if a and b and "seconds" in a and "seconds" in b:
            lines.append(f"{name}: SVC {a['seconds']:.2f} s, SMO {b['seconds']:.2f} s "
                         f"(SMO/SVC {b['seconds'] / a['seconds']:.2f}), dual objective SMO - SVC "
                         f"= {b['objective'] - a['objective']:.3g}")  # fmt: skip
    return "\n".join(lines)
