r"""optframe beside the strongest peers: LAD, linear SVM, RBF SVM, RBF L2-SVM, other losses.

Jobs (``job`` key), each on the same problem for every method:

* ``lad``: median regression with an intercept, :math:`\min \sum_i \lvert y_i - x_i^\top\beta
  - b\rvert`. Data: AID's Set A generator (:func:`optframe.data.make_lad_set_a`, seed 0) made
  heteroscedastic: its Laplace noise :math:`e_i` is multiplied by :math:`0.5 + \lvert x_{i1}
  \rvert` (``data="het"``), at n in {40k, 200k, 1M} and m in {10, 50, 100}; and the real set
  ``344_mv`` (40,768 x 10, PMLB) that the AID suite also uses. Methods: ``optframe aid``
  (``AggregateDisaggregate()``), ``optframe default`` (``driver="direct"`` with its defaults,
  the dual LP with HiGHS's own choice of algorithm: ``solve()``'s default before
  ``driver="auto"``), ``optframe auto`` (``of.solve(model)``: whatever ``solve()`` picks by
  default; also in the other jobs), ``optframe direct ipm`` (the same with
  ``solver_options={"solver": "ipm"}``, the by-hand configuration), ``optframe direct fn``
  (Direct on the dual LP with optframe's Frisch-Newton back-end, ``backend="matrix:fn"``),
  ``optframe aid fn`` (AID with fn for its aggregated LPs), ``optframe direct piqp`` (Direct
  on the dual LP with the PIQP back-end), ``optframe LP by highspy
  ipm`` (a diagnostic: the LP optframe builds, ``model.build("matrix", "dual")``, passed to
  highspy by hand, solve only), pyfixest's
  ``quantreg(quantile=0.5, method="pfn" | "fn", vcov="iid")``, highspy on the LAD dual LP
  assembled by hand (``solver="ipm"``, ``"hipo"``, ``"pdlp"`` with a time limit of
  ``PDLP_LIMIT``), and scikit-learn's ``QuantileRegressor(alpha=0, solver="highs")`` at 40k x
  10 and on ``344_mv`` only.
* ``svm-linear``: the hinge-loss SVM :math:`\tfrac12\lVert w\rVert^2 + C\sum_i
  \max(0, 1 - y_i f(x_i))` on ijcnn1's test file (91,701 x 22), C = 1. ``variant="bias"``:
  the bias as a feature (``X`` with a ones column, ``WeightedSVM(fit_intercept=False)``), which
  every tool solves exactly: ``optframe aid``, ``optframe dcd``, ``optframe default``,
  ``optframe direct piqp`` (Direct on the PIQP back-end),
  LIBLINEAR (``LinearSVC(loss="hinge", dual=True, fit_intercept=False)``, tol 1e-4, its default,
  and 1e-6), ReHLine (``plqERM_Ridge(loss={"name": "svm"}, C=C)``, tol 1e-4, its default, and
  1e-6). ``variant="free"``: a free (unpenalized) intercept: ``optframe aid``, ``optframe smo``
  (linear kernel) and libsvm ``SVC(kernel="linear")``.
* ``svm-rbf``: the same SVM with the RBF kernel, :math:`\gamma = 1 / (2\bar d^2)` (:math:`\bar
  d^2` the mean squared distance, as the FW suite), C = 1, on a9a, ijcnn1, w8a and a8a (20k+
  rows; test files of a9a and ijcnn1, else a fixed 20% held out, ``fw.split``): ``optframe smo``
  (tol 1e-3, libsvm's), oneDAL's ``sklearnex.svm.SVC`` and libsvm's ``sklearn.svm.SVC`` (tol
  1e-3, kernel caches of ``CACHE_MB``). The objective is the primal recomputed from each
  method's :math:`(\alpha, b)` (:math:`\alpha_i = \lvert\mathrm{dual\_coef}_i\rvert`); the dual
  value at :math:`\alpha` and the test accuracy are recorded too.
* ``l2svm-rbf``: the L2-SVM (``L2SVM``, same C and kernel) by ``optframe smo`` (its simplex QP as
  a box QP), ``optframe mfw`` and ``optframe mfw shrink`` against libsvm's L1-SVM ``SVC``:
  different models, so only the test accuracy is
  compared ("equal accuracy": within ``ACCURACY_POINTS`` percentage points). No peer solves
  the L2-SVM itself with a kernel (libsvm's ``SVC`` has no squared hinge; LIBLINEAR's is linear
  only), so the L2-SVM has no job of its own beyond this one.
* The losses beyond the hinge (``LOSS_JOBS``), each :math:`\tfrac12\lVert w\rVert^2 + C\sum_i
  \ell(a_i)` with C = 1 and no intercept (``EmpiricalRisk(..., fit_intercept=False)``; the
  classification sets with the bias as a feature of value 1), by ``optframe dcd``, ``optframe
  newton`` (the differentiable losses: all but the quantile's) and ``optframe auto``, against:
  ``sqhinge-linear`` (a9a, ijcnn1.t): scikit-learn's ``LinearSVC`` with its defaults (squared
  hinge, ``dual="auto"``: LIBLINEAR's primal ``-s 2`` here), with
  ``dual=True`` (LIBLINEAR's ``-s 1``) at tol 1e-4 and 1e-6, and ReHLine (``"squared hinge"``)
  at tol 1e-4 and 1e-6; ``logistic-linear`` (a9a, ijcnn1): ``LogisticRegression`` with
  ``solver="liblinear"`` (primal ``-s 0``, its default, and ``dual=True``, ``-s 7``) at tol
  1e-4, and ``solver="lbfgs"`` with its defaults and at tol 1e-8 (the accurate reference);
  ``smoothhinge-linear`` (a9a, ijcnn1.t), ``huber-linear`` (delta 1), ``quantile-linear``
  (pinball, tau 0.3) and ``expectile-linear`` (tau 0.3) on 564_fried (40,768 x 10, PMLB) and
  the LAD job's heteroscedastic generator at ``LOSS_HET`` (100,000 x 20): ReHLine at tol 1e-4
  (its default) and 1e-6, by its own loss names where it has one (``plqERM_Ridge``) and through
  ``ReHLine(U, V, S, T, Tau)`` for the expectile.
* The L1 problems (``L1_JOBS``), stated as the peers state them,
  :math:`\tfrac1n\sum_i \ell(a_i) + \alpha\lVert w\rVert_1` with :math:`\alpha` a
  fraction of :math:`\alpha_{\max}` (the smallest value at which :math:`w = 0`), and solved
  as the model :math:`C\sum_i\ell(a_i) + \lVert w\rVert_1`, :math:`C = 1/(n\alpha)`, by
  ``optframe cd`` (``CoordinateDescent``) and ``optframe auto``: ``l1logistic-linear``
  (:math:`\alpha = 0.05\,\alpha_{\max}`, no intercept, a9a and w8a as they are, CSC for
  every method) against skglm's ``SparseLogisticRegression`` and LIBLINEAR's L1 logistic
  regression (``LogisticRegression(penalty="l1", solver="liblinear")``, ``-s 6``), each at tol
  1e-4, 1e-6 and 1e-8; ``l1huber-linear`` (delta 1, :math:`\alpha = 0.01\,\alpha_{\max}`,
  an intercept, 564_fried standardized) against skglm's
  ``GeneralizedLinearEstimator(Huber, L1, AndersonCD)`` at the same tolerances.

Protocol. Every method gets the runner's thread count (``--threads``, default 1): the runner
sets the thread variables and BLAS pools, and ``run_cell`` also sets numba's and oneDAL's pools
and passes it to ``optframe.solve`` and every ``highspy.Highs`` (``solve()`` without ``threads``
does not read ``OPTFRAME_THREADS``: see ``docs/results/peers.md``). Each cell runs in a process
of its own (:func:`in_fresh_process`), which loads the data, warms up and runs the timed fit;
its record has the peak resident memory of the fit (:func:`peak_memory`: ``VmHWM`` reset just
before the fit, so the data loading and the warm-up do not count; ``peak_rss_mb`` the
process's peak, ``fit_mb`` what the fit added to the resident set before it). Before its
timer, a method runs once on a tiny problem in the same process, so no JIT compilation or
first-call import is timed; for optframe's numba drivers the
seconds also exclude ``Result.timings.compile``. Run with ``--repeat 3`` and ``--serial`` (the
runner's order is repeat-major, so the methods of a problem alternate across repeats), with a
cell time limit so each cell runs in the runner's child process. Every objective is recomputed
by the optframe model from the method's solution (never the tool's own figure; ReHLine's and
HiGHS's are kept in ``tool_objective`` for reference). ``success``: the objective is within the
job's tolerance (``TOLERANCE``: relative 1e-6, the certificate's, for LP and linear SVM; 1e-3,
libsvm's stopping tolerance, for the RBF SVM) of the lowest objective any method reached on
the problem in the same records. ``summarize`` gives median [min, max] seconds, the ratio to the
best peer (the fastest non-optframe method that succeeded in every repeat) and qpbenchmark's
summary per method (success rate, shifted geometric mean of time with shift 10 s, a failed or
inaccurate run counted at the cell time limit).

Peers are optional (``pip install -e ".[peers]"``); a method whose package is missing, or
HiPO on a highspy build without it, is recorded as ``unavailable`` with the reason.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from optframe.bench import peer_methods as pm
from optframe.bench import peer_stats as ps
from optframe.bench.suite import Cell

DESCRIPTION = (
    "optframe vs pyfixest, highspy, scikit-learn, LIBLINEAR, ReHLine, skglm, libsvm, oneDAL: "
    "LAD, linear/RBF SVM, RBF L2-SVM, smooth and L1 losses; one thread, objectives recomputed"
)
COLUMNS = [
    "job",
    "data",
    "variant",
    "n",
    "m",
    "method",
    "status",
    "seconds",
    "objective",
    "rel_objective",
    "success",
    "ratio_to_best_peer",
    "accuracy",
    "peak_rss_mb",
    "fit_mb",
    "threads",
    "reason",
]
REPORT = {
    "method": "method",
    "memory": "peak_rss_mb",
    "baseline": (
        "pyfixest pfn",
        "liblinear tol 1e-4",
        "libsvm SVC",
        "onedal SVC",
        "liblinear dual tol 1e-4",
        "rehline tol 1e-4",
        "skglm tol 1e-4",
    ),
    "problem": ("job", "data", "variant", "n", "m"),
}
KIND = ("job", "method")
CELL_TIME_LIMIT = 900.0
PDLP_LIMIT = 60.0
QUICK_PDLP_LIMIT = 5.0
C_SVM = 1.0
CACHE_MB = 2000
ACCURACY_POINTS = ps.ACCURACY_POINTS
TOLERANCE = {"lad": 1e-6, "svm-linear": 1e-6, "svm-rbf": 1e-3, "l2svm-rbf": math.nan}
# every job of LOSS_JOBS: 1e-6 (the default of tolerance_of)

LAD_METHODS = (
    "optframe aid",
    "optframe default",
    "optframe direct ipm",
    "optframe direct fn",
    "optframe aid fn",
    "optframe direct piqp",
    "optframe LP by highspy ipm",
    "pyfixest pfn",
    "pyfixest fn",
    "highspy ipm",
    "highspy hipo",
    "highspy pdlp",
    "sklearn QuantileRegressor",
    "optframe auto",
)
LAD_SIZES = tuple((n, m) for n in (40_000, 200_000, 1_000_000) for m in (10, 50, 100))
QUICK_LAD_SIZES = ((3_000, 5),)
LAD_REAL = ("344_mv",)
SKLEARN_LAD_MAX = 40_000 * 10  # QuantileRegressor only up to n * m of this (127 s at 40k x 10)
LINEAR_BIAS_METHODS = (
    "optframe aid",
    "optframe dcd",
    "optframe default",
    "optframe direct piqp",
    "liblinear tol 1e-4",
    "liblinear tol 1e-6",
    "rehline tol 1e-4",
    "rehline tol 1e-6",
    "optframe auto",
)
LINEAR_FREE_METHODS = ("optframe aid", "optframe smo", "libsvm SVC", "optframe auto")
LINEAR_SETS = ("ijcnn1.t",)
QUICK_LINEAR_SETS = ("a1a",)
RBF_METHODS = ("optframe smo", "onedal SVC", "libsvm SVC", "optframe auto")
RBF_SETS = ("a9a", "ijcnn1", "w8a", "a8a")
QUICK_RBF_SETS = ("a1a",)
L2_METHODS = (
    "optframe smo",
    "optframe mfw",
    "optframe mfw shrink",
    "libsvm SVC",
    "optframe auto",
)
L2_SETS = ("a9a", "w8a", "ijcnn1")

# The losses beyond the hinge, each with the L2 penalty and no intercept (the classification
# sets with the bias as a feature of value 1), against the strongest peer for the loss.
SQHINGE_METHODS = (
    "optframe newton",
    "optframe dcd",
    "optframe auto",
    "liblinear LinearSVC defaults",
    "liblinear dual tol 1e-4",
    "liblinear dual tol 1e-6",
    "rehline tol 1e-4",
    "rehline tol 1e-6",
)
LOGISTIC_METHODS = (
    "optframe newton",
    "optframe dcd",
    "optframe auto",
    "liblinear primal tol 1e-4",
    "liblinear dual tol 1e-4",
    "lbfgs defaults",
    "lbfgs tol 1e-8",
)
REHLINE_METHODS = ("optframe dcd", "optframe auto", "rehline tol 1e-4", "rehline tol 1e-6")
#: The same with PrimalNewton, for the differentiable losses (the quantile loss has a kink).
SMOOTH_REHLINE_METHODS = ("optframe newton", *REHLINE_METHODS)
QUANTILE_TAU = 0.3
#: job -> (data sets, methods, quick data sets); "het" is the LAD job's generator at LOSS_HET.
LOSS_JOBS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "sqhinge-linear": (("a9a", "ijcnn1.t"), SQHINGE_METHODS, ("a1a",)),
    "logistic-linear": (("a9a", "ijcnn1"), LOGISTIC_METHODS, ("a1a",)),
    "smoothhinge-linear": (("a9a", "ijcnn1.t"), SMOOTH_REHLINE_METHODS, ("a1a",)),
    "huber-linear": (("564_fried", "het"), SMOOTH_REHLINE_METHODS, ("het",)),
    "quantile-linear": (("564_fried", "het"), REHLINE_METHODS, ("het",)),
    "expectile-linear": (("564_fried", "het"), SMOOTH_REHLINE_METHODS, ("het",)),
}
LOSS_HET = (100_000, 20)
QUICK_LOSS_HET = (3_000, 5)
# The L1 problems, stated as the peers state them, (1/n) sum_i l(a_i) + alpha |w|_1 with alpha a
# fraction of alpha_max (the smallest alpha at which w = 0), and solved as the model
# C sum_i l(a_i) + |w|_1 with C = 1 / (n alpha): the same problem divided by alpha. Logistic
# regression without an intercept on the classification sets as they are (no bias column,
# CSC for every method); Huber regression with an intercept on standardized features.
L1_LOGISTIC_METHODS = (
    "optframe cd",
    "optframe auto",
    "skglm tol 1e-4",
    "skglm tol 1e-6",
    "skglm tol 1e-8",
    "liblinear L1 tol 1e-4",
    "liblinear L1 tol 1e-6",
    "liblinear L1 tol 1e-8",
)
L1_HUBER_METHODS = ("optframe cd", "optframe auto", "skglm tol 1e-4", "skglm tol 1e-6",
                    "skglm tol 1e-8")  # fmt: skip


@dataclass(frozen=True)
class L1Job:
    """An L1 job: data sets, methods, quick data sets, loss, ``alpha / alpha_max``, intercept."""

    sets: tuple[str, ...]
    methods: tuple[str, ...]
    quick_sets: tuple[str, ...]
    loss: str
    ratio: float
    intercept: bool


L1_JOBS: dict[str, L1Job] = {
    "l1logistic-linear": L1Job(
        ("a9a", "w8a"), L1_LOGISTIC_METHODS, ("a1a",), "logistic", 0.05, False
    ),
    "l1huber-linear": L1Job(("564_fried",), L1_HUBER_METHODS, ("het",), "huber", 0.01, True),
}
JOBS = ("lad", "svm-linear", "svm-rbf", "l2svm-rbf", *LOSS_JOBS, *L1_JOBS)

# Seconds per cell on one core, from the and this suite's measurements (per n*m for LAD).
_LAD_PER_NM = {
    "optframe aid": 8e-7,
    "optframe default": 8.4e-6,
    "optframe auto": 8e-7,
    "optframe direct ipm": 3.6e-6,
    "optframe direct fn": 3e-7,
    "optframe aid fn": 3e-7,
    "optframe direct piqp": 2e-6,
    "optframe LP by highspy ipm": 3.6e-6,
    "pyfixest pfn": 5e-7,
    "pyfixest fn": 5.4e-7,
    "highspy ipm": 3.6e-6,
    "highspy hipo": 4e-6,
    "highspy pdlp": None,
    "sklearn QuantileRegressor": 3e-4,
}
_SVM_SECONDS = {
    ("svm-linear", "optframe aid"): 3.0,
    ("svm-linear", "optframe dcd"): 1.0,
    ("svm-linear", "optframe default"): 20.0,
    ("svm-linear", "optframe direct piqp"): 30.0,
    ("svm-linear", "optframe smo"): 5.0,
    ("svm-linear", "libsvm SVC"): 130.0,
    ("svm-rbf", "optframe smo"): 10.0,
    ("svm-rbf", "onedal SVC"): 10.0,
    ("svm-rbf", "libsvm SVC"): 20.0,
    ("l2svm-rbf", "optframe smo"): 16.0,
    ("l2svm-rbf", "optframe mfw"): 30.0,
    ("l2svm-rbf", "optframe mfw shrink"): 20.0,
    ("l2svm-rbf", "libsvm SVC"): 20.0,
}
# Seconds per cell of the loss jobs at their full sizes (one core, quiet); 5 s otherwise.
_LOSS_SECONDS = {"sqhinge-linear": 3.0, "logistic-linear": 1.0, "smoothhinge-linear": 1.0}


def cells(quick: bool) -> list[Cell]:
    """The grid (``quick``: a 3,000 x 5 LAD and a1a for the SVM jobs)."""
    grid: list[Cell] = []
    for n, m in QUICK_LAD_SIZES if quick else LAD_SIZES:
        grid += [
            Cell({"job": "lad", "data": "het", "n": n, "m": m, "method": x})
            for x in LAD_METHODS
            if x != "sklearn QuantileRegressor" or n * m <= SKLEARN_LAD_MAX
        ]
    for name in () if quick else LAD_REAL:
        grid += [Cell({"job": "lad", "data": name, "method": x}) for x in LAD_METHODS]
    for name in QUICK_LINEAR_SETS if quick else LINEAR_SETS:
        for variant, methods in (("bias", LINEAR_BIAS_METHODS), ("free", LINEAR_FREE_METHODS)):
            grid += [
                Cell(
                    {"job": "svm-linear", "data": name, "variant": variant, "C": C_SVM, "method": x}
                )
                for x in methods
            ]
    for name in QUICK_RBF_SETS if quick else RBF_SETS:
        grid += [
            Cell({"job": "svm-rbf", "data": name, "C": C_SVM, "method": x}) for x in RBF_METHODS
        ]
    for name in QUICK_RBF_SETS if quick else L2_SETS:
        grid += [
            Cell({"job": "l2svm-rbf", "data": name, "C": C_SVM, "method": x}) for x in L2_METHODS
        ]
    for job, (sets, methods, quick_sets) in LOSS_JOBS.items():
        for name in quick_sets if quick else sets:
            size = {}
            if name == "het":
                n, m = QUICK_LOSS_HET if quick else LOSS_HET
                size = {"n": n, "m": m}
            grid += [
                Cell({"job": job, "data": name, **size, "C": C_SVM, "method": x}) for x in methods
            ]
    for job, spec in L1_JOBS.items():
        for name in spec.quick_sets if quick else spec.sets:
            size = {}
            if name == "het":
                n, m = QUICK_LOSS_HET if quick else LOSS_HET
                size = {"n": n, "m": m}
            grid += [Cell({"job": job, "data": name, **size, "method": x}) for x in spec.methods]
    return grid


def expected_seconds(cell: Cell, quick: bool) -> float:
    """Rough seconds of one cell on one core (``optframe bench --list`` adds them up)."""
    if quick:
        return 1.0
    job, method = cell["job"], cell["method"]
    if job == "lad":
        n, m = cell.params.get("n", 40_768), cell.params.get("m", 10)
        rate = _LAD_PER_NM.get(method)
        return PDLP_LIMIT if rate is None else max(0.2, rate * n * m)
    if job in LOSS_JOBS:
        return _LOSS_SECONDS.get(job, 5.0)
    return _SVM_SECONDS.get((job, method), 10.0)


# ------------------------------------------------------------------------------------- data
_CACHE: dict[Any, Any] = {}


def _cached(key: tuple, make: Any) -> Any:
    if key not in _CACHE:
        for old in [k for k in _CACHE if k[0] == key[0]]:
            del _CACHE[old]  # one data set per kind in memory
        _CACHE[key] = make()
    return _CACHE[key]


def heteroscedastic_lad(n: int, m: int, seed: int = 0) -> Any:
    """Set A (``make_lad_set_a``) with its noise scaled by ``0.5 + |x_1|`` (heteroscedastic)."""
    from optframe.data import Dataset, make_lad_set_a

    base = make_lad_set_a(n, m, random_state=seed)
    X = np.asarray(base.X)
    mean = X @ base.meta["coef"] + base.meta["intercept"]
    y = mean + (base.y - mean) * (0.5 + np.abs(X[:, 0]))
    return Dataset(X=X, y=y, name=f"lad_het_{n}x{m}")


def _lad_data(cell: Cell) -> Any:
    from optframe.data import Dataset, load_dataset

    if cell["data"] == "het":
        return _cached(
            ("lad", cell["n"], cell["m"]), lambda: heteroscedastic_lad(cell["n"], cell["m"])
        )

    def real() -> Any:
        data = load_dataset(cell["data"])
        return Dataset(X=np.asarray(data.X, dtype=np.float64), y=data.y, name=cell["data"])

    return _cached(("lad", cell["data"]), real)


def _linear_data(name: str) -> Any:
    from optframe.data import load_dataset

    def load() -> Any:
        base, _, split = name.partition(".")
        return load_dataset(base, split="test" if split == "t" else "train")

    return _cached(("linear", name), load)


def _split(name: str) -> tuple[Any, np.ndarray, Any, np.ndarray]:
    from optframe.bench.suites.fw import split

    X, y, Xt, yt = _cached(("split", name), lambda: split(name))
    return pm.as_int32(X), y, pm.as_int32(Xt), yt


def rbf_gamma(X: Any) -> float:
    r""":math:`1 / (2\bar d^2)`, :math:`\bar d^2` the mean squared distance over all pairs."""
    from optframe.kernels import mean_squared_distance

    return 1.0 / (2.0 * mean_squared_distance(X))


# ---------------------------------------------------------------------------------- helpers
def unavailable_reason(method: str) -> str | None:
    """Why ``method`` cannot run here, or None."""
    if method.startswith("pyfixest"):
        return pm.missing_module("pyfixest")
    if method.startswith("rehline"):
        return pm.missing_module("rehline")
    if method.startswith("skglm"):
        return pm.missing_module("skglm")
    if method.startswith("onedal"):
        return pm.missing_module("sklearnex")
    if method.startswith("highspy"):
        return pm.highs_solver_missing(method.split()[1])
    return None


cell_threads = pm.cell_threads


def one_thread() -> contextlib.AbstractContextManager[None]:
    """:func:`limited_threads` at 1."""
    return limited_threads(1)


@contextlib.contextmanager
def limited_threads(threads: int) -> Iterator[None]:
    """``threads`` for BLAS, numba and optframe inside the block; the previous settings after.

    The runner already sets the thread variables; numba's pool is sized when numba loads, so
    it is set here too (oneDAL's is set by :func:`optframe.bench.peer_methods.svc_fit`).
    """
    from threadpoolctl import threadpool_limits

    saved = os.environ.get("OPTFRAME_THREADS")
    os.environ["OPTFRAME_THREADS"] = str(threads)
    numba_threads = None
    try:
        import numba

        numba_threads = numba.get_num_threads()
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    except Exception:  # numba absent: nothing to limit
        numba_threads = None
    try:
        with threadpool_limits(threads):
            yield
    finally:
        if numba_threads is not None:
            import numba

            numba.set_num_threads(numba_threads)
        if saved is None:
            os.environ.pop("OPTFRAME_THREADS", None)
        else:
            os.environ["OPTFRAME_THREADS"] = saved


# ---------------------------------------------------------------------------- peak memory
def _status_mb(field: str) -> float | None:
    """``VmHWM`` or ``VmRSS`` of this process from ``/proc/self/status``, in MB (None if absent)."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    """Reset this process's peak resident set (``VmHWM``) to its current one (Linux 4.0+)."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        return False
    return True


@contextlib.contextmanager
def peak_memory() -> Iterator[dict[str, Any]]:
    """Measure the peak resident memory of the block; the mapping is filled at its end.

    ``rss_before_mb``: the resident set before the block (the interpreter, the imports, the
    data, the warm-up). ``peak_rss_mb``: the process's peak resident set during the block: its
    ``VmHWM``, reset just before the block (``/proc/self/clear_refs``), so what ran before
    (data loading, the warm-up) does not count. ``fit_mb``: the difference, what the method
    itself added at its peak. ``peak_scope`` is ``"fit"``; ``"process"`` where the peak could
    not be reset (then the peak covers the process's life). Nothing is filled off Linux.
    """
    memory: dict[str, Any] = {}
    before = _status_mb("VmRSS")
    scope = "fit" if _reset_peak() else "process"
    yield memory
    peak = _status_mb("VmHWM")
    if before is not None and peak is not None:
        memory |= {
            "peak_rss_mb": peak,
            "rss_before_mb": before,
            "fit_mb": peak - before,
            "peak_scope": scope,
        }


def _timed_solve(model: Any, driver: Any, backend: str = "auto") -> tuple[Any, float]:
    """``of.solve(model, driver, backend=backend, threads=cell_threads())``, wall seconds."""
    import optframe as of

    start = time.perf_counter()
    result = of.solve(model, driver=driver, backend=backend, threads=cell_threads())
    return result, time.perf_counter() - start


def _optframe_record(result: Any, wall: float, model: Any) -> dict[str, Any]:
    """Seconds without compile time, the status, the objective recomputed by ``model``."""
    compile_s = float(getattr(result.timings, "compile", 0.0) or 0.0)
    record = {
        "status": result.status.value,
        "seconds": wall - compile_s,
        "compile_s": compile_s,
        "iterations": result.iterations,
        "gap": result.gap,
        "build_s": result.timings.build,
        "solve_s": result.timings.solve,
        "total_s": result.timings.total,
        "driver": result.driver,
        "backend": result.backend,
    }
    if result.has_solution:
        record["objective"] = model.objective(result.solution)
    return record


def recompute(model: Any, solution: Mapping[str, Any]) -> dict[str, Any]:
    """The objective of ``model`` at ``solution`` (and the dual value at ``alpha`` if given).

    Non-finite solution entries (a solver that returned nothing) give ``objective = nan``.
    """
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in solution.items()}
    if not all(np.all(np.isfinite(v)) for v in arrays.values()):
        return {"objective": math.nan}
    out = {"objective": float(model.objective(arrays))}
    if "alpha" in arrays and hasattr(model, "dual_objective"):
        out["dual_objective"] = float(model.dual_objective(arrays["alpha"]))
    return out


