r"""L2-SVM (MEB) training: FW, MFW and CVM (numba) against scikit-learn's SVC (libsvm).

Protocol (Frandi et al. section 5, notes/frank_wolfe.md section 4):

* RBF kernel :math:`\exp(-\lVert x-z\rVert^2 / (2\sigma^2))` with :math:`\sigma^2` the mean
  squared distance over all training pairs (the O(mn) identity of note A5);
* ``C`` chosen on a validation split (random 30% of the training rows, at most 5,000 rows fit and
  5,000 scored) over :math:`\{2^0, 2^2, \dots, 2^{12}\}` with MFW (the paper tunes with CVM on
  every power of 2); the same C and kernel for all four methods. SVC solves the L1-SVM, so its
  accuracy is that of another model: both are reported, not compared as solvers;
* eps = 1e-6 (the paper's, section 5, for all algorithms), 20-point initial ball. Records carry
  ``kkt_violation`` = 1 - s_min / R, the largest KKT violation of the unnormalized L2-SVM dual in
  the margin units of SVC's ``tol`` (docs/results/frank_wolfe.md compares the two stops). FW and
  MFW keep s = K~ alpha on every point (one kernel column per step), so candidates are lookups: FW
  takes 59 draws outside the coreset and no verification pass (the paper's wording; with the
  coreset among the candidates plain FW rarely stops, note A1), MFW the draws and the coreset
  (note option (c)) with the exact O(m) search before stopping (so its stop is proven),
  ``mfw_all`` the exact search at every step, ``pfw`` pairwise steps (Lacoste-Julien and
  Jaggi 2015) with MFW's candidates and exact pass, ``mfw_shrink`` and ``pfw_shrink`` the same
  steps in active-set phases (``FrankWolfe(shrinking=True)``: the coreset and the
  ``ACTIVE_EXTRA`` points of smallest s, exact search there, an exact pass on every point
  between phases, so the stop is proven on all points); CVM draws up to 7 x 59 non-coreset points
  (LibCVM), each evaluated from scratch on the coreset, no verification pass. The true
  delta_plus at exit is recorded and the status says whether it was proven.
  Kernel caches: ``CACHE_MB`` for ours and for SVC's ``cache_size``;
  5 seeds (FW/MFW/CVM: the seed of the initial ball and of the sampling; SVC is deterministic and
  runs once per seed for its timing spread);
* test sets: the files of a9a, ijcnn1, usps and reuters; the other sets (a1a, a5a, a8a, w8a,
  letter, shuttle, skin_nonskin, kddcup) have no test file here: a fixed random 20% (seed 0) is
  held out. letter, shuttle, skin_nonskin and kddcup are min-max scaled to [0, 1] on the
  training part; kddcup is made binary as KDD99-Full (normal traffic, PMLB code 11, against every
  attack). usps, letter and shuttle are multi-class: one-vs-one (``optframe.multiclass``, LIBSVM's
  voting and tie rule); SVC does one-vs-one internally.
* SVC runs only up to 60,000 training rows (skipped on skin_nonskin and kddcup).

Seconds are training wall time (the driver's ``timings.solve`` plus the initial ball; for OVO the
sum over pairs), excluding data loading, the C search and the final certification pass.
``OPTFRAME_FW_SETS`` restricts the data sets, ``OPTFRAME_FW_SEEDS`` the number of seeds.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from optframe.bench.suite import Cell
from optframe.kernels import mean_squared_distance

DESCRIPTION = "L2-SVM (MEB): FW, MFW, CVM (numba) vs sklearn SVC, RBF, eps 1e-6, 5 seeds"
COLUMNS = [
    "dataset",
    "method",
    "seed",
    "status",
    "C",
    "seconds",
    "accuracy",
    "support",
    "support_thresholded",
    "delta_plus",
    "iterations",
]
# For `optframe report`: seconds against CVM (the paper's reference), seeds pooled.
REPORT = {"method": "method", "baseline": "cvm", "problem": ("dataset",), "replicates": ("seed",)}
DATASETS = (
    "a1a", "a5a", "a8a", "a9a", "w8a", "ijcnn1", "usps", "letter", "shuttle", "reuters",
    "skin_nonskin", "kddcup",
)  # fmt: skip
METHODS = ("fw", "mfw", "mfw_all", "pfw", "mfw_shrink", "pfw_shrink", "cvm", "svc")
# Kernel cache of every method (MB): ours (16 bytes per entry) and libsvm's (SVC cache_size).
CACHE_MB = 4096
MULTICLASS = ("usps", "letter", "shuttle")
SCALE = ("letter", "shuttle", "skin_nonskin", "kddcup")
SVC_LIMIT = 60_000
# Points of smallest s added to the coreset's active set per phase (mfw_shrink, pfw_shrink).
ACTIVE_EXTRA = 1000
C_GRID = tuple(2.0**k for k in range(0, 13, 2))
EPS = 1e-6

# Frandi et al., Tables 2-3 (accuracy %, training seconds; mean of 5 runs), all 26 data sets, in
# the order of the tables: a1a..a7a, w1a..w8a, Letter, Pendigits, USPS, Reuters, MNIST, Protein,
# Shuttle, IJCNN, USPS-Ext, KDD10pc, KDD-full. Columns CVM, FW, MFW.
PAPER_SETS = [
    *(f"a{k}a" for k in range(1, 8)),
    *(f"w{k}a" for k in range(1, 9)),
    "Letter",
    "Pendigits",
    "USPS",
    "Reuters",
    "MNIST",
    "Protein",
    "Shuttle",
    "IJCNN",
    "USPS-Ext",
    "KDD10pc",
    "KDD-full",
]
PAPER_TIMES = {
    "cvm": (6.26, 16, 33.8, 89.1, 171, 590, 2060, 3.59, 7.9, 12.8, 30.4, 52.7, 131, 215, 1030,
            23.7, 0.554, 6.89, 7.24, 364, 247000, 1.41, 198, 84.4, 42.3, 19.5),
    "fw": (12.5, 19.3, 26.8, 40.4, 56.1, 164, 1420, 0.286, 0.658, 0.76, 1.26, 1.78, 2.67, 2.58,
           9.64, 13.3, 0.82, 7.58, 2.17, 301, 11900, 1.69, 40.5, 26.7, 0.414, 0.764),
    "mfw": (0.712, 1.46, 2.78, 6.37, 11.1, 45, 365, 1.67, 2.31, 2.27, 6.76, 15.8, 29.4, 91.4, 111,
            12.3, 0.658, 7.22, 1.69, 349, 2000, 0.176, 34.4, 161, 1.22, 0.744),
}  # fmt: skip
PAPER_ACCURACY = {
    "cvm": (83.52, 83.55, 83.40, 84.06, 84.02, 84.28, 84.18, 97.80, 98.06, 98.21, 98.28, 98.39,
            98.72, 98.73, 99.34, 97.48, 98.35, 95.63, 97.10, 98.46, 69.79, 99.67, 98.59, 99.50,
            99.87, 91.77),
    "fw": (83.52, 83.56, 83.39, 84.10, 84.03, 84.26, 84.23, 97.31, 97.42, 97.31, 97.46, 97.50,
           97.40, 97.43, 97.80, 96.54, 97.68, 95.12, 96.40, 97.91, 69.73, 98.08, 95.71, 99.30,
           98.82, 91.53),
    "mfw": (83.52, 83.56, 83.41, 84.07, 84.05, 84.25, 84.29, 97.65, 97.80, 97.60, 97.91, 98.36,
            98.43, 97.88, 97.59, 97.35, 97.65, 95.47, 95.60, 98.36, 69.78, 97.82, 97.31, 99.57,
            99.10, 91.82),
}  # fmt: skip
# Our sets that appear in the paper, by the paper's name.
PAPER_NAME = {"a1a": "a1a", "a5a": "a5a", "w8a": "w8a", "ijcnn1": "IJCNN", "usps": "USPS",
              "letter": "Letter", "shuttle": "Shuttle", "reuters": "Reuters"}  # fmt: skip


def _paper_text() -> str:
    lines = [
        "Frandi et al., Tables 2-3 (mean of 5 runs; C++ LibCVM code, 2.66 GHz, 2010):",
        "dataset | acc CVM / FW / MFW (%) | seconds CVM / FW / MFW | speed-up FW, MFW",
    ]
    for ours, name in PAPER_NAME.items():
        k = PAPER_SETS.index(name)
        acc = " / ".join(f"{PAPER_ACCURACY[m][k]:.2f}" for m in ("cvm", "fw", "mfw"))
        sec = " / ".join(f"{PAPER_TIMES[m][k]:g}" for m in ("cvm", "fw", "mfw"))
        c = PAPER_TIMES["cvm"][k]
        speed = f"{c / PAPER_TIMES['fw'][k]:.1f}x, {c / PAPER_TIMES['mfw'][k]:.1f}x"
        lines.append(f"{name} ({ours}) | {acc} | {sec} | {speed}")
    lines.append("The paper has no a8a, a9a, skin_nonskin, KDD99 in our binary form, nor SVC.")
    return "\n".join(lines)


PAPER = _paper_text()

# The time left in a run is estimated per (dataset, method). Seconds of one cell on one core:
# quick, as measured; full, the mean over the methods of each data set (CVM dominates the
# small adult sets; docs/results/frank_wolfe.md), loading and scaling included.
KIND = ("dataset", "method")
_QUICK_SECONDS = {
    ("a1a", "fw"): 23.0,
    ("a1a", "mfw"): 23.0,
    ("a1a", "cvm"): 7.5,
    ("usps", "mfw"): 1.0,
    ("usps", "mfw_shrink"): 2.0,
    ("usps", "pfw"): 3.0,
    ("usps", "pfw_shrink"): 1.2,
}
_FULL_SECONDS = {
    "a1a": 1.0,
    "a5a": 10.0,
    "a8a": 90.0,
    "a9a": 60.0,
    "w8a": 10.0,
    "ijcnn1": 15.0,
    "usps": 3.0,
    "letter": 10.0,
    "shuttle": 6.0,
    "reuters": 4.0,
    "skin_nonskin": 25.0,
    "kddcup": 60.0,
}


def expected_seconds(cell: Cell, quick: bool) -> float:
    """Seconds one cell takes on one core (see ``KIND``)."""
    if quick:
        return _QUICK_SECONDS.get((cell["dataset"], cell["method"]), 0.5)
    return _FULL_SECONDS.get(cell["dataset"], 30.0)


def _seeds(quick: bool) -> int:
    return 1 if quick else int(os.environ.get("OPTFRAME_FW_SEEDS", "5"))


def cells(quick: bool) -> list[Cell]:
    """The grid; ``quick``: a1a and a 2,000-row sample of usps (OVO), fixed C = 4, one seed."""
    only = {s.strip() for s in os.environ.get("OPTFRAME_FW_SETS", "").split(",") if s.strip()}
    sets = ("a1a", "usps") if quick else DATASETS
    grid = []
    for name in sets:
        if only and name not in only:
            continue
        for seed in range(_seeds(quick)):
            for method in METHODS:
                if quick and name == "usps" and method in ("fw", "cvm", "mfw_all"):
                    continue
                grid.append(Cell({"dataset": name, "method": method, "seed": seed,
                                  "quick": quick}))  # fmt: skip
    return grid


# ---------------------------------------------------------------------------------- data
_CACHE: dict[Any, Any] = {}


def _minmax(train: Any, test: Any) -> tuple[Any, Any]:
    X, T = _dense(train), _dense(test)
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (X - lo) / span, np.clip((T - lo) / span, -1.0, 2.0)


def _dense(X: Any) -> np.ndarray:
    return np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)


def split(name: str, quick: bool = False) -> tuple[Any, np.ndarray, Any, np.ndarray]:
    """(X_train, y_train, X_test, y_test) following the module docstring."""
    key = ("split", name, quick)
    if key in _CACHE:
        return _CACHE[key]
    from optframe.data import load_dataset

    data = load_dataset(name)
    X, y = data.X, np.asarray(data.y, dtype=np.float64)
    try:
        test = load_dataset(name, split="test")
        Xt, yt = test.X, np.asarray(test.y, dtype=np.float64)
    except Exception:
        rng = np.random.default_rng(0)
        order = rng.permutation(y.size)
        cut = int(0.8 * y.size)
        X, Xt, y, yt = X[order[:cut]], X[order[cut:]], y[order[:cut]], y[order[cut:]]
    if name == "kddcup":  # KDD99-Full style: normal (PMLB code 11) = -1, any attack = +1
        y, yt = np.where(y == 11.0, -1.0, 1.0), np.where(yt == 11.0, -1.0, 1.0)
    if name in SCALE:
        X, Xt = _minmax(X, Xt)
    if quick and name == "usps":
        rows = np.random.default_rng(0).permutation(y.size)[:2000]
        X, y = X[rows], y[rows]
    _CACHE[key] = (X, y, Xt, yt)
    return _CACHE[key]


def _int32(X: Any) -> Any:
    """Return CSR with 32-bit indices (all libsvm takes)."""
    if not hasattr(X, "indptr"):
        return X
    import scipy.sparse as sp

    X = sp.csr_matrix(X)
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X


def _gamma(X: Any) -> float:
    return 1.0 / (2.0 * mean_squared_distance(X))


def _driver(method: str, seed: int) -> Any:
    from optframe.drivers import FW, MFW, PFW, CoreVectorMachine

    cache = CACHE_MB * 1024**2
    if method == "cvm":
        return CoreVectorMachine(eps=EPS, seed=seed, verify=False, cache_bytes=cache)
    if method == "fw":
        return FW(eps=EPS, seed=seed, verify=False, candidates="sample", max_iter=10**6,
                  cache_bytes=cache, recompute=False, check_every=20_000)  # fmt: skip
    kind = PFW if method.startswith("pfw") else MFW
    if method.endswith("_shrink"):
        return kind(eps=EPS, seed=seed, shrinking=True, active_extra=ACTIVE_EXTRA,
                    cache_bytes=cache, recompute=False, check_every=20_000)  # fmt: skip
    sample = None if method == "mfw_all" else 59
    return kind(eps=EPS, seed=seed, sample_size=sample, verify=True, cache_bytes=cache,
                recompute=False, check_every=20_000)  # fmt: skip


def _fit_binary(X: Any, y: np.ndarray, C: float, gamma: float, method: str, seed: int) -> Any:
    import optframe as of
    from optframe.data import Dataset
    from optframe.kernels import RBF
    from optframe.models import L2SVM

    model = L2SVM(Dataset(X=X, y=y), C=C, kernel=RBF(gamma=gamma))
    return of.solve(model, driver=_driver(method, seed), time_limit=3600.0)


def choose_C(name: str, quick: bool) -> float:
    """C on a 70/30 split of the training rows (at most 5,000 + 5,000), by MFW's accuracy."""
    if quick:
        return 4.0
    key = ("C", name)
    if key in _CACHE:
        return _CACHE[key]
    X, y, _, _ = split(name)
    rng = np.random.default_rng(1)
    order = rng.permutation(y.size)
    cut = int(0.7 * y.size)
    fit_rows, val_rows = order[:cut][:5000], order[cut:][:5000]
    gamma = _gamma(X)
    best, best_acc = C_GRID[0], -1.0
    for C in C_GRID:
        acc = _train_and_score(X[fit_rows], y[fit_rows], X[val_rows], y[val_rows], name, C,
                               gamma, "mfw", 0)[1]  # fmt: skip
        if acc > best_acc:
            best, best_acc = C, acc
    _CACHE[key] = best
    return best


