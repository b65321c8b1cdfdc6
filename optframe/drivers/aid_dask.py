r"""AggregateDisaggregate on data in row chunks on a Dask cluster: the same loop, chunk by chunk.

:meth:`AggregateDisaggregate.run <optframe.drivers.AggregateDisaggregate.run>` hands a model
whose samples live in chunks (one that offers ``chunk_loss``, such as an ``EmpiricalRisk`` declared
on a :class:`~optframe.data.dask.DaskDataset` with any piecewise-linear loss) to
:func:`run_on_chunks`. It runs the in-memory algorithm
step for step, with every operation on the samples a map over the chunks plus a reduction of
small results, on the Dask cluster in use:

* the initial clustering (the pilot sample's rows, the embedding's mean and spread, the k-means
  seeds, two Lloyd updates, the final assignment), drawn from the same random stream as in
  memory, so the clusters are the in-memory ones up to floating-point summation order;
* the centroids: per chunk, the share-weighted sums of the member rows of each cluster present
  there, merged in a tree on the workers; the client receives the :math:`K \times m` centroids;
* the objective :math:`E_t`, the loss pieces and the split, in one pass: each chunk returns its
  loss sum and its (cluster, piece) pairs with their weights and first targets; the client
  numbers the new clusters and each chunk relabels its rows.

Cluster labels stay with their chunks (persisted on the workers; a chunk lost with a worker is
recomputed from its lineage, back to the data's source). The aggregated model (the centroids) is
solved on the client by the inner driver and back-end, from the previous basis as in memory. The
final solution holds the parameters; its per-sample arrays (residuals, the lifted duals) are lazy
dask arrays, and the model evaluates the objective and the certificate's bound chunk by chunk.

A model offers this structure through ``chunk_loss``, a small picklable object with
``n_groups``, ``n_pieces``, ``params(solution)``, ``groups(y)``,
``evaluate(X, y, w, params) -> (loss arguments, weighted loss sum)``, ``pieces(arguments)`` (the
linear piece of each argument, in ``0 .. n_pieces - 1``), ``embedding(X, y, params)`` and
``regularizer(params)``; its ``data`` is a :class:`~optframe.data.dask.DaskDataset`.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.capabilities import PiecewiseLinearSampleLoss
from optframe.data import Dataset
from optframe.drivers import clusters as cl
from optframe.drivers.aid import _gap, _remaining, inner_failure, iteration_record
from optframe.drivers.base import RunContext
from optframe.result import IterationRecord, Result, Status

if TYPE_CHECKING:
    from optframe.drivers.aid import AggregateDisaggregate

# Partial centroid sums are merged this many at a time on the workers.
MERGE_FAN_IN = 8


# ------------------------------------------------------------------- per-chunk functions
def _arrays(X: Any, y: Any, w: Any) -> tuple[Any, NDArray, NDArray]:
    from optframe.data.dask import chunk_arrays

    return chunk_arrays(X, y, w)


def _members(y: NDArray, w: NDArray, loss: Any) -> NDArray[np.int64]:
    """Each row's group, -1 for a zero-weight row (in no cluster)."""
    return np.where(w > 0, loss.groups(y), -1)


def _sample_rows(
    X: Any, y: Any, w: Any, lo: int, loss: Any, everyone: bool, positions: NDArray, by_group: dict
) -> tuple[NDArray, Any, NDArray, NDArray]:
    """The pilot sample's rows in this chunk: global rows, X rows, y and w (rows sorted)."""
    X, y, w = _arrays(X, y, w)
    groups = _members(y, w, loss)
    eligible = np.flatnonzero(groups >= 0)
    if everyone:
        rows = eligible
    else:
        chosen = [eligible[positions]]
        for group, local in by_group.items():
            chosen.append(np.flatnonzero(groups == group)[local])
        rows = np.unique(np.concatenate(chosen)) if chosen else np.empty(0, dtype=np.int64)
    return rows + lo, X[rows], y[rows], w[rows]


