"""HIPAD (ADMMThenIPM) vs ADMM vs Direct (Clarabel) on the elastic-net / knowledge-based SVM.

Reproduces Qin et al.'s Tables 1-2 on the data available offline (hipad.md sections 5-6):

* microarrays ALLAML (leukemia), colon-cancer, Prostate-GE (for duke), arcene (for gisette),
  madelon, and the 20-newsgroups word-count sets BASEHOCK, PCMAC, RELATHE and LaSVM's reuters
  (for rcv1 / real-sim), loaded with :func:`optframe.data.load_dataset`;
* the synthetic knowledge sets ksvm-s-10k and ksvm-s-50k (:func:`optframe.data.make_knowledge_data`,
  paper sizes), solved with the knowledge sets (HIPAD-ENK, ADMM-ENK) and without (Direct ENSVM
  and the scikit-learn baselines see only the training data).

Protocol (the paper gives splits only for rcv1, real-sim and gisette): one seeded stratified split
per set, 500 training rows for the sets with more than 1,500 rows (the paper's 500 / 1,000 text
protocol, test = up to 1,000 of the rest), else 55 % training rows (leukemia's LIBSVM split is
38 / 34). Dense features are z-scored with training statistics; sparse rows are scaled to unit
norm. No cross-validation: lam1 = ``LAM1_FRACTION`` times lam1_max (the smallest lam1 whose
solution is w = 0, from the balanced hinge subgradient at w = 0) and lam2 = ``LAM2`` (dense) or
``LAM2_SPARSE`` (sparse text rows); LinearSVC and
SVC (RBF) use C = 1 / (N lam2), the C of the same l2-SVM.

Every method's time is wall seconds of one solve on this machine (2 shared cores). ``rel_obj`` is
(objective - Direct's objective) / max(1, |Direct's|), Direct being Clarabel through CVXPY at its
default tolerances (1e-8).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from optframe.bench.suite import Cell, compare_with_baseline

DESCRIPTION = (
    "HIPAD vs ADMM vs Direct (Clarabel) on the elastic-net SVM (microarray, text) and the "
    "knowledge-based SVM (ksvm-s-10k/50k); accuracy, support, seconds, objective gap"
)
COLUMNS = [
    "dataset",
    "N",
    "m",
    "method",
    "status",
    "accuracy",
    "support",
    "seconds",
    "iterations",
    "objective",
    "rel_obj",
    "proven",
]
# For `optframe report`: seconds against Direct (Clarabel) on each data set.
REPORT = {"method": "method", "baseline": "direct", "problem": ("dataset",)}
REAL = [
    "colon-cancer",
    "ALLAML",
    "Prostate-GE",
    "arcene",
    "madelon",
    "BASEHOCK",
    "PCMAC",
    "RELATHE",
    "reuters",
]
SYNTHETIC = {"ksvm-s-10k": (200, 400, 10_000), "ksvm-s-50k": (500, 1000, 50_000)}
METHODS = ("direct", "direct-ensvm", "hipad", "admm", "linearsvc", "svc")
LAM1_FRACTION = 0.1
LAM2 = 0.1
LAM2_SPARSE = 1e-3  # unit-norm text rows: lam2 = 0.1 gave chance accuracy (C = 0.02)
# lam1 large enough that Direct selects exactly the 200 block features (the paper's claim).
KNOWLEDGE = {"lam1": 0.1, "lam2": 1e-2, "rho": 1000.0}
ADMM_TOL = 1e-7
TIME_LIMIT = 300.0
ADMM_TIME_LIMIT = 120.0  # ADMM stopped here reports TIME_LIMIT: its ratio is then a lower bound

# The time left in a run is estimated per (dataset, method). Seconds of one cell on one core:
# quick, as measured; full, per method (docs/results/hipad.md), ten times more on ksvm-s-50k.
KIND = ("dataset", "method")
_QUICK_SECONDS = {
    ("colon-cancer", "direct"): 3.0,
    ("colon-cancer", "hipad"): 2.6,
    ("colon-cancer", "admm"): 3.0,
    ("ksvm-s-10k", "direct"): 4.2,
    ("ksvm-s-10k", "direct-ensvm"): 3.1,
    ("ksvm-s-10k", "hipad"): 2.3,
    ("ksvm-s-10k", "admm"): 42.0,
    ("ksvm-s-10k", "svc"): 1.6,
}
_FULL_SECONDS = {
    "direct": 5.0,
    "direct-ensvm": 5.0,
    "hipad": 3.0,
    "admm": 25.0,
    "linearsvc": 1.0,
    "svc": 1.5,
}


def expected_seconds(cell: Cell, quick: bool) -> float:
    """Seconds one cell takes on one core (see ``KIND``)."""
    if quick:
        return _QUICK_SECONDS.get((cell["dataset"], cell["method"]), 0.5)
    scale = 10.0 if cell["dataset"] == "ksvm-s-50k" else 1.0
    return min(scale * _FULL_SECONDS.get(cell["method"], 5.0), TIME_LIMIT)


PAPER = """Table 1 (HIPAD acc / support / CPU s | ADMM-ENSVM acc / support / CPU s | LIBSVM acc):
rcv1 86.9/2037/1.18 | 86.8/7002/1.10 | 86.1;  real-sim 94.0/2334/0.79 | 93.9/2307/0.31 | 93.4
gisette 94.7/498/8.96 | 63.1/493/45.87 | 93.4;  duke 90/168/1.56 | 90/150/5.52 | 80
leukemia 85.3/393/1.70 | 82.4/717/6.35 | 82.4;  colon-cancer 84.4/195/0.45 | 84.4/195/1.34 | 84.4
Table 2 (HIPAD-ENK | ADMM-ENK | LIBSVM): ksvm-s-10k 99/200/1.99 | 97.25/200/3.43 | 86.1;
ksvm-s-50k 98.8/200/8.37 | 96.4/198/20.89 | 74.8"""


def cells(quick: bool) -> list[Cell]:
    """Every (dataset, method) cell; Direct first per dataset (it is the objective reference)."""
    names = ["colon-cancer", "ksvm-s-10k"] if quick else [*REAL, *SYNTHETIC]
    return [
        Cell({"dataset": name, "method": method, "seed": 0})
        for name in names
        for method in METHODS
        if method != "direct-ensvm" or name in SYNTHETIC
    ]


_CACHE: dict[str, Any] = {}


def _split(n: int, y: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    n_train = 500 if n > 1500 else round(0.55 * n)
    train = []
    for label in (-1.0, 1.0):
        members = rng.permutation(np.flatnonzero(y == label))
        train.append(members[: max(1, round(n_train * members.size / n))])
    train = np.sort(np.concatenate(train))
    test = np.setdiff1d(np.arange(n), train)
    return train, rng.permutation(test)[:1000]


def _prepare(X: Any, train: np.ndarray, test: np.ndarray) -> tuple[Any, Any]:
    if sp.issparse(X) and X.nnz > 0.3 * X.shape[0] * X.shape[1]:
        X = X.toarray()  # dense data stored in LIBSVM format (colon-cancer)
    if sp.issparse(X):
        X = sp.csr_array(X, dtype=np.float64)
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        X = sp.csr_array(sp.diags_array(1.0 / np.where(norms > 0, norms, 1.0)) @ X)
        return X[train], X[test]
    X = np.asarray(X, dtype=np.float64)
    mean, std = X[train].mean(axis=0), X[train].std(axis=0)
    std = np.where(std > 0, std, 1.0)
    return (X[train] - mean) / std, (X[test] - mean) / std


def lam1_max(X: Any, y: np.ndarray) -> float:
    """The smallest lam1 with w = 0 optimal, from the balanced hinge multipliers at w = 0."""
    n = y.size
    n_pos, n_neg = np.sum(y > 0), np.sum(y < 0)
    alpha = np.where(y > 0, min(n_pos, n_neg) / n_pos, min(n_pos, n_neg) / n_neg) / n
    return float(np.max(np.abs(X.T @ (alpha * y))))


def problem(name: str, seed: int) -> dict[str, Any]:
    """The model (full ENSVM / ENK), the test data and the training sizes of one data set."""
    key = f"{name}:{seed}"
    if key in _CACHE:
        return _CACHE[key]
    from optframe.data import Dataset, load_dataset, make_knowledge_data
    from optframe.models import KnowledgeBasedSVM, KnowledgeSet

    _CACHE.clear()
    if name in SYNTHETIC:
        n_train, n_test, m = SYNTHETIC[name]
        train, test = make_knowledge_data(n_train, n_test, m, random_state=seed)
        sets = [KnowledgeSet(k["B"], k["d"], k["label"]) for k in train.meta["knowledge"]]
        plain = KnowledgeBasedSVM(train, lam1=KNOWLEDGE["lam1"], lam2=KNOWLEDGE["lam2"])
        model = KnowledgeBasedSVM(train, knowledge=sets, **KNOWLEDGE)
        entry = {"model": model, "plain": plain, "X_test": test.X, "y_test": test.y}
    else:
        data = load_dataset(name)
        rng = np.random.default_rng(seed)
        train, test = _split(data.n_samples, data.y, rng)
        X_train, X_test = _prepare(data.X, train, test)
        y_train = data.y[train]
        lam1 = LAM1_FRACTION * lam1_max(X_train, y_train)
        lam2 = LAM2_SPARSE if sp.issparse(X_train) else LAM2
        model = KnowledgeBasedSVM(Dataset(X=X_train, y=y_train, name=name), lam1=lam1, lam2=lam2)
        entry = {"model": model, "plain": model, "X_test": X_test, "y_test": data.y[test]}
    _CACHE[key] = entry
    return entry


def _sklearn(X: Any) -> Any:
    """scikit-learn's liblinear / libsvm take only 32-bit sparse indices."""
    if not sp.issparse(X):
        return X
    X = sp.csr_matrix(X)
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    return X


