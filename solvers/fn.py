r"""Frisch-Newton back-end: an interior point for box LPs and separable QPs with equality rows.

``fn`` solves

.. math::

    \min_x \; c^\top x + \tfrac12 \sum_j h_j x_j^2 + \text{offset} \quad\text{s.t.}\quad
    A x = b, \quad \ell \le x \le u,

with :math:`h \ge 0` (``P`` diagonal; an LP has none) and two finite bounds on every column
that :math:`h` does not curve. That is the shape of the dual LP of least-absolute-deviation and
quantile regression (:class:`~optframe.models.LADRegression`, ``EmpiricalRisk(data,
Pinball(tau))`` without a penalty, ``form="dual"``): a box per sample and one row per
coefficient (plus the intercept row), so few rows and many columns. It is also the shape of the
ridge dual of every piecewise linear-quadratic loss (``EmpiricalRisk(data, loss,
penalty=L2())``, linear model, ``form="dual"``, and :class:`~optframe.models.RegularizedLAD`):
boxed multipliers, curved where the loss has quadratic pieces, and the free columns
:math:`z = X^\top v` with :math:`h = 1/\rho_2`, one row per feature. It is a matrix-layer
back-end written in NumPy/SciPy, with no solver library to install; it is never the reference
solver of a class.

Algorithm. Mehrotra's predictor-corrector primal-dual interior point on the problem shifted to
:math:`0 \le x - \ell \le u - \ell` (fixed columns, :math:`\ell_j = u_j`, are set aside), as in
Koenker and d'Orey's and Portnoy and Koenker's Frisch-Newton method for quantile regression
(quantreg's ``rq.fit.fnb``): each iteration factors the ``rows x rows`` normal matrix
:math:`A\Theta A^\top` once by a dense Cholesky (LAPACK) and solves it for the predictor and
the corrector; nothing of size ``n x n`` is formed. ``A`` is kept as a dense C-ordered array
when at least :data:`DENSE_FILL` of it is filled (the dual of a regression on dense data), so
:math:`A\Theta A^\top` is a BLAS ``syrk`` per block of columns; otherwise it stays sparse
(CSR), and :math:`A\Theta A^\top` is summed column by column by a compiled kernel
(:mod:`optframe.solvers._fn_sparse`; numba compiles it on the first sparse solve, once per
machine, in a few seconds, in :meth:`FnMatrixBackend.prepare`, which
:class:`~optframe.drivers.Direct` calls before its solve clock starts). The iteration is in
:mod:`optframe.solvers._fn_core`; a separable QP only adds :math:`h` to the diagonal that
:math:`\Theta` inverts. From :data:`~optframe.solvers._fn_core.COMPILED_FROM` columns on, the
iteration's work on the columns (distances, residuals, :math:`\Theta`, the bound, directions,
step lengths) runs as compiled loops (:mod:`optframe.solvers._fn_vectors`, also compiled in
``prepare``); below, as numpy array operations, so small problems and the demo compile
nothing. For an LP, then a *vertex polish*: the ``rows`` columns farthest inside
their box are taken as a basis, its duals solve :math:`A_B^\top y = c_B` and its primal vertex
:math:`A_B x_B = b - A_N x_N`; each replaces the interior point's when it is better (a higher
dual value, a feasible vertex with no higher objective, or one at the dual value). It is tried
at every iteration once the relative gap is below :data:`POLISH_FROM`, and the iteration stops
as soon as the vertex passes the stopping test (two iterations fewer on LAD), and once more at
the end. On LAD this gives the exact optimal vertex, so the coefficients read from the duals
are accurate to rounding (certified gaps of 1e-16 to 4e-12 on the LAD benchmark sets, against
HiGHS to 1e-9 relative in the tests). The start is the box midpoint moved toward
:math:`Ax = b`, or the unshifted zero when that is nearer (the LAD and quantile duals' own
feasible interior point, Koenker's start). Without rows, or with every variable fixed, the
solution is read off directly (``INFEASIBLE`` when fixed values break a row).

Options (``solver_options`` are checked by name; an unknown name gives an ERROR result that
names it):

==================  ======================================================================
``tol``             the stopping tolerance below (default :data:`DEFAULT_TOL`)
``time_limit``      checked before every iteration; past it the status is ``TIME_LIMIT``.
                    With a limit the solve runs in a child process that is killed if the
                    set-up, an iteration or the polish runs past the limit (see
                    :func:`optframe.solvers._common.run_stoppable`)
``threads``         no effect: the work is NumPy/BLAS, whose threads the environment sets
                    (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``)
``max_iter``        interior-point iterations (default :data:`DEFAULT_MAX_ITER`); reaching
                    it gives ``ITERATION_LIMIT``
``verbose``         one log line per iteration (objective, dual value, gap, residual)
``backoff``         (solver option) the fraction of the step to the boundary, default 0.99995
``polish``          (solver option) ``True`` (default) or ``False``: the vertex polish
``matrix``          (solver option) ``"auto"`` (default), ``"dense"`` or ``"sparse"``: how
                    ``A`` is held
==================  ======================================================================

Status. The iteration stops when the relative gap
:math:`(c^\top x - g(y)) / (1 + |c^\top x|)` and the row residual
:math:`\lVert b - Ax\rVert_\infty / (1 + \lVert b\rVert_\infty + \max_i \sum_j |a_{ij}| u_j)`
are both at most ``tol``; that is ``OPTIMAL`` in the sense of the other back-ends: the solver's
own claim, which optframe's certificate then proves or turns into ``CONVERGED``. A normal matrix
that cannot be factored even with a tiny ridge gives ``ERROR``. With every variable bounded the
LP is never unbounded; an infeasible one ends at the iteration limit with a row residual that
does not fall (the message gives it).

Bound: :math:`g(y) = b^\top y + \sum_j \min(d_j \ell_j, d_j u_j)` with
:math:`d = c - A^\top y`, the dual value of the box LP, a lower bound at *any* ``y`` (weak
duality needs no dual feasibility here), plus the offset.

Duals. The row duals are ``y`` of the Lagrangian :math:`c^\top x - y^\top(Ax - b) - \dots`, so
``dual[row] = d f*/d b_row``, the convention of :mod:`optframe.solvers._common` (HiGHS's own
sign); the LAD dual form reads its coefficients from them.

Scope. Only LPs and separable QPs whose rows are all equalities and whose variables have two
finite bounds unless the quadratic curves them, with at most :data:`MAX_ROWS` rows: the dense
``rows x rows`` Cholesky is what makes the method fast, and it is the wrong tool beyond that.
Any other problem (an inequality row, an off-diagonal ``P``, a free or half-bounded variable
without curvature, too many rows) gives an ERROR result that says why and names the back-ends
that take it (:meth:`FnMatrixBackend.refusal` says the same without solving).

References
----------
Koenker, R. and d'Orey, V. (1987, 1994). Computing regression quantiles. *Applied Statistics*.
Portnoy, S. and Koenker, R. (1997). The Gaussian hare and the Laplacian tortoise: computability
of squared-error versus absolute-error estimators. *Statistical Science* 12(4), 279-300.
Mehrotra, S. (1992). On the implementation of a primal-dual interior point method. *SIAM
Journal on Optimization* 2(4), 575-601.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar, Literal

import numpy as np
import scipy.sparse as sp

from optframe.backend import Backend, BackendResult, SolveOptions
from optframe.model import Formulation, MatrixProblem, ProblemClass
from optframe.registry import register_backend
from optframe.result import Status

from ._common import (
    Clock,
    error_result,
    matrix_raw_solution,
    out_of_time,
    stoppable,
    time_left,
)
from ._fn_core import COMPILED_FROM, BoxLP, Iterate, Stop, frisch_newton, polish
from ._fn_sparse import upper_normal_matrix
from ._fn_vectors import compile_column_work

__all__ = [
    "DEFAULT_MAX_ITER",
    "DEFAULT_TOL",
    "DENSE_FILL",
    "FN_STATUS",
    "MAX_ROWS",
    "POLISH_FROM",
    "FnMatrixBackend",
    "fn_settings",
]

#: More rows than this and the problem is out of scope (the normal matrix is ``rows x rows``).
MAX_ROWS = 5000
#: The fraction of ``A``'s entries from which it is held as a dense array.
DENSE_FILL = 0.2
#: Default stopping tolerance (relative gap and relative row residual).
DEFAULT_TOL = 1e-9
#: Default interior-point iteration limit: generous, as an iteration is one ``rows x rows``
#: factorization (badly scaled data need more: the 0.1-quantile of ``344_mv`` takes 123
#: iterations, 0.3 s; LAD on generated data 11 to 16).
DEFAULT_MAX_ITER = 300
#: The relative gap from which every iteration tries the vertex polish and stops when it closes.
POLISH_FROM = 1e-5
#: How the iteration stopped -> Status.
FN_STATUS: dict[Stop, Status] = {
    "optimal": Status.OPTIMAL,
    "iteration_limit": Status.ITERATION_LIMIT,
    "time_limit": Status.TIME_LIMIT,
    "numerical": Status.ERROR,
}
#: The solver options ``fn`` knows, with their defaults.
SOLVER_OPTIONS: dict[str, Any] = {"backoff": 0.99995, "polish": True, "matrix": "auto"}
MatrixKind = Literal["auto", "dense", "sparse"]
_OTHERS = "'highs' (the LP reference), 'clarabel', 'piqp', 'osqp' or 'scip'"


def fn_settings(options: SolveOptions) -> dict[str, Any]:
    """Map ``options`` to fn's settings (a new dict; ``solver_options`` applied last)."""
    settings: dict[str, Any] = {
        "tol": DEFAULT_TOL if options.tol is None else float(options.tol),
        "max_iter": DEFAULT_MAX_ITER if options.max_iter is None else int(options.max_iter),
        "verbose": bool(options.verbose),
        **SOLVER_OPTIONS,
    }
    settings.update(options.solver_options)
    return settings


