"""Aggregate and iterative disaggregate (AID), Park and Klabjan's driver.

It solves any model whose per-sample loss is piecewise linear (one that offers
:class:`~optframe.capabilities.PiecewiseLinearSampleLoss`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from optframe.backend import SolveOptions
from optframe.capabilities import ChunkedSamples, PiecewiseLinearSampleLoss, Structure
from optframe.drivers import clusters as cl
from optframe.drivers._checks import set_count, set_real
from optframe.drivers.base import (
    CommonOptions,
    Driver,
    RunContext,
    certificate_fits,
    clock_timings,
    driver_result,
)
from optframe.drivers.direct import Direct
from optframe.model import Model
from optframe.registry import register_driver
from optframe.result import IterationRecord, Result, Status
from optframe.validation import check_number

#: A run stopped by its time limit has spent it: the model's dual bound (on 200,000 LAD rows
#: 1.4 s on one BLAS thread, up to 10 s on a loaded machine's two) is not computed unless it
#: fits in the limit's margin (:func:`~optframe.drivers.base.certificate_fits`).
_SKIPPED = {"certificate_skipped": "no time left in the limit for the model's dual bound"}


@register_driver
@dataclass(frozen=True)
class AggregateDisaggregate(Driver):
    r"""Solve a model on cluster centroids, split the clusters that straddle a kink, repeat.

    Each iteration solves the model on the weighted centroids of the current clusters (weight: the
    summed sample weights), evaluates the original objective :math:`E_t` at that solution, and
    splits every cluster whose members sit on different linear pieces of their loss. For a convex
    per-sample loss (LAD, hinge) the aggregated optimum :math:`F_t` is a lower bound on the optimum
    :math:`E^*`; the driver keeps the best :math:`E` and the best proven bound (the inner solver's
    bound on :math:`F_t`) and stops with status OPTIMAL when every cluster is pure or the gap
    :math:`(E_{best} - F_t)/\max(1, |E_{best}|)` is at most ``tol``. For a non-convex loss (S3VM)
    there is no bound and the status is at best CONVERGED; with a time limit, each inner solve then
    gets an equal share of the time left, and an inner solve stopped by its limit hands over its
    best solution (the aggregated problem is a heuristic step there, not a bound).

    Parameters
    ----------
    r0 : float, optional
        Initial aggregation rate, clusters per sample in (0, 1]. Default: :math:`2.2m`
        centroids in all, split evenly over the groups (LAD: one group of :math:`2.2m`; SVM:
        :math:`1.1m` per class), at least 0.05% of each group: the rate of the paper's Tables
        3-5 (its LAD text says :math:`2m`, or :math:`3m` when :math:`mn > 5 \cdot 10^8`;
        notes/aid.md section 1.5).
    inner : Driver, optional
        Solves the aggregated models (default: :class:`Direct` with the model's default form), on
        the back-end passed to :func:`optframe.solve`.
    tol : float
        Relative gap at which to stop (ignored when ``solve(tol=...)`` is given).
    max_iter : int
        Iteration limit (ignored when ``solve(max_iter=...)`` is given).
    sample_size : int, optional
        Samples in the random subset whose solution gives the clustering embedding, an integer
        >= 1 (default ``None``: ``max(1000, 20 (m + 1))``).
    random_state : int
        Seed of the sampling and of the k-means seeds.
    singletons : bool
        Keep the samples of the structure's ``singleton_groups`` (if it names any) unaggregated, one
        cluster each. S3VM names its labeled samples: they are few and carry no binary variable,
        and aggregating 100 labeled rows into one centroid per class (the paper's rate applied to
        every group) throws their information away. ``False`` aggregates every group at ``r0``.
    warm_start : bool
        Start each aggregated solve from the previous one's basis, carried to the split clusters
        (:meth:`~optframe.basis.Basis.refine`), on back-ends that take one (LPs on
        ``matrix:highs``); others start cold.

    References
    ----------
    Y. W. Park and D. Klabjan, "An aggregate and iterative disaggregate algorithm with proven
    optimality in machine learning", Machine Learning 105 (2016). See ``notes/aid.md`` for the
    corrections applied here.
    """

    name: ClassVar[str] = "aid"
    needs: ClassVar[tuple[type[Structure], ...]] = (PiecewiseLinearSampleLoss,)

    r0: float | None = None
    inner: Driver = field(default_factory=Direct)
    tol: float = 1e-6
    max_iter: int = 100
    sample_size: int | None = None
    random_state: int = 0
    singletons: bool = True
    warm_start: bool = True

    def __post_init__(self) -> None:
        if self.r0 is not None:
            check_number(self.r0, "r0", "AggregateDisaggregate", low=0.0, high=1.0, low_open=True)
        set_real(self, "tol", "AggregateDisaggregate", strict=False)
        set_count(self, "max_iter", "AggregateDisaggregate")
        if self.sample_size is not None:  # 0 would silently be the default
            set_count(self, "sample_size", "AggregateDisaggregate")

    # ----------------------------------------------------------------------------- set-up
    def _cluster_counts(self, loss: PiecewiseLinearSampleLoss, sizes: dict[int, int]) -> dict:
        """Initial clusters per group, from the positive-weight samples per group ``sizes``."""
        sizes = {g: s for g, s in sizes.items() if s > 0}
        if self.r0 is None:
            counts = cl.default_cluster_counts(sizes, loss.model.data.n_features)
        else:
            counts = {g: max(1, math.ceil(self.r0 * s)) for g, s in sizes.items()}
        if self.singletons:
            counts |= {g: sizes[g] for g in loss.singleton_groups if g in sizes}
        return counts

    def _initial_labels(
        self,
        loss: PiecewiseLinearSampleLoss,
        context: RunContext,
        rng: np.random.Generator,
        deadline: float | None,
    ) -> tuple[np.ndarray | None, Result | None, dict | None]:
        """The initial clusters, the pilot's result and its solution on the full data.

        The pilot (when the embedding needs a solution) gets the time left before ``deadline``;
        the clustering stops at ``deadline``. The labels are ``None`` when either ran out of
        time or the pilot found no point.
        """
        model = loss.model
        weights, groups = model.weights, model.sample_groups()
        sizes = {int(g): int(np.sum((groups == g) & (weights > 0))) for g in np.unique(groups)}
        counts = self._cluster_counts(loss, sizes)
        pilot_result, full = None, None
        if not loss.embedding_uses_solution:
            embedding = model.sample_embedding(None)
        else:
            # The embedding needs a solution: fit the model on a small random sample first.
            n, m = model.data.n_samples, model.data.n_features
            size = self.sample_size if self.sample_size is not None else max(1000, 20 * (m + 1))
            sample = _stratified_sample(groups, weights, min(n, size), rng)
            pilot = model.with_data(model.data.subset(sample).with_weights(weights[sample]))
            left = _until(deadline)
            if left is not None and left <= 0:
                return None, None, None
            pilot_context = RunContext(context.backend, replace(context.options, time_limit=left))
            pilot_result = self.inner.run(pilot, pilot_context)
            if not pilot_result.has_solution:
                return None, pilot_result, None
            solution = dict(pilot_result.solution)
            for name in model.sample_duals:
                if name in solution:  # the pilot's per-sample duals, at their rows in the data
                    solution[name] = np.zeros(n)
                    solution[name][sample] = pilot_result.solution[name]
            full = model.complete_solution(solution)
            embedding = model.sample_embedding(full)
        try:
            labels = cl.initial_clusters(embedding, groups, weights, counts, rng, deadline)
        except cl.OutOfTime:
            return None, pilot_result, full
        return labels, pilot_result, full

    # ------------------------------------------------------------------------------- loop
    def gap_tolerance(self, options: SolveOptions) -> float:
        """``gap_tol``, else ``tol`` (the relative gap this driver stops at)."""
        if options.gap_tol is not None:
            return float(options.gap_tol)
        return self._common(options).tol

    def _common(self, options: SolveOptions) -> CommonOptions:
        """The run's ``tol`` (a gap: 0 is allowed), ``max_iter`` and ``time_limit``."""
        return self.common_options(options, tol=self.tol, max_iter=self.max_iter, zero_tol=True)

    def run(self, model: Model, context: RunContext) -> Result:
        """Run AID on ``model``; every figure reported is on the original model."""
        if isinstance(model, ChunkedSamples):
            # samples in chunks on a Dask cluster: the same loop, each pass a map over chunks
            from optframe.drivers.aid_dask import run_on_chunks

            return run_on_chunks(self, model, context)
        start = time.perf_counter()
        loss = model.structure(PiecewiseLinearSampleLoss)
        aid: Any = loss.model
        options = self._common(context.options)
        tol, max_iter = options.tol, options.max_iter
        rng = np.random.default_rng(self.random_state)
        inner_context = RunContext(
            context.backend, replace(context.options, tol=None, max_iter=None)
        )

        deadline = None if options.time_limit is None else start + options.time_limit
        labels, pilot, pilot_solution = self._initial_labels(loss, inner_context, rng, deadline)
        if labels is None:
            # out of time in the set-up (the pilot solve or the clustering), or a pilot that
            # found no point: the pilot's solution, if any, is the run's (its own model's
            # solution on a sample of the data, evaluated and certified on all of it)
            status = Status.TIME_LIMIT if pilot is None or pilot.has_solution else pilot.status
            backend = context.backend if pilot is None else pilot.backend
            stats = {"stopped_in": "set-up", "inner_driver": self.inner.name}
            if not certificate_fits(aid, start, options.time_limit):
                stats |= _SKIPPED
            clock = (start, time.perf_counter())
            return self._result(aid, status, pilot_solution, None, [], clock, backend, stats)
        clustered = time.perf_counter()
        labels, k = cl.compact(labels)
        n = aid.data.n_samples

        history: list[IterationRecord] = []
        inner_backend = pilot.backend if pilot is not None else context.backend
        best, best_value, bound = None, math.inf, -math.inf
        proven = -math.inf  # the best aggregated bound optframe itself proved (see below)
        status = Status.ITERATION_LIMIT
        start_basis = None
        failure: dict[str, str] = {}
        for iteration in range(max_iter):
            remaining = _remaining(options.time_limit, start)
            if remaining is not None and remaining <= 0:
                status = Status.TIME_LIMIT
                break
            aggregated = loss.aggregated(labels, k)
            # the build counts: the inner solve gets the time left after it
            remaining = _remaining(options.time_limit, start)
            if remaining is not None and remaining <= 0:
                status = Status.TIME_LIMIT
                break
            share = remaining
            if remaining is not None and not aid.convex_sample_loss:
                # No bound to protect: spread the time over the iterations left, so every one
                # runs and a stopped inner solve still hands over its incumbent.
                share = remaining / (max_iter - iteration)
            step_context = RunContext(
                context.backend,
                replace(inner_context.options, time_limit=share, start=start_basis),
            )
            inner = self.inner.run(aggregated, step_context)
            left = _remaining(options.time_limit, start)
            starved = share != remaining and inner.status.is_limit and not inner.has_solution
            if starved and left is not None and left > 0:
                # the share was too short to find any point: this iteration gets all that is left
                # rather than stopping the run with nothing (an S3VM's first MIQP, say)
                retry = replace(step_context.options, time_limit=left)
                inner = self.inner.run(aggregated, RunContext(context.backend, retry))
            inner_backend = inner.backend
            incumbent = inner.status.is_limit and inner.has_solution
            if not (inner.status.is_success or (incumbent and not aid.convex_sample_loss)):
                status = inner.status if inner.status.is_limit else Status.ERROR
                failure = inner_failure(inner, iteration, k)
                break
            solution = self._lift(aid, inner.solution, labels, k)
            value = aid.objective(solution)
            if value < best_value:
                best, best_value = solution, value
            if aid.convex_sample_loss and inner.bound is not None:
                bound = max(bound, inner.bound)
            if aid.convex_sample_loss:
                proven = max(proven, _proven_inner_bound(inner))
            gap = _gap(best_value, bound) if aid.convex_sample_loss else math.inf
            new_labels, new_k = cl.split_by_piece(labels, aid.loss_pieces(solution))
            record = iteration_record(
                iteration, start, best_value, bound, gap, (k, new_k, n), value, inner,
                warm=start_basis is not None,
            )  # fmt: skip
            history.append(record)
            if context.callback is not None and context.callback(
                _with_problem(record, aggregated, labels)
            ):
                status = Status.CONVERGED
                break
            if new_k == k:
                status = Status.OPTIMAL if aid.convex_sample_loss else Status.CONVERGED
                break
            if gap <= tol:
                status = Status.OPTIMAL
                break
            if self.warm_start and inner.basis is not None:
                start_basis = inner.basis.refine(cl.parents(labels, new_labels, new_k), k)
            labels, k = new_labels, new_k
        final_bound = bound if aid.convex_sample_loss and math.isfinite(bound) else None
        stats = {"clusters": k, "rate": k / n, "inner_driver": self.inner.name, **failure}
        if math.isfinite(proven):
            stats["safe_bound"] = proven
            stats["safe_bound_how"] = (
                "the best safe bound of an aggregated problem (optframe.safe_bound at the inner "
                "solver's duals): a lower bound on the optimum, the sample loss being convex"
            )
        if status is Status.TIME_LIMIT and not certificate_fits(aid, start, options.time_limit):
            stats |= _SKIPPED
        clock = (start, clustered)
        return self._result(aid, status, best, final_bound, history, clock, inner_backend, stats)

    def _lift(self, model: Any, aggregated: dict, labels: np.ndarray, k: int) -> dict:
        lifted = {
            name: cl.lift(aggregated[name], model.weights, labels, k)
            for name in model.sample_duals
            if name in aggregated
        }
        solution = model.complete_solution({**aggregated, **lifted})
        solution.update(lifted)
        return solution

    def _result(self, model, status, solution, bound, history, clock, backend, stats) -> Result:
        return driver_result(
            self, model, status, solution,
            bound=bound, iterations=len(history), history=history,
            timings=clock_timings(*clock), stats=stats, backend=backend,
        )  # fmt: skip


def iteration_record(
    iteration: int,
    start: float,
    best_value: float,
    bound: float,
    gap: float,
    sizes: tuple[int, int, int],
    value: float,
    inner: Result,
    *,
    warm: bool,
) -> IterationRecord:
    """One AID history row (in memory or on Dask); ``sizes`` is (clusters, after split, n)."""
    k, new_k, n = sizes
    return IterationRecord(
        iteration=iteration,
        seconds=time.perf_counter() - start,
        objective=best_value,
        bound=bound if math.isfinite(bound) else None,
        extras={
            "clusters": k,
            "rate": k / n,
            "aggregated_objective": inner.objective,
            "objective_t": value,
            "gap": gap,
            "split": new_k - k,
            "inner_seconds": inner.timings.solve,
            "inner_iterations": inner.iterations,
            "warm": warm,
            "inner_status": inner.status.value,
        },
    )


def inner_failure(inner: Result, iteration: int, k: int) -> dict[str, str]:
    """What ``stats`` says when an aggregated solve fails: its status and the solver's words."""
    words = inner.stats.get("solver_status") or inner.stats.get("error") or ""
    message = (
        f"the aggregated problem of iteration {iteration} ({k} clusters) ended "
        f"{inner.status.value} on {inner.backend}"
    )
    return {"inner_status": inner.status.value, "error": message + (f": {words}" if words else "")}


def _with_problem(
    record: IterationRecord, aggregated: Model, labels: np.ndarray
) -> IterationRecord:
    """The record the callback sees: also the aggregated model solved and each sample's cluster.

    Not kept in the history (a labels array per iteration): a callback that wants them keeps
    them, so they cost nothing when no callback is given.
    """
    extras = {**record.extras, "aggregated_model": aggregated, "labels": labels}
    return replace(record, extras=extras)


def _proven_inner_bound(inner: Result) -> float:
    """The bound optframe proved on an aggregated problem's own solve, or ``-inf``.

    Direct proves one (``stats["safe_bound"]``, :mod:`optframe.safe_bound`) for a model without a
    dual bound of its own, from the solver's duals on the matrix layer. For a convex sample loss,
    the aggregated optimum is a lower bound on the original one (Jensen's inequality on each
    cluster), so that bound is one on the original problem: the certificate of a model that
    writes no ``dual_bound`` (:func:`optframe.certificate.certify` reads ``stats["safe_bound"]``).
    """
    value = inner.stats.get("safe_bound")
    if value is None or not math.isfinite(value):
        return -math.inf
    return float(value)


def _gap(value: float, bound: float) -> float:
    if not math.isfinite(bound):
        return math.inf
    return (value - bound) / max(1.0, abs(value))


def _remaining(time_limit: float | None, start: float) -> float | None:
    return None if time_limit is None else time_limit - (time.perf_counter() - start)


def _until(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.perf_counter()


def _stratified_sample(groups, weights, size, rng) -> np.ndarray:
    """A random sample of about ``size`` positive-weight samples, every group represented."""
    eligible = np.flatnonzero(weights > 0)
    if size >= eligible.size:
        return eligible
    chosen = [rng.choice(eligible, size=size, replace=False)]
    for group in np.unique(groups[eligible]):
        members = eligible[groups[eligible] == group]
        chosen.append(rng.choice(members, size=min(members.size, 2), replace=False))
    return np.unique(np.concatenate(chosen))