def _accuracy(decision: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.where(decision >= 0, 1.0, -1.0) == y) * 100.0)


def run_cell(cell: Cell) -> dict[str, Any]:
    """Run one method on one data set."""
    import optframe as of
    from optframe.bench.history import history_rows
    from optframe.drivers import ADMM, ADMMThenIPM

    entry = problem(cell["dataset"], cell["seed"])
    model, X_test, y_test = entry["model"], entry["X_test"], entry["y_test"]
    N, m = model.data.X.shape
    record: dict[str, Any] = {"N": N, "m": m}
    method = cell["method"]
    if method in ("linearsvc", "svc"):
        from sklearn.svm import SVC, LinearSVC

        C = 1.0 / (N * model.lam2)
        est = (
            LinearSVC(C=C, loss="hinge", dual=True, max_iter=100_000)
            if method == "linearsvc"
            else SVC(C=C, kernel="rbf", gamma="scale")
        )
        X_fit, X_test = _sklearn(model.data.X), _sklearn(X_test)
        start = time.perf_counter()
        est.fit(X_fit, model.data.y)
        seconds = time.perf_counter() - start
        support = int(np.count_nonzero(est.coef_)) if method == "linearsvc" else m
        return record | {
            "status": "fitted",
            "seconds": seconds,
            "support": support,
            "accuracy": _accuracy(est.decision_function(X_test), y_test),
        }
    if method == "direct":  # the objective reference: the same model, Clarabel through CVXPY
        result = of.solve(model, backend="clarabel", time_limit=TIME_LIMIT, threads=1)
    elif method == "direct-ensvm":  # synthetic sets: the elastic-net SVM without knowledge
        result = of.solve(entry["plain"], backend="clarabel", time_limit=TIME_LIMIT, threads=1)
    elif method == "hipad":
        result = of.solve(model, driver=ADMMThenIPM(), time_limit=TIME_LIMIT, threads=1)
    else:
        result = of.solve(
            model,
            driver=ADMM(tol=ADMM_TOL, max_iter=100_000),
            time_limit=ADMM_TIME_LIMIT,
            threads=1,
        )
    support = (
        int(
            np.count_nonzero(
                np.abs(result.solution["w"])
                > 1e-6 * max(1.0, float(np.max(np.abs(result.solution["w"]))))
            )
        )
        if result.has_solution
        else 0
    )
    return record | {
        "status": result.status.value,
        "accuracy": _accuracy(result.decision_function(X_test), y_test),
        "support": support,
        "seconds": result.timings.total,
        "iterations": result.iterations,
        "objective": result.objective,
        "proven": result.stats.get("support_proven_optimal"),
        "history": history_rows(result),
    }


def complete(records: list[dict[str, Any]]) -> None:
    """``rel_obj``: the objective's relative difference to Direct's (same data set)."""
    compare_with_baseline(
        records,
        same=("dataset", "seed"),
        is_baseline=lambda r: r["method"] == "direct",
        column="objective",
        into="rel_obj",
        how="signed",
    )
    for record in records:  # a different model: no comparison
        if record["method"] == "direct-ensvm":
            record.pop("rel_obj", None)


def summarize(records: list[dict[str, Any]]) -> str:
    """Time ratios ADMM / HIPAD and Direct / HIPAD per data set, measured in this run."""
    lines = ["Speed-ups of HIPAD (same run, same data set):", ""]
    by = {(r["dataset"], r["method"]): r for r in records}
    for name in dict.fromkeys(r["dataset"] for r in records):
        hipad = by.get((name, "hipad"))
        if not hipad or "seconds" not in hipad:
            continue
        parts = []
        for other in ("admm", "direct"):
            r = by.get((name, other))
            if r and r.get("seconds"):
                parts.append(f"{other}/hipad = {r['seconds'] / hipad['seconds']:.2f}x")
        lines.append(f"- {name} (m={hipad.get('m')}): " + ", ".join(parts))
    return "\n".join(lines)
