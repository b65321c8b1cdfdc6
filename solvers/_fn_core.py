r"""The Frisch-Newton iteration: Mehrotra's predictor-corrector for an LP with boxed variables.

The problem, after the back-end (:mod:`optframe.solvers.fn`) has shifted the bounds to zero and
dropped fixed columns, is

.. math::

    \min_x \; c^\top x \quad\text{s.t.}\quad A x = b, \quad 0 \le x \le u, \qquad u > 0,

with dual :math:`\max_{y,z,w} b^\top y - u^\top w` s.t. :math:`A^\top y + z - w = c`,
:math:`z, w \ge 0`. With :math:`s = u - x` the central path is :math:`x z = s w = \mu`. One
Newton step for the residuals :math:`r_p = b - Ax`, :math:`r_d = c - A^\top y - z + w` and
complementarity targets :math:`r_{xz}`, :math:`r_{sw}` reduces, with
:math:`\theta = (z/x + w/s)^{-1}`, to the normal equations

.. math::

    (A \Theta A^\top)\, \Delta y = r_p + A\Theta\,(r_d - r_{xz}/x + r_{sw}/s), \qquad
    \Delta x = \Theta\,(A^\top \Delta y - r_d + r_{xz}/x - r_{sw}/s),

an :math:`m \times m` system (``m`` rows) factored once per iteration by a dense Cholesky and
solved twice (predictor with :math:`r_{xz} = -xz`, corrector with Mehrotra's centering
:math:`\sigma = (\mu_\text{aff}/\mu)^3` and second-order term). This is Koenker and d'Orey's
and Portnoy and Koenker's Frisch-Newton algorithm (quantreg's ``rq.fit.fnb``) for any ``A``.

For any :math:`y` the box makes the dual feasible: with :math:`d = c - A^\top y`,

.. math::

    g(y) = b^\top y - \sum_j u_j \max(-d_j, 0) \le c^\top x^\star,

so :func:`frisch_newton` stops on :math:`g(y)` (a true lower bound) rather than on the barrier's
own dual value. :func:`polish` then identifies a basis from the interior point (the ``m`` most
interior columns), solves :math:`A_B^\top y = c_B` and :math:`A_B x_B = b - A_N x_N`, and keeps
the vertex when it is better (higher :math:`g`, lower primal objective at a feasible point).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from numpy.typing import NDArray

Matrix = NDArray[np.float64] | sp.csr_array
Stop = Literal["optimal", "iteration_limit", "time_limit", "numerical"]


@dataclass(frozen=True, eq=False)
class BoxLP:
    """``min c'x s.t. A x = b, 0 <= x <= u`` with ``u > 0`` (``A`` dense C-ordered, or CSR).

    ``origin``: a point worth trying as the start (the unshifted problem's zero, which is
    feasible and interior for the LAD and quantile duals), or None.
    """

    A: Matrix
    b: NDArray[np.float64]
    c: NDArray[np.float64]
    u: NDArray[np.float64]
    origin: NDArray[np.float64] | None = None

    @property
    def dense(self) -> bool:
        """Whether ``A`` is a dense array."""
        return isinstance(self.A, np.ndarray)

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

        ``work``: an array of ``A``'s shape for the scaled copy of a dense ``A``.
        """
        if self.dense:
            scaled = np.multiply(self.A, np.sqrt(theta), out=work)
            # C-ordered (m, n): its .T is Fortran-ordered, as BLAS wants it
            return la.blas.dsyrk(1.0, scaled.T, trans=1, lower=0)
        product = (self.A * theta) @ self.A.T
        return np.asarray(product.toarray(), dtype=np.float64)

    def bound(self, y: NDArray[np.float64]) -> float:
        """The dual value ``g(y) = b'y - u' max(-(c - A'y), 0)``, a lower bound for every ``y``."""
        d = self.c - self.transpose_times(y)
        return float(self.b @ y) - float(self.u @ np.maximum(-d, 0.0))


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


def _start(lp: BoxLP, factor: Callable) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """A starting point and least-squares ``y``.

    ``x``: of the box midpoint moved toward ``A x = b`` (kept 5% inside the box) and
    ``lp.origin`` (kept 0.1% inside), the one with the smaller row residual; an infeasible start
    far from the central path costs many short steps on badly scaled data.
    """
    u = lp.u
    ones = np.ones_like(u)
    solve = factor(ones)
    x = 0.5 * u
    x = x + lp.transpose_times(solve(lp.b - lp.times(x)))
    x = np.clip(x, 0.05 * u, 0.95 * u)
    if lp.origin is not None:
        other = np.clip(lp.origin, 1e-3 * u, (1.0 - 1e-3) * u)
        if np.max(np.abs(lp.b - lp.times(other))) < np.max(np.abs(lp.b - lp.times(x))):
            x = other
    y = solve(lp.times(lp.c))
    r = lp.c - lp.transpose_times(y)
    z, w = np.maximum(r, 0.0), np.maximum(-r, 0.0)
    shift = max(float(np.mean(np.abs(r))), 1e-3 * (1.0 + float(np.max(np.abs(lp.c)))))
    return x, y, z + shift, w + shift