def _train_and_score(X, y, Xt, yt, name, C, gamma, method, seed) -> tuple[float, float, dict]:
    """(seconds, accuracy %, extras)."""
    if method == "svc":
        from sklearn.svm import SVC

        start = time.perf_counter()
        X, Xt = _int32(X), _int32(Xt)
        start = time.perf_counter()
        svc = SVC(C=C, gamma=gamma, tol=1e-3, cache_size=CACHE_MB).fit(X, y)
        seconds = time.perf_counter() - start
        acc = 100.0 * float(np.mean(svc.predict(Xt) == yt))
        return seconds, acc, {"status": "done", "support": int(svc.support_.size)}
    if name in MULTICLASS:
        from optframe.data import Dataset
        from optframe.multiclass import one_vs_one

        results: list[Any] = []

        def fit(pair: Any) -> Any:
            results.append(_fit_binary(pair.X, pair.y, C, gamma, method, seed))
            return results[-1]

        ovo = one_vs_one(Dataset(X=X, y=y), fit)
        seconds = sum(r.timings.build + r.timings.solve for r in results)
        acc = 100.0 * float(np.mean(ovo.predict(Xt) == yt))
        statuses = {r.status.value for r in results}
        return (
            seconds,
            acc,
            {
                "status": "/".join(sorted(statuses)),
                "support": sum(int(r.stats["support"]) for r in results),
                "support_thresholded": sum(int(r.stats["support_thresholded"]) for r in results),
                "delta_plus": max(float(r.stats["delta_plus"]) for r in results),
                "kkt_violation": max(float(r.stats["kkt_violation"]) for r in results),
                "iterations": sum(r.iterations for r in results),
                "pairs": len(results),
            },
        )
    from optframe.bench.history import history_rows

    result = _fit_binary(X, y, C, gamma, method, seed)
    seconds = result.timings.build + result.timings.solve
    acc = 100.0 * float(np.mean(result.predict(Xt) == yt))
    return (
        seconds,
        acc,
        {
            "status": result.status.value,
            "support": int(result.stats["support"]),
            "support_thresholded": int(result.stats["support_thresholded"]),
            "delta_plus": float(result.stats["delta_plus"]),
            "kkt_violation": float(result.stats["kkt_violation"]),
            "cache_misses": int(result.stats["cache_misses"]),
            "cache_slots": int(result.stats["cache_slots"]),
            **{
                key: result.stats[key]
                for key in ("phases", "active_max", "unshrunk_at")
                if key in result.stats
            },
            "iterations": result.iterations,
            "gap": result.gap,
            "history": history_rows(result),
        },
    )