def _peer_record(fit: pm.PeerFit, model: Any) -> dict[str, Any]:
    record = {"status": fit.status, "seconds": fit.seconds, "iterations": fit.iterations}
    if fit.tool_objective is not None:
        record["tool_objective"] = fit.tool_objective
    record.update(fit.extra)
    record.update(recompute(model, fit.solution))
    return record


# -------------------------------------------------------------------------------------- LAD
def _lad_fit(method: str, data: Any, quick: bool) -> dict[str, Any]:
    import optframe as of
    from optframe.drivers import AggregateDisaggregate
    from optframe.models import LADRegression

    model = LADRegression(data)
    X, y = np.asarray(data.X, dtype=np.float64), np.asarray(data.y, dtype=np.float64)
    if method == "optframe LP by highspy ipm":
        return _peer_record(pm.highs_optframe_lp(model, "ipm"), model)
    if method.startswith("optframe"):
        driver = AggregateDisaggregate() if method.startswith("optframe aid") else "direct"
        options = {"solver": "ipm"} if method == "optframe direct ipm" else None
        backend = {"fn": "matrix:fn", "piqp": "piqp"}.get(method.rsplit(" ", 1)[-1], "auto")
        start = time.perf_counter()
        if method == "optframe auto":  # solve()'s own default driver
            result = of.solve(model, threads=cell_threads())
        else:
            result = of.solve(
                model,
                driver=driver,
                backend=backend,
                threads=cell_threads(),
                solver_options=options,
            )
        return _optframe_record(result, time.perf_counter() - start, model)
    if method.startswith("pyfixest"):
        fit = pm.pyfixest_quantreg(X, y, method.split()[1], seed=0)
    elif method.startswith("highspy"):
        solver = method.split()[1]
        limit = (QUICK_PDLP_LIMIT if quick else PDLP_LIMIT) if solver == "pdlp" else None
        fit = pm.highs_lad_dual(X, y, solver, time_limit=limit)
    elif method == "sklearn QuantileRegressor":
        fit = pm.sklearn_quantile(X, y)
    else:
        raise ValueError(f"unknown LAD method {method!r}")
    return _peer_record(fit, model)


