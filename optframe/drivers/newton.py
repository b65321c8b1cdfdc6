r"""A truncated Newton method on the primal of a smooth loss with the ridge penalty (LIBLINEAR's).

The driver solves the models that offer an :class:`~optframe.capabilities.ElasticNetSmoothLoss`
without an L1 part: the squared hinge (LIBLINEAR ``-s 2``, scikit-learn ``LinearSVC``'s default
path), the logistic loss (``-s 0``), least squares, Huber, expectile and the smoothed hinge,
dense or sparse, with sample weights and an unpenalized intercept. Each iteration solves the
Newton system by preconditioned conjugate gradients, stopped by the quadratic model's decrease,
and takes a backtracking line search (Galli and Lin 2021, the method of LIBLINEAR 2.40 and
later); near the end, for the logistic loss, by conjugate residuals, whose residual is the
next gradient the gap squares. The stopping rule is optframe's duality gap, not
the gradient's norm.
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
from optframe.capabilities import ElasticNetSmoothLoss, Structure
from optframe.drivers import newton_core as core
from optframe.drivers._checks import set_count, set_real
from optframe.drivers.base import Driver, RunContext, clock_timings, driver_result
from optframe.drivers.dcd import as_csr
from optframe.drivers.smooth_loss import SmoothLoss
from optframe.errors import ModelError
from optframe.jit import compile_kernels, needs_of
from optframe.model import Model
from optframe.registry import register_driver
from optframe.result import IterationRecord, Result, Status

#: Weight of the Hessian's diagonal in the preconditioner :math:`(1 - \alpha) + \alpha
#: \operatorname{diag}(H)` (LIBLINEAR's ``alpha_pcg``).
PRECONDITIONER_MIX = 0.01
#: The CG stopping ratio is at most the gradient's norm relative to the first one to this power
#: (CG steps to a certified gap of 1e-6, exponent 0.5 / 0.75 / 1: squared hinge on a9a 198 / 176
#: / 218, logistic 221 / 215 / 288, smoothed hinge 297 / 233 / 452; ijcnn1 57 / 55 / 58 and 42
#: / 36 / 42; 0.25 took twice the Newton iterations on a9a).
FORCING_EXPONENT = 0.75
#: Once the gradient's norm is within this factor of the norm that closes the gap, the logistic
#: loss's Newton systems are solved by conjugate residuals (see :func:`_closing_norm`).
RESIDUALS_FROM = 100.0
#: Conjugate residuals stop at this fraction of the gradient norm that closes the gap.
RESIDUAL_ENOUGH = 0.9
#: Conjugate gradients, whose residual is not the least, at this fraction (the CG steps to a
#: certified gap on a9a: 215 to 165 for the logistic loss, 282 to 222 for the squared hinge, 363
#: to 232 for the smoothed hinge against no such rule).
GRADIENT_ENOUGH = 0.5
#: Sufficient decrease of the line search (Armijo), and its most halvings.
ARMIJO, MAX_HALVINGS = 0.01, 60
#: Sparse data at least this dense is multiplied as a dense Fortran-ordered array (ijcnn1's 61 %
#: dense rows: X v 3.3x and X'u 3.3x faster than scipy's CSR products; a9a's 12 %: CSR 3x
#: faster).
DENSE_FROM = 1.0 / 3.0


@register_driver
@dataclass(frozen=True, eq=False)
class PrimalNewton(Driver):
    r"""Truncated Newton on the primal (LIBLINEAR ``-s 0`` and ``-s 2``), certified by the gap.

    Solves :math:`\min_{w, b} \sum_i c_i\ell(a_i) + \tfrac{\lambda_2}{2}\lVert w\rVert^2`,
    :math:`a_i = p_i + q_i(x_i^\top w + b)`, for a differentiable loss
    (:class:`~optframe.capabilities.ElasticNetSmoothLoss` with :math:`\lambda_1 = 0`). Each
    iteration

    1. evaluates the gradient :math:`g` and the dual point :math:`\theta_i = c_i\ell'(a_i)`,
       :math:`v = -q\odot\theta` (balanced to :math:`\mathbf 1^\top v = 0` with an intercept);
       the gap :math:`P(w, b) - D(\theta)` is a proven bound whatever the iterate, and the run
       stops with OPTIMAL when it is at most ``tol`` times the model's gap scale;
    2. solves :math:`H s = -g` by conjugate gradients with the preconditioner
       :math:`(1 - \alpha) + \alpha\operatorname{diag}(H)`, the Hessian
       :math:`X^\top \operatorname{diag}(c\,\ell''(a)) X + \lambda_2 I` (the generalized one at
       the kinks of :math:`\ell'`) applied as two products with the rows of nonzero curvature,
       stopping when the quadratic model's last decrease times the step count falls below
       ``cg_tol`` times its value (at most the gradient's norm relative to the first one to
       the power 3/4: tighter as the iterate converges); for the logistic loss, once the
       gradient is within a factor 100 of the norm that closes the gap without an intercept,
       by conjugate residuals without preconditioner instead, which make
       :math:`\lVert H s + g\rVert_2` (about the next gradient, whose square is the next gap)
       least; without an intercept both also stop once that residual closes the gap;
    3. takes the largest step :math:`2^{-k}` with Armijo's decrease (:math:`X s` is computed
       once: each trial is a pass over the loss arguments).

    Parameters
    ----------
    tol : float
        Relative duality gap that proves optimality (``solve(tol=...)`` overrides it).
    max_iter : int
        Newton iterations (``solve(max_iter=...)`` overrides it).
    max_cg : int
        Conjugate-gradient steps per Newton iteration (at most; also at most the unknowns).
    cg_tol : float
        The quadratic model's stopping ratio, in (0, 1) (LIBLINEAR's ``eps_cg``, 0.5).
    warm_start : array (m,), optional
        A starting :math:`w`.

    Notes
    -----
    The time goes into :math:`X v` and :math:`X^\top u`: BLAS for dense data, for CSR rows
    scipy's :math:`X s` and compiled passes (the Hessian product, :math:`X^\top u`, the
    preconditioner's diagonal, and the logistic loss with its derivatives in one pass:
    :mod:`optframe.drivers.newton_core`, compiled before the clock starts). Memory: the data
    (with a Fortran-ordered copy of dense data in C order) and a few vectors of length n.
    History extras: ``gap``, ``cg`` (its steps, conjugate residuals included), ``step``,
    ``curved`` (rows with :math:`\ell'' > 0`). ``Result.bound`` is the dual value at the last
    iterate; :func:`optframe.solve` certifies the solution from the model.

    Examples
    --------
    >>> import numpy as np, optframe as of
    >>> from optframe.data import Dataset
    >>> from optframe.losses import SquaredHinge
    >>> from optframe.models import EmpiricalRisk
    >>> from optframe.penalties import L2
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 5))
    >>> y = np.sign(X @ np.ones(5) + 0.3 * rng.normal(size=200))
    >>> model = EmpiricalRisk(Dataset(X=X, y=y), SquaredHinge(), penalty=L2(), fit_intercept=True)
    >>> of.solve(model, "newton").status
    <Status.OPTIMAL: 'optimal'>
    """

    name: ClassVar[str] = "newton"
    needs: ClassVar[tuple[type[Structure], ...]] = (ElasticNetSmoothLoss,)

    tol: float = 1e-6
    max_iter: int = 1_000
    max_cg: int = 1_000
    cg_tol: float = 0.5
    warm_start: NDArray[np.float64] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        owner = "PrimalNewton"
        set_real(self, "tol", owner)
        set_count(self, "max_iter", owner)
        set_count(self, "max_cg", owner)
        set_real(self, "cg_tol", owner)
        if not self.cg_tol < 1.0:
            raise ModelError(f"{owner}: cg_tol must lie in (0, 1); got {self.cg_tol!r}")

    def gap_tolerance(self, options: SolveOptions) -> float:
        """``gap_tol``, else ``tol`` (the relative duality gap this driver stops at)."""
        if options.gap_tol is not None:
            return float(options.gap_tol)
        return self.common_options(options, tol=self.tol, max_iter=self.max_iter).tol

    def missing(self, model: Model) -> list[str]:
        """The structure's refusal, or the L1 part this driver does not take."""
        reasons = super().missing(model)
        if reasons:
            return reasons
        problem = model.structure(ElasticNetSmoothLoss)
        if problem.lam1 > 0:
            return [
                "PrimalNewton needs a smooth objective: the penalty has an L1 part "
                f"(lambda_1 = {problem.lam1:g}); use CoordinateDescent (driver='cd')"
            ]
        return []

    def run(self, model: Model, context: RunContext) -> Result:
        """Newton steps with conjugate gradients and a line search until the gap closes."""
        options = self.common_options(context.options, tol=self.tol, max_iter=self.max_iter)
        compiled = compile_kernels(self, options.verbose, needs_of(model, self))  # before timing
        tick = time.perf_counter()
        core.warm_up()  # the loss's and the products' kernels (loaded from numba's cache)
        start = time.perf_counter()
        compiled += start - tick
        problem = model.structure(ElasticNetSmoothLoss)
        state = _Newton(problem, self.warm_start)
        built = time.perf_counter()
        tol, limit = options.tol, options.time_limit
        history: list[IterationRecord] = []
        status, iteration, gap, bound = Status.ITERATION_LIMIT, 0, math.inf, -math.inf
        cg_steps, step = 0, math.nan
        while True:
            primal, bound = state.evaluate(summed=False)
            gap = primal - bound
            record = IterationRecord(
                iteration=iteration,
                seconds=time.perf_counter() - start,
                objective=primal,
                bound=bound,
                extras={"gap": gap, "cg": cg_steps, "step": step, "curved": state.curved},
            )
            history.append(record)
            if gap <= tol * problem.gap_scale(primal):
                state.refresh()  # the arguments from scratch: no drift from the steps
                primal, bound = state.evaluate(summed=True)
                gap = primal - bound
                if gap <= tol * problem.gap_scale(primal):
                    status = Status.OPTIMAL
                    break
            if context.callback is not None and context.callback(record):
                status = Status.CONVERGED
                break
            if iteration >= options.max_iter:
                break
            if limit is not None and time.perf_counter() - start >= limit:
                status = Status.TIME_LIMIT
                break
            deadline = None if limit is None else start + limit
            direction, cg_steps = state.newton_direction(
                self.max_cg, self.cg_tol, deadline, _closing_norm(problem, tol, primal)
            )
            step = state.line_search(direction)
            iteration += 1
            if step == 0.0:  # no decrease along a descent direction: rounding, gap still open
                primal, bound = state.evaluate(summed=True)
                gap = primal - bound
                status = Status.CONVERGED
                break
        solved = time.perf_counter()
        solution = problem.recover(state.w.copy(), state.b)
        return driver_result(
            self, model, status, solution,
            bound=bound, iterations=iteration, history=history,
            timings=clock_timings(start, built, solved, compile_seconds=compiled),
            stats={"gap": gap, "cg_steps": int(sum(r.extras["cg"] for r in history))},
            backend="numba" if state.sparse else "numpy",  # the CSR Hessian product
        )  # fmt: skip


