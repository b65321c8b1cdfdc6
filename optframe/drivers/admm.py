r"""ADMM for the elastic-net (+ knowledge) SVM, and HIPAD: ADMM until the support settles, then IPM.

Both drivers need the model to offer :class:`~optframe.capabilities.ElasticNetKnowledge`; they
never import a model. The reduced problem of HIPAD's phase 2 is the structure's
``restrict_features`` model, solved by :class:`~optframe.drivers.direct.Direct` on an
interior-point back-end.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray

from optframe.backend import SolveOptions
from optframe.capabilities import ElasticNetKnowledge, Structure
from optframe.drivers._checks import Choice, set_choice, set_count, set_real
from optframe.drivers.admm_core import ADMMIteration
from optframe.drivers.base import Driver, RunContext, clock_timings, driver_result
from optframe.drivers.direct import Direct
from optframe.model import Model, Solution
from optframe.registry import register_driver
from optframe.result import IterationRecord, Result, Status

__all__ = ["ADMM", "ADMMThenIPM", "ElasticNetKnowledge", "Order", "Stop"]


@dataclass
class _Run:
    """What one ADMM phase produced."""

    it: ADMMIteration
    status: Status
    history: list[IterationRecord]
    support_history: list[int]
    switched: bool = False


def _blas_threads(threads: int | None) -> Any:
    """Limit BLAS threads to ``solve(threads=...)`` during the NumPy phase (threadpoolctl).

    Measured reason: a 500 x 500 Cholesky took 0.8 s with two OpenBLAS threads on a loaded
    2-core machine, and 3 ms with one.
    """
    if threads is None:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return contextlib.nullcontext()
    return threadpool_limits(limits=threads, user_api="blas")


class Order(Choice):
    """:class:`ADMM`'s sweep: Gauss-Seidel, or the printed Algorithm 0.A.2 (stale ``u``)."""

    GAUSS_SEIDEL = "gauss-seidel"
    PRINTED = "printed"


class Stop(Choice):
    """:class:`ADMM`'s stopping rule: relative residuals, or the paper's rule."""

    RESIDUAL = "residual"
    PAPER = "paper"


