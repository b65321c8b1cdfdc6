r"""The Frisch-Newton iteration: Mehrotra's predictor-corrector for a box LP or separable QP.

The problem, after the back-end (:mod:`optframe.solvers.fn`) has shifted finite lower bounds to
zero and dropped fixed columns, is

.. math::

    \min_x \; c^\top x + \tfrac12 \sum_j h_j x_j^2 \quad\text{s.t.}\quad A x = b, \quad
    \ell_j \le x_j \le u_j, \qquad h \ge 0,

with :math:`\ell_j \in \{0, -\infty\}`, :math:`u_j \in (0, \infty]`, and :math:`h_j > 0` on every
column with an infinite bound (an LP has :math:`h = 0` and every column boxed). With
:math:`s = u - x`, multipliers :math:`z \ge 0` on the finite lower bounds and :math:`w \ge 0` on
the finite upper ones (zero elsewhere), the central path is :math:`x z = s w = \mu`. One Newton
step for the residuals :math:`r_p = b - Ax`, :math:`r_d = c + h \odot x - A^\top y - z + w` and
complementarity targets :math:`r_{xz}`, :math:`r_{sw}` reduces, with
:math:`\theta = (h + z/x + w/s)^{-1}` (a term only where its bound is finite), to the normal
equations

.. math::

    (A \Theta A^\top)\, \Delta y = r_p + A\Theta\,(r_d - r_{xz}/x + r_{sw}/s), \qquad
    \Delta x = \Theta\,(A^\top \Delta y - r_d + r_{xz}/x - r_{sw}/s),

an :math:`m \times m` system (``m`` rows) factored once per iteration by a dense Cholesky and
solved twice (predictor with :math:`r_{xz} = -xz`, corrector with Mehrotra's centering
:math:`\sigma = (\mu_\text{aff}/\mu)^3` and second-order term). For an LP this is Koenker and
d'Orey's and Portnoy and Koenker's Frisch-Newton algorithm (quantreg's ``rq.fit.fnb``) for any
``A``; the separable quadratic only adds :math:`h` to the diagonal that :math:`\Theta` inverts,
so the normal matrix keeps its size (the ridge dual of a linear model with :math:`z = X^\top v`
as free columns, :math:`h = 1/\rho_2`, gives a ``features x features`` system).

For any :math:`y`, with :math:`d = c - A^\top y`, the Lagrangian's minimum over the box is
separable:

.. math::

    g(y) = b^\top y + \sum_j \min_{\ell_j \le t \le u_j} \bigl(d_j t + \tfrac12 h_j t^2\bigr)
    \le c^\top x^\star + \tfrac12 {x^\star}^\top H x^\star

(for a boxed LP column the minimum is :math:`-u_j \max(-d_j, 0)`; with :math:`h_j > 0` it is
taken at :math:`t = \operatorname{clip}(-d_j/h_j, \ell_j, u_j)`), so :func:`frisch_newton` stops
on :math:`g(y)` (a true lower bound) rather than on the barrier's own dual value. For an LP,
:func:`polish` then identifies a basis from the interior point (the ``m`` most interior
columns), solves :math:`A_B^\top y = c_B` and :math:`A_B x_B = b - A_N x_N`, and keeps the
vertex when it is better (higher :math:`g`, lower primal objective at a feasible point); a QP's
optimum is not a vertex, and it is not polished.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from numpy.typing import NDArray

from ._fn_sparse import upper_normal_matrix
from ._fn_vectors import ColumnWork

Matrix = NDArray[np.float64] | sp.csr_array
Stop = Literal["optimal", "iteration_limit", "time_limit", "numerical"]
#: From this many columns the iteration's column work runs compiled (:mod:`._fn_vectors`);
#: below, whole-array numpy (nothing to compile for the demo and small problems).
COMPILED_FROM = 100_000
#: Columns of a dense ``A`` scaled and summed at a time into the normal matrix (the scaled copy
#: stays in cache: 1,000,020 columns x 21 rows, 70 ms in one product, 55 ms by blocks).
NORMAL_BLOCK = 16_384


@dataclass(frozen=True, eq=False)
class BoxLP:
    """``min c'x + h'x^2/2 s.t. A x = b, l <= x <= u`` (``A`` dense C-ordered, or CSR).

    ``u > 0``, finite for an LP. ``h``: the separable curvature (None: an LP); positive on every
    column with an infinite bound. ``lower``: which columns are bounded below by 0 (None: all;
    the others are free below). ``origin``: a point worth trying as the start (the unshifted
    problem's zero, which is feasible and interior for the LAD and quantile duals), or None.
    """

    A: Matrix
    b: NDArray[np.float64]
    c: NDArray[np.float64]
    u: NDArray[np.float64]
    origin: NDArray[np.float64] | None = None
    h: NDArray[np.float64] | None = None
    lower: NDArray[np.bool_] | None = None

    @property
    def boxed(self) -> bool:
        """Whether every column has both bounds (then every barrier term is present)."""
        return self.lower is None and bool(np.all(np.isfinite(self.u)))

    @property
    def dense(self) -> bool:
        """Whether ``A`` is a dense array."""
        return isinstance(self.A, np.ndarray)

    def abs_times(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """``|A| v``, a dense ``A`` by blocks of columns (no copy of all of ``|A|``)."""
        if not self.dense:
            return np.asarray(abs(self.A) @ v, dtype=np.float64)
        out = np.zeros(self.A.shape[0])
        for start in range(0, v.size, NORMAL_BLOCK):
            end = min(v.size, start + NORMAL_BLOCK)
            out += np.abs(self.A[:, start:end]) @ v[start:end]
        return out

    def times(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """``A v``."""
        return np.asarray(self.A @ v, dtype=np.float64)

    def transpose_times(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        """``A' y``."""
        return np.asarray(self.A.T @ y, dtype=np.float64)

    def normal_matrix(
        self, theta: NDArray[np.float64], work: NDArray[np.float64] | None = None
    ) -> NDArray[np.float64]:
        """``A diag(theta) A'`` as a dense symmetric array (upper triangle filled).

        ``work``: an array of ``A``'s rows and at most :data:`NORMAL_BLOCK` columns for the
        scaled copy of a dense ``A``, which is summed block by block.
        """
        if self.dense:
            root = np.sqrt(theta)
            n = root.size
            M = None
            for start in range(0, n, NORMAL_BLOCK):
                end = min(n, start + NORMAL_BLOCK)
                out = None if work is None else work[:, : end - start]
                scaled = np.multiply(self.A[:, start:end], root[start:end], out=out)
                # C-ordered (m, k): its .T is Fortran-ordered, as BLAS wants it
                if M is None:
                    M = la.blas.dsyrk(1.0, scaled.T, trans=1, lower=0)
                else:
                    M = la.blas.dsyrk(1.0, scaled.T, trans=1, lower=0, beta=1.0, c=M,
                                      overwrite_c=1)  # fmt: skip
            return M
        indptr, indices, data = self.columns
        return upper_normal_matrix(indptr, indices, data, theta, self.A.shape[0])

    @cached_property
    def columns(self) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
        """A sparse ``A`` by columns (CSC with sorted row indices): pointers, rows, values."""
        csc = sp.csc_array(self.A)
        csc.sort_indices()
        return (
            csc.indptr.astype(np.int64),
            csc.indices.astype(np.int64),
            csc.data.astype(np.float64),
        )

    def objective(self, x: NDArray[np.float64]) -> float:
        """``c'x + h'x^2/2``."""
        value = float(self.c @ x)
        return value if self.h is None else value + 0.5 * float(self.h @ (x * x))

    def bound(self, y: NDArray[np.float64], aty: NDArray[np.float64] | None = None) -> float:
        """The dual value ``g(y)`` (module docstring), a lower bound for every ``y``.

        ``aty``: ``A'y`` when the caller has it.
        """
        d = self.c - (self.transpose_times(y) if aty is None else aty)
        if self.h is None:
            return float(self.b @ y) - float(self.u @ np.maximum(-d, 0.0))
        low = np.zeros_like(d) if self.lower is None else np.where(self.lower, 0.0, -np.inf)
        flat = self.h == 0.0  # boxed columns (module docstring)
        t = np.clip(-d / np.where(flat, 1.0, self.h), low, self.u)
        t[flat] = np.where(d[flat] < 0.0, self.u[flat], 0.0)
        return float(self.b @ y) + float(d @ t) + 0.5 * float(self.h @ (t * t))


@dataclass(frozen=True, eq=False)
class Iterate:
    """The point of an interior-point run (or of its polish) and how it ended."""

    x: NDArray[np.float64]
    y: NDArray[np.float64]
    objective: float
    bound: float
    residual: float  # max |b - A x|
    iterations: int
    stop: Stop
    note: str = ""


def _step(v: NDArray[np.float64], dv: NDArray[np.float64]) -> float:
    """Largest ``t <= 1`` with ``v + t dv >= 0``, for ``v > 0``: ``1 / max(1, max(-dv / v))``."""
    fastest = float(np.max(-dv / v, initial=0.0))
    return 1.0 if fastest <= 1.0 else 1.0 / fastest


@dataclass(frozen=True, eq=False)
class _Barriers:
    """Which columns carry a lower and an upper barrier (None: every column, an LP's box)."""

    lower: NDArray[np.float64] | None  # 1.0 where bounded below, else 0.0
    upper: NDArray[np.float64] | None  # 1.0 where bounded above, else 0.0
    count: int  # barrier terms in all

    @classmethod
    def of(cls, lp: BoxLP) -> _Barriers:
        n = lp.c.size
        if lp.boxed:
            return cls(None, None, 2 * n)
        low = np.ones(n) if lp.lower is None else lp.lower.astype(np.float64)
        up = np.isfinite(lp.u).astype(np.float64)
        return cls(low, up, int(low.sum() + up.sum()))

    def gaps(self, lp: BoxLP, x: NDArray) -> tuple[NDArray, NDArray]:
        """The distances to the bounds, ``x - 0`` and ``u - x`` (1 where there is no bound)."""
        if self.lower is None:
            return x, lp.u - x
        xl = np.where(self.lower > 0.0, x, 1.0)
        s = np.where(self.upper > 0.0, lp.u - x, 1.0)
        return xl, s

    def keep_lower(self, v: NDArray) -> NDArray:
        """``v`` where a lower bound is, 0 elsewhere."""
        return v if self.lower is None else v * self.lower

    def keep_upper(self, v: NDArray) -> NDArray:
        """``v`` where an upper bound is, 0 elsewhere."""
        return v if self.upper is None else v * self.upper

    def dual_step(self, z: NDArray, dz: NDArray, w: NDArray, dw: NDArray) -> float:
        """The longest step ``<= 1`` that keeps ``z`` and ``w`` non-negative where they exist."""
        if self.lower is None:
            return min(_step(z, dz), _step(w, dw))
        return min(
            _step(np.where(self.lower > 0.0, z, 1.0), dz),
            _step(np.where(self.upper > 0.0, w, 1.0), dw),
        )


def _start(
    lp: BoxLP, factor: Callable, barriers: _Barriers
) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """A starting point and least-squares ``y``.

    ``x``: of the box midpoint moved toward ``A x = b`` (kept 5% inside the box) and
    ``lp.origin`` (kept 0.1% inside), the one with the smaller row residual; an infeasible start
    far from the central path costs many short steps on badly scaled data. A column with one
    bound starts one unit inside it, a free one at 0, before the move.
    """
    u = lp.u
    ones = np.ones_like(u)
    solve = factor(ones)
    if barriers.lower is None:
        x = 0.5 * u
    else:
        has_low, has_up = barriers.lower > 0.0, barriers.upper > 0.0
        finite_u = np.where(has_up, u, 0.0)
        x = np.where(has_low, np.where(has_up, 0.5 * finite_u, 1.0), finite_u - has_up)
    x = x + lp.transpose_times(solve(lp.b - lp.times(x)))
    if barriers.lower is None:
        x = np.clip(x, 0.05 * u, 0.95 * u)
    else:
        room = np.where(has_up & has_low, finite_u, 1.0)
        low = np.where(has_low, 0.05 * room, -np.inf)
        high = np.where(has_up, np.where(has_low, 0.95 * room, finite_u - 0.05), np.inf)
        x = np.clip(x, low, high)
    if lp.origin is not None:
        other = np.clip(lp.origin, 1e-3 * u, (1.0 - 1e-3) * u)
        if np.max(np.abs(lp.b - lp.times(other))) < np.max(np.abs(lp.b - lp.times(x))):
            x = other
    y = solve(lp.times(lp.c))
    r = lp.c - lp.transpose_times(y)
    if lp.h is not None:
        r = r + lp.h * x
    z, w = np.maximum(r, 0.0), np.maximum(-r, 0.0)
    shift = max(float(np.mean(np.abs(r))), 1e-3 * (1.0 + float(np.max(np.abs(lp.c)))))
    return x, y, barriers.keep_lower(z + shift), barriers.keep_upper(w + shift)


def _factor(lp: BoxLP) -> Callable[[NDArray], Callable[[NDArray], NDArray]]:
    """``theta -> solve`` for ``A diag(theta) A'``, regularized when it is numerically singular."""
    work = np.empty((lp.A.shape[0], min(lp.A.shape[1], NORMAL_BLOCK))) if lp.dense else None

    def factor(theta: NDArray[np.float64]) -> Callable[[NDArray], NDArray]:
        M = lp.normal_matrix(theta, work)
        diagonal = np.diag(M).copy()
        try:
            chol = la.cho_factor(M, lower=False, overwrite_a=False, check_finite=False)
        except la.LinAlgError:
            ridge = 1e-12 * max(float(np.max(diagonal)), 1e-300)
            M[np.diag_indices_from(M)] = diagonal + ridge
            chol = la.cho_factor(M, lower=False, overwrite_a=True, check_finite=False)
        return lambda rhs: la.cho_solve(chol, rhs, check_finite=False)

    return factor


def _direction(
    lp: BoxLP,
    solve: Callable[[NDArray], NDArray],
    point: tuple[NDArray, ...],
    rxz: NDArray,
    rsw: NDArray,
) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """The Newton direction for the complementarity targets ``rxz``, ``rsw`` (module docstring).

    ``x`` and ``s`` are the distances to the bounds (1 where there is none, where ``z``, ``w``,
    ``rxz`` and ``rsw`` are 0, so that ``dz`` and ``dw`` stay 0 there).
    """
    x, s, z, w, rp, rd, theta = point
    q = rd - rxz / x + rsw / s
    dy = solve(rp + lp.times(theta * q))
    dx = theta * (lp.transpose_times(dy) - q)
    dz = (rxz - z * dx) / x
    dw = (rsw + w * dx) / s
    return dx, dy, dz, dw


def frisch_newton(
    lp: BoxLP,
    *,
    tol: float,
    max_iter: int,
    deadline: float | None,
    backoff: float,
    polish_from: float | None = None,
    log: Callable[[str], None] | None = None,
) -> Iterate:
    r"""Run the predictor-corrector iteration until the gap and the residual are below ``tol``.

    Stops with ``"optimal"`` when :math:`(f(x) - g(y)) / (1 + |f(x)|) \le` ``tol`` and
    :math:`\lVert b - Ax\rVert_\infty` is at most ``tol`` times the scale of the rows; with
    ``"time_limit"`` when :func:`time.perf_counter` passes ``deadline``, ``"iteration_limit"``
    after ``max_iter`` iterations, ``"numerical"`` when the normal matrix cannot be factored.
    From the iteration whose gap is at most ``polish_from`` (``None``: never; an LP's option),
    it tries :func:`polish` each time and stops as soon as the vertex meets the same test.
    """
    u = lp.u
    barriers = _Barriers.of(lp)
    factor = _factor(lp)
    row_scale = 1.0 + float(np.max(np.abs(lp.b), initial=0.0))
    row_scale += float(np.max(lp.abs_times(np.where(np.isfinite(u), u, 0.0)), initial=0.0))
    try:
        x, y, z, w = _start(lp, factor, barriers)
    except (la.LinAlgError, ValueError) as exc:
        zero = np.zeros_like(lp.b)
        return Iterate(u * 0.5, zero, math.nan, -math.inf, math.inf, 0, "numerical", str(exc))
    stopping = _Stopping(lp, tol, row_scale, max_iter, deadline, polish_from, log)
    if lp.c.size >= COMPILED_FROM:
        return _iterate_compiled(lp, factor, barriers, (x, y, z, w), stopping, backoff)
    return _iterate(lp, factor, barriers, (x, y, z, w), stopping, backoff)


@dataclass(frozen=True)
class _Stopping:
    """When :func:`frisch_newton` stops (its docstring), tested once per iteration."""

    lp: BoxLP
    tol: float
    row_scale: float
    max_iter: int
    deadline: float | None
    polish_from: float | None
    log: Callable[[str], None] | None

    def verdict(
        self, x: NDArray, y: NDArray, objective: float, bound: float, residual: float,
        iteration: int,
    ) -> Iterate | None:  # fmt: skip
        """The final point when the run stops here, else None."""
        gap = (objective - bound) / (1.0 + abs(objective))
        infeasible = residual / self.row_scale
        if self.log is not None:
            self.log(
                f"{iteration:4d}  {objective:+.10e}  {bound:+.10e}  {gap:9.2e}  {infeasible:8.2e}"
            )
        here = functools.partial(Iterate, x, y, objective, bound, residual, iteration)
        if gap <= self.tol and infeasible <= self.tol:
            return here("optimal")
        if self.polish_from is not None and gap <= self.polish_from:
            vertex = polish(self.lp, here("optimal"))
            closed = vertex.objective - vertex.bound <= self.tol * (1.0 + abs(vertex.objective))
            if closed and vertex.residual <= self.tol * self.row_scale:
                return vertex
        if iteration >= self.max_iter:
            return here("iteration_limit")
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            return here("time_limit")
        return None


def _iterate(
    lp: BoxLP, factor: Callable, barriers: _Barriers, start: tuple, stopping: _Stopping,
    backoff: float,
) -> Iterate:  # fmt: skip
    """The predictor-corrector iteration in whole-array numpy operations."""
    u, h = lp.u, lp.h
    x, y, z, w = start
    pairs = barriers.count
    iteration = 0
    while True:
        xl, s = barriers.gaps(lp, x)
        rp = lp.b - lp.times(x)
        aty = lp.transpose_times(y)
        rd = lp.c - aty - z + w
        if h is None:
            objective = float(lp.c @ x)
            bound = float(lp.b @ y) - float(u @ np.maximum(aty - lp.c, 0.0))
        else:
            rd = rd + h * x
            objective = lp.objective(x)
            bound = lp.bound(y, aty)
        residual = float(np.max(np.abs(rp), initial=0.0))
        final = stopping.verdict(x, y, objective, bound, residual, iteration)
        if final is not None:
            return final
        iteration += 1
        mu = (float(xl @ z) + float(s @ w)) / pairs if pairs else 0.0
        curvature = z / xl + w / s
        theta = 1.0 / (curvature if h is None else h + curvature)
        try:
            solve = factor(theta)
        except (la.LinAlgError, ValueError) as exc:
            note = f"the normal matrix could not be factored ({exc})"
            return Iterate(x, y, objective, bound, residual, iteration, "numerical", note)

        point = (xl, s, z, w, rp, rd, theta)
        dx, dy, dz, dw = _direction(lp, solve, point, -xl * z, -s * w)
        dxl, dxu = barriers.keep_lower(dx), barriers.keep_upper(dx)
        ap = min(_step(xl, dxl), _step(s, -dxu))
        ad = barriers.dual_step(z, dz, w, dw)
        gap_aff = float((xl + ap * dxl) @ (z + ad * dz)) + float((s - ap * dxu) @ (w + ad * dw))
        sigma = (gap_aff / (pairs * mu)) ** 3 if mu > 0 else 0.0
        target = sigma * mu
        dx, dy, dz, dw = _direction(
            lp,
            solve,
            point,
            barriers.keep_lower(target - xl * z - dx * dz),
            barriers.keep_upper(target - s * w + dx * dw),
        )
        dxl, dxu = barriers.keep_lower(dx), barriers.keep_upper(dx)
        ap = backoff * min(_step(xl, dxl), _step(s, -dxu))
        ad = backoff * barriers.dual_step(z, dz, w, dw)
        x = x + min(ap, 1.0) * dx
        y = y + min(ad, 1.0) * dy
        z = z + min(ad, 1.0) * dz
        w = w + min(ad, 1.0) * dw


def _iterate_compiled(
    lp: BoxLP, factor: Callable, barriers: _Barriers, start: tuple, stopping: _Stopping,
    backoff: float,
) -> Iterate:  # fmt: skip
    """The same iteration as :func:`_iterate`, its column work in compiled passes.

    (:mod:`._fn_vectors`: one loop per phase over buffers allocated once; the step lengths
    are computed the same way, ``backoff`` times the longest step, at most 1.)
    """
    x, y, z, w = (np.array(v, dtype=np.float64) for v in start)
    work = ColumnWork(lp.c, lp.h, lp.u, barriers.lower, barriers.upper)
    pairs = barriers.count
    iteration = 0
    aty = lp.transpose_times(y)
    while True:
        rp = lp.b - lp.times(x)
        objective, box_min, complementarity = work.measure(x, aty, z, w)
        bound = float(lp.b @ y) + box_min
        residual = float(np.max(np.abs(rp), initial=0.0))
        final = stopping.verdict(x, y, objective, bound, residual, iteration)
        if final is not None:
            return final
        iteration += 1
        mu = complementarity / pairs if pairs else 0.0
        try:
            solve = factor(work.theta)
        except (la.LinAlgError, ValueError) as exc:
            note = f"the normal matrix could not be factored ({exc})"
            return Iterate(x, y, objective, bound, residual, iteration, "numerical", note)
        dy = solve(rp + lp.times(work.rhs(False, 0.0, z, w)))
        ap, ad = work.direction(lp.transpose_times(dy), z, w)
        gap_aff = work.affine_gap(z, w, ap, ad)
        sigma = (gap_aff / (pairs * mu)) ** 3 if mu > 0 else 0.0
        dy = solve(rp + lp.times(work.rhs(True, sigma * mu, z, w)))
        aty_dy = lp.transpose_times(dy)
        ap, ad = work.direction(aty_dy, z, w)
        ap, ad = min(backoff * ap, 1.0), min(backoff * ad, 1.0)
        work.advance(x, z, w, ap, ad)
        y = y + ad * dy
        aty += ad * aty_dy  # A'y by its update: one product fewer per iteration


def polish(lp: BoxLP, point: Iterate) -> Iterate:
    r"""The vertex the interior point identifies, where it is better than the point itself.

    The ``m`` columns farthest inside their box (relative to ``u``) are taken as the basis
    :math:`B`; :math:`y_B` solves :math:`A_B^\top y = c_B` and replaces ``y`` when
    :math:`g(y_B) > g(y)`. The nonbasic columns go to the bound their reduced cost
    :math:`d = c - A^\top y_B` chooses (ties: the nearer bound of ``x``), :math:`x_B` solves
    :math:`A_B x_B = b - A_N x_N`, and the vertex replaces ``x`` when it lies in the box (to
    rounding) and its objective is not higher.
    """
    m = lp.b.size
    x, u = point.x, lp.u
    if m == 0 or m > x.size:
        return point
    inside = np.minimum(x, u - x) / u
    basis = np.argpartition(-inside, m - 1)[:m]
    A_B = lp.A[:, basis]
    A_B = A_B if lp.dense else A_B.toarray()
    try:
        with warnings.catch_warnings():  # a singular basis is expected now and then
            warnings.simplefilter("ignore", la.LinAlgWarning)
            lu = la.lu_factor(A_B, check_finite=False)
    except (la.LinAlgError, ValueError):
        return point
    if not np.all(np.isfinite(lu[0])) or np.min(np.abs(np.diag(lu[0]))) == 0.0:
        return point
    y = la.lu_solve(lu, lp.c[basis], trans=1, check_finite=False)
    y_bound = lp.bound(y)
    d = lp.c - lp.transpose_times(y)
    vertex = np.where(d > 0, 0.0, np.where(d < 0, u, np.where(x < 0.5 * u, 0.0, u)))
    vertex[basis] = 0.0
    vertex[basis] = la.lu_solve(lu, lp.b - lp.times(vertex), check_finite=False)
    slack = 1e-9 * u[basis]
    in_box = bool(np.all(vertex[basis] >= -slack) and np.all(vertex[basis] <= u[basis] + slack))
    new_x, new_obj, new_res = x, point.objective, point.residual
    new_y, new_bound = (y, y_bound) if y_bound > point.bound else (point.y, point.bound)
    if in_box:
        candidate = np.clip(vertex, 0.0, u)
        candidate_obj = float(lp.c @ candidate)
        # better than the interior point, or proven optimal by the best bound
        level = max(point.objective, new_bound)
        if candidate_obj <= level + 1e-12 * (1.0 + abs(level)):
            new_x, new_obj = candidate, candidate_obj
            new_res = float(np.max(np.abs(lp.b - lp.times(candidate)), initial=0.0))
    used = []
    if new_y is y:
        used.append("duals")
    if new_x is not x:
        used.append("primal")
    note = f"vertex polish: {', '.join(used) or 'not better'}"
    return Iterate(new_x, new_y, new_obj, new_bound, new_res, point.iterations, point.stop, note)


__all__ = ["BoxLP", "Iterate", "Stop", "frisch_newton", "polish"]