def _run_lad(cell: Cell, quick: bool) -> dict[str, Any]:
    from optframe.data import Dataset

    _warm_up(("lad", cell["method"]), lambda: _lad_fit(cell["method"], _tiny_lad(), True))
    data = _lad_data(cell)
    with peak_memory() as memory:
        record = _lad_fit(cell["method"], data, quick)
    assert isinstance(data, Dataset)
    return {"n": data.n_samples, "m": data.n_features} | record | memory


def _tiny_lad() -> Any:
    return heteroscedastic_lad(400, 4, seed=1)


# ------------------------------------------------------------------------------- linear SVM
def _linear_fit(method: str, variant: str, data: Any, C: float) -> dict[str, Any]:
    from optframe.data import Dataset
    from optframe.drivers import DCD, SMO, AggregateDisaggregate
    from optframe.models import WeightedSVM

    y = np.asarray(data.y, dtype=np.float64)
    if variant == "bias":
        X = pm.with_ones(data.X)
        model = WeightedSVM(Dataset(X=X, y=y), C=C, fit_intercept=False)
    else:
        X = pm.as_int32(data.X)
        model = WeightedSVM(Dataset(X=X, y=y), C=C)
    if method.startswith("optframe"):
        drivers = {
            "optframe aid": lambda: AggregateDisaggregate(),
            "optframe dcd": lambda: DCD(),
            "optframe smo": lambda: SMO(cache_bytes=CACHE_MB * 1024**2),
            "optframe default": lambda: "direct",
            "optframe direct piqp": lambda: "direct",
            "optframe auto": lambda: "auto",
        }
        backend = "piqp" if method == "optframe direct piqp" else "auto"
        result, seconds = _timed_solve(model, drivers[method](), backend)
        return _optframe_record(result, seconds, model)
    if method.startswith("liblinear"):
        fit = pm.liblinear_hinge(X, y, C, tol=float(method.split()[-1]))
    elif method.startswith("rehline"):
        tol = float(method.split()[-1])
        fit = pm.rehline_hinge(X, y, C, tol=tol, max_iter=1000 if tol >= 1e-4 else 100_000)
    elif method == "libsvm SVC":
        fit, _ = pm.svc_fit(X, y, C, "linear", None, "libsvm", CACHE_MB)
        fit.solution.pop("alpha")  # the objective from (w, b), as for every linear method
    else:
        raise ValueError(f"unknown linear SVM method {method!r}")
    return _peer_record(fit, model)


