"""The peers of the ``peers`` suite, each called as its users would, returning the raw solution.

Every function here fits one method on the data it is given and returns a :class:`PeerFit`: the
solution mapped to the names of an optframe model (``beta``/``intercept`` for LAD, ``w`` or
``alpha`` and ``intercept`` for the SVMs), the wall seconds of the fit alone (data conversion
that a user of the tool would have done anyway, such as a pandas frame, is outside the timer),
and the tool's own objective when it reports one, kept only for information. The suite
recomputes every objective from the solution with the optframe model; it never uses the tool's
number.

The peer packages are optional (``pip install -e ".[peers]"``). :func:`unavailable` says why a
method cannot run here (a package that does not import, a HiGHS build without HiPO); the suite
then records the cell as ``unavailable`` with that reason, never a number.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

# The distribution that provides each importable peer module (for the messages).
PACKAGES = {
    "pyfixest": "pyfixest",
    "rehline": "rehline",
    "sklearnex": "scikit-learn-intelex",
    "highspy": "highspy",
    "sklearn": "scikit-learn",
    "skglm": "skglm",
}


@dataclass
class PeerFit:
    """One peer's fit: its solution in the model's names, seconds, and what the tool reported."""

    solution: dict[str, np.ndarray]
    seconds: float
    status: str = "done"
    tool_objective: float | None = None
    iterations: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def cell_threads() -> int:
    """The threads of the cell: ``OPTFRAME_THREADS`` (set by the runner's ``--threads``), else 1."""
    try:
        return max(1, int(os.environ.get("OPTFRAME_THREADS") or 1))
    except ValueError:
        return 1


def missing_module(module: str) -> str | None:
    """Why ``module`` does not import (with the install hint), or None when it does."""
    try:
        importlib.import_module(module)
    except Exception as exc:  # an ImportError, or a broken install that fails on import
        package = PACKAGES.get(module, module)
        return (
            f"{package} is not installed or does not import ({type(exc).__name__}: {exc}); "
            'install the optional peers with pip install -e ".[peers]"'
        )
    return None


def highs_solver_missing(solver: str) -> str | None:
    """Why this highspy build refuses ``solver`` (e.g. ``"hipo"``), or None when it accepts it."""
    reason = missing_module("highspy")
    if reason:
        return reason
    import highspy

    from optframe.c_output import hide_highs_banner

    hide_highs_banner()
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    status = highs.setOptionValue("solver", solver)
    if status == highspy.HighsStatus.kOk:
        return None
    version = getattr(highspy, "__version__", None) or _distribution_version("highspy")
    return (
        f"highspy {version} refuses solver={solver!r} (setOptionValue returned {status.name}); "
        "HiPO needs the package highspy-extras of the same version as highspy "
        "(pip install highspy[extras])"
    )


def _distribution_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


def peer_versions() -> dict[str, str]:
    """The installed versions of the peer distributions (``"-"`` when absent)."""
    names = ("pyfixest", "rehline", "scikit-learn-intelex", "highspy", "highspy-extras")
    names += ("scikit-learn",)
    out = {}
    for name in names:
        version = _distribution_version(name)
        out[name] = "-" if version == "?" else version
    return out


# ------------------------------------------------------------------------------------- LAD
def highs_lad_dual(
    X: np.ndarray,
    y: np.ndarray,
    solver: str,
    time_limit: float | None = None,
) -> PeerFit:
    r"""The LAD dual LP with an intercept, assembled by hand and solved by highspy, one thread.

    :math:`\max_\theta y^\top\theta` s.t. :math:`X^\top\theta = 0`, :math:`\mathbf 1^\top\theta =
    0`, :math:`-1 \le \theta \le 1` (as :mod:`optframe.bench.suites.direct` builds it, minimizing
    :math:`-y^\top\theta`). :math:`(\beta, b)` are minus the duals of its equality rows. The
    timer covers the assembly and the solve (what a user calling highspy by hand pays).
    """
    start = time.perf_counter()
    n, m = X.shape
    A = sp.csc_array(np.vstack([X.T, np.ones((1, n))]))
    zeros = np.zeros(m + 1)
    highs = highs_model(A, -y, -np.ones(n), np.ones(n), zeros, zeros, solver, time_limit)
    run_status = highs.run()
    seconds = time.perf_counter() - start
    status, row_dual = _highs_outcome(highs, run_status, m + 1)
    info = highs.getInfo()
    iterations = int(
        max(info.ipm_iteration_count, info.simplex_iteration_count, info.pdlp_iteration_count)
    )
    return PeerFit(
        solution={"beta": -row_dual[:m], "intercept": np.array([-row_dual[m]])},
        seconds=seconds,
        status=status,
        tool_objective=-float(info.objective_function_value),
        iterations=iterations,
    )


def highs_model(
    A: Any,
    cost: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    row_lower: np.ndarray,
    row_upper: np.ndarray,
    solver: str,
    time_limit: float | None = None,
    offset: float = 0.0,
) -> Any:
    """A one-thread, quiet ``highspy.Highs`` holding the LP (``A`` in CSC), not yet run."""
    import highspy

    from optframe.c_output import hide_highs_banner

    hide_highs_banner()
    # HiGHS sizes one process-wide scheduler at its first run; another thread count makes run()
    # fail unless it is reset (optframe's back-end resets it the same way).
    highspy.Highs.resetGlobalScheduler(True)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = A.shape[1], A.shape[0]
    lp.offset_ = float(offset)
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, lower, upper
    lp.row_lower_, lp.row_upper_ = row_lower, row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("threads", cell_threads())
    highs.setOptionValue("solver", solver)
    if time_limit is not None:
        highs.setOptionValue("time_limit", float(time_limit))
    highs.passModel(lp)
    return highs


def _highs_outcome(highs: Any, run_status: Any, rows: int) -> tuple[str, np.ndarray]:
    """HiGHS's model status as a lower-case word, and the row duals (NaN when there are none)."""
    import highspy

    status = highs.modelStatusToString(highs.getModelStatus()).lower().replace(" ", "_")
    if run_status == highspy.HighsStatus.kError:
        status = f"error ({status})"
    row_dual = np.asarray(highs.getSolution().row_dual, dtype=np.float64)
    if row_dual.size != rows:
        row_dual = np.full(rows, np.nan)
    return status, row_dual


def highs_optframe_lp(model: Any, solver: str = "ipm") -> PeerFit:
    r"""The LAD dual LP that optframe builds (``model.build("matrix", "dual")``), by highspy.

    A diagnostic: the LP that ``optframe.solve`` hands to HiGHS, without optframe's recovery and
    certificate, beside :func:`highs_lad_dual` (the textbook LP). The timer covers the solve
    only (the build is optframe's). :math:`(\beta, b)` are minus the duals of the equality rows,
    as in :func:`highs_lad_dual` (the two LPs have the same matrix and costs).
    """
    problem = model.build("matrix", "dual").problem
    m = problem.n_rows - 1
    A = problem.A.tocsc() if hasattr(problem.A, "tocsc") else problem.A
    highs = highs_model(
        A, problem.c, problem.lower, problem.upper, problem.row_lower, problem.row_upper,
        solver, offset=float(problem.offset),
    )  # fmt: skip
    start = time.perf_counter()
    run_status = highs.run()
    seconds = time.perf_counter() - start
    status, row_dual = _highs_outcome(highs, run_status, m + 1)
    info = highs.getInfo()
    return PeerFit(
        solution={"beta": -row_dual[:m], "intercept": np.array([-row_dual[m]])},
        seconds=seconds,
        status=status,
        iterations=int(info.ipm_iteration_count),
        extra={
            "lp_row_rhs_max": float(np.max(np.abs(problem.row_lower))),
            "lp_lower_min": float(np.min(problem.lower)),
        },
    )


def pyfixest_quantreg(X: np.ndarray, y: np.ndarray, method: str, seed: int = 0) -> PeerFit:
    """``pyfixest.quantreg("y ~ x0 + ...", frame, quantile=0.5, method=method)``.

    ``vcov="iid"`` (the cheapest of its standard errors, which it always computes). The frame is
    built outside the timer; ``fit_seconds`` in ``extra`` is pyfixest's own ``get_fit`` (the
    Frisch-Newton solve), the rest of ``seconds`` is its formula and model-matrix handling.
    """
    import pandas as pd
    import pyfixest as pf
    from pyfixest.estimation.quantreg import quantreg_

    m = X.shape[1]
    names = [f"x{j}" for j in range(m)]
    frame = pd.DataFrame(X, columns=names)
    frame["y"] = y
    formula = "y ~ " + " + ".join(names)
    fit_time = [0.0]
    original = quantreg_.Quantreg.get_fit

    def timed_get_fit(self: Any) -> None:
        begin = time.perf_counter()
        try:
            original(self)
        finally:
            fit_time[0] += time.perf_counter() - begin

    quantreg_.Quantreg.get_fit = timed_get_fit
    try:
        start = time.perf_counter()
        fit = pf.quantreg(
            formula,
            frame,
            quantile=0.5,
            method=method,
            vcov="iid",
            seed=seed,
            copy_data=False,
            store_data=False,
        )
        seconds = time.perf_counter() - start
    finally:
        quantreg_.Quantreg.get_fit = original
    coef = fit.coef()
    beta = np.array([float(coef[name]) for name in names])
    intercept = float(coef["Intercept"])
    return PeerFit(
        solution={"beta": beta, "intercept": np.array([intercept])},
        seconds=seconds,
        status="converged" if getattr(fit, "_has_converged", True) else "not_converged",
        iterations=int(getattr(fit, "_it", 0) or 0),
        extra={"fit_seconds": fit_time[0]},
    )


def sklearn_quantile(X: np.ndarray, y: np.ndarray) -> PeerFit:
    """``QuantileRegressor(quantile=0.5, alpha=0, solver="highs")``: LAD through scipy's HiGHS."""
    from sklearn.linear_model import QuantileRegressor

    start = time.perf_counter()
    estimator = QuantileRegressor(quantile=0.5, alpha=0.0, solver="highs").fit(X, y)
    seconds = time.perf_counter() - start
    return PeerFit(
        solution={
            "beta": np.asarray(estimator.coef_, dtype=np.float64),
            "intercept": np.array([float(estimator.intercept_)]),
        },
        seconds=seconds,
        iterations=int(getattr(estimator, "n_iter_", 0) or 0),
    )


# ---------------------------------------------------------------------------- linear SVM
def liblinear_hinge(X: Any, y: np.ndarray, C: float, tol: float) -> PeerFit:
    """``LinearSVC(loss="hinge", dual=True, fit_intercept=False)`` (LIBLINEAR's dual CD)."""
    from sklearn.svm import LinearSVC

    start = time.perf_counter()
    estimator = LinearSVC(
        loss="hinge", dual=True, fit_intercept=False, C=C, tol=tol, max_iter=1_000_000
    ).fit(X, y)
    seconds = time.perf_counter() - start
    return PeerFit(
        solution={"w": np.ravel(np.asarray(estimator.coef_, dtype=np.float64))},
        seconds=seconds,
        iterations=int(np.max(estimator.n_iter_)),
    )


def rehline_hinge(X: Any, y: np.ndarray, C: float, tol: float, max_iter: int) -> PeerFit:
    r"""``rehline.plqERM_Ridge(loss={"name": "svm"}, C=C)``: :math:`C\sum_i` hinge + ridge/2.

    ReHLine multiplies the loss by ``C`` (its ``cast_sample_weight``), the WeightedSVM's
    convention, and has no intercept: the bias is a feature of ``X``.
    """
    from rehline import plqERM_Ridge

    start = time.perf_counter()
    estimator = plqERM_Ridge(loss={"name": "svm"}, C=C, tol=tol, max_iter=max_iter).fit(X, y)
    seconds = time.perf_counter() - start
    return PeerFit(
        solution={"w": np.ravel(np.asarray(estimator.coef_, dtype=np.float64))},
        seconds=seconds,
        tool_objective=_float_or_none(getattr(estimator, "objective_", None)),
        iterations=int(getattr(estimator, "n_iter_", 0) or 0),
    )


def liblinear_squared_hinge(X: Any, y: np.ndarray, C: float, tol: float, dual: Any) -> PeerFit:
    """``LinearSVC(C=C, fit_intercept=False, tol=tol, dual=dual)``: its default loss, squared hinge.

    ``dual=True`` is LIBLINEAR's ``-s 1`` (dual coordinate descent, LIBLINEAR's own default);
    ``dual="auto"`` is scikit-learn's default, which picks the primal trust-region Newton
    (``-s 2``) when there are more rows than features. ``max_iter`` is scikit-learn's default
    (1,000) for ``"auto"``, as a user would run it, and 1,000,000 otherwise; ``status`` is
    ``max_iter`` when the fit stopped there.
    """
    from sklearn.svm import LinearSVC

    max_iter = 1000 if dual == "auto" else 1_000_000
    estimator = LinearSVC(C=C, fit_intercept=False, tol=tol, dual=dual, max_iter=max_iter)
    start = time.perf_counter()
    with _quiet_convergence():
        estimator.fit(X, y)
    seconds = time.perf_counter() - start
    iterations = int(np.max(estimator.n_iter_))
    return PeerFit(
        solution={"w": np.ravel(np.asarray(estimator.coef_, dtype=np.float64))},
        seconds=seconds,
        status="max_iter" if iterations >= max_iter else "done",
        iterations=iterations,
    )


def sklearn_logistic(
    X: Any,
    y: np.ndarray,
    C: float,
    solver: str,
    dual: bool = False,
    tol: float = 1e-4,
    max_iter: int = 100,
) -> PeerFit:
    r"""``LogisticRegression(C=C, fit_intercept=False, solver=solver, dual=dual, tol, max_iter)``.

    Its L2 objective is :math:`\tfrac12\lVert w\rVert^2 + C\sum_i \log(1 + e^{-y_i x_i^\top
    w})`, the model's. ``solver="liblinear"`` with ``dual=True`` is LIBLINEAR's ``-s 7`` (the
    dual coordinate descent of Yu, Huang and Lin, DCD's peer), with ``dual=False`` its ``-s 0``
    (trust-region Newton, scikit-learn's liblinear default); ``"lbfgs"`` is scikit-learn's
    default solver. ``status`` is ``max_iter`` when the fit stopped at ``max_iter``.
    """
    from sklearn.linear_model import LogisticRegression

    estimator = LogisticRegression(
        C=C, fit_intercept=False, solver=solver, dual=dual, tol=tol, max_iter=max_iter
    )
    start = time.perf_counter()
    with _quiet_convergence():
        estimator.fit(X, y)
    seconds = time.perf_counter() - start
    iterations = int(np.max(estimator.n_iter_))
    return PeerFit(
        solution={"w": np.ravel(np.asarray(estimator.coef_, dtype=np.float64))},
        seconds=seconds,
        status="max_iter" if iterations >= max_iter else "done",
        iterations=iterations,
    )


def l1_alpha_max(X: Any, y: np.ndarray, loss: str, intercept: bool) -> float:
    r"""The smallest :math:`\alpha` at which :math:`w = 0` solves the L1 problem.

    The problem is :math:`\tfrac1n\sum_i \ell(a_i) + \alpha\lVert w\rVert_1`;
    :math:`\alpha_{\max} = \lVert X^\top g\rVert_\infty / n` with :math:`g` the loss's
    derivative at :math:`w = 0` (and the best intercept alone, for the least-squares and Huber
    losses): ``"logistic"`` (:math:`y/2`), ``"sqhinge"`` (:math:`2y`), ``"ls"`` and
    ``"huber"`` (the residual, clipped to [-1, 1] for Huber with threshold 1).
    """
    n = X.shape[0]
    if loss in ("ls", "huber"):
        r = y - (y.mean() if intercept else 0.0)
        g = np.clip(r, -1.0, 1.0) if loss == "huber" else r
    elif loss == "logistic":
        g = 0.5 * y
    elif loss == "sqhinge":
        g = 2.0 * y
    else:
        raise ValueError(f"no alpha_max for the loss {loss!r}")
    return float(np.max(np.abs(np.asarray(X.T @ g).reshape(-1)))) / n


def skglm_l1(X: Any, y: np.ndarray, loss: str, alpha: float, tol: float,
             intercept: bool) -> PeerFit:  # fmt: skip
    r"""The skglm 0.5 fit of :math:`\tfrac1n\sum_i \ell(a_i) + \alpha\lVert w\rVert_1`.

    ``loss="logistic"``: ``SparseLogisticRegression`` (proximal Newton with working sets);
    ``"huber"``: ``GeneralizedLinearEstimator(Huber(1.0), L1(alpha), AndersonCD)``. Both
    stop at their own ``tol`` (``max_iter`` high enough that it is the tolerance that stops
    them). The objective is ``alpha`` times the model's with :math:`C = 1 / (n\alpha)`.
    """
    import skglm

    if loss == "logistic":
        estimator = skglm.SparseLogisticRegression(
            alpha=alpha, tol=tol, max_iter=1000, fit_intercept=intercept
        )
    elif loss == "huber":
        from skglm.datafits import Huber
        from skglm.penalties import L1
        from skglm.solvers import AndersonCD

        solver = AndersonCD(tol=tol, max_iter=1000, fit_intercept=intercept)
        estimator = skglm.GeneralizedLinearEstimator(Huber(1.0), L1(alpha), solver)
    else:
        raise ValueError(f"skglm_l1: no skglm estimator for the loss {loss!r} here")
    start = time.perf_counter()
    with _quiet_convergence():
        estimator.fit(X, y)
    seconds = time.perf_counter() - start
    return PeerFit(solution=_linear_solution(estimator, intercept), seconds=seconds,
                   iterations=getattr(estimator, "n_iter_", None))  # fmt: skip


def liblinear_l1_logistic(X: Any, y: np.ndarray, C: float, tol: float) -> PeerFit:
    r"""LIBLINEAR's L1 logistic regression (``-s 6``) through scikit-learn.

    ``LogisticRegression(penalty="l1", solver="liblinear", C=C, fit_intercept=False)``
    (``l1_ratio=1`` from scikit-learn 1.8):
    :math:`\lVert w\rVert_1 + C\sum_i \log(1 + e^{-y_i x_i^\top w})`, the model's
    objective. ``random_state=0`` fixes liblinear's random coordinate order.
    """
    import inspect

    from sklearn.linear_model import LogisticRegression

    # scikit-learn 1.8 deprecated ``penalty`` for ``l1_ratio`` (1: the L1 penalty)
    penalty = inspect.signature(LogisticRegression).parameters["penalty"].default
    l1 = {"l1_ratio": 1.0} if penalty == "deprecated" else {"penalty": "l1"}
    estimator = LogisticRegression(
        C=C, solver="liblinear", tol=tol, max_iter=100_000, fit_intercept=False,
        random_state=0, **l1,
    )  # fmt: skip
    start = time.perf_counter()
    with _quiet_convergence():
        estimator.fit(X, y)
    seconds = time.perf_counter() - start
    iterations = int(np.max(estimator.n_iter_))
    return PeerFit(solution=_linear_solution(estimator, False), seconds=seconds,
                   status="max_iter" if iterations >= 100_000 else "done",
                   iterations=iterations)  # fmt: skip


def _linear_solution(estimator: Any, intercept: bool) -> dict[str, np.ndarray]:
    """A fitted linear estimator's ``coef_`` (and ``intercept_``) in the model's names."""
    solution = {"w": np.ravel(np.asarray(estimator.coef_, dtype=np.float64))}
    if intercept:
        solution["intercept"] = np.ravel(np.asarray(estimator.intercept_, dtype=np.float64))[:1]
    return solution


def rehline_arrays(loss: Any, y: np.ndarray) -> dict[str, np.ndarray]:
    r"""ReHLine's ``U, V, S, T, Tau`` (one row per piece) for an optframe PLQ loss on ``y``.

    ReHLine's terms are :math:`\operatorname{relu}(u_{li} x_i^\top w + v_{li})` and
    :math:`\operatorname{rehu}_{\tau_{hi}}(s_{hi} x_i^\top w + t_{hi})`. A piece
    :math:`\operatorname{relu}(u a + v)` of the residual :math:`a = y_i - x_i^\top w` gives
    :math:`u_{li} = -u`, :math:`v_{li} = u y_i + v`; of the margin :math:`a = y_i x_i^\top w`,
    :math:`u_{li} = u y_i`, :math:`v_{li} = v`; the same for the ReHU pieces.
    """
    y = np.asarray(y, dtype=np.float64)
    ones = np.ones(y.size)
    regression = not loss.is_classification

    def rows(pieces: list[tuple[float, ...]]) -> tuple[np.ndarray, np.ndarray]:
        if not pieces:
            return np.empty((0, 0)), np.empty((0, 0))
        slope = [-c * ones if regression else c * y for c, *_ in pieces]
        shift = [c * y + d if regression else d * ones for c, d, *_ in pieces]
        return np.array(slope), np.array(shift)

    U, V = rows(loss.relu_pieces)
    S, T = rows(loss.rehu_pieces)
    Tau = np.array([tau * ones for *_, tau in loss.rehu_pieces]) if loss.rehu_pieces else S
    return {"U": U, "V": V, "S": S, "T": T, "Tau": Tau}


def rehline_plq(
    X: Any,
    y: np.ndarray,
    C: float,
    tol: float,
    max_iter: int,
    loss: Any = None,
    name: dict[str, Any] | None = None,
) -> PeerFit:
    r"""ReHLine on :math:`C\sum_i \ell(a_i) + \tfrac12\lVert w\rVert^2`, no intercept.

    ``name``: one of ReHLine's own losses, ``plqERM_Ridge(loss=name, C=C)`` (``{"name":
    "huber", "tau": 1.0}``, ``{"name": "QR", "qt": 0.3}``, ``{"name": "squared hinge"}``,
    ``{"name": "sSVM"}``), as its users call it; otherwise ``loss``, an optframe PLQ loss that
    ReHLine has no name for (the expectile), given to ``ReHLine(C=C, U=..., ...)`` through
    :func:`rehline_arrays`.
    """
    from rehline import ReHLine, plqERM_Ridge

    if name is not None:
        estimator = plqERM_Ridge(loss=name, C=C, tol=tol, max_iter=max_iter)
        start = time.perf_counter()
        with _quiet_convergence():
            estimator.fit(X, y)
    else:
        start = time.perf_counter()
        estimator = ReHLine(C=C, tol=tol, max_iter=max_iter, **rehline_arrays(loss, y))
        with _quiet_convergence():
            estimator.fit(X)
    seconds = time.perf_counter() - start
    converged = bool(getattr(estimator, "converged_", True))
    return PeerFit(
        solution={"w": np.ravel(np.asarray(estimator.coef_, dtype=np.float64))},
        seconds=seconds,
        status="done" if converged else "max_iter",
        tool_objective=_float_or_none(getattr(estimator, "objective_", None)),
        iterations=int(getattr(estimator, "n_iter_", 0) or 0),
    )


@contextlib.contextmanager
def _quiet_convergence() -> Iterator[None]:
    """Silence scikit-learn's ConvergenceWarning (the status says whether the cap was hit)."""
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


def _float_or_none(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------------------- kernel SVM
def svc_fit(
    X: Any,
    y: np.ndarray,
    C: float,
    kernel: str,
    gamma: float | None,
    implementation: str,
    cache_mb: float,
) -> tuple[PeerFit, Any]:
    r"""``SVC`` of scikit-learn (libsvm) or of scikit-learn-intelex (oneDAL), ``tol=1e-3``.

    The solution is :math:`\alpha_i = \lvert\mathrm{dual\_coef}_i\rvert` on the support
    vectors (scikit-learn stores :math:`y_i\alpha_i`, signed for the class ``classes_[1] =
    +1``), 0 elsewhere, and :math:`b` = ``intercept_``; with the linear kernel also
    :math:`w` = ``coef_``. Returns the fit and the estimator (for predictions).
    """
    if implementation == "onedal":
        onedal_threads(cell_threads())
        from sklearnex.svm import SVC
    else:
        from sklearn.svm import SVC
    options: dict[str, Any] = {"C": C, "kernel": kernel, "tol": 1e-3, "cache_size": cache_mb}
    if gamma is not None:
        options["gamma"] = gamma
    start = time.perf_counter()
    estimator = SVC(**options).fit(X, y)
    seconds = time.perf_counter() - start
    if list(estimator.classes_) != [-1.0, 1.0]:
        raise ValueError(f"expected classes [-1, 1]; got {list(estimator.classes_)}")
    alpha = np.zeros(y.size)
    dual = np.asarray(
        estimator.dual_coef_.toarray()
        if sp.issparse(estimator.dual_coef_)
        else estimator.dual_coef_
    )
    alpha[np.asarray(estimator.support_)] = np.abs(dual.reshape(-1))
    solution = {"alpha": alpha, "intercept": np.ravel(np.asarray(estimator.intercept_, float))}
    if kernel == "linear":
        coef = estimator.coef_
        coef = coef.toarray() if sp.issparse(coef) else np.asarray(coef)
        solution["w"] = np.ravel(coef).astype(np.float64)
    fit = PeerFit(
        solution=solution,
        seconds=seconds,
        iterations=int(np.sum(getattr(estimator, "n_iter_", 0) or 0)),
        extra={"support": int(np.asarray(estimator.support_).size)},
    )
    return fit, estimator


def onedal_threads(threads: int) -> None:
    """Limit oneDAL's own thread pool (threadpoolctl does not reach it)."""
    try:
        import daal4py

        daal4py.daalinit(threads)
    except Exception:  # an older sklearnex without daal4py: its default stays
        return


def timed(function: Callable[[], Any]) -> tuple[Any, float]:
    """``(function(), wall seconds)``."""
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start


def as_int32(X: Any) -> Any:
    """CSR with 32-bit indices (libsvm's and oneDAL's), a dense array unchanged."""
    if not sp.issparse(X):
        return X
    X = sp.csr_matrix(X)
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X


def with_ones(X: Any) -> Any:
    """``[X, 1]``: the bias as a feature (sparse stays CSR)."""
    ones = np.ones((X.shape[0], 1))
    if sp.issparse(X):
        return as_int32(sp.hstack([X, sp.csr_matrix(ones)], format="csr"))
    return np.hstack([np.asarray(X, dtype=np.float64), ones])


def accuracy(predicted: np.ndarray, truth: np.ndarray) -> float:
    """Percent of equal labels."""
    return 100.0 * float(np.mean(np.asarray(predicted) == np.asarray(truth)))