def _invalid(settings: dict[str, Any], options: SolveOptions) -> str | None:
    """The ERROR message for unknown or bad ``solver_options``, or None."""
    unknown = sorted(str(key) for key in options.solver_options if key not in SOLVER_OPTIONS)
    if unknown:
        return (
            f"unknown solver option(s) {unknown} (fn's solver options are "
            f"{sorted(SOLVER_OPTIONS)}; tol, max_iter, time_limit and verbose are solve() "
            "arguments)"
        )
    if not 0.0 < float(settings["backoff"]) < 1.0:
        return f"solver option backoff={settings['backoff']!r} must lie in (0, 1)"
    if settings["matrix"] not in ("auto", "dense", "sparse"):
        return f"solver option matrix={settings['matrix']!r}: use 'auto', 'dense' or 'sparse'"
    if not isinstance(settings["polish"], bool):
        return f"solver option polish={settings['polish']!r} must be True or False"
    return None


def curvature(problem: MatrixProblem) -> np.ndarray | None:
    """The diagonal of a separable QP's ``P`` (None for an LP); ValueError if ``P`` is not one."""
    if problem.P is None or problem.P.nnz == 0:
        return None
    P = sp.coo_array(problem.P)
    off = P.row != P.col
    if np.any(P.data[off] != 0.0):
        raise ValueError(
            f"its P has {int(np.count_nonzero(P.data[off]))} off-diagonal entries (fn takes a "
            "separable quadratic only: a diagonal P)"
        )
    h = np.asarray(problem.P.diagonal(), dtype=np.float64)
    if np.any(h < 0.0) or not np.all(np.isfinite(h)):
        raise ValueError("its P has a negative or non-finite diagonal entry (not convex)")
    return h