def _run_linear(cell: Cell) -> dict[str, Any]:
    from optframe.data import make_svm_aid

    method, variant = cell["method"], cell["variant"]
    _warm_up(
        ("linear", variant, method),
        lambda: _linear_fit(method, variant, make_svm_aid(300, 5, random_state=1), cell["C"]),
    )
    data = _linear_data(cell["data"])
    with peak_memory() as memory:
        record = _linear_fit(method, variant, data, cell["C"])
    return {"n": data.n_samples, "m": data.n_features} | record | memory


# ------------------------------------------------------------------------------- kernel SVMs
def _kernel_fit(
    job: str, method: str, X: Any, y: np.ndarray, Xt: Any, yt: np.ndarray, C: float, gamma: float
) -> dict[str, Any]:
    from optframe.data import Dataset
    from optframe.drivers import MFW, SMO
    from optframe.kernels import RBF
    from optframe.models import L2SVM, WeightedSVM

    data = Dataset(X=X, y=y)
    model = (WeightedSVM if job == "svm-rbf" else L2SVM)(data, C=C, kernel=RBF(gamma=gamma))
    cache = CACHE_MB * 1024**2
    if method.startswith("optframe"):
        drivers = {
            "optframe smo": lambda: SMO(cache_bytes=cache),
            "optframe mfw": lambda: MFW(cache_bytes=cache),
            "optframe mfw shrink": lambda: MFW(cache_bytes=cache, shrinking=True),
            "optframe auto": lambda: "auto",
        }
        result, seconds = _timed_solve(model, drivers[method]())
        record = _optframe_record(result, seconds, model)
        if result.has_solution:
            record["accuracy"] = pm.accuracy(result.predict(Xt), yt)
            if job == "svm-rbf":
                record.update(recompute(model, result.solution))
        return record
    implementation = "onedal" if method.startswith("onedal") else "libsvm"
    fit, estimator = pm.svc_fit(X, y, C, "rbf", gamma, implementation, CACHE_MB)
    record = {"status": fit.status, "seconds": fit.seconds, "iterations": fit.iterations}
    record |= fit.extra | {"accuracy": pm.accuracy(estimator.predict(Xt), yt)}
    if job == "svm-rbf":
        record.update(recompute(model, fit.solution))
    return record