def _warm_up() -> None:
    if _CACHE.get("warm"):
        return
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    for method in ("fw", "mfw", "cvm"):
        _fit_binary(X, y, 1.0, 0.5, method, 0)
    _CACHE["warm"] = True


def run_cell(cell: Cell) -> dict[str, Any]:
    """Train one method on one data set with one seed; test accuracy and seconds."""
    name, method, seed, quick = cell["dataset"], cell["method"], cell["seed"], cell["quick"]
    _warm_up()
    X, y, Xt, yt = split(name, quick)
    if method == "svc" and y.size > SVC_LIMIT:
        return {"status": "skipped (size)"}
    C = choose_C(name, quick)
    seconds, acc, extras = _train_and_score(X, y, Xt, yt, name, C, _gamma(X), method, seed)
    return {"C": C, "seconds": seconds, "accuracy": acc, "m": int(y.size), **extras}


def _median_spread(values: list[float]) -> str:
    a = np.asarray(values, dtype=np.float64)
    if a.size == 1:
        return f"{a[0]:.4g}"
    return f"{np.median(a):.4g} [{a.min():.4g}, {a.max():.4g}]"


NAMES = {"cvm": "CVM", "fw": "FW", "mfw": "MFW", "svc": "SVC"}
# The summary's tests on median times: (three methods for Friedman, Wilcoxon pairs
# (a, b, alternative)).
TIME_TESTS = (
    (("cvm", "fw", "mfw"), [("fw", "cvm", "less"), ("mfw", "cvm", "less"), ("fw", "mfw", None)]),
    (("mfw", "mfw_all", "svc"), [("mfw", "svc", None), ("mfw", "mfw_all", None)]),
    (("fw", "mfw", "svc"), [("mfw", "svc", None), ("fw", "svc", None), ("fw", "mfw", "less")]),
    (("mfw", "mfw_shrink", "svc"), [("mfw_shrink", "mfw", "less"), ("mfw_shrink", "svc", None)]),
)