@register_driver
@dataclass(frozen=True)
class ADMM(Driver):
    r"""ADMM-ENSVM and ADMM-ENK (Ye, Chen and Xie's splitting; Qin et al., Algorithms 0.A.1-0.A.2).

    Each sweep solves the (w, b) system exactly (factorized once per penalty value: Cholesky of
    the (m+1)-square matrix when m < N, else Woodbury with an N-square Cholesky), then per
    knowledge set the k-square u-system and :math:`t = \max(0, u - \gamma_u/\mu)`, then the exact
    proximal steps :math:`a = S_{c/\mu}(e + \gamma_1/\mu - y\circ(Xw + b))`,
    :math:`c = T_{\lambda_1/\mu}(w + \gamma_2/\mu)`,
    :math:`q_k = S_{\rho_h/\mu}(d_k^\top u_k - \ell_k b + 1 + \gamma_{q,k}/\mu)`, and the multiplier
    steps (see :mod:`optframe.drivers.admm_core`).

    Parameters
    ----------
    mu : float
        Initial common penalty :math:`\mu` (every :math:`\mu_j`; the paper gives no value).
    adaptive : bool
        Residual balancing (Boyd et al. 2011, section 3.4.1): every ``adapt_every`` sweeps, if the
        relative primal residual exceeds ``adapt_ratio`` times the relative dual one,
        :math:`\mu \leftarrow 2\mu`; in the opposite case :math:`\mu \leftarrow \mu/2`; each change
        refactorizes the (w, b) and u systems (the multipliers are unscaled, so they are kept).
    adapt_every, adapt_ratio : int, float
        Defaults 10 and 10.
    order : Order or {"gauss-seidel", "printed"}
        ``"gauss-seidel"`` (default, converges) or the literal printed Algorithm 0.A.2 whose q-step
        reads the stale :math:`u^k` (diverges, hipad.md section 4.6; kept for the record).
    stop : Stop or {"residual", "paper"}
        ``"residual"`` (default): relative primal and dual residuals at most ``tol``.
        ``"paper"``: the paper's rule (hipad.md section 1.5): relative objective change and every
        primal residual at most ``tol``, and :math:`\lVert w^{k+1}-w^k\rVert / \lVert w^k\rVert
        \le` ``tol_w``.
    tol, tol_w : float
        Defaults 1e-6 and 1e-3 (``solve(tol=...)`` overrides ``tol``).
    max_iter : int
        Default 20000 (``solve(max_iter=...)`` overrides it).
    certify_tol : float
        Relative gap under which a proven bound (elastic-net SVM without knowledge) makes the
        status OPTIMAL.

    Notes
    -----
    The result's ``w`` is :math:`c`, the soft-thresholded copy, which has exact zeros (the dense
    :math:`w` of the linear solve never has; hipad.md section 3.2). ``objective`` is the model's
    objective there; ``alpha`` and ``beta`` are the clipped multipliers :math:`\gamma_1` and
    :math:`\gamma_q`, from which the model computes KKT residuals and, without knowledge, a dual
    bound. Status: OPTIMAL only with a bound within ``certify_tol``; else CONVERGED, or a limit.
    History extras: ``primal_residual``, ``dual_residual``, ``mu``, ``support`` (size of supp c).

    References
    ----------
    G.-B. Ye, Y. Chen, X. Xie, "Efficient variable selection in support vector machines via the
    alternating direction method of multipliers", AISTATS 2011. Z. Qin, X. Tang,
    I. Akrotirianakis, A. Chakraborty, "HIPAD - A hybrid interior-point alternating direction
    algorithm for knowledge-based SVM and feature selection". See ``notes/hipad.md``.
    """

    name: ClassVar[str] = "admm"
    needs: ClassVar[tuple[type[Structure], ...]] = (ElasticNetKnowledge,)

    mu: float = 1.0
    adaptive: bool = True
    adapt_every: int = 10
    adapt_ratio: float = 10.0
    order: Order | Literal["gauss-seidel", "printed"] = Order.GAUSS_SEIDEL
    stop: Stop | Literal["residual", "paper"] = Stop.RESIDUAL
    tol: float = 1e-6
    tol_w: float = 1e-3
    max_iter: int = 20_000
    certify_tol: float = 1e-6

    def __post_init__(self) -> None:
        set_real(self, "mu", "ADMM")
        set_choice(self, "order", Order, "ADMM")
        set_choice(self, "stop", Stop, "ADMM")
        set_count(self, "adapt_every", "ADMM")
        set_real(self, "tol", "ADMM")
        set_real(self, "tol_w", "ADMM")
        set_count(self, "max_iter", "ADMM")
        set_real(self, "adapt_ratio", "ADMM", low=1.0)

    # ------------------------------------------------------------------------------ the loop
    def iterate(
        self,
        split: ElasticNetKnowledge,
        context: RunContext,
        start: float,
        switch: Any = None,
    ) -> _Run:
        """Run sweeps until the stopping rule, a limit, the callback or ``switch(it)`` says stop."""
        options = self.common_options(context.options, tol=self.tol, max_iter=self.max_iter)
        tol, max_iter, time_limit = options.tol, options.max_iter, options.time_limit
        it = ADMMIteration(split, self.mu, str(self.order))
        history: list[IterationRecord] = []
        supports: list[int] = []
        previous = math.inf
        status, switched = Status.ITERATION_LIMIT, False
        for k in range(max_iter):
            it.step()
            value = it.objective()
            primal, dual = it.residuals()
            support = int(np.count_nonzero(it.c))
            supports.append(support)
            record = IterationRecord(
                iteration=k,
                seconds=time.perf_counter() - start,
                objective=value,
                extras={
                    "primal_residual": primal,
                    "dual_residual": dual,
                    "mu": it.mu,
                    "support": support,
                },
            )
            history.append(record)
            if not math.isfinite(value) or abs(value) > 1e100:
                status = Status.ERROR  # diverged (the printed ENK order does)
                break
            if context.callback is not None and context.callback(record):
                status = Status.CONVERGED
                break
            if switch is not None and switch(it, supports):
                status, switched = Status.CONVERGED, True
                break
            if self._converged(it, value, previous, primal, dual, tol):
                status = Status.CONVERGED
                break
            if time_limit is not None and time.perf_counter() - start >= time_limit:
                status = Status.TIME_LIMIT
                break
            previous = value
            if self.adaptive and (k + 1) % self.adapt_every == 0:
                if primal > self.adapt_ratio * dual:
                    it.set_mu(2.0 * it.mu)
                elif dual > self.adapt_ratio * primal:
                    it.set_mu(0.5 * it.mu)
        return _Run(it, status, history, supports, switched)

    def _converged(self, it, value, previous, primal, dual, tol) -> bool:
        if self.stop == "residual":
            return primal <= tol and dual <= tol
        residuals = [it.r1, it.r2, it.r3, *it.r5]
        if any(float(np.linalg.norm(r)) > tol for r in residuals):
            return False
        if abs(value - previous) > tol * max(1.0, abs(previous)):
            return False
        change = float(np.linalg.norm(it.w - it.w_old))
        return change <= self.tol_w * max(float(np.linalg.norm(it.w_old)), 1e-12)

    def gap_tolerance(self, options: SolveOptions) -> float:
        """``gap_tol``, else ``certify_tol`` (``tol`` is the residuals' tolerance)."""
        return self.certify_tol if options.gap_tol is None else float(options.gap_tol)

    def run(self, model: Model, context: RunContext) -> Result:
        """Run ADMM on ``model``; the objective and certificate are the model's own."""
        start = time.perf_counter()
        split = model.structure(ElasticNetKnowledge)
        with _blas_threads(context.options.threads):
            phase = self.iterate(split, context, start)
        solution = phase.it.solution()
        return _finish(self, model, split, phase, solution, start, Status.CONVERGED, "numpy", {})


