r"""A proven lower bound for any LP or convex QP from any dual values (Neumaier and Shcherbina).

For the :class:`~optframe.model.MatrixProblem`

.. math::

    \min_x \; f(x) = \tfrac12 x^\top P x + c^\top x + \text{offset}
    \quad\text{s.t.}\quad r_\ell \le A x \le r_u, \quad \ell \le x \le u,

take any point :math:`\bar x` and any row multipliers :math:`y` (a solver's duals, exact or
not). Split :math:`P = Q + D` with :math:`D = \operatorname{diag}(\delta) \succeq 0` kept as
curvature and :math:`Q \succeq 0` linearized at :math:`\bar x` (convexity: :math:`\tfrac12
x^\top Q x \ge \tfrac12 \bar x^\top Q \bar x + (Q\bar x)^\top (x - \bar x)`). With
:math:`\bar c = Q \bar x + c` and :math:`r = \bar c - A^\top y`, every feasible :math:`x` has
:math:`\bar c^\top x = y^\top A x + r^\top x`, so

.. math::

    f(x) \ge \text{offset} - \tfrac12 \bar x^\top Q \bar x
    + \sum_i \min(y_i r_{\ell,i},\, y_i r_{u,i})
    + \sum_j \min_{x_j \in [\ell_j, u_j]} \bigl(\tfrac{\delta_j}2 x_j^2 + r_j x_j\bigr).

The bound holds for every :math:`y`; it equals the optimum at a KKT pair. Before :math:`r` is
formed, a multiplier whose sign points at an infinite row side is set to zero (it would make its
row's term :math:`-\infty`). A column with an infinite bound in the direction :math:`r_j` pushes
it and no curvature gives no bound (:math:`-\infty`, with the column named): a free variable
needs :math:`r_j = 0` exactly, which floating point never gives. The curvature kept is
:math:`\delta = \operatorname{diag}(P)` when ``P`` is diagonal and :math:`\delta_j = P_{jj} -
\sum_{k \ne j} |P_{jk}|` when every row of ``P`` is diagonally dominant (then :math:`Q` is too, so
it is positive semidefinite); otherwise none.

Rounding: :math:`r` is known to within :math:`e = \gamma_k (|Q||\bar x| + |c| + |A|^\top |y|)`,
with :math:`\gamma_k = k u / (1 - k u)`, :math:`u = 2^{-53}` and :math:`k` the longest dot
product (Higham's bound); each column's term is minimized over :math:`r_j \pm e_j` as well, and
the final sum is lowered by its own rounding bound. The bound assumes that ``P`` is positive
semidefinite, as a :class:`~optframe.model.MatrixProblem` requires.

Reference: A. Neumaier and O. Shcherbina, "Safe bounds in linear and mixed-integer linear
programming", Math. Program. 99 (2004) 283-296; the tangent plane extends it to convex QPs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from optframe.certificate import Certificate, RepairStep
from optframe.duality import REFINEMENTS, solve_normal
from optframe.errors import ModelError
from optframe.model import MatrixProblem

__all__ = ["SafeBound", "safe_lower_bound"]

_U = 2.0**-53

#: The most columns :func:`safe_lower_bound` balances (a dense system of that order is solved).
BALANCE_MAX_COLUMNS = 2000


def _gamma(k: int) -> float:
    return k * _U / (1.0 - k * _U)


@dataclass(frozen=True, eq=False)
class SafeBound:
    r"""A proven lower bound on a matrix problem's optimal value, and how it was made.

    Attributes
    ----------
    value : float
        The bound; ``-inf`` when none could be proven (``reason`` says why).
    reason : str
        Empty, or why there is no finite bound.
    zeroed_rows : int
        Multipliers set to zero because their sign pointed at an infinite row side.
    curvature_columns : int
        Columns whose diagonal curvature was kept (no box needed for them).
    rounding : float
        The amount subtracted for rounding (the sum's bound).
    y, z, x : ndarray or None
        The row multipliers used, the reduced costs :math:`r = Q\bar x + c - A^\top y` and the
        point the quadratic part was linearized at (``None`` without a finite bound).
    steps : tuple of RepairStep
        What made the solver's values safe, in order (:class:`~optframe.certificate.RepairStep`).
    terms : Mapping[str, float]
        The bound's terms (they sum to ``value``).
    """

    value: float
    reason: str = ""
    zeroed_rows: int = 0
    curvature_columns: int = 0
    rounding: float = 0.0
    y: NDArray[np.float64] | None = field(default=None, repr=False)
    z: NDArray[np.float64] | None = field(default=None, repr=False)
    x: NDArray[np.float64] | None = field(default=None, repr=False)
    steps: tuple[RepairStep, ...] = ()
    terms: Mapping[str, float] = field(default_factory=dict)

    def certificate(self, scale: float = 1.0, offset: float = 0.0) -> Certificate | None:
        """The bound as a :class:`~optframe.certificate.Certificate` on a model's scale.

        ``scale`` (positive) and ``offset`` map the matrix problem's objective to the model's
        (a formulation's ``objective_scale`` and ``objective_offset``). ``None`` without a
        finite bound.

        Examples
        --------
        >>> import numpy as np, scipy.sparse as sp
        >>> from optframe.model import MatrixProblem
        >>> lp = MatrixProblem(c=np.array([1.0, 2.0]), A=sp.csc_array([[1.0, 1.0]]),
        ...                    row_lower=np.array([1.0]), row_upper=np.array([np.inf]),
        ...                    lower=np.zeros(2), upper=np.full(2, np.inf))
        >>> found = safe_lower_bound(lp, [1.0, 0.0], [1.0])
        >>> certificate = found.certificate()
        >>> round(certificate.value, 9), sorted(certificate.dual_point)
        (1.0, ['y', 'z'])
        >>> certificate.steps[-1].kind
        'correction'
        """
        if not math.isfinite(self.value) or not scale > 0:
            return None
        terms = {(name if scale == 1.0 else f"{scale:g} * ({name})"): scale * value
                 for name, value in self.terms.items()}  # fmt: skip
        if offset != 0.0:
            terms["the formulation's constant"] = float(offset)
        point = {name: value for name, value in (("y", self.y), ("z", self.z)) if value is not None}
        if self.x is not None and self.terms.get("-x'Qx/2"):
            point["x"] = self.x
        return Certificate(
            scale * self.value + offset,
            point,
            self.steps,
            terms,
            dual="max over row multipliers y: offset - x'Qx/2 + sum_i y_i (active side of row i) "
            "+ sum_j min over [l_j, u_j] of (delta_j t^2/2 + z_j t),  z = Qx + c - A'y",
            origin="the solver's point and row duals, made safe (Neumaier-Shcherbina)",
        )


def _kept_curvature(P: sp.csc_array) -> NDArray[np.float64]:
    r"""The diagonal :math:`\delta` kept out of the linearization (see the module docstring)."""
    diagonal = P.diagonal()
    absolute = abs(P).tocsr()
    off = np.asarray(absolute.sum(axis=1)).ravel() - np.abs(diagonal)
    if not np.any(off > 0):
        return np.maximum(diagonal, 0.0)
    if np.all(diagonal >= off):
        # the difference is rounded: keep a little less, so that Q stays dominant
        return np.maximum(diagonal - off * (1.0 + 4.0 * _U * P.shape[0]) - 4 * _U * diagonal, 0.0)
    return np.zeros(P.shape[0])


def _column_terms(
    r: NDArray[np.float64],
    e: NDArray[np.float64],
    delta: NDArray[np.float64],
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    r"""The columns' terms of the bound, and the columns without a finite one.

    Per column, :math:`\min_{x \in [\ell, u]} \delta x^2 / 2 + r x - e |x|`.
    """
    n = r.size
    terms = np.full(n, np.inf)
    unbounded = np.zeros(n, dtype=bool)

    def value(x: NDArray[np.float64], idx: NDArray[np.intp]) -> NDArray[np.float64]:
        return 0.5 * delta[idx] * x * x + r[idx] * x - e[idx] * np.abs(x)

    flat = delta <= 0
    # linear columns: a concave function of x on the box, smallest at an end
    idx = np.flatnonzero(flat)
    if idx.size:
        lo, hi = lower[idx], upper[idx]
        down = np.isinf(lo) & (r[idx] + e[idx] > 0)  # decreasing without end toward -inf
        up = np.isinf(hi) & (r[idx] - e[idx] < 0)  # decreasing without end toward +inf
        unbounded[idx[down | up]] = True
        # each finite end is a candidate; an infinite end that is not a descent direction has
        # the limit 0 (r + e = 0) or +inf, so 0 is a valid candidate for it
        finite_lo, finite_hi = np.isfinite(lo), np.isfinite(hi)
        at_lo = np.where(finite_lo, value(np.where(finite_lo, lo, 0.0), idx), np.inf)
        at_hi = np.where(finite_hi, value(np.where(finite_hi, hi, 0.0), idx), np.inf)
        at_inf = np.where(finite_lo & finite_hi, np.inf, 0.0)
        best = np.minimum(np.minimum(at_lo, at_hi), at_inf)
        terms[idx] = best
    # curved columns: the minimum of two convex quadratics (x >= 0 and x <= 0 pieces)
    idx = np.flatnonzero(~flat)
    if idx.size:
        lo, hi, d = lower[idx], upper[idx], delta[idx]
        candidates = []
        pos_lo, pos_hi = np.maximum(lo, 0.0), hi
        x = np.clip((e[idx] - r[idx]) / d, pos_lo, pos_hi)
        candidates.append(np.where(pos_lo <= pos_hi, value(x, idx), np.inf))
        neg_lo, neg_hi = lo, np.minimum(hi, 0.0)
        x = np.clip((-e[idx] - r[idx]) / d, neg_lo, neg_hi)
        candidates.append(np.where(neg_lo <= neg_hi, value(x, idx), np.inf))
        terms[idx] = np.minimum(*candidates)
    return terms, np.flatnonzero(unbounded)


def _balance_free_columns(
    problem: MatrixProblem,
    Q: sp.csc_array | None,
    c: NDArray[np.float64],
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    free: NDArray[np.bool_],
    delta: NDArray[np.float64],
    movable: NDArray[np.bool_] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Move ``x`` and ``y`` so that :math:`r_F = 0` on the columns that need it.

    ``movable`` (default: every row) marks the rows whose multipliers may move.

    :math:`F` holds the free columns and the half-bounded ones whose reduced cost points at
    their open end (both would make the bound :math:`-\infty`).

    It takes the smallest change :math:`(\Delta x_F, \Delta y_R)` with :math:`Q_{FF} \Delta x_F -
    A_{RF}^\top \Delta y_R = -r_F`, where :math:`R` holds the ranged and equality rows and the
    one-sided rows whose multiplier is not zero; a multiplier that the change turns to the wrong
    sign is set to zero and the change repeated (a few passes, least squares on unit-norm
    columns, :func:`optframe.duality.solve_normal`). Any point and any multipliers give a valid
    bound, so this only decides how tight it is. Past :data:`BALANCE_MAX_COLUMNS` columns the
    dense normal equations are not formed and the point is left as it is.
    """
    A = problem.A
    y = y.copy()
    x = x.copy()
    for _ in range(REFINEMENTS):
        Qx = Q @ x if Q is not None else np.zeros_like(x)
        r = Qx + c - A.T @ y
        # the free columns, and the half-bounded ones whose reduced cost points at their open end
        wrong_way = (np.isinf(problem.lower) & (r > 0)) | (np.isinf(problem.upper) & (r < 0))
        columns = np.flatnonzero(free | (wrong_way & (delta <= 0)))
        if columns.size == 0 or columns.size > BALANCE_MAX_COLUMNS:
            break
        r_free = r[columns]
        two_sided = np.isfinite(problem.row_lower) & np.isfinite(problem.row_upper)
        rows = np.flatnonzero((two_sided | (y != 0)) & (True if movable is None else movable))
        blocks = [-sp.csc_array(A[rows][:, columns]).T]  # |F| x |R|
        if Q is not None:
            blocks.insert(0, sp.csc_array(Q[columns][:, columns]))
        B = sp.hstack(blocks, format="csr")
        if B.shape[1] < B.shape[0]:  # fewer unknowns than equations: the smaller Gram matrix
            step = solve_normal((B.T @ B).toarray(), np.asarray(B.T @ -r_free).ravel())
        else:
            step = np.asarray(B.T @ solve_normal((B @ B.T).toarray(), -r_free)).ravel()
        if Q is not None:
            x[columns] += step[: columns.size]
            step = step[columns.size :]
        y[rows] += step
        wrong = ((y > 0) & np.isinf(problem.row_lower)) | ((y < 0) & np.isinf(problem.row_upper))
        y[wrong] = 0.0
    return x, y


def _open_violation(
    problem: MatrixProblem, r: NDArray[np.float64], half_open: NDArray[np.bool_]
) -> float:
    """The largest reduced cost pointing at an open end (``|z_j|`` on a free column)."""
    toward = np.where(np.isinf(problem.lower), np.maximum(r, 0.0), 0.0)
    toward = np.maximum(toward, np.where(np.isinf(problem.upper), np.maximum(-r, 0.0), 0.0))
    return float(np.max(toward[half_open], initial=0.0))


def _shrink_factor(
    problem: MatrixProblem,
    cost: NDArray[np.float64],
    r: NDArray[np.float64],
    e: NDArray[np.float64],
    delta: NDArray[np.float64],
    unbounded: NDArray[np.intp],
    half_open: NDArray[np.bool_],
    settled: NDArray[np.bool_],
) -> float | None:
    r"""The factor :math:`t < 1` on ``y`` that turns the open columns' reduced costs the right way.

    With :math:`\bar c` = ``cost`` (:math:`Q\bar x + c`) and :math:`a = A^\top y`, the reduced
    cost at :math:`t y` is :math:`r(t) = \bar c - t a = (1 - t)\bar c + t\, r`. Where
    :math:`\bar c` itself points the right way on every open column (:math:`\bar c_j > 0` on a
    column bounded below only, :math:`< 0` above only, :math:`\approx 0` on a free one, as for
    the zero-cost coefficients and the positive-cost slacks of LAD, quantile and SVM LPs), a
    small step toward :math:`y = 0` fixes the columns an interior-point solver's duals leave
    slightly the wrong way (about 1e-11), while the free columns stay balanced. ``None`` when
    there is no such factor; the caller recomputes everything at :math:`t y` and keeps it only
    if no column is left unbounded.
    """
    lower_only = np.isfinite(problem.lower) & np.isinf(problem.upper)
    upper_only = np.isinf(problem.lower) & np.isfinite(problem.upper)
    free = np.isinf(problem.lower) & np.isinf(problem.upper)
    linear_open = half_open & (delta <= 0)
    if np.any(free & linear_open & ~settled):
        return None  # a free column off balance: no scaling of y fixes it
    if np.any(free & linear_open & (np.abs(cost) > e)):
        return None  # free columns with a cost: scaling y would unbalance them
    a = cost - r
    t = 1.0
    for j in unbounded:
        margin = 4.0 * e[j] + 1e-300
        if lower_only[j] and cost[j] > margin and a[j] > 0:
            t = min(t, (cost[j] - margin) / a[j])
        elif upper_only[j] and cost[j] < -margin and a[j] < 0:
            t = min(t, (cost[j] + margin) / a[j])
        else:
            return None
    return t if 0.0 < t < 1.0 else None


def safe_lower_bound(
    problem: MatrixProblem,
    x: ArrayLike,
    y: ArrayLike,
    movable_rows: NDArray[np.bool_] | None = None,
) -> SafeBound:
    r"""A lower bound on ``problem``'s optimum, proven from any ``x`` and row multipliers ``y``.

    Parameters
    ----------
    problem : MatrixProblem
        An LP or a convex QP (integer variables are ignored: the bound is then the relaxation's).
    x : array of shape (N,)
        The point the quadratic part is linearized at (a solver's solution; any point is valid,
        one near the optimum gives a tight bound). It is first moved into the variable bounds.
    y : array of shape (M,)
        Row multipliers as :math:`d f^* / d\,\text{rhs}` (positive on an active lower side,
        negative on an active upper side).
    movable_rows : bool array of shape (M,), optional
        The rows whose multipliers the balance of the open columns may move (default: all).
        The cone-program bound (:mod:`optframe.conic_bound`) keeps its cone rows' multipliers
        where it put them, in the dual cone.

    Returns
    -------
    SafeBound
        The bound (``-inf`` with a reason when a free direction leaves it unbounded).
    """
    n, m = problem.n_variables, problem.n_rows
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    y = np.array(y, dtype=np.float64).reshape(-1)
    if x.shape != (n,) or y.shape != (m,):
        raise ModelError(f"safe_lower_bound: x has shape {x.shape} and y {y.shape}; expected "
                         f"({n},) and ({m},)")  # fmt: skip
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        return SafeBound(-math.inf, "the point or the multipliers are not finite")
    steps: list[RepairStep] = []
    outside = float(np.max(np.maximum(problem.lower - x, x - problem.upper), initial=0.0))
    x = np.clip(x, problem.lower, problem.upper)
    if outside > 0:
        steps.append(RepairStep("clip", "moved the solver's point into the variable bounds",
                                outside, 0.0, "largest distance outside the bounds"))  # fmt: skip
    pointing = ((y > 0) & np.isinf(problem.row_lower)) | ((y < 0) & np.isinf(problem.row_upper))
    if pointing.any():
        steps.append(RepairStep(
            "zero", f"set {int(pointing.sum())} row multipliers to 0: their sign points at an "
            "infinite row side", float(np.max(np.abs(y[pointing]))), 0.0, "largest such |y_i|",
        ))  # fmt: skip
    y[pointing] = 0.0
    A = problem.A
    abs_A = abs(A)
    c = problem.c
    longest = int(np.max(np.diff(A.indptr))) if A.nnz else 0
    if problem.P is not None and problem.P.nnz:
        P = problem.P
        delta = _kept_curvature(P)
        Q = sp.csc_array(P - sp.diags(delta))
        Qx = Q @ x
        abs_Qx = abs(Q) @ np.abs(x)
        longest += int(np.max(np.diff(Q.tocsr().indptr))) if Q.nnz else 0
        quad = 0.5 * float(x @ Qx)
        quad_error = _gamma(n + longest + 2) * 0.5 * float(np.abs(x) @ abs_Qx)
        kept = int(np.count_nonzero(delta > 0))
        steps.append(RepairStep(
            "linearize", "replaced x'Qx/2 by its tangent plane at the solver's point (convexity), "
            f"Q = P - diag(delta), the diagonal curvature delta kept on {kept} columns",
        ))  # fmt: skip
    else:
        delta = np.zeros(n)
        Qx = abs_Qx = np.zeros(n)
        quad = quad_error = 0.0
    free = np.isinf(problem.lower) & np.isinf(problem.upper) & (delta <= 0)
    half_open = (np.isinf(problem.lower) | np.isinf(problem.upper)) & (delta <= 0)
    if np.any(half_open):
        quadratic = problem.P is not None and problem.P.nnz
        before = _open_violation(problem, Qx + c - A.T @ y, half_open)
        x, y = _balance_free_columns(
            problem, Q if quadratic else None, c, x, y, free, delta, movable_rows
        )
        if problem.P is not None and problem.P.nnz:
            Qx, abs_Qx = Q @ x, abs(Q) @ np.abs(x)
            quad = 0.5 * float(x @ Qx)
            quad_error = _gamma(n + longest + 2) * 0.5 * float(np.abs(x) @ abs_Qx)
        open_before = before
        open_after = _open_violation(problem, Qx + c - A.T @ y, half_open)
        steps.append(RepairStep(
            "balance", f"moved the point and the multipliers least so that the reduced costs of "
            f"the {int(half_open.sum())} columns open on one side or both vanish",
            open_before, open_after, "largest z_j toward an open end",
        ))  # fmt: skip

    def reduced_costs(y: NDArray[np.float64]) -> tuple[Any, ...]:
        r = Qx + c - A.T @ y
        e = _gamma(longest + 3) * (abs_Qx + np.abs(c) + abs_A.T @ np.abs(y))
        # An open column's reduced cost is taken as 0 when it is below its own rounding error
        # (the rule of optframe.duality.equality_residual): floating point never gives an exact
        # zero.
        settled = half_open & (np.abs(r) <= e)
        largest = float(np.max(np.abs(r[settled]), initial=0.0))
        r = np.where(settled, 0.0, r)
        e = np.where(settled, 0.0, e)
        terms, unbounded = _column_terms(r, e, delta, problem.lower, problem.upper)
        return r, e, terms, unbounded, settled, largest

    r, e, terms, unbounded, settled, largest = reduced_costs(y)
    if unbounded.size:
        t = _shrink_factor(problem, Qx + c, r, e, delta, unbounded, half_open, settled)
        if t is not None:
            shrunk = reduced_costs(t * y)
            if shrunk[3].size == 0:
                steps.append(RepairStep(
                    "shrink", f"multiplied the multipliers by t = 1 - {1 - t:.3g}, toward 0, which "
                    f"keeps every open column's reduced cost on its bounded side: {unbounded.size} "
                    "open column(s) pointed the wrong way", float(unbounded.size), 0.0,
                    "open columns the wrong way",
                ))  # fmt: skip
                y = t * y
                r, e, terms, unbounded, settled, largest = shrunk
    if settled.any():
        steps.append(RepairStep(
            "zero", f"took the reduced costs of {int(settled.sum())} open columns as 0: each is "
            "below its own rounding error", largest, 0.0, "largest such |z_j|",
        ))  # fmt: skip
    if unbounded.size:
        j = int(unbounded[0])
        return SafeBound(
            -math.inf,
            f"{unbounded.size} column(s) with an infinite bound in the direction the reduced cost "
            f"pushes, without curvature (column {j}: reduced cost {r[j]:.3g} +- {e[j]:.2g}, "
            f"bounds [{problem.lower[j]:g}, {problem.upper[j]:g}])",
            zeroed_rows=int(pointing.sum()),
            curvature_columns=int(np.count_nonzero(delta > 0)),
            steps=tuple(steps),
        )
    side = np.where(y > 0, problem.row_lower, np.where(y < 0, problem.row_upper, 0.0))
    row_terms = np.where(y != 0, y * side, 0.0)
    parts = [float(problem.offset), -quad, float(row_terms.sum()), float(terms.sum())]
    value = math.fsum(parts)
    magnitude = abs(problem.offset) + quad + float(np.abs(row_terms).sum())
    magnitude += float(np.abs(terms).sum())
    rounding = _gamma(n + m + 4) * magnitude + quad_error
    value -= rounding
    if not math.isfinite(value):
        return SafeBound(-math.inf, "the bound's terms overflow", steps=tuple(steps))
    exact, _ = _column_terms(r, np.zeros(n), delta, problem.lower, problem.upper)
    widened = float(terms.sum()) - float(exact.sum())
    steps.append(RepairStep(
        "correction", f"Neumaier-Shcherbina correction of {widened - rounding:.3g}: each "
        f"column's term taken at its worst over z_j +- its rounding error ({widened:.3g}), and "
        f"the sum lowered by its own rounding bound ({-rounding:.3g})",
    ))  # fmt: skip
    named = {
        "offset": float(problem.offset),
        "-x'Qx/2": -quad,
        "sum_i y_i (active side of row i)": float(row_terms.sum()),
        "sum_j min over [l_j, u_j] of (delta_j t^2/2 + z_j t - e_j |t|)": float(terms.sum()),
        "-rounding": -rounding,
    }
    return SafeBound(
        value,
        zeroed_rows=int(pointing.sum()),
        curvature_columns=int(np.count_nonzero(delta > 0)),
        rounding=rounding,
        y=y,
        z=r,
        x=x,
        steps=tuple(steps),
        terms=named,
    )