def _embed(X: Any, y: Any, w: Any, loss: Any, params: dict) -> tuple[NDArray, NDArray]:
    """``(embedding, group or -1)`` of every row of the chunk."""
    X, y, w = _arrays(X, y, w)
    return loss.embedding(X, y, params), _members(y, w, loss)


def _moments(embedded: tuple, groups: list[int], means: dict | None) -> dict:
    """Per group: ``(count, sum)`` of the embedding, or the sum of squared deviations."""
    points, members = embedded
    out = {}
    for group in groups:
        block = points[members == group]
        if means is None:
            out[group] = (block.shape[0], block.sum(axis=0))
        else:
            deviation = block - means[group]
            out[group] = (block.shape[0], (deviation * deviation).sum(axis=0))
    return out


def _spread_and_seeds(
    embedded: tuple, groups: list[int], means: dict, positions: dict
) -> tuple[dict, dict]:
    """The squared deviations from ``means`` and the seed rows, in one pass over a chunk."""
    return _moments(embedded, groups, means), _pick(embedded, positions)


def _pick(embedded: tuple, positions: dict) -> dict:
    """Per group: the embedding at the given ranks among the chunk's members of the group."""
    points, members = embedded
    return {group: points[members == group][local] for group, local in positions.items()}


def _assign(embedded: tuple, divisors: dict, centers: dict) -> dict:
    """Per group: members per center and the sums of their scaled embedding (a Lloyd step)."""
    points, members = embedded
    out = {}
    for group, center in centers.items():
        scaled = points[members == group] / divisors[group]
        nearest = cl._nearest(scaled, center) if scaled.shape[0] else np.empty(0, np.int64)
        counts = np.bincount(nearest, minlength=len(center))
        sums = np.stack(
            [
                np.bincount(nearest, weights=scaled[:, j], minlength=len(center))
                for j in range(scaled.shape[1])
            ],
            axis=1,
        )
        out[group] = (counts, sums)
    return out


def _partition(keys: NDArray[np.int64], y: NDArray, w: NDArray) -> tuple[NDArray, tuple]:
    """Local cluster index per row, and per distinct key: the key, summed weight, first y."""
    kept = keys >= 0
    unique, first, inverse = np.unique(keys[kept], return_index=True, return_inverse=True)
    local = np.full(keys.shape, -1, dtype=np.int64)
    local[kept] = inverse
    weight = np.bincount(inverse, weights=w[kept], minlength=unique.size)
    return local, (unique, weight, y[kept][first])


def _initial_keys(
    embedded: tuple,
    y: Any,
    w: Any,
    divisors: dict,
    centers: dict,
    rank_start: dict,
    stride: int,
) -> tuple[NDArray, tuple]:
    """The final assignment: key ``group_rank * stride + center`` (or member rank) per row."""
    points, members = embedded
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    w = np.ones(points.shape[0]) if w is None else np.asarray(w, dtype=np.float64).reshape(-1)
    keys = np.full(points.shape[0], -1, dtype=np.int64)
    for rank, group in enumerate(sorted(rank_start)):
        rows = np.flatnonzero(members == group)
        if group in centers:
            local = cl._nearest(points[rows] / divisors[group], centers[group])
        else:  # as many clusters as members: one each, numbered by rank
            local = rank_start[group] + np.arange(rows.size)
        keys[rows] = rank * stride + local
    return _partition(keys, y, w)


def _evaluate(
    X: Any, y: Any, w: Any, labels: NDArray, loss: Any, params: dict
) -> tuple[NDArray, tuple]:
    """At a solution: the loss sum, and the rows keyed by (cluster, piece) for the split."""
    X, y, w = _arrays(X, y, w)
    argument, loss_sum = loss.evaluate(X, y, w, params)
    pieces = loss.pieces(argument)
    keys = np.where(labels >= 0, labels * loss.n_pieces + pieces, -1)
    local, stats = _partition(keys, y, w)
    return local, (loss_sum, *stats)


def _relabel(partitioned: tuple, table: NDArray[np.int64]) -> NDArray[np.int64]:
    local = partitioned[0]
    labels = np.full(local.shape, -1, dtype=np.int64)
    kept = local >= 0
    labels[kept] = table[local[kept]]
    return labels


