"""Cluster bookkeeping for aggregation drivers: initial clusters, centroids, splits, lifting.

A partition of the samples is one integer array ``labels`` (cluster id per sample, ``-1`` for a
sample left out, such as a zero-weight one). Everything is whole-array NumPy except the
nearest center of many points, taken by row blocks over the solve's threads
(:mod:`optframe.row_blocks`).
"""

from __future__ import annotations

import math
import time

import numpy as np
from numpy.typing import NDArray

from optframe import row_blocks


class OutOfTime(Exception):
    """Raised by the clustering when ``time.perf_counter()`` passes its ``deadline``."""


def _check(deadline: float | None) -> None:
    if deadline is not None and time.perf_counter() >= deadline:
        raise OutOfTime


def compact(labels: NDArray[np.int64]) -> tuple[NDArray[np.int64], int]:
    """Renumber cluster ids to 0..K-1 (keeping -1); return the labels and K."""
    kept = labels >= 0
    out = np.full(labels.shape, -1, dtype=np.int64)
    unique, inverse = np.unique(labels[kept], return_inverse=True)
    out[kept] = inverse
    return out, int(unique.size)


def split_by_piece(labels: NDArray[np.int64], pieces: NDArray[np.int64]) -> tuple[NDArray, int]:
    """Split every cluster whose members sit on different loss pieces; return labels and K.

    A cluster whose members all share a piece keeps one id, so the number of clusters is unchanged
    exactly when every cluster is pure.
    """
    n_pieces = int(pieces.max()) + 1 if pieces.size else 1
    keyed = np.where(labels >= 0, labels * n_pieces + pieces, -1)
    return compact(keyed)


def one_kmeans_iteration(
    points: NDArray[np.float64],
    k: int,
    rng: np.random.Generator,
    deadline: float | None = None,
) -> NDArray[np.int64]:
    """Cluster ``points`` (shape (n, d)) by one k-means iteration from ``k`` random samples.

    Assign every point to its nearest seed, move each center to its cluster's mean, assign again.
    Columns are scaled to unit spread first so no coordinate dominates. Returns labels 0..K-1
    (K <= k: empty clusters vanish). Raises :class:`OutOfTime` when ``time.perf_counter()``
    passes ``deadline`` (checked between blocks of points).
    """
    n = points.shape[0]
    k = max(1, min(k, n))
    if k == n:
        return np.arange(n, dtype=np.int64)
    spread = points.std(axis=0)
    scaled = points / np.where(spread > 0, spread, 1.0)
    centers = scaled[rng.choice(n, size=k, replace=False)]
    for _ in range(2):
        labels = _nearest(scaled, centers, deadline)
        counts = np.bincount(labels, minlength=len(centers))
        sums = np.stack(
            [
                np.bincount(labels, weights=scaled[:, j], minlength=len(centers))
                for j in range(scaled.shape[1])
            ],
            axis=1,
        )
        occupied = counts > 0
        centers = sums[occupied] / counts[occupied, None]
    return compact(_nearest(scaled, centers, deadline))[0]


def _nearest(
    points: NDArray[np.float64], centers: NDArray[np.float64], deadline: float | None = None
) -> NDArray[np.int64]:
    _check(deadline)
    if points.shape[1] == 1:
        order = np.argsort(centers[:, 0])
        sorted_centers = centers[order, 0]
        midpoints = (sorted_centers[1:] + sorted_centers[:-1]) / 2
        return order[np.searchsorted(midpoints, points[:, 0])]
    if deadline is None:  # blocks over the solve's threads for many points (optframe.row_blocks)
        labels = row_blocks.nearest_centers(points, centers)
        if labels is not None:
            return labels
    labels = np.empty(points.shape[0], dtype=np.int64)
    # blocks of 4M distances; 256K under a deadline, so the clock is read every few milliseconds
    step = max(1, (1 << (22 if deadline is None else 18)) // max(1, len(centers)))
    center_norms = np.einsum("ij,ij->i", centers, centers)
    for start in range(0, points.shape[0], step):
        _check(deadline)
        block = points[start : start + step]
        distances = center_norms[None, :] - 2.0 * block @ centers.T
        labels[start : start + step] = np.argmin(distances, axis=1)
    return labels


def initial_clusters(
    embedding: NDArray[np.float64],
    groups: NDArray[np.int64],
    weights: NDArray[np.float64],
    clusters_per_group: dict[int, int],
    rng: np.random.Generator,
    deadline: float | None = None,
) -> NDArray[np.int64]:
    """One k-means iteration per group on ``embedding``; clusters never mix groups.

    Zero-weight samples get label -1 (they do not count in any objective). Raises
    :class:`OutOfTime` when ``time.perf_counter()`` passes ``deadline``.
    """
    labels = np.full(groups.shape, -1, dtype=np.int64)
    offset = 0
    for group, k in clusters_per_group.items():
        members = np.flatnonzero((groups == group) & (weights > 0))
        if members.size == 0:
            continue
        local = one_kmeans_iteration(embedding[members], k, rng, deadline)
        labels[members] = local + offset
        offset += int(local.max()) + 1
    return compact(labels)[0]


def parents(old: NDArray[np.int64], new: NDArray[np.int64], k_new: int) -> NDArray[np.int64]:
    """The old cluster of each new cluster, for a partition ``new`` that refines ``old``."""
    kept = new >= 0
    parent = np.zeros(k_new, dtype=np.int64)
    parent[new[kept]] = old[kept]
    return parent


def lift(values: NDArray, weights: NDArray, labels: NDArray, k: int) -> NDArray[np.float64]:
    """Share each cluster's value among its members in proportion to their weights.

    For a per-sample dual variable this keeps feasibility: the box ``|v_i| <= c w_i`` follows from
    ``|v_k| <= c W_k``, and every sum ``sum_i v_i z_i`` over a cluster equals ``v_k z_k`` for the
    centroid ``z_k``.
    """
    kept = labels >= 0
    W = np.bincount(labels[kept], weights=weights[kept], minlength=k)
    lifted = np.zeros(labels.shape)
    lifted[kept] = np.asarray(values)[labels[kept]] * weights[kept] / W[labels[kept]]
    return lifted


def default_cluster_counts(group_sizes: dict[int, int], n_features: int) -> dict[int, int]:
    """The paper's initial sizes: about 2.2 m centroids in all (LAD: 2.2m; SVM: 1.1m per class).

    At least 0.05% of a group's samples and one cluster; never more than the group has.
    """
    per_group = 2.2 * max(1, n_features) / max(1, len(group_sizes))
    return {
        group: min(size, max(1, math.ceil(per_group), math.ceil(5e-4 * size)))
        for group, size in group_sizes.items()
    }
