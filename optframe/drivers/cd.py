r"""Primal coordinate descent for L1 and elastic-net models with a smooth loss, Gap Safe screened.

The driver solves any model that offers an :class:`~optframe.capabilities.ElasticNetSmoothLoss`:
least squares, squared hinge, Huber, expectile (ReHU pieces) or logistic loss with
:math:`\lambda_1\lVert w\rVert_1 + \tfrac{\lambda_2}{2}\lVert w\rVert^2`, dense or sparse
columns, sample weights and an unpenalized intercept. The steps are those of glmnet and skglm
(:mod:`optframe.drivers.cd_core`), on working sets of features chosen as skglm chooses them
(Bertrand et al. 2022); features proven zero at the optimum by the Gap Safe sphere (Ndiaye et
al. 2017) are removed for good. The certificate is the Fenchel dual at the rescaled dual point
Gap Safe builds (:class:`~optframe.capabilities.ElasticNetSmoothLoss`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from optframe.backend import SolveOptions
from optframe.capabilities import ElasticNetSmoothLoss, Structure
from optframe.drivers import cd_core as core
from optframe.drivers._checks import set_count, set_real
from optframe.drivers.base import Driver, RunContext, clock_timings, driver_result
from optframe.errors import ModelError
from optframe.jit import compile_kernels, needs_of
from optframe.model import Model
from optframe.registry import register_driver
from optframe.result import IterationRecord, Result, Status

#: Relative margin under :math:`\lambda_1` a feature's sphere test must clear (rounding in the
#: correlations: a test against exactly :math:`\lambda_1` wrongly screened active features at
#: gaps near 1e-13 in the checks of the Gap Safe note).
SCREEN_MARGIN = 1e-9
#: Outer iterations without any decrease of the objective after which the run stops
#: (CONVERGED: the gap stays open though every working set is solved).
STALL_ITERATIONS = 5
#: Coordinate epochs on each proximal Newton step's second-order model (at most).
MAX_MODEL_EPOCHS = 20
#: The model's coordinate epochs stop when their largest move (times its curvature) is below
#: this fraction of the step's subdifferential distance.
MODEL_RATIO = 0.1


@register_driver
@dataclass(frozen=True, eq=False)
class CoordinateDescent(Driver):
    r"""Primal coordinate descent with working sets and Gap Safe screening (L1, elastic net).

    Solves :math:`\min_{w,b} \sum_i c_i\ell(a_i) + \lambda_1\lVert w\rVert_1 +
    \tfrac{\lambda_2}{2}\lVert w\rVert^2` for a differentiable loss with
    :math:`\ell'' \le L` (:class:`~optframe.capabilities.ElasticNetSmoothLoss`). Each outer
    iteration

    1. computes the dual point :math:`\theta_i = c_i\ell'(a_i)`, :math:`v = -q\odot\theta`,
       balanced to :math:`\mathbf 1^\top v = 0` with an intercept, and for the lasso scaled by
       :math:`\min(1, \lambda_1/\lVert X^\top v\rVert_\infty)`; the gap
       :math:`G = P(w, b) - D(\theta)` (a proven bound whatever the iterate);
    2. stops with OPTIMAL when :math:`G \le` ``tol`` times the model's gap scale;
    3. screens feature :math:`j` when :math:`\lvert x_j^\top v\rvert + \sqrt{2 G L_j} <
       \lambda_1 (1 - 10^{-9})` (:math:`L_j = L\sum_i c_i x_{ij}^2`), setting
       :math:`w_j = 0` for good;
    4. picks a working set: the support and the features with the largest distance of
       :math:`-\nabla_j` to :math:`\partial(\lambda_1\lvert w_j\rvert + \tfrac{\lambda_2}2
       w_j^2)`, at least ``ws_start`` and twice the support;
    5. runs proximal Newton steps on it (or cyclic coordinate epochs) until its largest
       distance is below ``inner_ratio`` times the outer one (or ``max_epochs`` of them).

    Parameters
    ----------
    tol : float
        Relative duality gap that proves optimality (``solve(tol=...)`` overrides it).
    max_outer : int
        Outer iterations (``solve(max_iter=...)`` overrides it).
    max_epochs : int
        Proximal Newton steps (or epochs) per working-set solve.
    ws_start : int
        The smallest working set.
    inner_ratio : float
        The inner solve's tolerance relative to the outer score, in (0, 1).
    screening : bool
        Gap Safe screening.
    working_sets : bool
        Working sets; ``False`` runs every epoch over every unscreened feature.
    prox_newton : bool
        Solve each working set by proximal Newton steps (newGLMNET, skglm's ``ProxNewton``):
        the loss's second-order model minimized by coordinate descent (no exponential or
        division per step), then a line search; with an intercept the model is minimized over
        it after every coordinate step (centered columns, without centering them). ``False``:
        coordinate steps on the loss itself (3x to 16x slower on a9a, whose columns are not
        centered).
    newton : bool
        With ``prox_newton=False``: try the coordinate Newton step (local curvature) before
        the Lipschitz one.
    warm_start : array (m,), optional
        A starting :math:`w`.

    Notes
    -----
    ``Result.bound`` is the dual value at the last point; :func:`optframe.solve` recomputes the
    certificate from the model. History extras: ``gap``, ``screened`` (features removed so far),
    ``working_set`` (its size), ``epochs`` (inner epochs of that iteration), ``score``.
    Stats: ``epochs``, ``screened`` (a count) and ``screened_features`` (their indices),
    ``support``, ``gap``.
    """

    name: ClassVar[str] = "cd"
    needs: ClassVar[tuple[type[Structure], ...]] = (ElasticNetSmoothLoss,)

    tol: float = 1e-6
    max_outer: int = 1_000
    max_epochs: int = 10_000
    ws_start: int = 10
    inner_ratio: float = 0.1
    screening: bool = True
    working_sets: bool = True
    newton: bool = True
    prox_newton: bool = True
    warm_start: NDArray[np.float64] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        owner = "CoordinateDescent"
        set_real(self, "tol", owner)
        set_count(self, "max_outer", owner)
        set_count(self, "max_epochs", owner)
        set_count(self, "ws_start", owner)
        set_real(self, "inner_ratio", owner)
        if not self.inner_ratio < 1.0:
            raise ModelError(f"{owner}: inner_ratio must lie in (0, 1); got {self.inner_ratio!r}")
        for flag in ("screening", "working_sets", "newton", "prox_newton"):
            value = getattr(self, flag)
            if not isinstance(value, bool | np.bool_):
                raise ModelError(f"{owner}: {flag} must be True or False; got {value!r}")
            object.__setattr__(self, flag, bool(value))

    def gap_tolerance(self, options: SolveOptions) -> float:
        """``gap_tol``, else ``tol`` (the relative duality gap this driver stops at)."""
        if options.gap_tol is not None:
            return float(options.gap_tol)
        return self.common_options(options, tol=self.tol, max_iter=self.max_outer).tol

    def run(self, model: Model, context: RunContext) -> Result:
        """Solve by working-set coordinate descent; certify with the Gap Safe dual point."""
        options = self.common_options(context.options, tol=self.tol, max_iter=self.max_outer)
        compiled = compile_kernels(self, options.verbose, needs_of(model, self))  # before timing
        start = time.perf_counter()
        problem = model.structure(ElasticNetSmoothLoss)
        state = _State(problem, self.warm_start)
        built = time.perf_counter()
        tol, limit = options.tol, options.time_limit
        history: list[IterationRecord] = []
        status, epochs_total, outer = Status.ITERATION_LIMIT, 0, 0
        gap = math.inf
        primal = bound = math.nan
        epochs, stalled, lowest = 0, 0, math.inf
        while outer < options.max_iter:
            primal, bound, z_raw, z_hat = state.gap()
            gap = primal - bound
            if gap <= tol * problem.gap_scale(primal) and not state.exact:
                primal += state.drift()  # the claim rests on the loss arguments from scratch
                gap = primal - bound
            stalled = stalled + 1 if primal >= lowest - 1e-15 * abs(lowest) else 0
            lowest = min(lowest, primal)
            closed = gap <= tol * problem.gap_scale(primal)
            if self.screening and not closed:
                state.screen(z_hat, gap)
            scores = state.scores(z_raw)
            record = IterationRecord(
                iteration=outer,
                seconds=time.perf_counter() - start,
                objective=primal,
                bound=bound,
                extras={"gap": gap, "screened": state.screened, "epochs": epochs,
                        "score": float(scores.max(initial=0.0)),
                        "working_set": int(state.last_ws)},
            )  # fmt: skip
            history.append(record)
            if closed:
                status = Status.OPTIMAL
                break
            if context.callback is not None and context.callback(record):
                status = Status.CONVERGED
                break
            if limit is not None and time.perf_counter() - start >= limit:
                status = Status.TIME_LIMIT
                break
            largest = max(float(scores.max(initial=0.0)), state.intercept_score)
            if largest == 0.0 or stalled >= STALL_ITERATIONS:
                # stationary, or the objective no longer goes down, yet the gap is open: the
                # rounding of the dual point (or a structure whose curvature bound is wrong)
                status = Status.CONVERGED
                break
            ws = state.working_set(scores, self.ws_start, self.working_sets)
            inner = self.inner_ratio * largest
            if self.prox_newton:
                epochs = state.newton(ws, self.max_epochs, inner, start, limit)
            else:
                epochs = state.descend(ws, self.max_epochs, inner, self.newton, start, limit)
            epochs_total += epochs
            outer += 1
        solved = time.perf_counter()
        solution = problem.recover(state.w.copy(), float(state.intercept[0]))
        # at OPTIMAL the last gap's primal is P at the solution (nothing moved w since)
        objective = primal if status is Status.OPTIMAL else None
        return driver_result(
            self, model, status, solution, objective=objective,
            bound=bound, iterations=outer, history=history,
            timings=clock_timings(start, built, solved, compile_seconds=compiled),
            stats={"epochs": epochs_total, "screened": state.screened,
                   "support": int(np.count_nonzero(state.w)), "gap": gap,
                   "screened_features": np.flatnonzero(~state.active)},
            backend="numba",
        )  # fmt: skip


def _excess(problem: ElasticNetSmoothLoss, z: NDArray[np.float64]) -> float:
    r"""The dual's penalty term :math:`\sum_j (\lvert z_j\rvert - \lambda_1)_+^2 / (2\lambda_2)`.

    0 for the lasso, whose :math:`z` is scaled into the ball; as the structure's
    :meth:`~optframe.capabilities.ElasticNetSmoothLoss.dual_value` has it.
    """
    if not problem.lam2 > 0:
        return 0.0
    spill = np.maximum(np.abs(z) - problem.lam1, 0.0)
    return float(spill @ spill) / (2.0 * problem.lam2)


class _State:
    """The iterate of one run: :math:`w`, :math:`b`, the loss arguments and the kept columns."""

    def __init__(self, problem: ElasticNetSmoothLoss, warm: NDArray[np.float64] | None) -> None:
        self.problem = problem
        self.columns = core.as_columns(problem.X)
        self.kind = core.LOGISTIC if problem.loss == "logistic" else core.REHU
        self.pieces = np.ascontiguousarray(problem.pieces, dtype=np.float64).reshape(-1, 3)
        self.c, self.q, self.p = problem.costs, problem.slope, problem.offset
        m = problem.m
        weighted, squares = np.zeros(m), np.zeros(m)
        core.column_norms(*self.columns, self.c, weighted, squares)
        self.lip = problem.curvature * weighted
        self.norms = np.sqrt(squares)  # Euclidean, for the bound of :meth:`_products`
        self.lip_b = problem.curvature * float(self.c.sum()) if problem.fit_intercept else 0.0
        if warm is None:
            self.w = np.zeros(m)
        else:
            self.w = np.array(warm, dtype=np.float64).reshape(-1)
            if self.w.shape != (m,):
                raise ModelError(
                    f"CoordinateDescent: warm_start must have shape ({m},); got {self.w.shape}"
                )
        self.intercept = np.zeros(1)
        self.active = np.ones(m, dtype=bool)
        self.every = np.arange(m, dtype=np.int64)
        self.kept = self.every
        #: (v_bal, X'v_bal) of the last pass over every column, for :meth:`_products`' bound
        self.reference: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None
        self.screened = 0
        self.last_ws = 0
        self.intercept_score = 0.0
        n = problem.n
        self.raw, self.hess, self.values = np.empty(n), np.empty(n), np.empty(n)
        self.a = np.empty(n)
        self.loss = math.nan
        self.exact = False  # whether a, raw, hess and loss are those of (w, b) from scratch
        self.fresh = False  # whether raw, hess and loss are those of a
        self.refresh()

    def refresh(self) -> None:
        """``a`` from scratch (no drift from the incremental updates), then its loss terms."""
        support = np.flatnonzero(self.w).astype(np.int64)
        core.fit_argument(
            *self.columns, self.w, support, float(self.intercept[0]), self.p, self.q, self.a
        )  # fmt: skip
        self.loss = core.evaluate(
            self.kind, self.pieces, self.a, self.c, self.q, self.raw, self.hess, self.values
        )  # fmt: skip
        self.exact = self.fresh = True

    def drift(self) -> float:
        r"""A bound on :math:`P` at :math:`a` from scratch minus :math:`P` at the kept :math:`a`.

        With :math:`\delta = a^{scratch} - a` and :math:`0 \le \ell'' \le L`,
        :math:`\sum_i c_i(\ell(a_i + \delta_i) - \ell(a_i)) \le \sum_i \lvert c_i\ell'(a_i)
        \rvert\lvert\delta_i\rvert + \tfrac L2\sum_i c_i\delta_i^2` (the descent lemma). The
        dual point needs no such term: any :math:`\theta` made feasible gives a bound.
        """
        exact = np.empty(self.problem.n)
        support = np.flatnonzero(self.w).astype(np.int64)
        core.fit_argument(
            *self.columns, self.w, support, float(self.intercept[0]), self.p, self.q, exact
        )  # fmt: skip
        moved = exact - self.a
        first = float(np.abs(self.raw) @ np.abs(moved))
        return first + 0.5 * self.problem.curvature * float(self.c @ (moved * moved))

    def gap(self) -> tuple[float, float, NDArray[np.float64], NDArray[np.float64]]:
        r"""``(P, D, X'v_raw, X'v_hat)`` at the current iterate.

        :math:`v_{raw} = -q\odot\theta` with :math:`\theta_i = c_i\ell'(a_i)`; with an
        intercept its larger side is scaled so that :math:`\mathbf 1^\top v = 0`
        (:func:`optframe.duality.balance`'s rule), for the lasso all of it by
        :math:`\min(1, \lambda_1/\lVert X^\top v\rVert_\infty)`: :math:`\hat v`. The loss
        terms are those the last Newton step left (its line search evaluated them), recomputed
        only when stale; :meth:`drift` bounds what the increments of ``a`` may have moved.
        """
        problem = self.problem
        if not self.fresh:
            self.refresh()
        q = self.q
        lam1, lam2 = problem.lam1, problem.lam2
        lo, hi = problem.domain
        v = np.empty(problem.n)
        core.multipliers(q, self.c, self.raw, lo, hi, v)
        w = self.w
        primal = self.loss + lam1 * float(np.abs(w).sum()) + 0.5 * lam2 * float(w @ w)
        keep_up = keep_down = scale = 1.0
        if problem.fit_intercept:  # 1'v = 0: scale the larger side (balance's rule)
            self.intercept_score = abs(float(v.sum()))
            keep_up, keep_down = problem.balance_factors(v)
        z_raw, z = self._products(v, keep_up, keep_down)
        if lam2 == 0.0:  # the lasso: into the ball ||X'v||_inf <= lambda_1
            largest = float(np.max(np.abs(z), initial=0.0))
            if largest > lam1:
                scale = lam1 / largest
                z = z * scale
        if self.kind == core.LOGISTIC:  # the entropy's sum compiled (the structure's, in numba)
            loss_part = core.logistic_dual_loss(
                q, self.c, self.p, v, self.a, self.values, keep_up, keep_down, scale
            )
            return primal, loss_part - _excess(problem, z), z_raw, z
        if problem.fit_intercept:
            v = np.where(v > 0.0, v * keep_up, v * keep_down)
        return primal, problem.dual_value(-q * (v * scale), z), z_raw, z

    def _products(
        self, v: NDArray[np.float64], keep_up: float, keep_down: float
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        r"""``(X'v, X'v_bal)``, :math:`v_{bal}` with its sides scaled by ``keep_up``, ``keep_down``.

        Screened columns are skipped where a bound proves them harmless: with :math:`z^0 =
        X^\top v^0_{bal}` from the last pass over every column, :math:`\lvert x_j^\top
        v_{bal}\rvert \le \lvert z^0_j\rvert + \lVert x_j\rVert\,\lVert v_{bal} -
        v^0_{bal}\rVert` (Cauchy-Schwarz). A screened column whose bound is at most
        :math:`\lambda_1` (and for the lasso at most the largest kept :math:`\lvert z_j\rvert`)
        changes neither the lasso's scaling nor the elastic net's penalty term, and its entry is
        left 0; the others are multiplied (every column, and :math:`(v^0_{bal}, z^0)` renewed,
        when they are more than half the screened ones).
        """
        problem = self.problem
        balanced = v
        if problem.fit_intercept:
            balanced = np.where(v > 0.0, v * keep_up, v * keep_down)
        skip = self.screened > 0 and self.reference is not None
        z_raw, z = self._multiply(v, keep_up, keep_down, self.kept if skip else self.every)
        if not skip:
            self.reference = (balanced.copy(), z.copy())
            return z_raw, z
        assert self.reference is not None
        base, products = self.reference
        drift = float(np.linalg.norm(balanced - base))
        out = np.flatnonzero(~self.active)
        limit = problem.lam1
        if problem.lam2 == 0.0:
            limit = max(limit, float(np.max(np.abs(z), initial=0.0)))
        bounds = np.abs(products[out]) + self.norms[out] * drift
        doubtful = out[bounds * (1.0 + SCREEN_MARGIN) > limit]
        if doubtful.size == 0:
            return z_raw, z
        if 2 * doubtful.size > out.size:
            z_raw, z = self._multiply(v, keep_up, keep_down, self.every)
            self.reference = (balanced.copy(), z.copy())
            return z_raw, z
        more_raw, more = self._multiply(v, keep_up, keep_down, doubtful)
        z_raw[doubtful], z[doubtful] = more_raw[doubtful], more[doubtful]
        return z_raw, z

    def _multiply(
        self, v: NDArray[np.float64], keep_up: float, keep_down: float, columns: NDArray[np.int64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(X'v, X'v_bal)`` on ``columns``, 0 elsewhere."""
        m = self.problem.m
        if self.problem.fit_intercept:
            z_pos, z_neg = np.zeros(m), np.zeros(m)
            core.split_products(*self.columns, v, columns, z_pos, z_neg)
            return z_pos + z_neg, z_pos * keep_up + z_neg * keep_down
        z_raw = np.zeros(m)
        core.column_products(*self.columns, v, columns, z_raw)
        return z_raw, z_raw

    def screen(self, z_hat: NDArray[np.float64], gap: float) -> None:
        """Remove the features the Gap Safe sphere proves zero; their :math:`w_j` becomes 0."""
        if not math.isfinite(gap) or gap < 0.0:
            return
        threshold = self.problem.lam1 * (1.0 - SCREEN_MARGIN)
        out = np.zeros(self.problem.m, dtype=np.bool_)
        if not core.sphere_test(z_hat, self.lip, gap, threshold, self.kept, out):
            return
        moved = out & (self.w != 0.0)
        self.w[out] = 0.0
        if moved.any():
            self.refresh()
        self.active &= ~out
        self.screened = int((~self.active).sum())
        self.kept = np.flatnonzero(self.active).astype(np.int64)

    def scores(self, z_raw: NDArray[np.float64]) -> NDArray[np.float64]:
        r"""The distance of :math:`-\nabla_j` to the penalty's subdifferential, per feature."""
        out = np.zeros(self.problem.m)
        core.subdifferential_distances(
            z_raw, self.w, self.problem.lam1, self.problem.lam2, self.kept, out
        )  # fmt: skip
        return out

    def working_set(self, scores: NDArray[np.float64], start: int, use: bool) -> NDArray[np.int64]:
        """The support and the top-scored features (all active features without working sets)."""
        kept = self.kept
        if not use:
            self.last_ws = kept.size
            return kept
        support = self.w[kept] != 0.0
        size = min(max(start, 2 * int(support.sum())), kept.size)
        priority = scores[kept]
        priority[support] = np.inf
        top = kept if size >= kept.size else kept[np.argpartition(-priority, size - 1)[:size]]
        ws = np.sort(top)
        self.last_ws = ws.size
        return ws

    def newton(
        self,
        ws: NDArray[np.int64],
        max_steps: int,
        tol: float,
        start: float,
        limit: float | None,
    ) -> int:
        """Proximal Newton steps on ``ws`` until their score is below ``tol``."""
        problem = self.problem
        if not self.fresh:
            self.refresh()
        done = 0
        chunk = 5
        while done < max_steps:
            budget = min(chunk, max_steps - done)
            ran, score, self.loss = core.run_prox_newton(
                *self.columns, self.q, self.c, self.kind, self.pieces, self.lip,
                problem.lam1, problem.lam2, ws, self.w, self.a, self.raw, self.hess, self.values,
                self.loss,
                self.intercept, problem.fit_intercept, budget, MAX_MODEL_EPOCHS, MODEL_RATIO, tol,
            )  # fmt: skip
            if ran:
                self.exact = False
            done += int(ran)
            if score <= tol or ran < budget:
                break
            if limit is not None and time.perf_counter() - start >= limit:
                break
            chunk = min(2 * chunk, 100)
        return done

    def descend(
        self,
        ws: NDArray[np.int64],
        max_epochs: int,
        tol: float,
        newton: bool,
        start: float,
        limit: float | None,
    ) -> int:
        """Epochs on ``ws`` until their score is below ``tol``, in chunks that watch the clock."""
        problem = self.problem
        done = 0
        chunk = 10
        while done < max_epochs:
            budget = min(chunk, max_epochs - done)
            ran, score = core.run_epochs(
                *self.columns, self.q, self.c, self.kind, self.pieces, self.lip,
                problem.lam1, problem.lam2, ws, self.w, self.a, self.intercept,
                problem.fit_intercept, self.lip_b, newton, budget, tol,
            )  # fmt: skip
            self.exact = self.fresh = False
            done += int(ran)
            if score <= tol:
                break
            if limit is not None and time.perf_counter() - start >= limit:
                break
            chunk = min(2 * chunk, 1000)
        return done