def _run_kernel(cell: Cell) -> dict[str, Any]:
    job, method = cell["job"], cell["method"]

    def tiny() -> Any:
        rng = np.random.default_rng(1)
        X = rng.normal(size=(300, 4))
        y = np.where(X[:, 0] + 0.3 * rng.normal(size=300) > 0, 1.0, -1.0)
        return _kernel_fit(job, method, X, y, X, y, 1.0, 0.5)

    _warm_up((job, method), tiny)
    X, y, Xt, yt = _split(cell["data"])
    gamma = _cached(("gamma", cell["data"]), lambda: rbf_gamma(X))
    with peak_memory() as memory:
        record = _kernel_fit(job, method, X, y, Xt, yt, cell["C"], gamma)
    return {"n": int(y.size), "m": int(X.shape[1]), "gamma": gamma} | record | memory


# ------------------------------------------------------------------------- losses beyond hinge
def loss_of(job: str) -> Any:
    """The optframe loss of a job of ``LOSS_JOBS``."""
    from optframe.losses import Huber, Logistic, Pinball, PLQLoss, SquaredHinge

    tau = QUANTILE_TAU
    losses = {
        "sqhinge-linear": lambda: SquaredHinge(),
        "logistic-linear": lambda: Logistic(),
        "smoothhinge-linear": lambda: PLQLoss(rehu=[(-1.0, 1.0, 1.0)], kind="classification"),
        "huber-linear": lambda: Huber(1.0),
        "quantile-linear": lambda: Pinball(tau),
        # tau r_+^2 + (1 - tau) r_-^2 of the residual r: two one-sided squares
        "expectile-linear": lambda: PLQLoss(
            rehu=[(math.sqrt(2 * tau), 0.0, math.inf), (-math.sqrt(2 * (1 - tau)), 0.0, math.inf)]
        ),
    }
    return losses[job]()


