r"""Dual coordinate descent (LIBLINEAR's dual solver) for linear box duals without intercept.

The driver solves any model that offers a :class:`~optframe.capabilities.LinearBoxDual` (possibly
with fixed samples): the no-intercept linear SVM (hinge loss), the regularized LAD, and the
reduced problems of safe screening (:mod:`optframe.screening`); a
:class:`~optframe.capabilities.PiecewiseBoxDual` (any PLQ loss, ReHLine's steps); and an
:class:`~optframe.capabilities.EntropyBoxDual` (L2-regularized logistic regression, the Newton
steps of Yu, Huang and Lin 2011, LIBLINEAR ``-s 7``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.backend import SolveOptions
from optframe.capabilities import EntropyBoxDual, LinearBoxDual, PiecewiseBoxDual, Structure
from optframe.drivers import dcd_core as core
from optframe.drivers import dcd_logistic_core as logistic_core
from optframe.drivers import dcd_pieces_core as pieces_core
from optframe.drivers._checks import set_count, set_real
from optframe.drivers.base import Driver, RunContext, clock_timings, driver_result
from optframe.drivers.pacing import Pacer
from optframe.jit import compile_kernels, needs_of
from optframe.model import Model
from optframe.registry import register_driver
from optframe.result import IterationRecord, Result, Status


def as_csr(Z: Any) -> tuple[NDArray, NDArray, NDArray]:
    """``(indptr, indices, data)`` of ``Z`` in CSR form: unsigned indices, sorted, float64 values.

    ``indptr`` is ``uint64`` and ``indices`` ``uint32`` (``uint64`` from 2**32 columns), the
    types the kernel is compiled for (see :mod:`optframe.drivers.dcd_core`). A dense
    C-contiguous array is viewed as CSR without copying its values (``data`` is its buffer).
    """
    if not sp.issparse(Z):
        dense = np.ascontiguousarray(Z, dtype=np.float64)
        n, m = dense.shape
        indptr = np.arange(n + 1, dtype=np.uint64) * np.uint64(m)
        return indptr, np.tile(np.arange(m, dtype=_column_type(m)), n), dense.reshape(-1)
    csr = sp.csr_array(Z, dtype=np.float64)
    if not csr.has_sorted_indices:
        csr = csr.copy()
        csr.sort_indices()
    columns = csr.indices.astype(_column_type(csr.shape[1]))
    return csr.indptr.astype(np.uint64), columns, csr.data


def _column_type(m: int) -> type:
    return np.uint32 if m < 2**32 else np.uint64


# The last matrices converted for the kernel, keyed by id() (the entry holds Z, so the id stays
# valid): along a path every reduced problem shares the model's Z, and the CSR view and squared
# row norms are O(nnz) passes that would otherwise be repeated at every value.
_PREPARED: dict[int, tuple[Any, tuple[NDArray, NDArray, NDArray], NDArray]] = {}
_PREPARED_SIZE = 2


def _prepared(Z: Any) -> tuple[tuple[NDArray, NDArray, NDArray], NDArray[np.float64]]:
    """``(as_csr(Z), squared row norms)``, cached for the last few matrices."""
    entry = _PREPARED.get(id(Z))
    if entry is not None and entry[0] is Z:
        return entry[1], entry[2]
    csr = as_csr(Z)
    qd = core.squared_row_norms(csr[0], csr[2])
    if len(_PREPARED) >= _PREPARED_SIZE:
        _PREPARED.pop(next(iter(_PREPARED)))
    _PREPARED[id(Z)] = (Z, csr, qd)
    return csr, qd


@register_driver
@dataclass(frozen=True, eq=False)
class DCD(Driver):
    r"""Dual coordinate descent with random permutations and shrinking (Hsieh et al. 2008).

    Solves :math:`\min_{l \le \alpha \le u} \tfrac12\lVert Z^\top\alpha\rVert^2 - \bar y^\top\alpha`
    over the free coordinates, keeping :math:`w = Z^\top\alpha` (fixed samples included), one
    exact coordinate step at a time in a random order each epoch; variables stuck at a bound are
    shrunk as in LIBLINEAR. Every ``check_every`` epochs, and when the projected-gradient range
    falls below ``pg_tol``, the driver computes the duality gap :math:`P(w) - D(\alpha)`; it stops
    with status OPTIMAL when the gap is at most ``tol * max(1, |P|)``. A range below ``pg_tol``
    without the gap closing divides ``pg_tol`` by 10.

    Parameters
    ----------
    tol : float
        Relative duality gap that proves optimality (``solve(tol=...)`` overrides it).
    pg_tol : float
        Initial projected-gradient tolerance (LIBLINEAR's ``eps``). The default, 1e-3, is where
        the certificate's gap of 1e-6 first closed on ijcnn1 (91,701 rows, bias as a feature)
        and a9a, and one step short of it on w8a; starting at LIBLINEAR's 0.1 and dividing took
        2.2x the time on ijcnn1 (each new tolerance starts shrinking again from a full pass), 1.3x
        on a9a and 1.1x on w8a.
    max_epochs : int
        Epochs over the free variables (``solve(max_iter=...)`` overrides it).
    shrinking : bool
        LIBLINEAR's shrinking.
    seed : int
        Seed of the random permutations.
    warm_start : array (n,), optional
        A starting :math:`\alpha` (clipped to the box; fixed entries are overwritten).
    check_every : int
        Epochs between history records, time-limit and callback checks.

    Notes
    -----
    ``Result.objective`` is the model's objective at the dual's ``recover(alpha)``;
    ``Result.bound`` is :math:`D(\alpha)`, a proven lower bound since :math:`\alpha` is in the
    box. Cost per epoch: O(nnz of the free rows); memory O(nnz(Z)) (a CSR copy). History extras:
    ``gap`` (absolute, at checks where it was computed, else NaN), ``pg_range``, ``active``.
    """

    name: ClassVar[str] = "dcd"
    needs: ClassVar[tuple[type[Structure], ...]] = (LinearBoxDual,)

    tol: float = 1e-6
    pg_tol: float = 1e-3
    max_epochs: int = 100_000
    shrinking: bool = True
    seed: int = 0
    warm_start: NDArray[np.float64] | None = field(default=None, repr=False)
    check_every: int = 50

    def __post_init__(self) -> None:
        set_real(self, "tol", "DCD")
        set_real(self, "pg_tol", "DCD")
        set_count(self, "max_epochs", "DCD")
        set_count(self, "check_every", "DCD")

    def gap_tolerance(self, options: SolveOptions) -> float:
        """``gap_tol``, else ``tol`` (the relative duality gap this driver stops at)."""
        if options.gap_tol is not None:
            return float(options.gap_tol)
        return self.common_options(options, tol=self.tol, max_iter=self.max_epochs).tol

    def missing(self, model: Model) -> list[str]:
        """Nothing if ``model`` offers one of the three box duals, else their refusals."""
        reasons = []
        for kind in (LinearBoxDual, PiecewiseBoxDual, EntropyBoxDual):
            reason = model.structure_refusal(kind)
            if reason is None:
                return []
            reasons.append(f"{kind.__name__} ({reason})")
        return [" or ".join(reasons)]

    def run(self, model: Model, context: RunContext) -> Result:
        """Solve the model's box dual by coordinate descent; certify with the duality gap.

        A :class:`LinearBoxDual` (one variable per sample) is preferred; otherwise the model's
        :class:`PiecewiseBoxDual` (one variable per loss piece), or its :class:`EntropyBoxDual`
        (the logistic loss: Newton steps per coordinate).
        """
        options = self.common_options(context.options, tol=self.tol, max_iter=self.max_epochs)
        compiled = compile_kernels(self, options.verbose, needs_of(model, self))  # before timing
        start = time.perf_counter()
        if model.structure_refusal(LinearBoxDual) is None:
            descent = _box_descent(model.structure(LinearBoxDual), self)
        elif model.structure_refusal(PiecewiseBoxDual) is None:
            descent = _piece_descent(model.structure(PiecewiseBoxDual), self)
        else:
            descent = _entropy_descent(model.structure(EntropyBoxDual), self)
        tol, max_epochs = options.tol, options.max_iter
        built = time.perf_counter()

        history: list[IterationRecord] = []
        epochs, eps, status = 0, float(self.pg_tol), Status.ITERATION_LIMIT
        gap = math.inf
        pacer = Pacer(start, options.time_limit, probe=1)  # an epoch is a pass over the data
        if pacer.expired():  # the set-up used the time: no epoch
            status = Status.TIME_LIMIT
        while epochs < max_epochs and status is not Status.TIME_LIMIT:
            budget = pacer.budget(min(self.check_every, max_epochs - epochs))
            code, done, pg_range = descent.epochs(budget, eps)
            pacer.done(int(done))
            epochs += int(done)
            # the gap at every check (a pass over the data every check_every epochs): on
            # ill-conditioned data it closes long before the projected gradients settle
            primal = descent.primal()
            bound = descent.bound()
            gap = primal - bound
            record = IterationRecord(
                iteration=epochs,
                seconds=time.perf_counter() - start,
                objective=primal,
                bound=bound,
                extras={"gap": gap, "pg_range": float(pg_range), "active": descent.active()},
            )
            history.append(record)
            if gap <= tol * max(1.0, abs(primal)):
                gap = descent.exact_gap()
                if gap <= tol * max(1.0, abs(primal)):  # closed at the exact w = Z'alpha too
                    status = Status.OPTIMAL
                    break
            if code == 1:
                if eps < 1e-14:
                    status = Status.CONVERGED
                    break
                eps /= 10.0
                descent.reset()
            if context.callback is not None and context.callback(record):
                status = Status.CONVERGED
                break
            if pacer.expired():
                status = Status.TIME_LIMIT
                break
        solved = time.perf_counter()
        solution, bound = descent.finish()
        objective = model.objective(solution)
        if status is Status.OPTIMAL and objective - bound > tol * max(1.0, abs(objective)):
            status = Status.CONVERGED  # the incremental w drifted: the exact gap did not close
        return driver_result(
            self, model, status, solution,
            objective=objective, bound=bound, iterations=epochs, history=history,
            timings=clock_timings(start, built, solved, compile_seconds=compiled),
            stats={"epochs": epochs, "pg_tol": eps, "free": descent.size, "gap": gap,
                   "dual": descent.kind},
            backend="numba",
        )  # fmt: skip


@dataclass
class _Descent:
    """What DCD's epoch loop asks of a dual: its epochs, values, exact gap, reset and result."""

    kind: str
    size: int
    epochs: Callable[[int, float], tuple[int, int, float]]
    primal: Callable[[], float]  # P at the incremental w
    bound: Callable[[], float]  # D at alpha with the incremental w
    exact_gap: Callable[[], float]  # w recomputed from alpha, then P - D
    reset: Callable[[], None]  # every variable active again, shrinking thresholds forgotten
    active: Callable[[], int]
    finish: Callable[[], tuple[dict[str, Any], float]]  # (solution, D at the exact w)


def _box_descent(dual: LinearBoxDual, driver: DCD) -> _Descent:
    """The loop's view of a :class:`LinearBoxDual` (one variable per sample)."""
    (indptr, indices, data), qd = _prepared(dual.Z)
    lower = np.ascontiguousarray(dual.lower, dtype=np.float64)
    upper = np.ascontiguousarray(dual.upper, dtype=np.float64)
    target = np.ascontiguousarray(dual.target, dtype=np.float64)
    alpha = dual.start_point(driver.warm_start)
    free = lower < upper
    if dual.fixed is not None:
        free &= ~dual.fixed
    index = np.flatnonzero(free).astype(np.uint64)
    w = np.asarray(dual.Z.T @ alpha, dtype=np.float64).reshape(-1)
    state = np.array([index.size, math.inf, -math.inf])
    rng = core.rng_state(driver.seed)

    def epochs(budget: int, eps: float) -> tuple[int, int, float]:
        return core.run_epochs(
            indptr, indices, data, target, lower, upper, qd, alpha, w, index, state,
            budget, eps, driver.shrinking, rng,
        )  # fmt: skip

    def exact_gap() -> float:
        w[:] = np.asarray(dual.Z.T @ alpha, dtype=np.float64).reshape(-1)
        return dual.primal_value(w) - float(target @ alpha) + 0.5 * float(w @ w)

    def reset() -> None:
        state[:] = (index.size, math.inf, -math.inf)

    def finish() -> tuple[dict[str, Any], float]:
        solution = dual.recover(alpha.copy())
        # D(alpha) from the exact w = Z'alpha of the solution (one pass over Z saved)
        exact_w = np.asarray(solution[dual.primal_key], dtype=np.float64).reshape(-1)
        return solution, float(target @ alpha) - 0.5 * float(exact_w @ exact_w)

    return _Descent(
        kind="LinearBoxDual",
        size=int(index.size),
        epochs=epochs,
        primal=lambda: dual.primal_value(w),
        bound=lambda: float(target @ alpha) - 0.5 * float(w @ w),
        exact_gap=exact_gap,
        reset=reset,
        active=lambda: int(state[0]),
        finish=finish,
    )


#: The dense rows argument of the piece kernel when the rows are CSR (one row: unused).
_NO_ROWS = np.zeros((1, 1))


def _piece_descent(dual: PiecewiseBoxDual, driver: DCD) -> _Descent:
    """The loop's view of a :class:`PiecewiseBoxDual` (one variable per loss piece)."""
    indptr, indices, data = as_csr(dual.X)
    dense = _NO_ROWS if sp.issparse(dual.X) else data.reshape(dual.X.shape)
    sample = np.asarray(dual.sample, dtype=np.int64)
    first = np.flatnonzero(np.r_[True, sample[1:] != sample[:-1]])  # each sample's first piece
    rows = sample[first].astype(np.uint64)
    starts = np.append(first, sample.size).astype(np.uint64)
    coef = np.ascontiguousarray(dual.coef, dtype=np.float64)
    target = np.ascontiguousarray(dual.target, dtype=np.float64)
    upper = np.ascontiguousarray(dual.upper, dtype=np.float64)
    diagonal = np.ascontiguousarray(dual.diagonal, dtype=np.float64)
    norms = pieces_core.row_norms(dense, indptr, data)
    if driver.warm_start is None:
        alpha = np.zeros(dual.size)
    else:
        alpha = np.clip(np.array(driver.warm_start, dtype=np.float64).reshape(-1), 0.0, upper)
    index = np.arange(rows.size, dtype=np.uint64)
    w = dual.weights(alpha)
    state = np.array([index.size, math.inf, -math.inf])
    rng = core.rng_state(driver.seed)

    def epochs(budget: int, eps: float) -> tuple[int, int, float]:
        return pieces_core.run_piece_epochs(
            dense, indptr, indices, data, rows, starts, coef, target, upper, diagonal, norms,
            alpha, w, index, state, budget, eps, driver.shrinking, rng,
        )  # fmt: skip

    def exact_gap() -> float:
        w[:] = dual.weights(alpha)
        return dual.primal_value(w) - dual.dual_value(alpha, w)

    def reset() -> None:
        state[:] = (index.size, math.inf, -math.inf)

    def finish() -> tuple[dict[str, Any], float]:
        return dual.recover(alpha.copy()), dual.dual_value(alpha)

    return _Descent(
        kind="PiecewiseBoxDual",
        size=dual.size,
        epochs=epochs,
        primal=lambda: dual.primal_value(w),
        bound=lambda: dual.dual_value(alpha, w),
        exact_gap=exact_gap,
        reset=reset,
        active=lambda: int(state[0]),
        finish=finish,
    )


def _entropy_descent(dual: EntropyBoxDual, driver: DCD) -> _Descent:
    """The loop's view of an :class:`EntropyBoxDual` (logistic: one variable per sample)."""
    indptr, indices, data = as_csr(dual.X)
    dense = _NO_ROWS if sp.issparse(dual.X) else data.reshape(dual.X.shape)
    coef = np.ascontiguousarray(dual.coef, dtype=np.float64)
    upper = np.ascontiguousarray(dual.upper, dtype=np.float64)
    norms = pieces_core.row_norms(dense, indptr, data)
    alpha, comp = logistic_core.start_point(upper, driver.warm_start)
    index = np.flatnonzero(upper > 0).astype(np.uint64)
    w = dual.weights(alpha)
    state = np.array([1e-2, 1e-8])  # the inner tolerance and its floor
    rng = core.rng_state(driver.seed)

    def epochs(budget: int, eps: float) -> tuple[int, int, float]:
        state[logistic_core.INNER_EPS_MIN] = min(1e-8, eps)
        return logistic_core.run_entropy_epochs(
            dense, indptr, indices, data, coef, upper, norms, alpha, comp, w, index, state,
            budget, eps, rng,
        )  # fmt: skip

    def bound(at: NDArray[np.float64]) -> float:
        return -0.5 * float(at @ at) - logistic_core.entropy_sum(alpha, comp, upper)

    def exact_gap() -> float:
        w[:] = dual.weights(alpha)
        return dual.primal_value(w) - bound(w)

    def finish() -> tuple[dict[str, Any], float]:
        return dual.recover(alpha.copy()), bound(dual.weights(alpha))

    return _Descent(
        kind="EntropyBoxDual",
        size=int(index.size),
        epochs=epochs,
        primal=lambda: dual.primal_value(w),
        bound=lambda: bound(w),
        exact_gap=exact_gap,
        reset=lambda: None,
        active=lambda: int(index.size),
        finish=finish,
    )