def _time_tests(
    medians: dict[str, dict[str, float]],
    trio: tuple[str, str, str],
    pairs: list[tuple[str, str, str | None]],
) -> str:
    """Wilcoxon on each (a, b, alternative), Friedman-Iman-Davenport on the three methods.

    Over the median times of the sets that have all three methods of ``trio`` (at least 5).
    """
    from optframe.bench.stats import friedman_iman_davenport, wilcoxon_signed_rank

    name = {m: NAMES.get(m, m) for m in trio}
    sets = [n for n, med in medians.items() if all(m in med for m in trio)]
    if len(sets) < 5:
        label = "/".join(name[m] for m in trio)
        return f"{label} tests not run: {len(sets)} sets with all three (need 5)"
    times = {m: [medians[n][m] for n in sets] for m in trio}
    parts = []
    for a, b, alternative in pairs:
        w = wilcoxon_signed_rank(times[a], times[b], alternative or "two-sided")
        relation = " < " if alternative == "less" else " vs "
        parts.append(f"{name[a]}{relation}{name[b]} W={w.statistic:g} p={w.pvalue:.3g}")
    _, f = friedman_iman_davenport(*(times[m] for m in trio))
    return (f"times over {len(sets)} sets ({', '.join(sets)}): Wilcoxon " + "; ".join(parts)
            + f"; Friedman-Iman-Davenport ({', '.join(name[m] for m in trio)}) "
            f"F={f.statistic:.4g} p={f.pvalue:.3g}")  # fmt: skip