def _second(pair: tuple) -> Any:
    return pair[1]


def _centroid_part(
    X: Any, y: Any, w: Any, labels: NDArray, W: NDArray, base: NDArray
) -> tuple[NDArray, Any, NDArray]:
    """The chunk's share of each present cluster's centroid: ids, rows of X, y deviations."""
    X, y, w = _arrays(X, y, w)
    kept = np.flatnonzero(labels >= 0)
    members = labels[kept]
    ids, inverse = np.unique(members, return_inverse=True)
    share = w[kept] / W[members]
    averaging = sp.csr_array((share, (inverse, kept)), shape=(ids.size, X.shape[0]))
    rows = averaging @ X
    deviation = y - np.where(labels >= 0, base[labels], 0.0)
    return ids, (sp.csr_array(rows) if sp.issparse(rows) else rows), averaging @ deviation


def _merge(*parts: tuple) -> tuple[NDArray, Any, NDArray]:
    ids = np.concatenate([p[0] for p in parts])
    unique, inverse = np.unique(ids, return_inverse=True)
    adding = sp.csr_array(
        (np.ones(ids.size), (inverse, np.arange(ids.size))), shape=(unique.size, ids.size)
    )
    blocks = [p[1] for p in parts]
    stacked = sp.vstack(blocks, format="csr") if sp.issparse(blocks[0]) else np.vstack(blocks)
    rows = adding @ stacked
    return (
        unique,
        (sp.csr_array(rows) if sp.issparse(rows) else rows),
        adding @ np.concatenate([p[2] for p in parts]),
    )


def _lift_chunk(labels: NDArray, w: Any, values: NDArray, W: NDArray) -> NDArray[np.float64]:
    """Each member's weight share of its cluster's value (zero-weight rows: 0)."""
    w = np.ones(labels.shape) if w is None else np.asarray(w, dtype=np.float64).reshape(-1)
    lifted = np.zeros(labels.shape)
    kept = labels >= 0
    lifted[kept] = values[labels[kept]] * w[kept] / W[labels[kept]]
    return lifted