def _closing_norm(problem: ElasticNetSmoothLoss, tol: float, primal: float) -> float:
    r"""The gradient norm at which the gap closes without an intercept.

    Without an intercept the gap at :math:`w` is exactly
    :math:`\lVert\nabla_w P(w)\rVert^2 / (2\lambda_2)` (Fenchel-Young at
    :math:`\theta = c\,\ell'(a)`), so it closes at :math:`\lVert\nabla P\rVert \le
    \sqrt{2\lambda_2\,\mathrm{tol}\cdot\mathrm{scale}}`. With an intercept the balance of
    :math:`\mathbf 1^\top v = 0` adds to the gap: the norm then only says when to switch to
    conjugate residuals, and no Krylov method stops at it (as a stop it cost the smoothed hinge
    on a9a 217 Newton iterations instead of 16).
    """
    return math.sqrt(2.0 * problem.lam2 * tol * problem.gap_scale(primal))


class _Newton:
    """The iterate :math:`(w, b)`, its loss arguments and what one Newton step needs."""

    def __init__(self, problem: ElasticNetSmoothLoss, warm: NDArray[np.float64] | None) -> None:
        self.problem = problem
        self.loss = SmoothLoss(problem)
        self.logistic = self.loss.logistic
        X = problem.X
        self.X: Any = _product_layout(X)
        self.sparse = sp.issparse(self.X)
        self.csr = as_csr(self.X) if self.sparse else None
        self.c, self.p, self.q = problem.costs, problem.offset, problem.slope
        self.lam = problem.lam2
        self.intercept = problem.fit_intercept
        m = problem.m
        if warm is None:
            self.w = np.zeros(m)
        else:
            self.w = np.array(warm, dtype=np.float64).reshape(-1)
            if self.w.shape != (m,):
                raise ModelError(
                    f"PrimalNewton: warm_start must have shape ({m},); got {self.w.shape}"
                )
        self.b = 0.0
        self.slopes_at_a: tuple[float, NDArray, NDArray] | None = None
        self.refresh()
        self.curved = 0
        self.first_norms: dict[str, float] = {}  # the first gradient's, plain and preconditioned
        self.value = math.inf
        self.gradient = np.zeros(m + 1)
        self.curvature = np.zeros(problem.n)  # c * l''(a)

    def refresh(self) -> None:
        """The loss arguments :math:`a = p + q(Xw + b)` from scratch."""
        self.a = self.p + self.q * (np.asarray(self.X @ self.w).reshape(-1) + self.b)
        self.slopes_at_a = None

    def evaluate(self, summed: bool = True) -> tuple[float, float]:
        r"""``(P, D)`` at the iterate; keeps the gradient and the curvature for the step.

        Without an intercept :math:`D(\theta)` at :math:`\theta = c\,\ell'(a)` equals
        :math:`P - \lVert\nabla P\rVert^2 / (2\lambda_2)` (Fenchel-Young's equality, see
        :func:`_closing_norm`), which is returned unless ``summed``: the run sums the dual term
        by term only to confirm a gap that this value closes.
        """
        problem, c, q, w = self.problem, self.c, self.q, self.w
        if self.slopes_at_a is not None:  # the line search's accepted trial
            loss, u, self.curvature = self.slopes_at_a
            self.slopes_at_a = None
        elif self.logistic:
            u = np.empty_like(self.a)
            loss = core.logistic_slopes(self.a, c, q, u, self.curvature)
        else:
            ell, first, second = self.loss.slopes(self.a)
            self.curvature = c * second
            loss = float(c @ ell)
            u = c * q * first  # d loss / d (x_i'w + b)
        self.value = loss + 0.5 * self.lam * float(w @ w)
        self.gradient[:-1] = self.transposed_times(u) + self.lam * w
        self.gradient[-1] = float(u.sum()) if self.intercept else 0.0
        if not (self.intercept or summed):
            squared = float(self.gradient @ self.gradient)
            return self.value, self.value - 0.5 * squared / self.lam
        v = -u
        z = self.gradient[:-1] - self.lam * w  # X'u = -X'v
        if self.intercept:  # 1'v = 0: scale the larger side (optframe.duality.balance's rule)
            keep_up, keep_down = problem.balance_factors(v)
            if (keep_up, keep_down) != (1.0, 1.0):
                v = np.where(v > 0.0, v * keep_up, v * keep_down)
                z = -self.transposed_times(v)
        return self.value, problem.dual_value(-q * v, z)

    def transposed_times(self, u: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`X^\top u` (for CSR rows in one compiled pass)."""
        if self.sparse:
            indptr, indices, data = self.csr
            out = np.empty(self.w.size + 1)
            core.transposed_times(indptr, indices, data, np.ascontiguousarray(u), out)
            return out[:-1]
        return np.asarray(self.X.T @ u).reshape(-1)

    def newton_direction(
        self, max_cg: int, cg_tol: float, deadline: float | None = None, closing: float = 0.0
    ) -> tuple[NDArray[np.float64], int]:
        r"""An inexact Newton step: :math:`H s \approx -g` by a Krylov method.

        Far from the gap's end, preconditioned conjugate gradients stopped by the quadratic
        model's decrease (LIBLINEAR's rule). Once :math:`\lVert g\rVert` is within
        :data:`RESIDUALS_FROM` of ``closing`` (the gradient norm that closes the gap), conjugate
        residuals without preconditioner, which minimize :math:`\lVert H s + g\rVert_2` over the
        same Krylov space: after a full step that residual is about the next gradient, whose
        squared norm over :math:`2\lambda_2` is the next gap without an intercept; then they
        also stop once it is below :data:`RESIDUAL_ENOUGH` times ``closing`` (CG at
        :data:`GRADIENT_ENOUGH` times it). Past ``deadline`` (a ``perf_counter`` time)
        the method stops with the direction it has, a descent direction from its first step on.
        """
        rows = np.flatnonzero(self.curvature > 0)
        self.curved = int(rows.size)
        lam, intercept, d = self.lam, self.intercept, self.curvature
        damping = self._damping()
        if self.sparse:  # one pass over the curved rows (newton_core)
            indptr, indices, data = self.csr
            curved = rows.astype(np.uint64)

            def hessian_times(s: NDArray[np.float64]) -> NDArray[np.float64]:
                out = np.empty_like(s)
                core.hessian_product(
                    indptr, indices, data, curved, d, s, intercept, lam, damping, out
                )
                return out

        else:
            X = self.X

            def hessian_times(s: NDArray[np.float64]) -> NDArray[np.float64]:
                fitted = d * (X @ s[:-1] + s[-1])
                out = np.empty_like(s)
                out[:-1] = X.T @ fitted + lam * s[:-1]
                out[-1] = float(fitted.sum()) + damping * s[-1] if intercept else 0.0
                return out

        g = self.gradient
        norm = float(np.linalg.norm(g))
        self.first_norms.setdefault("plain", norm)
        stopping = 0.0 if intercept else closing  # the residual that closes the gap, if known
        if self.logistic and closing > 0.0 and norm <= RESIDUALS_FROM * closing:
            relative = norm / max(self.first_norms["plain"], 1e-300)
            stop = _Stop(max_cg, _forcing(cg_tol, relative), RESIDUAL_ENOUGH * stopping, deadline)
            s, steps = _conjugate_residuals(hessian_times, g, stop)
        else:
            inverse = self._preconditioner()
            scaled = math.sqrt(max(float(g @ (g * inverse)), 0.0))  # the norm CG reduces
            relative = scaled / max(self.first_norms.setdefault("scaled", scaled), 1e-300)
            stop = _Stop(max_cg, _forcing(cg_tol, relative), GRADIENT_ENOUGH * stopping, deadline)
            s, steps = _conjugate_gradients(hessian_times, g, inverse, stop)
        if not intercept:
            s[-1] = 0.0
        return s, steps

    def _damping(self) -> float:
        r"""What the intercept's diagonal entry of :math:`H` gets in place of a penalty.

        :math:`\lambda_2` for the ReHU losses: where no sample has curvature (Huber's residuals
        all in its linear arms, every margin beyond the squared hinge's) the intercept's row of
        H is 0 and the Newton step along :math:`b` unbounded. Nothing for the logistic loss,
        whose curvature is positive at every sample: there the damping made the step inexact
        where the intercept is nearly a combination of the columns (a9a's one-hot groups each
        sum to 1; columns far from 0), and Newton's convergence linear: on a9a 13 to 16
        iterations against 7, on two columns centred at 100 the iteration limit against 2.
        """
        return 0.0 if self.logistic else self.lam

    def _preconditioner(self) -> NDArray[np.float64]:
        r"""The inverse of :math:`(1 - \alpha) + \alpha\operatorname{diag}(H)` (LIBLINEAR's)."""
        d = self.curvature
        diagonal = np.empty(self.w.size + 1)
        if self.sparse:
            indptr, indices, data = self.csr
            core.squares_times(indptr, indices, data, d, diagonal)
        else:
            diagonal[:-1] = np.einsum("ij,ij,i->j", self.X, self.X, d)
        diagonal[:-1] += self.lam
        diagonal[-1] = float(d.sum()) + self._damping() if self.intercept else 1.0
        return 1.0 / ((1.0 - PRECONDITIONER_MIX) + PRECONDITIONER_MIX * diagonal)

    def line_search(self, s: NDArray[np.float64]) -> float:
        """Halve the step from 1 until Armijo's decrease holds; update the iterate (0: none).

        A logistic trial is evaluated with its derivatives (one pass, one exponential per
        sample); the accepted trial's are what :meth:`evaluate` takes next.
        """
        moved = self.q * (np.asarray(self.X @ s[:-1]).reshape(-1) + s[-1])
        w, sw = self.w, s[:-1]
        wTw, wTs, sTs = float(w @ w), float(w @ sw), float(sw @ sw)
        slope = float(self.gradient @ s)
        if not slope < 0.0:
            return 0.0
        step = 1.0
        for _ in range(MAX_HALVINGS):
            trial = self.a + step * moved
            if self.logistic:
                u, curvature = np.empty_like(trial), np.empty_like(trial)
                loss = core.logistic_slopes(trial, self.c, self.q, u, curvature)
            else:
                loss = float(self.c @ self.loss.value(trial))
            value = loss + 0.5 * self.lam * (wTw + 2.0 * step * wTs + step * step * sTs)
            if value - self.value <= ARMIJO * step * slope:
                self.w = w + step * sw
                self.b += step * float(s[-1])
                self.a = trial
                self.slopes_at_a = (loss, u, curvature) if self.logistic else None
                return step
            step *= 0.5
        return 0.0


def _forcing(cg_tol: float, relative: float) -> float:
    """The quadratic model's stopping ratio: ``cg_tol``, at most ``relative`` to a power."""
    return min(cg_tol, relative**FORCING_EXPONENT)


@dataclass(frozen=True)
class _Stop:
    """When a Krylov method stops: steps, the quadratic model's forcing, a residual, a time."""

    max_steps: int
    forcing: float
    residual: float
    deadline: float | None

    def reached(self, steps: int, quadratic: float, change: float, r: NDArray) -> bool:
        """Whether to stop after ``steps`` steps (the model's value and last change, residual)."""
        if steps * change >= self.forcing * quadratic:
            return True
        if self.residual > 0.0 and float(r @ r) <= self.residual * self.residual:
            return True
        return self.deadline is not None and time.perf_counter() >= self.deadline


def _conjugate_gradients(
    hessian_times: Callable[[NDArray], NDArray],
    g: NDArray[np.float64],
    inverse: NDArray[np.float64],
    stop: _Stop,
) -> tuple[NDArray[np.float64], int]:
    """Preconditioned CG on :math:`H s = -g` (``inverse``: the preconditioner's inverse)."""
    s = np.zeros_like(g)
    r = -g
    zr = r * inverse
    direction = zr.copy()
    rz = float(zr @ r)
    quadratic, steps = 0.0, 0
    for steps in range(1, min(stop.max_steps, g.size) + 1):
        Hd = hessian_times(direction)
        dHd = float(direction @ Hd)
        if dHd <= 1e-16:
            break
        alpha = rz / dHd
        s += alpha * direction
        r -= alpha * Hd
        new_quadratic = -0.5 * (float(s @ r) - float(s @ g))
        change = new_quadratic - quadratic
        if not (new_quadratic <= 0.0 and change <= 0.0):
            break
        if stop.reached(steps, new_quadratic, change, r):
            break
        quadratic = new_quadratic
        zr = r * inverse
        rz_new = float(zr @ r)
        direction = zr + (rz_new / rz) * direction
        rz = rz_new
    return s, steps


def _conjugate_residuals(
    hessian_times: Callable[[NDArray], NDArray], g: NDArray[np.float64], stop: _Stop
) -> tuple[NDArray[np.float64], int]:
    r"""Conjugate residuals on :math:`H s = -g`, without preconditioner.

    Each step's :math:`s` makes :math:`\lVert H s + g\rVert_2` least over the Krylov space
    (Hestenes and Stiefel 1952; MINRES's iterates for a positive definite H). One product per
    step: :math:`H p` follows from :math:`H r` by the recurrence. The quadratic model decreases
    at every step too (Fong and Saunders 2012), so the stopping rules of
    :func:`_conjugate_gradients` apply.
    """
    s = np.zeros_like(g)
    r = -g
    Hr = hessian_times(r)
    rHr = float(r @ Hr)
    p, Hp = r.copy(), Hr.copy()
    quadratic, steps, limit = 0.0, 1, min(stop.max_steps, g.size)
    for steps in range(1, limit + 1):
        HpHp = float(Hp @ Hp)
        if rHr <= 1e-16 or HpHp <= 1e-300:
            break
        alpha = rHr / HpHp
        s += alpha * p
        r -= alpha * Hp
        new_quadratic = -0.5 * (float(s @ r) - float(s @ g))
        change = new_quadratic - quadratic
        if not (new_quadratic <= 0.0 and change <= 0.0):
            break
        if stop.reached(steps, new_quadratic, change, r) or steps == limit:
            break
        quadratic = new_quadratic
        Hr = hessian_times(r)
        rHr_new = float(r @ Hr)
        beta = rHr_new / rHr
        p = r + beta * p
        Hp = Hr + beta * Hp
        rHr = rHr_new
    return s, steps


def _product_layout(X: Any) -> Any:
    r"""``X`` in the layout its products are fastest in: CSR, or dense in Fortran order.

    Dense data (and sparse data at least :data:`DENSE_FROM` dense, which then takes at most
    twice its sparse memory) is copied to Fortran order unless it is in it already: both
    :math:`X v` and :math:`X^\top u` then read it by columns, 2x to 3x faster than in C order.
    """
    if sp.issparse(X):
        n, m = X.shape
        if X.nnz < DENSE_FROM * n * m:
            return sp.csr_array(X, dtype=np.float64)
        X = X.toarray()
    return np.asfortranarray(X, dtype=np.float64)