def summarize(records: list[dict[str, Any]]) -> str:
    """Median [min, max] over seeds per data set and method, speed-ups, targets and tests."""
    table: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for r in records:
        if "seconds" in r:
            table.setdefault(r["dataset"], {}).setdefault(r["method"], []).append(r)
    lines = ["dataset | method | seconds median [min, max] | accuracy % | support"]
    medians: dict[str, dict[str, float]] = {}
    for name, methods in table.items():
        for method in METHODS:
            rows = methods.get(method)
            if not rows:
                continue
            secs = [r["seconds"] for r in rows]
            medians.setdefault(name, {})[method] = float(np.median(secs))
            medians[name][method + ":acc"] = float(np.median([r["accuracy"] for r in rows]))
            lines.append(f"{name} | {method} | {_median_spread(secs)} | "
                         f"{_median_spread([r['accuracy'] for r in rows])} | "
                         f"{_median_spread([r.get('support', np.nan) for r in rows])}")  # fmt: skip
    lines.append("")
    for name, med in medians.items():
        parts = []
        for method in ("fw", "mfw", "mfw_shrink", "pfw_shrink"):
            if "svc" in med and method in med:
                gain = med[method + ":acc"] - med["svc:acc"]
                parts.append(f"SVC/{method} time {med['svc'] / med[method]:.2f}x, accuracy "
                             f"{method} - SVC {gain:+.2f}")  # fmt: skip
        if "cvm" in med:
            for method in ("fw", "mfw"):
                if method in med:
                    parts.append(f"CVM/{method.upper()} {med['cvm'] / med[method]:.2f}x")
        if name in PAPER_NAME:
            k = PAPER_SETS.index(PAPER_NAME[name])
            c = PAPER_TIMES["cvm"][k]
            parts.append(f"paper CVM/FW {c / PAPER_TIMES['fw'][k]:.2f}x, "
                         f"CVM/MFW {c / PAPER_TIMES['mfw'][k]:.2f}x")  # fmt: skip
        lines.append(f"{name}: " + "; ".join(parts))
    lines += [_time_tests(medians, trio, pairs) for trio, pairs in TIME_TESTS]
    return "\n".join(lines)