def _factor(lp: BoxLP) -> Callable[[NDArray], Callable[[NDArray], NDArray]]:
    """``theta -> solve`` for ``A diag(theta) A'``, regularized when it is numerically singular."""
    work = np.empty_like(lp.A) if lp.dense else None

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
    """The Newton direction for the complementarity targets ``rxz``, ``rsw`` (module docstring)."""
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

    Stops with ``"optimal"`` when :math:`(c^\top x - g(y)) / (1 + |c^\top x|) \le` ``tol`` and
    :math:`\lVert b - Ax\rVert_\infty` is at most ``tol`` times the scale of the rows; with
    ``"time_limit"`` when :func:`time.perf_counter` passes ``deadline``, ``"iteration_limit"``
    after ``max_iter`` iterations, ``"numerical"`` when the normal matrix cannot be factored.
    From the iteration whose gap is at most ``polish_from`` (``None``: never), it tries
    :func:`polish` each time and stops as soon as the vertex meets the same test.
    """
    u = lp.u
    factor = _factor(lp)
    row_scale = 1.0 + float(np.max(np.abs(lp.b), initial=0.0))
    row_scale += float(np.max(abs(lp.A) @ u, initial=0.0))
    try:
        x, y, z, w = _start(lp, factor)
    except (la.LinAlgError, ValueError) as exc:
        zero = np.zeros_like(lp.b)
        return Iterate(u * 0.5, zero, math.nan, -math.inf, math.inf, 0, "numerical", str(exc))
    n = x.size
    stop: Stop = "iteration_limit"
    note = ""
    iteration = 0
    objective = bound = residual = math.nan
    while True:
        s = u - x
        rp = lp.b - lp.times(x)
        aty = lp.transpose_times(y)
        rd = lp.c - aty - z + w
        objective = float(lp.c @ x)
        bound = float(lp.b @ y) - float(u @ np.maximum(aty - lp.c, 0.0))
        residual = float(np.max(np.abs(rp), initial=0.0))
        gap = (objective - bound) / (1.0 + abs(objective))
        infeasible = residual / row_scale
        if log is not None:
            log(f"{iteration:4d}  {objective:+.10e}  {bound:+.10e}  {gap:9.2e}  {infeasible:8.2e}")
        if gap <= tol and infeasible <= tol:
            stop = "optimal"
            break
        if polish_from is not None and gap <= polish_from:
            here = Iterate(x, y, objective, bound, residual, iteration, "optimal")
            vertex = polish(lp, here)
            closed = vertex.objective - vertex.bound <= tol * (1.0 + abs(vertex.objective))
            if closed and vertex.residual <= tol * row_scale:
                return vertex
        if iteration >= max_iter:
            break
        if deadline is not None and time.perf_counter() >= deadline:
            stop = "time_limit"
            break
        iteration += 1
        mu = (float(x @ z) + float(s @ w)) / (2 * n)
        theta = 1.0 / (z / x + w / s)
        try:
            solve = factor(theta)
        except (la.LinAlgError, ValueError) as exc:
            stop, note = "numerical", f"the normal matrix could not be factored ({exc})"
            break

        point = (x, s, z, w, rp, rd, theta)
        dx, dy, dz, dw = _direction(lp, solve, point, -x * z, -s * w)
        ap = min(_step(x, dx), _step(s, -dx))
        ad = min(_step(z, dz), _step(w, dw))
        gap_aff = float((x + ap * dx) @ (z + ad * dz)) + float((s - ap * dx) @ (w + ad * dw))
        sigma = (gap_aff / (2 * n * mu)) ** 3 if mu > 0 else 0.0
        target = sigma * mu
        dx, dy, dz, dw = _direction(
            lp, solve, point, target - x * z - dx * dz, target - s * w + dx * dw
        )
        ap = backoff * min(_step(x, dx), _step(s, -dx))
        ad = backoff * min(_step(z, dz), _step(w, dw))
        x = x + min(ap, 1.0) * dx
        y = y + min(ad, 1.0) * dy
        z = z + min(ad, 1.0) * dz
        w = w + min(ad, 1.0) * dw
    return Iterate(x, y, objective, bound, residual, iteration, stop, note)


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