#: ReHLine's own name for each loss it has one for (``plqERM_Ridge(loss=...)``).
REHLINE_NAMES: dict[str, dict[str, Any]] = {
    "sqhinge-linear": {"name": "squared hinge"},
    "smoothhinge-linear": {"name": "sSVM"},
    "huber-linear": {"name": "huber", "tau": 1.0},
    "quantile-linear": {"name": "QR", "qt": QUANTILE_TAU},
}


def _loss_fit(job: str, method: str, X: Any, y: np.ndarray, C: float) -> dict[str, Any]:
    """One method on the loss job ``job`` for ``(X, y)`` (the bias already a column of ``X``)."""
    from optframe.data import Dataset
    from optframe.drivers import DCD, PrimalNewton
    from optframe.models import EmpiricalRisk

    loss = loss_of(job)
    model = EmpiricalRisk(Dataset(X=X, y=y), loss, C=C, fit_intercept=False)
    if method.startswith("optframe"):
        driver = {"optframe dcd": DCD(), "optframe newton": PrimalNewton()}.get(method, "auto")
        result, seconds = _timed_solve(model, driver)
        return _optframe_record(result, seconds, model)
    tol = float(method.rsplit(" ", 1)[-1]) if " tol " in method else 1e-4
    if method.startswith("rehline"):
        fit = pm.rehline_plq(
            X, y, C, tol=tol, max_iter=100_000, loss=loss, name=REHLINE_NAMES.get(job)
        )
    elif job == "sqhinge-linear" and method.startswith("liblinear"):
        dual = "auto" if method == "liblinear LinearSVC defaults" else True
        fit = pm.liblinear_squared_hinge(X, y, C, tol=tol, dual=dual)
    elif job == "logistic-linear" and method.startswith("liblinear"):
        fit = pm.sklearn_logistic(
            X, y, C, "liblinear", dual=" dual " in method, tol=tol, max_iter=1_000_000
        )
    elif job == "logistic-linear" and method == "lbfgs defaults":
        fit = pm.sklearn_logistic(X, y, C, "lbfgs")
    elif job == "logistic-linear" and method.startswith("lbfgs"):
        fit = pm.sklearn_logistic(X, y, C, "lbfgs", tol=tol, max_iter=100_000)
    else:
        raise ValueError(f"unknown method {method!r} for the job {job!r}")
    return _peer_record(fit, model)


def loss_data(job: str, name: str, n: int | None = None, m: int | None = None) -> Any:
    """``(X, y)`` of a loss job: the bias as a ones column for a margin loss, dense regression."""
    if loss_of(job).is_classification:

        def classification() -> Any:
            data = _linear_data(name)
            return pm.with_ones(data.X), np.asarray(data.y, dtype=np.float64)

        return _cached(("loss classification", name), classification)

    def regression() -> Any:
        from optframe.data import load_dataset

        data = heteroscedastic_lad(n, m) if name == "het" else load_dataset(name)
        return np.asarray(data.X, dtype=np.float64), np.asarray(data.y, dtype=np.float64)

    return _cached(("loss regression", name, n, m), regression)


def _run_loss(cell: Cell) -> dict[str, Any]:
    from optframe.data import make_svm_aid

    job, method = cell["job"], cell["method"]

    def tiny() -> Any:
        if loss_of(job).is_classification:
            data = make_svm_aid(300, 5, random_state=1)
            X, y = pm.with_ones(data.X), np.asarray(data.y, dtype=np.float64)
        else:
            data = heteroscedastic_lad(400, 4, seed=1)
            X, y = np.asarray(data.X), np.asarray(data.y)
        return _loss_fit(job, method, X, y, cell["C"])

    _warm_up(("loss", job, method), tiny)
    X, y = loss_data(job, cell["data"], cell.params.get("n"), cell.params.get("m"))
    with peak_memory() as memory:
        record = _loss_fit(job, method, X, y, cell["C"])
    return {"n": int(y.size), "m": int(X.shape[1])} | record | memory