# ---------------------------------------------------------------------------- the loop
class _Chunked:
    """The chunk handles of one run and the passes over them."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.data = model.data
        self.loss = model.chunk_loss
        self.parts = self.data.parts()
        self.ranges = self.data.row_ranges
        self.passes = 0

    def compute(self, tasks: list) -> list:
        import dask

        self.passes += 1
        return list(dask.compute(*tasks))

    @staticmethod
    def persist(tasks: list) -> list:
        import dask

        return list(dask.persist(*tasks))

    # ----------------------------------------------------------------- partitions
    def partition(
        self, partitioned: list, stats: list | None = None
    ) -> tuple[list, int, NDArray, NDArray, NDArray]:
        """Number the clusters of persisted ``_partition`` results; relabel every chunk.

        ``stats`` are the partitions' second items when already fetched. Returns the new labels
        (persisted, per chunk), K, the weights W, the first targets and the keys (sorted) of the
        clusters.
        """
        from dask import delayed

        if stats is None:
            stats = self.compute([delayed(_second)(p) for p in partitioned])
        stats = [s[-3:] for s in stats]
        keys = np.unique(np.concatenate([s[0] for s in stats]))
        k = keys.size
        W, base, seen = np.zeros(k), np.zeros(k), np.zeros(k, dtype=bool)
        tables = []
        for unique, weight, first in stats:
            index = np.searchsorted(keys, unique)
            W[index] += weight
            new = ~seen[index]
            base[index[new]] = first[new]
            seen[index] = True
            tables.append(index)
        labels = self.persist(
            [delayed(_relabel)(p, t) for p, t in zip(partitioned, tables, strict=True)]
        )
        return labels, k, W, base, keys

    # ------------------------------------------------------------------- centroids
    def centroids(self, labels: list, k: int, W: NDArray, base: NDArray) -> Dataset:
        """The weighted centroids of the clusters, as ``aggregate_samples`` builds them."""
        from dask import delayed

        W_d, base_d = delayed(W), delayed(base)
        parts = [
            delayed(_centroid_part)(X, y, w, lab, W_d, base_d)
            for (X, y, w), lab in zip(self.parts, labels, strict=True)
        ]
        while len(parts) > 1:
            parts = [
                delayed(_merge)(*parts[i : i + MERGE_FAN_IN])
                for i in range(0, len(parts), MERGE_FAN_IN)
            ]
        ids, rows, deviation = self.compute(parts)[0]
        placing = sp.csr_array((np.ones(ids.size), (ids, np.arange(ids.size))), shape=(k, ids.size))
        X = placing @ rows
        X = sp.csr_array(X) if sp.issparse(X) else np.asarray(X)
        data = self.data
        return Dataset(
            X=X,
            y=base + placing @ deviation,
            sample_weight=W,
            name=f"{data.name} (aggregated, {k} clusters)",
        )

    # ------------------------------------------------------------- initial clusters
    def sample(self, size: int, rng: np.random.Generator) -> Dataset:
        """The pilot sample (``_stratified_sample``'s draws, rows fetched from their chunks)."""
        from dask import delayed

        counts = self.model.group_counts  # (chunks, groups), positive-weight samples
        per_chunk = counts.sum(axis=1)
        everyone = size >= int(per_chunk.sum())
        positions: NDArray = np.empty(0, dtype=np.int64)
        by_group: dict[int, NDArray] = {}
        if not everyone:
            positions = rng.choice(int(per_chunk.sum()), size=size, replace=False)
            for group in np.flatnonzero(counts.sum(axis=0) > 0):
                members = int(counts[:, group].sum())
                by_group[int(group)] = rng.choice(members, size=min(members, 2), replace=False)
        tasks = []
        starts = np.concatenate([[0], np.cumsum(per_chunk)])
        group_starts = np.vstack([np.zeros(counts.shape[1], np.int64), np.cumsum(counts, 0)])
        for c, ((X, y, w), (lo, _)) in enumerate(zip(self.parts, self.ranges, strict=True)):
            mine = positions[(positions >= starts[c]) & (positions < starts[c + 1])] - starts[c]
            groups = {}
            for group, chosen in by_group.items():
                g0, g1 = group_starts[c, group], group_starts[c + 1, group]
                local = chosen[(chosen >= g0) & (chosen < g1)] - g0
                if local.size:
                    groups[group] = local
            if everyone or mine.size or groups:
                tasks.append(
                    delayed(_sample_rows)(X, y, w, lo, self.loss, everyone, np.sort(mine), groups)
                )
        found = self.compute(tasks)
        blocks = [f[1] for f in found]
        X = sp.vstack(blocks, format="csr") if self.data.is_sparse else np.vstack(blocks)
        y = np.concatenate([f[2] for f in found])
        w = np.concatenate([f[3] for f in found])
        return Dataset(X=X, y=y, sample_weight=w, name=f"{self.data.name} (sample)")

    def initial_labels(
        self, params: dict, counts: dict[int, int], rng: np.random.Generator
    ) -> tuple[list, int, NDArray, NDArray]:
        """``cl.initial_clusters`` on the embedding at ``params``, chunk by chunk.

        One k-means iteration per group (in the order of ``counts``), with the seeds drawn from
        ``rng`` in the same order as in memory.
        """
        from dask import delayed

        sizes = self.model.group_counts.sum(axis=0)
        groups = [g for g in counts if sizes[g] > 0]
        seeds: dict[int, NDArray] = {}
        for group in groups:
            n, k = int(sizes[group]), max(1, min(counts[group], int(sizes[group])))
            if k < n:
                seeds[group] = rng.choice(n, size=k, replace=False)
        embedded = self.persist(
            [delayed(_embed)(X, y, w, self.loss, params) for X, y, w in self.parts]
        )
        divisors: dict[int, NDArray] = {}
        centers: dict[int, NDArray] = {}
        clustered = list(seeds)
        if clustered:
            found = self.compute([delayed(_moments)(e, clustered, None) for e in embedded])
            means = {
                g: sum(f[g][1] for f in found) / sum(f[g][0] for f in found) for g in clustered
            }
            group_counts = self.model.group_counts
            starts = np.vstack(
                [np.zeros(group_counts.shape[1], np.int64), np.cumsum(group_counts, 0)]
            )
            picks = []
            for c in range(len(embedded)):
                mine = {}
                for g in clustered:
                    chosen = np.sort(seeds[g])
                    inside = (chosen >= starts[c, g]) & (chosen < starts[c + 1, g])
                    mine[g] = chosen[inside] - starts[c, g]
                picks.append(mine)
            found = self.compute(
                [
                    delayed(_spread_and_seeds)(e, clustered, means, p)
                    for e, p in zip(embedded, picks, strict=True)
                ]
            )
            for g in clustered:
                spread = np.sqrt(sum(f[0][g][1] for f in found) / sizes[g])
                divisors[g] = np.where(spread > 0, spread, 1.0)
                rows = np.concatenate([f[1][g] for f in found])  # the seeds in rank order
                order = np.searchsorted(np.sort(seeds[g]), seeds[g])
                centers[g] = rows[order] / divisors[g]
            for _ in range(2):
                found = self.compute([delayed(_assign)(e, divisors, centers) for e in embedded])
                for g in clustered:
                    members = sum(f[g][0] for f in found)
                    sums = sum(f[g][1] for f in found)
                    occupied = members > 0
                    centers[g] = sums[occupied] / members[occupied, None]
        group_counts = self.model.group_counts
        starts = np.vstack([np.zeros(group_counts.shape[1], np.int64), np.cumsum(group_counts, 0)])
        stride = int(max(sizes[g] for g in groups)) + 1
        partitioned = self.persist(
            [
                delayed(_initial_keys)(
                    e, y, w, divisors, centers, {g: int(starts[c, g]) for g in groups}, stride
                )
                for c, (e, (_, y, w)) in enumerate(zip(embedded, self.parts, strict=True))
            ]
        )
        labels, k, W, base, _ = self.partition(partitioned)
        return labels, k, W, base

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, labels: list, params: dict) -> tuple[float, list, list]:
        """The objective at ``params``, the persisted (cluster, piece) partition, its stats."""
        from dask import delayed

        partitioned = self.persist(
            [
                delayed(_evaluate)(X, y, w, lab, self.loss, params)
                for (X, y, w), lab in zip(self.parts, labels, strict=True)
            ]
        )
        sums = self.compute([delayed(_second)(p) for p in partitioned])
        value = self.loss.regularizer(params) + float(sum(s[0] for s in sums))
        return value, partitioned, sums

    def lifted(self, labels: list, values: NDArray, W: NDArray) -> Any:
        """The per-sample dual ``values`` lifted by weight share, a lazy dask array."""
        import dask.array as da
        from dask import delayed

        values_d, W_d = delayed(np.asarray(values, dtype=np.float64)), delayed(W)
        return da.concatenate(
            [
                da.from_delayed(
                    delayed(_lift_chunk)(lab, w, values_d, W_d), shape=(hi - lo,), dtype=float
                )
                for lab, (_, _, w), (lo, hi) in zip(labels, self.parts, self.ranges, strict=True)
            ]
        )


