"""Aggregation of samples into weighted cluster centroids (a data operation, used by models)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe import row_blocks
from optframe.data.dataset import Dataset


def aggregate_samples(data: Dataset, weights: NDArray, labels: NDArray, k: int) -> Dataset:
    """The weighted centroids: ``x_k = sum w_i x_i / W_k``, ``y_k`` likewise, weight ``W_k``."""
    kept = np.flatnonzero(labels >= 0)
    W = np.bincount(labels[kept], weights=weights[kept], minlength=k)
    share = weights[kept] / W[labels[kept]]
    averaging = sp.csr_array((share, (labels[kept], kept)), shape=(k, data.n_samples))
    X = row_blocks.weighted_group_sums(data.X, averaging)
    if X is None:
        X = averaging @ data.X
    if sp.issparse(X):
        X = sp.csr_array(X)
    y = None
    if data.y is not None:
        # A member's value plus the averaged deviation from it: exact for a value shared by the
        # whole cluster (a class label), where a plain weighted mean can be off by rounding.
        representative = np.empty(k, dtype=np.int64)
        representative[labels[kept][::-1]] = kept[::-1]
        base = data.y[representative]
        y = base + averaging @ (data.y - np.where(labels >= 0, base[labels], 0.0))
    return Dataset(X=X, y=y, sample_weight=W, name=f"{data.name} (aggregated, {k} clusters)")