# -------------------------------------------------------------------------------- L1 losses
def l1_model(job: str, X: Any, y: np.ndarray, alpha: float) -> Any:
    """The optframe model of an L1 job: ``C sum_i l(a_i) + |w|_1``, ``C = 1 / (n alpha)``."""
    from optframe.data import Dataset
    from optframe.losses import Huber, Logistic
    from optframe.models import EmpiricalRisk
    from optframe.penalties import L1

    spec = L1_JOBS[job]
    loss = Logistic() if spec.loss == "logistic" else Huber(1.0)
    C = 1.0 / (y.size * alpha)
    return EmpiricalRisk(Dataset(X=X, y=y), loss, penalty=L1(), C=C,
                         fit_intercept=spec.intercept)  # fmt: skip


def l1_alpha(job: str, X: Any, y: np.ndarray) -> float:
    """The job's ``alpha``: its ratio of ``alpha_max`` on ``(X, y)``."""
    spec = L1_JOBS[job]
    return spec.ratio * pm.l1_alpha_max(X, y, spec.loss, spec.intercept)


def _l1_fit(job: str, method: str, X: Any, y: np.ndarray, alpha: float) -> dict[str, Any]:
    """One method on the L1 job ``job`` for ``(X, y)`` at ``alpha`` (objectives recomputed)."""
    from optframe.drivers import CoordinateDescent

    model = l1_model(job, X, y, alpha)
    if method.startswith("optframe"):
        driver = CoordinateDescent() if method == "optframe cd" else "auto"
        result, seconds = _timed_solve(model, driver)
        record = _optframe_record(result, seconds, model)
        if result.has_solution:
            record["nnz"] = int(np.count_nonzero(result.solution["w"]))
        return record
    tol = float(method.rsplit(" ", 1)[-1])
    spec = L1_JOBS[job]
    if method.startswith("skglm"):
        fit = pm.skglm_l1(X, y, spec.loss, alpha, tol, spec.intercept)
    elif method.startswith("liblinear L1") and spec.loss == "logistic":
        fit = pm.liblinear_l1_logistic(X, y, model.C, tol)
    else:
        raise ValueError(f"unknown method {method!r} for the job {job!r}")
    return _peer_record(fit, model) | {"nnz": int(np.count_nonzero(fit.solution["w"]))}


def l1_data(job: str, name: str, n: int | None = None, m: int | None = None) -> Any:
    """``(X, y)`` of an L1 job: CSC classification sets; standardized dense regression."""
    import scipy.sparse as sp

    if L1_JOBS[job].loss == "logistic":

        def classification() -> Any:
            data = _linear_data(name)
            X = sp.csc_array(data.X) if sp.issparse(data.X) else np.asarray(data.X, np.float64)
            return X, np.asarray(data.y, dtype=np.float64)

        return _cached(("l1 classification", name), classification)

    def regression() -> Any:
        X, y = loss_data("huber-linear", name, n, m)
        return (X - X.mean(axis=0)) / np.maximum(X.std(axis=0), 1e-12), y

    return _cached(("l1 regression", name, n, m), regression)


def _run_l1(cell: Cell) -> dict[str, Any]:
    job, method = cell["job"], cell["method"]

    def tiny() -> Any:
        import scipy.sparse as sp

        from optframe.data import make_svm_aid

        if L1_JOBS[job].loss == "logistic":
            data = make_svm_aid(300, 5, random_state=1)
            X, y = sp.csc_array(data.X), np.asarray(data.y, dtype=np.float64)  # as the sets
        else:
            data = heteroscedastic_lad(400, 4, seed=1)
            X, y = np.asarray(data.X), np.asarray(data.y)
        return _l1_fit(job, method, X, y, l1_alpha(job, X, y))

    _warm_up(("l1", job, method), tiny)
    X, y = l1_data(job, cell["data"], cell.params.get("n"), cell.params.get("m"))
    alpha = l1_alpha(job, X, y)
    with peak_memory() as memory:
        record = _l1_fit(job, method, X, y, alpha)
    return {"n": int(y.size), "m": int(X.shape[1]), "alpha": alpha} | record | memory


# ------------------------------------------------------------------------------------- cells
_WARM: set[tuple] = set()


def _warm_up(key: tuple, run: Any) -> None:
    """Run ``run()`` once per process (imports, JIT, first-call set-up are then not timed)."""
    if key in _WARM:
        return
    run()
    _WARM.add(key)


FRESH_PROCESS = True  # each cell in a new process (its memory its own); False: in this one


def run_cell(cell: Cell) -> dict[str, Any]:
    """Run one method on one problem; a missing peer gives ``status="unavailable"``.

    The method runs in a new process of its own (``FRESH_PROCESS``), which loads the data,
    warms up and runs the timed fit, and whose peak resident memory is then the method's alone
    (:func:`peak_memory`): no other cell's data, imports or freed-but-resident heap.
    """
    reason = unavailable_reason(cell["method"])
    if reason is not None:
        return {"status": "unavailable", "reason": reason}
    threads = cell_threads()
    if FRESH_PROCESS:
        return in_fresh_process(dict(cell.params), threads)
    return run_measured(dict(cell.params), threads)


def run_measured(params: dict[str, Any], threads: int) -> dict[str, Any]:
    """The cell in this process at ``threads`` threads (what the fresh process runs)."""
    cell = Cell(params)
    quick = cell["job"] == "lad" and cell.params.get("n", 0) in {n for n, _ in QUICK_LAD_SIZES}
    with limited_threads(threads):
        if cell["job"] == "lad":
            record = _run_lad(cell, quick)
        elif cell["job"] == "svm-linear":
            record = _run_linear(cell)
        elif cell["job"] in LOSS_JOBS:
            record = _run_loss(cell)
        elif cell["job"] in L1_JOBS:
            record = _run_l1(cell)
        else:
            record = _run_kernel(cell)
    return record | {"threads": threads, "versions": pm.peer_versions()}