def _finish(driver, model, split, phase, solution, start, success, backend, stats) -> Result:
    """Certify ``solution`` on the original model and wrap everything in a Result."""
    it = phase.it
    objective = model.objective(solution)
    bound = model.dual_bound(solution)
    kkt = split.kkt_residuals(solution) if "alpha" in solution else {}
    status = phase.status if phase.status is not Status.CONVERGED else success
    gap = math.inf if bound is None else (objective - bound) / max(1.0, abs(objective))
    if status is Status.CONVERGED and gap <= driver.certify_tol:
        status = Status.OPTIMAL
    if phase.status is Status.ERROR or not math.isfinite(objective):
        status = Status.ERROR
    return driver_result(
        driver,
        model,
        status,
        solution,
        objective=objective,
        bound=bound,
        iterations=it.iterations,
        history=phase.history,
        timings=clock_timings(start),
        stats={
            "support": int(np.count_nonzero(solution["w"])),
            "kkt": kkt,
            "mu": it.mu,
            "factorizations": it.system.factorizations,
            "order": it.order,
            **stats,
        },
        backend=backend,
    )


def _reduced_solve(model: Model, context: RunContext) -> Result:
    """:class:`Direct` on the reduced model, in a child process that Ctrl-C and the clock stop.

    The interior-point solve (Clarabel through cvxpy) reads no signal while cvxpy compiles and
    Clarabel factors: in this process a Ctrl-C arrived 1.2 to 1.9 s late. The child
    (:func:`optframe.solvers._common.stoppable`, always) is killed at once on Ctrl-C, and past
    the time limit's margin; it solves in place (no child of its own) on one Clarabel thread.
    It sends back the result's parts, which the parent puts together on ``model``.
    """
    from optframe.registry import resolve_backend
    from optframe.solvers._common import stoppable

    preload: tuple[str, ...] = ()
    with contextlib.suppress(Exception):  # the modules the child would import on every round
        preload = tuple(resolve_backend(context.backend, model).requires)

    def work() -> Any:
        got = Direct().run(model, context)
        return (got.status, dict(got.solution), got.objective, got.bound, got.iterations,
                got.timings, dict(got.stats), got.backend)  # fmt: skip

    tick = time.perf_counter()
    out = stoppable(work, context.options, "ADMMThenIPM's interior-point phase", always=True,
                    preload=preload)  # fmt: skip
    if isinstance(out, tuple):
        status, solution, objective, bound, iterations, timings, stats, backend = out
        return driver_result(
            "direct", model, status, solution, objective=objective, bound=bound,
            iterations=iterations, timings=timings, stats=stats, backend=backend,
        )  # fmt: skip
    # the child was stopped past the time limit, or gave no result: the reason, no point
    return driver_result(
        "direct", model, out.status, None,
        timings=clock_timings(tick), stats={"solver_status": out.message},
        backend=context.backend,
    )  # fmt: skip