def refusal(problem: Any) -> str | None:
    """Why ``problem`` is outside fn's scope (see the module docstring), or None."""
    if not isinstance(problem, MatrixProblem):
        return "fn takes matrix-layer problems only"
    if problem.problem_class not in (ProblemClass.LP, ProblemClass.QP):
        return f"fn solves LPs and separable QPs only; this is a {problem.problem_class.value}"
    why = []
    rl, ru = problem.row_lower, problem.row_upper
    if problem.n_rows > MAX_ROWS:
        why.append(f"it has {problem.n_rows} rows, more than fn's limit of {MAX_ROWS}")
    if not np.all((rl == ru) & np.isfinite(ru)):
        count = int(np.count_nonzero(~((rl == ru) & np.isfinite(ru))))
        why.append(f"{count} of its rows are inequalities (fn takes equality rows only)")
    try:
        h = curvature(problem)
    except ValueError as exc:
        why.append(str(exc))
        h = None
    flat = np.ones(problem.n_variables, dtype=bool) if h is None else h == 0.0
    unbounded = ~(np.isfinite(problem.lower) & np.isfinite(problem.upper)) & flat
    if np.any(unbounded):
        why.append(
            f"{int(np.count_nonzero(unbounded))} of its variables are free or bounded on one "
            "side only without a quadratic term (fn needs two finite bounds on every variable "
            "that P does not curve)"
        )
    if np.any(problem.lower > problem.upper):
        why.append("a variable's lower bound is above its upper bound")
    if not why:
        return None
    return (
        "this problem is not fn's shape (equality rows; a diagonal P; boxed variables, or "
        f"curved ones; at most {MAX_ROWS} rows): {'; '.join(why)}. Use {_OTHERS}"
    )