def _watch_parent(parent: int) -> None:
    """End this process once ``parent`` is gone (the runner killed its child at the limit)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _fresh_main(answer_fd: int, parent: int) -> None:
    """The fresh process: the cell from stdin (pickled), its record to ``answer_fd`` (pickled)."""
    import pickle
    import signal
    import sys
    import threading
    import traceback

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the runner's to handle
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    params, threads = pickle.load(sys.stdin.buffer)
    try:
        answer: tuple[str, Any] = ("record", run_measured(params, threads))
    except Exception as exc:  # re-raised by the parent, which records the cell as failed
        answer = ("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=20)}")
    with os.fdopen(answer_fd, "wb") as handle, contextlib.suppress(OSError):
        pickle.dump(answer, handle)


def in_fresh_process(params: dict[str, Any], threads: int) -> dict[str, Any]:
    """:func:`run_measured` in a new process (``python -m optframe.bench.suites.peers``).

    A plain subprocess (not :mod:`multiprocessing`, which would import the caller's main
    module again): the cell goes in on its stdin, the record comes back on a pipe of its own,
    so what the solvers print does not mix with it. The process inherits the thread variables,
    with ``NUMBA_NUM_THREADS`` at ``threads`` (numba sizes its pool when it loads), and ends by
    itself if this process dies (the runner kills the cell's process at the time limit).
    Raises RuntimeError with the child's traceback if the cell raised there, or if the
    process died without an answer.
    """
    import pickle
    import subprocess
    import sys

    from optframe.bench.signals import sigint_ignored

    read_fd, write_fd = os.pipe()
    env = os.environ | {"NUMBA_NUM_THREADS": str(threads), "OPTFRAME_THREADS": str(threads)}
    command = [sys.executable, "-m", "optframe.bench.suites.peers", str(write_fd)]
    try:
        with sigint_ignored():
            process = subprocess.Popen(
                [*command, str(os.getpid())], env=env, stdin=subprocess.PIPE, pass_fds=(write_fd,)
            )
    finally:
        os.close(write_fd)
    with os.fdopen(read_fd, "rb") as answer:
        try:
            assert process.stdin is not None
            process.stdin.write(pickle.dumps((params, threads)))
            process.stdin.close()
        except OSError:  # the process is already gone: its exit code says why
            pass
        data = answer.read()
    code = process.wait()
    if not data:
        raise RuntimeError(f"the cell's process ended without an answer (exit code {code})")
    kind, value = pickle.loads(data)
    if kind == "error":
        raise RuntimeError(f"in the cell's own process: {value}")
    return value


# -------------------------------------------------------------------------------- reporting
def problem_key(record: Mapping[str, Any]) -> tuple:
    """What makes two records the same problem: job, data, variant and the LAD sizes."""
    return (
        record.get("job"),
        record.get("data"),
        record.get("variant"),
        record.get("n") if record.get("data") == "het" else None,
        record.get("m") if record.get("data") == "het" else None,
    )


def tolerance_of(record: Mapping[str, Any]) -> float:
    """The job's success tolerance (``TOLERANCE``; nan: judged by accuracy)."""
    return TOLERANCE.get(str(record.get("job")), 1e-6)


def complete(records: list[dict[str, Any]]) -> None:
    """``rel_objective``, ``success`` and ``ratio_to_best_peer`` for every record."""
    ps.mark_success(records, problem_key, tolerance_of)
    rows = {(row.problem, row.method): row for row in ps.cell_table(records, problem_key)}
    for r in records:
        row = rows.get((problem_key(r), str(r.get("method"))))
        best = rows.get((problem_key(r), row.best_peer)) if row and row.best_peer else None
        if best is not None and best.seconds and ps.ran(r):
            r["ratio_to_best_peer"] = float(r["seconds"]) / best.seconds[0]


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def _seconds_text(spread: tuple[float, float, float] | None) -> str:
    if spread is None:
        return ""
    median, low, high = spread
    if high - low <= 0.005 * max(median, 1e-9):
        return f"{median:.3g}"
    return f"{median:.3g} [{low:.3g}, {high:.3g}]"


def _problem_text(key: tuple) -> str:
    job, data, variant, n, m = key
    parts = [str(job), str(data)]
    if variant:
        parts.append(str(variant))
    if n is not None:
        parts.append(f"{n}x{m}")
    return " ".join(parts)


def _memory_text(extra: Mapping[str, Any]) -> str:
    """Median peak resident MB of the process and, in parentheses, the fit's own growth."""
    peak, fit = extra.get("peak_rss_mb"), extra.get("fit_mb")
    if peak is None:
        return ""
    return f"{peak:.0f}" + ("" if fit is None else f" (+{max(fit, 0.0):.0f})")


def tables(records: list[dict[str, Any]]) -> str:
    """One markdown table per job: median [min, max] seconds, objective, ratio, success."""
    rows = ps.cell_table(records, problem_key, extra_keys=("accuracy", "peak_rss_mb", "fit_mb"))
    lines: list[str] = []
    for job in JOBS:
        chosen = [row for row in rows if row.problem[0] == job]
        if not chosen:
            continue
        lines += [
            f"### {job}",
            "",
            "| problem | method | seconds, median [min, max] | objective | rel. to best | "
            "success | / best peer | / fastest peer | accuracy % | peak MB (fit) | status |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for row in chosen:
            accuracy = (row.extra or {}).get("accuracy")
            lines.append(
                f"| {_problem_text(row.problem)} | {row.method} | {_seconds_text(row.seconds)} "
                f"| {_fmt(row.objective, 10)} | {_fmt(row.rel_objective, 2)} "
                f"| {row.successes}/{row.runs} | {_fmt(row.ratio_to_best_peer)} "
                f"| {_fmt(row.ratio_to_fastest_peer)} | {_fmt(accuracy, 4)} "
                f"| {_memory_text(row.extra or {})} | {row.status} |"
            )
        lines.append("")
    return "\n".join(lines)


def summary_table(records: list[dict[str, Any]]) -> str:
    """qpbenchmark-style rows per job and method over the problems it ran on."""
    lines = [
        "| job | method | problems | success rate | shifted GM (s) | relative GM |",
        "|---|---|---|---|---|---|",
    ]
    for job in JOBS:
        chosen = [r for r in records if r.get("job") == job]
        if not chosen:
            continue
        for s in ps.method_summary(chosen, problem_key, lambda r: CELL_TIME_LIMIT):
            lines.append(
                f"| {job} | {s.method} | {s.problems} | {100 * s.success_rate:.0f}% "
                f"({s.successes}/{s.runs}) | {s.shifted_gm:.3g} | {_fmt(s.relative_gm)} |"
            )
    return "\n".join(lines)


def summarize(records: list[dict[str, Any]]) -> str:
    """Tables per job, the qpbenchmark summary, and the reasons of unavailable methods."""
    records = [dict(r) for r in records]
    complete(records)
    reasons = sorted(
        {
            f"- {r['method']}: {r['reason']}"
            for r in records
            if str(r.get("status")) == "unavailable" and r.get("reason")
        }
    )
    parts = [tables(records), "Summary per method (qpbenchmark-style):", "", summary_table(records)]
    if reasons:
        parts += ["", "Unavailable here:", *reasons]
    return "\n".join(parts)


if __name__ == "__main__":  # the fresh process of in_fresh_process
    import sys as _sys

    from optframe.bench.suites.peers import _fresh_main as _main

    _main(int(_sys.argv[1]), int(_sys.argv[2]))