@register_driver
@dataclass(frozen=True)
class ADMMThenIPM(Driver):
    r"""HIPAD / HIPAD-ENK: ADMM until the support of :math:`c` settles, then interior point.

    Phase 1 runs :class:`ADMM` (``admm``) until the switch test (hipad.md eq. 8)
    :math:`\lVert w^{k+1} - w^k\rVert / \max(\lVert w^k\rVert, 1) < \epsilon_{tol}` holds together
    with the safeguards: at least ``min_iter`` sweeps, a non-empty support of :math:`c`, and the
    same support set for ``stable_iters`` consecutive sweeps. Phase 2 restricts the model to that
    support (the structure's ``restrict_features``; the exact restriction, knowledge columns of the
    dropped features kept as fixed terms), solves it with :class:`~optframe.drivers.direct.Direct`
    on ``backend`` (Clarabel, interior point), pads the solution back to m features and certifies
    it on the original model: objective, KKT residuals, and the l1 subgradient condition on the
    dropped features, :math:`\lvert g_j\rvert \le \lambda_1` for :math:`j \notin S`
    (:math:`g` = the structure's ``smooth_gradient_w`` at the reduced solve's multipliers). The
    ``max(repair_batch, |S|)`` most violating features are added to the support and the reduced
    problem is solved again (an active-set repair), at most ``max_repairs`` times.

    Parameters
    ----------
    admm : ADMM
        Phase-1 options (its stopping rule still applies if the switch never fires).
    switch_tol : float
        :math:`\epsilon_{tol}` (paper: 1e-2).
    min_iter, stable_iters : int
        Safeguards (defaults 20 and 10; 0 and 1 reproduce eq. 8 alone, except that the support
        is never allowed to be empty). Measured reason: with the paper's test alone the switch
        fired while :math:`c` was still 0 or one feature (ALLAML), and the repairs then had to
        add thousands of features.
    backend : str
        Back-end of the reduced solve (default ``"clarabel"``); the ``backend`` given to
        :func:`optframe.solve` is used when it is not ``"auto"``.
    ipm_tol : float, optional
        Tolerance of the reduced solve (Clarabel's feasibility and gap tolerances; default 1e-9,
        ``None`` keeps the solver's default 1e-8).
    drop_l1 : bool
        Solve the reduced problem without the l1 term (the paper's plain SVM phase 2); the result
        then cannot be OPTIMAL for the elastic-net model. Default False.
    subgradient_tol : float
        Relative slack in :math:`\lvert g_j\rvert \le \lambda_1 (1 + \text{tol})`, default 1e-6.
    max_repairs, repair_batch : int
        Support enlargements after a failed subgradient check (default 10), and the least number
        of features each may add (default 10).
    certify_tol : float
        Relative gap under which a dual bound makes the status OPTIMAL.

    Notes
    -----
    Clarabel takes no warm start, so the ADMM point is not passed on (``stats["warm_start"]``).
    ``stats["support_proven_optimal"]`` is True when the reduced solve was OPTIMAL and the
    subgradient check passed on every dropped feature: the padded point then satisfies the full
    problem's optimality conditions to the solver's tolerance, and the status is OPTIMAL.
    """

    name: ClassVar[str] = "admm_then_ipm"
    needs: ClassVar[tuple[type[Structure], ...]] = (ElasticNetKnowledge,)

    admm: ADMM = field(default_factory=ADMM)
    switch_tol: float = 1e-2
    min_iter: int = 20
    stable_iters: int = 10
    backend: str = "clarabel"
    ipm_tol: float | None = 1e-9
    drop_l1: bool = False
    subgradient_tol: float = 1e-6
    max_repairs: int = 10
    repair_batch: int = 10
    certify_tol: float = 1e-6

    def _switch_test(self) -> Any:
        """The switch test with its safeguards, as a closure that remembers the last support."""
        state: dict[str, Any] = {"support": None, "same": 0}

        def switch(it: ADMMIteration, supports: list[int]) -> bool:
            current = np.flatnonzero(it.c)
            previous = state["support"]
            same = previous is not None and np.array_equal(previous, current)
            state["same"] = state["same"] + 1 if same else 1
            state["support"] = current
            if it.iterations < max(1, self.min_iter) or current.size == 0:
                return False
            if state["same"] < self.stable_iters:
                return False
            change = float(np.linalg.norm(it.w - it.w_old))
            return change / max(float(np.linalg.norm(it.w_old)), 1.0) < self.switch_tol

        return switch

    def gap_tolerance(self, options: SolveOptions) -> float:
        """``gap_tol``, else ``certify_tol`` (``tol`` is the residuals' tolerance)."""
        return self.certify_tol if options.gap_tol is None else float(options.gap_tol)

    def run(self, model: Model, context: RunContext) -> Result:
        """Phase 1 (ADMM), phase 2 (reduced IPM solve), certification on ``model``."""
        start = time.perf_counter()
        split = model.structure(ElasticNetKnowledge)
        with _blas_threads(context.options.threads):
            phase = self.admm.iterate(split, context, start, switch=self._switch_test())
        it = phase.it
        support = np.flatnonzero(it.c)
        if support.size == 0:  # safeguard: the largest |w_j| keeps the support non-empty
            support = np.array([int(np.argmax(np.abs(it.w)))])
        phase1_seconds = time.perf_counter() - start
        backend = self.backend if context.backend == "auto" else context.backend
        inner = RunContext(backend, replace(context.options, max_iter=None, tol=self.ipm_tol))
        rounds, reduced_status, proven = [], Status.ERROR, False
        solution: dict[str, Any] = it.solution()
        limit = context.options.time_limit
        for _ in range(self.max_repairs + 1):
            left = None if limit is None else limit - (time.perf_counter() - start)
            if left is not None and left <= 0:  # phase 1 or the previous rounds used it all
                reduced_status = Status.TIME_LIMIT
                break
            reduced = split.restrict_features(support, not self.drop_l1)
            result = _reduced_solve(
                reduced, replace(inner, options=replace(inner.options, time_limit=left))
            )
            reduced_status = result.status
            rounds.append(
                {
                    "support": int(support.size),
                    "status": result.status.value,
                    "seconds": result.timings.total,
                }
            )
            if not result.has_solution:
                break
            solution = split.pad_solution(result.solution, support)
            if "alpha" not in solution:
                break
            g = split.smooth_gradient_w(solution)
            dropped = np.setdiff1d(np.arange(g.size), support)
            excess = np.abs(g[dropped]) - split.lam1 * (1.0 + self.subgradient_tol)
            violators = dropped[excess > 1e-12]
            batch = max(self.repair_batch, support.size)
            if violators.size > batch:  # the most violating first: an active-set step
                violators = violators[np.argsort(excess[excess > 1e-12])[-batch:]]
            proven = violators.size == 0 and result.status is Status.OPTIMAL and not self.drop_l1
            if violators.size == 0 or self.drop_l1:
                break
            support = np.union1d(support, violators)
        success = Status.OPTIMAL if proven else Status.CONVERGED
        if not rounds or not reduced_status.is_success:
            success = reduced_status if reduced_status is not Status.OPTIMAL else Status.ERROR
        stats = {
            "switched": phase.switched,
            "phase1_status": phase.status.value,
            "phase1_iterations": it.iterations,
            "phase1_seconds": phase1_seconds,
            "phase1_support": int(np.count_nonzero(it.c)),
            "phase2_rounds": rounds,
            "support_proven_optimal": bool(proven),
            "warm_start": "not used: Clarabel takes no initial point",
            "reduced_backend": backend,
        }
        # Phase 2 decides the status: a phase 1 that hit a limit or diverged is only a start.
        return _finish(
            self,
            model,
            split,
            replace(phase, status=Status.CONVERGED),
            solution,
            start,
            success,
            f"numpy+{backend}",
            stats,
        )


def support_of(solution: Solution) -> NDArray[np.intp]:
    """Indices of the non-zero weights of a solution's ``w``."""
    return np.flatnonzero(np.asarray(solution["w"]))