def _box_lp(
    problem: MatrixProblem, free: np.ndarray, kind: MatrixKind, h: np.ndarray | None
) -> tuple[BoxLP, np.ndarray]:
    """The shifted problem over the non-fixed columns ``free``, ``A`` dense or CSR.

    Also the shift (finite lower bounds, 0 where there is none): the problem's ``x`` is the
    shift plus the shifted problem's.
    """
    lower, upper = problem.lower, problem.upper
    shift = np.where(np.isfinite(lower), lower, 0.0)
    A = sp.csc_array(problem.A)
    b = problem.row_upper - np.asarray(A @ shift, dtype=np.float64)
    A = A[:, free] if free.size < problem.n_variables else A
    rows, cols = A.shape
    if kind == "auto":
        kind = "dense" if A.nnz >= DENSE_FILL * rows * cols else "sparse"
    matrix: Any = dense_rows(A) if kind == "dense" else sp.csr_array(A)
    c = problem.c[free].copy()
    if h is None:
        return BoxLP(matrix, b, c, upper[free] - lower[free], -lower[free]), shift
    kept = np.isfinite(lower[free])
    return BoxLP(
        matrix,
        b,
        c + h[free] * shift[free],
        upper[free] - shift[free],
        origin=None,
        h=h[free].copy(),
        lower=None if np.all(kept) else kept,
    ), shift


def dense_rows(A: sp.csc_array) -> np.ndarray:
    """``A`` as a C-ordered dense array: the leading columns that hold every row in one copy.

    Those columns' entries, in row order, are a block of ``A.data`` laid out column by column,
    whose transpose is the dense block: the ridge dual's ``[X, 1]' D`` at a million columns in
    one transposed copy, where CSC's ``toarray`` is Fortran-ordered and a C-ordered copy of it
    another pass over fresh memory (1.5 s in all). The other columns go through scipy.
    """
    rows, cols = A.shape
    full = np.diff(A.indptr) == rows
    lead = cols if full.all() else int(np.argmin(full))
    out = np.empty((rows, cols))
    if lead == 0 or not A.has_canonical_format:  # sorted, no duplicates: a full column is dense
        lead = 0
    else:
        out[:, :lead] = A.data[: A.indptr[lead]].reshape(lead, rows).T
    if lead < cols:
        out[:, lead:] = A[:, lead:].toarray()
    return out


def _message(point: Iterate, lp: BoxLP, kind: str) -> str:
    words = {
        "optimal": "gap and residual within tol",
        "iteration_limit": "iteration limit",
        "time_limit": "time limit",
        "numerical": "numerical failure",
    }[point.stop]
    text = (
        f"fn: {words} after {point.iterations} iterations ({kind} A, {lp.b.size} rows, "
        f"{lp.c.size} columns; row residual {point.residual:.3g})"
    )
    if point.note:
        text += f"; {point.note}"
    return text


def _trivial(
    formulation: Formulation, problem: MatrixProblem, seconds: float, h: np.ndarray | None
) -> BackendResult:
    """No rows (each variable at its own minimizer) or no free column (``x = l``)."""
    lower, upper, c = problem.lower, problem.upper, problem.c
    y = np.zeros(problem.n_rows)
    if problem.n_rows > 0:
        x = lower.astype(np.float64)
    elif h is None:
        x = np.where(c < 0, upper, lower)
    else:
        flat = h == 0.0
        x = np.clip(-c / np.where(flat, 1.0, h), lower, upper)
        x[flat] = np.where(c[flat] < 0, upper[flat], lower[flat])
    residual = np.abs(np.asarray(problem.A @ x) - problem.row_upper)
    scale = 1.0 + float(np.max(np.abs(problem.row_upper), initial=0.0))
    if np.any(residual > 1e-9 * scale):
        return BackendResult(
            Status.INFEASIBLE,
            None,
            seconds=seconds,
            message="fn: every variable is fixed and the rows do not hold at their values",
        )
    value = float(c @ x) + problem.offset
    if h is not None:
        value += 0.5 * float(h @ (x * x))
    return BackendResult(
        status=Status.OPTIMAL,
        values=matrix_raw_solution(formulation, x, y),
        objective=value,
        bound=value,
        seconds=seconds,
        message="fn: no rows or no free variable; solved without iterating",
    )


