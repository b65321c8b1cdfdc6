r"""Sequential minimal optimization for duals with a box, one equality row and kinks.

The driver solves any model that offers ``smo_dual()`` (a :class:`BoxQPDual`) and
``smo_solution(x, gradient)`` (the model's solution from a dual point), for example the WeightedSVM
dual and the PULearning reduced dual (USMO, with the stopping rule completed as in notes/usmo.md).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.drivers import smo_core as core
from optframe.drivers.base import Driver, RunContext
from optframe.errors import ConvergenceWarning, IncompatibleDriver, ModelError
from optframe.kernels import RBF, Kernel, Linear, Polynomial
from optframe.model import Model
from optframe.registry import register_driver
from optframe.result import IterationRecord, Result, Status, Timings


@dataclass(frozen=True, eq=False)
class BoxQPDual:
    r"""A dual for SMO: a kernel quadratic, a box, one equality row and one kink per variable.

    .. math::

        \min_x \; \Phi(x) = \tfrac12 x^\top Q x + c^\top x + \sum_i h_i(x_i)
        \quad\text{s.t.}\quad a^\top x = b, \quad 0 \le x_i \le u_i,

    with :math:`Q_{ij} = a_i a_j k(z_i, z_j)`, :math:`a_i = \pm 1` and
    :math:`h_i(s) = s^-_i \min(s, \kappa_i) + s^+_i \max(s - \kappa_i, 0)` (convex:
    :math:`s^-_i \le s^+_i`; no kink when they are equal). The model's optimum is
    :math:`-\min \Phi + \text{bound\_offset}`, so :math:`-\Phi(x) + \text{bound\_offset}` is a lower
    bound for every feasible :math:`x`.

    Parameters
    ----------
    X : array (n, d) or sparse
        The points :math:`z_i` defining :math:`Q` (sparse rows stay sparse).
    kernel : Kernel
        :class:`~optframe.kernels.Linear`, :class:`~optframe.kernels.RBF` or
        :class:`~optframe.kernels.Polynomial`.
    sign, linear, upper : arrays (n,)
        :math:`a`, :math:`c`, :math:`u`.
    rhs : float or None
        :math:`b`; ``None`` when there is no equality row (not supported by SMO).
    kink, slope_below, slope_above : arrays (n,)
        :math:`\kappa`, :math:`s^-`, :math:`s^+`.
    bound_offset : float
        See above.
    start : array (n,)
        A feasible starting point.
    """

    X: Any
    kernel: Kernel
    sign: NDArray[np.float64]
    linear: NDArray[np.float64]
    upper: NDArray[np.float64]
    rhs: float | None
    kink: NDArray[np.float64]
    slope_below: NDArray[np.float64]
    slope_above: NDArray[np.float64]
    bound_offset: float = 0.0
    start: NDArray[np.float64] | None = None

    @property
    def n(self) -> int:
        """Number of variables."""
        return int(self.sign.shape[0])


def _kernel_code(kernel: Kernel) -> tuple[int, float, float, float]:
    if isinstance(kernel, Linear):
        return 0, 0.0, 0.0, 1.0
    if isinstance(kernel, RBF):
        return 1, float(kernel.gamma), 0.0, 1.0
    if isinstance(kernel, Polynomial):
        return 2, float(kernel.gamma), float(kernel.coef0), float(kernel.degree)
    raise IncompatibleDriver(f"SMO supports the Linear, RBF and Polynomial kernels; got {kernel!r}")


def points(X: Any) -> tuple[Any, tuple]:
    """``X`` as float64 (sparse stays CSR), and the tuple the numba core reads it through.

    Sparse rows go as CSR arrays (``fill_row`` then costs the non-zeros); dense rows as one
    C-contiguous array.
    """
    if sp.issparse(X):
        X = sp.csr_array(X, dtype=np.float64)
        X.sort_indices()
        d = X.shape[1]
        Z = (
            np.empty((0, d)),
            X.indptr.astype(np.int64),
            X.indices.astype(np.int64),
            np.ascontiguousarray(X.data, dtype=np.float64),
            np.zeros(d),
        )
        return X, Z
    X = np.ascontiguousarray(X, dtype=np.float64)
    empty_int = np.empty(0, dtype=np.int64)
    return X, (X, empty_int, empty_int, np.empty(0), np.zeros(X.shape[1]))


def _initial_gradient(
    kernel: Kernel, X: NDArray, a: NDArray, c: NDArray, x: NDArray
) -> NDArray[np.float64]:
    """G = Qx + c by blocks of kernel rows (BLAS), never more than 2^22 kernel values at once."""
    G = c.copy()
    support = np.flatnonzero(x)
    if support.size == 0:
        return G
    v, Z = a[support] * x[support], X[support]
    step = max(1, (1 << 22) // support.size)
    for start in range(0, X.shape[0], step):
        stop = start + step
        G[start:stop] += a[start:stop] * (kernel(X[start:stop], Z) @ v)
    return G


def _check_feasible(dual: BoxQPDual, x: NDArray[np.float64], what: str) -> None:
    if x.shape != (dual.n,) or not np.all(np.isfinite(x)):
        raise ModelError(f"SMO: {what} must be a finite array of shape ({dual.n},)")
    scale = max(1.0, float(np.max(dual.upper, initial=0.0)))
    if np.any(x < -1e-12 * scale) or np.any(x > dual.upper + 1e-12 * scale):
        raise ModelError(f"SMO: {what} leaves the box 0 <= x <= upper")
    assert dual.rhs is not None
    residual = abs(float(dual.sign @ x) - dual.rhs)
    if residual > 1e-9 * max(1.0, abs(dual.rhs), float(np.abs(x).sum())):
        raise ModelError(f"SMO: {what} violates the equality row by {residual:.3g}")


@register_driver
@dataclass(frozen=True, eq=False)
class SMO(Driver):
    r"""SMO for :class:`BoxQPDual` problems (WeightedSVM's dual, PULearning's reduced dual).

    Each step picks a pair (i, j), moves :math:`x_i \mathrel{+}= a_i t`,
    :math:`x_j \mathrel{-}= a_j t` by the exact minimizer of the 1-D convex piecewise quadratic
    (for PU these are the paper's four cases, with the kinks as breakpoints and :math:`\eta = 0`
    handled by endpoints), snaps values within ``1e-12 * u`` of :math:`\{0, \kappa, u\}` onto them,
    and updates :math:`G = Qx + c` with two kernel rows. It stops when
    :math:`\max_i \mathrm{up}_i - \min_j \mathrm{low}_j \le` ``tol`` on all variables (freshly
    recomputed after shrinking): the complete rule, which for PU includes the condition (g4) that
    the paper omits.

    Parameters
    ----------
    tol : float
        :math:`\tau` of the stopping rule (LIBSVM's ``eps``; the USMO code's ``2 * tol``).
    max_iter : int, optional
        Pair steps (default ``max(10^6, 100 n)``).
    working_set : {"second_order", "mvp"}
        Second-order selection (Fan, Chen and Lin 2005; LIBSVM) or the maximal violating pair.
    stopping : {"complete", "paper"}
        ``"paper"`` reproduces USMO's rule (g1)-(g3) (its pairs only): it can stop early.
    shrinking : bool
        LIBSVM-style shrinking of variables stuck at a bound (every ``min(n, 1000)`` steps). Off
        by default: without LIBSVM's running sum over the variables at their upper bound, the
        gradient reconstruction at the end costs one kernel row per support vector, which
        outweighed the savings in every case measured (a9a, 12,000 rows, RBF: 9,246 kernel rows
        and 26.3 s with shrinking, 5,347 rows and 18.7 s without, same 3,248 steps).
    cache_bytes : int
        Memory budget of the kernel-row LRU cache (full rows of n floats; at least two rows).
        When n rows fit, the whole kernel matrix ends up cached.
    warm_start : array, optional
        A feasible dual point to start from (default: the model's ``start``).
    check_every : int
        Steps between history records, time-limit and callback checks.

    Notes
    -----
    ``Result.objective`` is the model's objective at the recovered solution; ``Result.bound`` is
    :math:`-\Phi(x) + \text{offset}` at the final (feasible) dual point, a proven lower bound;
    the status is CONVERGED when the stopping rule is met (the gap says how close). History
    extras: ``violation`` (the gap of the rule), ``dual_objective`` (tracked incrementally from
    the exact pair decreases), ``active`` (unshrunk variables), ``kernel_rows`` (rows computed so
    far); a record's ``objective`` is the model's ``smo_objective`` (O(n) from the gradient) when
    no variable is shrunk, else NaN. A step that cannot decrease the dual in floating point ends
    the run (``stats["stalled"]``, a ConvergenceWarning).

    Cost: the starting gradient takes one pass of kernel blocks over the start's support (BLAS);
    each step O(n) work plus at most two kernel rows (O(n d) each on a cache miss). Memory:
    O(n d) for the data and the vectors plus ``cache_bytes``; no n x n matrix unless it fits the
    budget. Sparse rows stay sparse (CSR): a kernel row costs the non-zeros.

    References
    ----------
    R.-E. Fan, P.-H. Chen, C.-J. Lin, "Working set selection using second order information for
    training support vector machines", JMLR 6 (2005). E. Sansone, F. G. B. De Natale, Z.-H. Zhou,
    "Efficient training for positive unlabeled learning", IEEE TPAMI 2019 (USMO), with the fixes
    of notes/usmo.md.
    """

    name: ClassVar[str] = "smo"
    requires: ClassVar[tuple[str, ...]] = ("smo_dual", "smo_solution")

    tol: float = 1e-3
    max_iter: int | None = None
    working_set: str = "second_order"
    stopping: str = "complete"
    shrinking: bool = False
    cache_bytes: int = 256 * 1024**2
    warm_start: NDArray[np.float64] | None = field(default=None, repr=False)
    check_every: int = 2000

    def __post_init__(self) -> None:
        if not self.tol > 0:
            raise ModelError(f"SMO: tol must be > 0; got {self.tol}")
        if self.working_set not in ("second_order", "mvp"):
            raise ModelError(
                f"SMO: working_set must be 'second_order' or 'mvp'; got {self.working_set!r}"
            )
        if self.stopping not in ("complete", "paper"):
            raise ModelError(f"SMO: stopping must be 'complete' or 'paper'; got {self.stopping!r}")
        if self.check_every < 1:
            raise ModelError("SMO: check_every must be >= 1")

    def run(self, model: Model, context: RunContext) -> Result:
        """Solve the model's dual by SMO and return the model's solution, objective and bound."""
        start = time.perf_counter()
        m: Any = model
        offered = m.smo_dual()
        dual = offered if isinstance(offered, BoxQPDual) else BoxQPDual(**offered)
        if dual.rhs is None:
            raise IncompatibleDriver(
                f"SMO needs a dual with one equality row; {model.name} has none here "
                "(for WeightedSVM: fit_intercept=False)"
            )
        options = context.options
        tol = self.tol if options.tol is None else options.tol
        n = dual.n
        max_iter = options.max_iter or self.max_iter or max(10**6, 100 * n)
        kind, gamma, coef0, degree = _kernel_code(dual.kernel)
        X, Z = points(dual.X)
        sqn = np.ascontiguousarray(Linear().diagonal(X), dtype=np.float64)  # squared norms
        diag = np.asarray(dual.kernel.diagonal(X), dtype=np.float64)
        arrays = [
            np.ascontiguousarray(v, dtype=np.float64)
            for v in (
                dual.sign,
                dual.linear,
                dual.upper,
                dual.kink,
                dual.slope_below,
                dual.slope_above,
            )
        ]
        a, c, u, kink, sb, sa = arrays
        x0 = self.warm_start if self.warm_start is not None else dual.start
        if x0 is None:
            raise ModelError(f"SMO: {model.name} gives no feasible start; pass warm_start=")
        x = np.array(x0, dtype=np.float64).reshape(-1)
        _check_feasible(dual, x, "the warm start" if self.warm_start is not None else "start")
        x = np.clip(x, 0.0, u)
        slots = int(min(n, max(2, self.cache_bytes // (8 * max(n, 1)))))
        rows = np.empty((slots, n))
        slot_of = np.full(n, -1, dtype=np.int64)
        owner = np.full(slots, -1, dtype=np.int64)
        stamp = np.zeros(slots, dtype=np.int64)
        counters = np.zeros(5, dtype=np.int64)
        kernel_args = (Z, sqn, kind, gamma, coef0, degree)
        cache_args = (rows, slot_of, owner, stamp, counters)
        G = _initial_gradient(dual.kernel, X, a, c, x)
        active = np.ones(n, dtype=np.bool_)
        phi = core.dual_value(x, G, c, kink, sb, sa)
        built = time.perf_counter()

        history: list[IterationRecord] = []
        steps, status, gap = 0, Status.ITERATION_LIMIT, math.inf
        stalled = False
        paper = self.stopping == "paper"
        second = self.working_set == "second_order"
        shrink_every = min(n, 1000)
        while True:
            budget = min(self.check_every, max_iter - steps)
            if budget <= 0:
                break
            code, done, gap, dphi = core.run_chunk(
                Z, sqn, diag, kind, gamma, coef0, degree, a, c, u, kink, sb, sa,
                x, G, active, *cache_args, float(tol), int(budget), second, paper,
                self.shrinking, shrink_every, 1e-12,
            )  # fmt: skip
            steps += int(done)
            phi += dphi
            record = self._record(m, dual, x, G, active, steps, start, gap, phi, counters)
            history.append(record)
            if code == 1:
                status = Status.CONVERGED
                break
            if code == 2:
                status, stalled = Status.CONVERGED, True
                break
            if context.callback is not None and context.callback(record):
                status = Status.CONVERGED
                break
            if options.time_limit is not None and time.perf_counter() - start >= options.time_limit:
                status = Status.TIME_LIMIT
                break
        if not active.all():
            core.reconstruct(*kernel_args, a, c, x, G, active, *cache_args)
            active[:] = True
        final_gap, _, _ = core.violation(a, x, G, u, kink, sb, sa, active, False)
        if stalled:
            warnings.warn(
                f"SMO stalled (no pair step decreases the dual) with violation {final_gap:.3g} "
                f"> tol {tol:g}",
                ConvergenceWarning,
                stacklevel=2,
            )
        solved = time.perf_counter()
        solution = m.smo_solution(x.copy(), G.copy())
        phi_exact = core.dual_value(x, G, c, kink, sb, sa)
        bound = -phi_exact + dual.bound_offset
        objective = model.objective(solution)
        end = time.perf_counter()
        stats = {
            "violation": float(final_gap),
            "paper_violation": float(core.violation(a, x, G, u, kink, sb, sa, active, True)[0]),
            "dual_objective": bound,
            "steps": steps,
            "kernel_rows": int(counters[core.ROWS]),
            "cache_rows": slots,
            "cache_bytes": slots * n * 8,
            "stalled": stalled,
            "equality_residual": abs(float(a @ x) - float(dual.rhs)),
        }
        return Result(
            status=status,
            objective=objective,
            bound=bound,
            solution=solution,
            iterations=steps,
            history=tuple(history),
            timings=Timings(build=built - start, solve=solved - built, total=end - start),
            stats=stats,
            model=model.name,
            driver=self.name,
            backend="numba",
            source=model,
        )

    def _record(self, model, dual, x, G, active, steps, start, gap, phi, counters):
        all_active = bool(active.all())
        objective = math.nan
        if all_active and hasattr(model, "smo_objective"):
            objective = float(model.smo_objective(x, G))
        return IterationRecord(
            iteration=steps,
            seconds=time.perf_counter() - start,
            objective=objective,
            bound=-phi + dual.bound_offset,
            extras={
                "violation": float(gap),
                "dual_objective": -phi + dual.bound_offset,
                "active": int(active.sum()),
                "kernel_rows": int(counters[core.ROWS]),
            },
        )