def _cluster_counts(driver: AggregateDisaggregate, model: Any) -> dict[int, int]:
    """``AggregateDisaggregate._cluster_counts`` from the per-chunk group counts."""
    sizes = {g: int(s) for g, s in enumerate(model.group_counts.sum(axis=0))}
    return driver._cluster_counts(model.structure(PiecewiseLinearSampleLoss), sizes)


def run_on_chunks(driver: AggregateDisaggregate, model: Any, context: RunContext) -> Result:
    """Run ``driver`` (AggregateDisaggregate) on a model whose data are chunks on a cluster.

    Parameters
    ----------
    driver : AggregateDisaggregate
        Its options (``r0``, ``inner``, ``tol``, ``max_iter``, ``sample_size``,
        ``random_state``, ``singletons``, ``warm_start``) mean what they mean in memory.
    model : Model
        A model offering ``chunk_loss`` on a :class:`~optframe.data.dask.DaskDataset` (a
        chunked ``EmpiricalRisk``, ``DaskLADRegression``, ...).
    context : RunContext
        The back-end of the aggregated solves and the common options.

    Returns
    -------
    Result
        As in memory: status, objective, history (same records and extras), and the solution
        (parameters as NumPy arrays, per-sample arrays as lazy dask arrays); ``stats`` adds
        ``chunks`` and ``passes`` (computations over the chunks).
    """
    start = time.perf_counter()
    chunks = _Chunked(model)
    options = driver._common(context.options)
    tol, max_iter = options.tol, options.max_iter
    rng = np.random.default_rng(driver.random_state)
    inner_context = RunContext(context.backend, replace(context.options, tol=None, max_iter=None))
    loss = chunks.loss

    counts = _cluster_counts(driver, model)
    n, m = model.data.n_samples, model.data.n_features
    size = min(n, driver.sample_size if driver.sample_size is not None else max(1000, 20 * (m + 1)))
    pilot = driver.inner.run(model.with_data(chunks.sample(size, rng)), inner_context)
    if not pilot.has_solution:
        return driver._result(
            model, pilot.status, None, None, [], (start, start), pilot.backend, {}
        )
    labels, k, W, base = chunks.initial_labels(loss.params(pilot.solution), counts, rng)
    clustered = time.perf_counter()

    history: list[IterationRecord] = []
    inner_backend = pilot.backend
    best: tuple | None = None
    best_value, bound = math.inf, -math.inf
    status = Status.ITERATION_LIMIT
    start_basis = None
    failure: dict[str, str] = {}
    for iteration in range(max_iter):
        remaining = _remaining(options.time_limit, start)
        if remaining is not None and remaining <= 0:
            status = Status.TIME_LIMIT
            break
        step_context = RunContext(
            context.backend, replace(inner_context.options, time_limit=remaining, start=start_basis)
        )
        aggregated = model.with_data(chunks.centroids(labels, k, W, base))
        inner = driver.inner.run(aggregated, step_context)
        inner_backend = inner.backend
        if not inner.status.is_success:
            status = inner.status if inner.status.is_limit else Status.ERROR
            failure = inner_failure(inner, iteration, k)
            break
        params = loss.params(inner.solution)
        value, partitioned, split_stats = chunks.evaluate(labels, params)
        model.remember_objective(params, value)
        if value < best_value:
            duals = {
                name: np.asarray(inner.solution[name])
                for name in model.sample_duals
                if name in inner.solution
            }
            best, best_value = (params, duals, labels, W), value
        if inner.bound is not None:
            bound = max(bound, inner.bound)
        gap = _gap(best_value, bound)
        new_labels, new_k, new_W, new_base, keys = chunks.partition(partitioned, split_stats)
        del partitioned
        record = iteration_record(
            iteration, start, best_value, bound, gap, (k, new_k, n), value, inner,
            warm=start_basis is not None,
        )  # fmt: skip
        history.append(record)
        if context.callback is not None and context.callback(record):
            status = Status.CONVERGED
            break
        if new_k == k:
            status = Status.OPTIMAL
            break
        if gap <= tol:
            status = Status.OPTIMAL
            break
        if driver.warm_start and inner.basis is not None:
            start_basis = inner.basis.refine(keys // loss.n_pieces, k)
        labels, k, W, base = new_labels, new_k, new_W, new_base
    solution = None
    if best is not None:
        params, duals, best_labels, best_W = best
        solution = model.complete_solution(params)
        for name, values in duals.items():
            solution[name] = chunks.lifted(best_labels, values, best_W)
    final_bound = bound if math.isfinite(bound) else None
    stats = {
        "clusters": k,
        "rate": k / n,
        "inner_driver": driver.inner.name,
        "chunks": model.data.n_chunks,
        **failure,
        "passes": chunks.passes,
    }
    clock = (start, clustered)
    return driver._result(
        model, status, solution, final_bound, history, clock, inner_backend, stats
    )