@register_backend
class FnMatrixBackend(Backend):
    """The Frisch-Newton interior point on a MatrixProblem with equality rows and boxes."""

    solver: ClassVar[str] = "fn"
    layer: ClassVar[str] = "matrix"
    supports: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP, ProblemClass.QP})
    duals: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP, ProblemClass.QP})
    requires: ClassVar[tuple[str, ...]] = ("scipy",)
    narrow: ClassVar[bool] = True
    #: The row limit (:data:`MAX_ROWS`), for callers that check the shape before building.
    max_rows: ClassVar[int] = MAX_ROWS

    @classmethod
    def refusal(cls, formulation: Formulation) -> str | None:
        """Why ``formulation`` is outside fn's scope, or None when fn takes it."""
        return refusal(formulation.problem)

    def prepare(self, formulation: Formulation) -> float:
        """Compile the kernels ``formulation`` will use (seconds spent; 0.0 when none).

        The column work from :data:`~optframe.solvers._fn_core.COMPILED_FROM` columns on, and
        the sparse normal matrix.
        """
        problem = formulation.problem
        if not isinstance(problem, MatrixProblem) or refusal(problem) is not None:
            return 0.0
        rows, cols = problem.A.shape
        if rows == 0:
            return 0.0
        columns, sparse = cols >= COMPILED_FROM, problem.A.nnz < DENSE_FILL * rows * cols
        if not (columns or sparse):
            return 0.0
        began = time.perf_counter()
        if columns:
            compile_column_work()
        if sparse:
            one = np.ones(1)
            upper_normal_matrix(np.array([0, 1], dtype=np.int64), np.zeros(1, dtype=np.int64),
                                one, one, 1)  # fmt: skip
        return time.perf_counter() - began

    def solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Solve here, or in a child process with a time limit (see the module notes)."""
        return stoppable(lambda: self._solve(formulation, options), options, "fn")

    def _solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Check the shape, shift the box, iterate, polish, and map back."""
        clock = Clock()
        settings = fn_settings(options)
        if message := _invalid(settings, options):
            return error_result(message, clock(), "fn")
        problem: MatrixProblem = formulation.problem
        if message := refusal(problem):
            return error_result(message, clock(), "fn")
        lower, upper = problem.lower, problem.upper
        free = np.flatnonzero(upper > lower)
        h = curvature(problem)
        if free.size == 0 or problem.n_rows == 0:
            return _trivial(formulation, problem, clock(), h)
        lp, shift = _box_lp(problem, free, settings["matrix"], h)
        polishes = settings["polish"] and h is None  # a QP's optimum is not a vertex
        kind = "dense" if lp.dense else "sparse"
        left = time_left(options, clock)
        if left is None:
            return out_of_time(clock, "fn")
        deadline = None
        if left.time_limit is not None:
            deadline = time.perf_counter() + left.time_limit
        log = None
        if settings["verbose"]:
            print(f"fn: {lp.b.size} rows, {lp.c.size} columns, {kind} A")
            print("iter  objective          dual value         rel. gap   residual")
            log = print
        point = frisch_newton(
            lp,
            tol=float(settings["tol"]),
            max_iter=int(settings["max_iter"]),
            deadline=deadline,
            backoff=float(settings["backoff"]),
            polish_from=POLISH_FROM if polishes else None,
            log=log,
        )
        if polishes and point.stop != "numerical" and not point.note:
            point = polish(lp, point)
        status = FN_STATUS[point.stop]
        message = _message(point, lp, kind)
        if log is not None:
            log(message)
        if status is Status.ERROR:
            return BackendResult(
                status, None, iterations=point.iterations, seconds=clock(), message=message
            )
        x = shift.astype(np.float64, copy=True)
        x[free] += point.x
        constant = float(problem.c @ shift) + problem.offset
        if h is not None:
            constant += 0.5 * float(h @ (shift * shift))
        objective = float(point.objective) + constant
        bound = float(point.bound) + constant
        y = np.asarray(point.y, dtype=np.float64)
        return BackendResult(
            status=status,
            values=matrix_raw_solution(formulation, x, y),
            objective=objective,
            bound=bound,
            iterations=point.iterations,
            seconds=clock(),
            message=message,
        )
