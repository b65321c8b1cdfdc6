"""Helpers shared by the models: data checks, weights, sparse blocks, blocked kernel products."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from optframe.data import Dataset
from optframe.data.dask import DaskDataset
from optframe.errors import DataError, ModelError
from optframe.kernels import Kernel
from optframe.model import Formulation, ProblemClass
from optframe.validation import check_number as validate_number

# Kernel blocks are computed this many entries at a time (32 MB of float64).
BLOCK_ENTRIES = 1 << 22
# kernel_product densifies sparse factors at least this filled, up to this size
DENSE_FILL = 0.05
DENSE_BYTES = 1 << 28
# The dual of a non-linear kernel forms an n x n float64 matrix; models refuse beyond this.
GRAM_LIMIT_BYTES = 2 * 1024**3


def check_gram(size: int, what: str, instead: str) -> None:
    """Raise ModelError when a dense ``size`` x ``size`` float64 matrix would pass the limit.

    ``what`` names the matrix and its model, ``instead`` says what to use.
    """
    need = 8.0 * size * size
    if need > GRAM_LIMIT_BYTES:
        raise ModelError(
            f"{what} is a dense {size} x {size} matrix: {need / 1024**3:.1f} GiB (limit "
            f"{GRAM_LIMIT_BYTES / 1024**3:.0f} GiB). {instead}"
        )


def check_dataset(data: Any, model: str, *, need_y: bool = True) -> Dataset:
    """Return ``data`` if it is a :class:`Dataset` (with targets when ``need_y``), else raise."""
    if isinstance(data, DaskDataset):
        raise DataError(
            f"{model} takes an optframe.data.Dataset held in memory; got a DaskDataset (rows in "
            "chunks on a Dask cluster). Data in chunks are taken by EmpiricalRisk(data, loss, "
            "penalty=...) with a piecewise-linear loss (DaskLADRegression, "
            "DaskQuantileRegression and DaskWeightedSVM declare LAD, quantile regression and the "
            "linear SVM on it), solved by AggregateDisaggregate; or gather them with "
            "data.to_dataset() if they fit in memory."
        )
    if not isinstance(data, Dataset):
        raise DataError(
            f"{model} takes an optframe.data.Dataset; got {type(data).__name__}. "
            "Wrap arrays with Dataset(X=X, y=y)."
        )
    if need_y and data.y is None:
        raise DataError(f"{model} needs targets, but data.y is None; pass Dataset(X=X, y=y).")
    return data


def relabel_hint(labels: ArrayLike) -> str:
    """What to do with binary labels that are not -1 and +1, from the label values found.

    Examples
    --------
    >>> relabel_hint([0.0, 1.0])
    'Map 0/1 labels with y = 2 * y - 1.'
    >>> relabel_hint([1.0, 2.0])
    'Map the two labels with y = np.where(y == 2, 1, -1) (2 becomes +1, 1 becomes -1).'
    """
    values = np.unique(np.asarray(labels, dtype=np.float64))
    if values.size > 2:
        return (
            f"y holds {values.size} classes; a binary model takes two: train one per pair "
            "(optframe.multiclass.OneVsOne), or map the classes to -1 and +1 first."
        )
    if set(values.tolist()) == {0.0, 1.0}:
        return "Map 0/1 labels with y = 2 * y - 1."
    if values.size == 2:
        low, high = values
        return (
            f"Map the two labels with y = np.where(y == {high:g}, 1, -1) ({high:g} becomes +1, "
            f"{low:g} becomes -1)."
        )
    return "A binary model needs the labels -1 and +1, both present."


def check_flag(value: Any, name: str, model: str) -> bool:
    """Return ``value`` as a bool if it is one (numpy bools included), else raise ModelError."""
    if not isinstance(value, bool | np.bool_):
        raise ModelError(f"{model}: {name} must be True or False; got {value!r}")
    return bool(value)


def check_number(
    value: Any,
    name: str,
    model: str,
    *,
    low: float = -math.inf,
    strict: bool = False,
    high: float = math.inf,
    high_strict: bool = False,
) -> float:
    """``value`` as a finite float ``> low`` (``strict``) or ``>= low``, else a ModelError.

    The one rule of :func:`optframe.validation.check_number`: any real number is taken, numpy
    scalars included (``np.float32(1)``, ``np.int64(2)``); a string, ``None`` or a bool is
    refused, never converted.
    """
    number = validate_number(
        value, name, model, low=low, low_open=strict, high=high, high_open=high_strict
    )
    assert number is not None
    return number


def check_positive(value: Any, name: str, model: str) -> float:
    """``value`` as a finite float > 0, or a ModelError naming the parameter (see check_number)."""
    return check_number(value, name, model, low=0.0, strict=True)


def check_unit_weights(data: Dataset, model: str, instead: str) -> None:
    """Refuse ``data.sample_weight`` (DataError) unless it is ``None`` or all ones.

    For models whose loss has no per-sample weights: ignoring the weights would silently solve
    another problem. ``instead`` says what to do (a model that takes weights, repeated rows).
    """
    w = data.sample_weight
    if w is None or np.all(w == 1.0):
        return
    raise DataError(
        f"{model} does not support sample weights, and data.sample_weight is set (not all "
        f"ones). {instead} Or drop them with data.with_weights(None)."
    )


def resolve_weights(data: Dataset, sample_weight: ArrayLike | None, model: str) -> NDArray:
    """Return the effective sample weights: the model's, else the dataset's, else ones.

    Model-level weights are validated exactly as the Dataset validates its own (``DataError`` for
    NaN, a wrong length, negative entries or all zeros). Giving weights in both places is ambiguous
    and raises ``ModelError``.
    """
    if sample_weight is None:
        return data.weights
    if data.sample_weight is not None:
        raise ModelError(
            f"{model}: sample weights were given both in the Dataset and as sample_weight=; "
            "pass them in one place only (for example data.with_weights(w))."
        )
    weights = data.with_weights(sample_weight).sample_weight
    assert weights is not None
    return weights


def primal_or_dual(
    layer: str, form: str, problem: Any, problem_class: ProblemClass, recover: dict, **handles: Any
) -> Formulation:
    """A Formulation of the primal or of the dual form (maximized as min of its negative).

    ``recover`` maps each form ("primal", "dual") to the function that reads the model's solution.
    """
    return Formulation(
        layer=layer,
        problem=problem,
        problem_class=problem_class,
        recover=recover[form],
        objective_scale=-1.0 if form == "dual" else 1.0,
        form=form,
        **handles,
    )


def row_dot(X: sp.csr_array, i: int, variable: Any) -> Any:
    """Pyomo expression ``sum_j X[i, j] * variable[j]`` over the stored entries of CSR row ``i``."""
    from pyomo.environ import quicksum

    lo, hi = X.indptr[i], X.indptr[i + 1]
    return quicksum(
        float(a) * variable[int(j)] for a, j in zip(X.data[lo:hi], X.indices[lo:hi], strict=True)
    )


def eye(n: int) -> sp.csc_array:
    """Return the n x n identity as a CSC array."""
    return sp.csc_array(sp.identity(n, format="csc", dtype=np.float64))


def column(values: NDArray) -> sp.csc_array:
    """Return a dense vector as a one-column CSC array."""
    return sp.csc_array(np.asarray(values, dtype=np.float64).reshape(-1, 1))


def scale_rows(X: NDArray | sp.sparray, s: NDArray) -> NDArray | sp.csr_array:
    """``diag(s) @ X``, kept sparse (CSR) when ``X`` is sparse, without a Python loop."""
    if sp.issparse(X):
        Xs = sp.csr_array(X, dtype=np.float64, copy=True)
        Xs.data *= np.repeat(s, np.diff(Xs.indptr))
        return Xs
    return np.asarray(X) * s[:, None]


def check_features(X: ArrayLike, n_features: int, model: str) -> NDArray | sp.csr_array:
    """Validate new samples for prediction: 2-D, ``n_features`` columns, finite, real."""
    if np.iscomplexobj(X.dtype.type(0) if sp.issparse(X) else np.asarray(X)):
        raise DataError(
            f"{model}: X holds complex numbers; the model is real-valued (pass X.real, or the "
            "features it was built on)."
        )
    if sp.issparse(X):
        X = sp.csr_array(X, dtype=np.float64)
        values = X.data
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1 and n_features == 1:
            X = X.reshape(-1, 1)
        values = X
    if X.ndim != 2 or X.shape[1] != n_features:
        raise DataError(
            f"{model} was built on {n_features} features; X has shape {X.shape} "
            f"(expected (n_samples, {n_features}))."
        )
    if not np.all(np.isfinite(values)):
        raise DataError("X contains NaN or inf; impute or drop those entries first.")
    return X


def kernel_product(kernel: Kernel, left: Any, right: Any, v: NDArray) -> NDArray:
    """``K(left, right) @ v`` computed a block of rows at a time (never the full matrix).

    Sparse factors that are not very sparse are made dense (``right`` once, ``left`` a block at
    a time) when they fit ``DENSE_BYTES``: the blocks' inner products are then BLAS products.
    """
    right = _dense_if_filled(right)
    n_left = left.shape[0]
    step = max(1, BLOCK_ENTRIES // max(1, right.shape[0]))
    dense_left = _filled(left) and step * left.shape[1] * 8 <= DENSE_BYTES
    out = np.empty(n_left)
    for start in range(0, n_left, step):
        block = left[start : start + step]
        if dense_left:
            block = block.toarray()
        out[start : start + step] = kernel(block, right) @ v
    return out


def _dense_if_filled(X: Any) -> Any:
    """A dense copy of sparse ``X`` when at least ``DENSE_FILL`` of it is filled and it fits."""
    if _filled(X) and X.shape[0] * X.shape[1] * 8 <= DENSE_BYTES:
        return X.toarray()
    return X


def _filled(X: Any) -> bool:
    """``X`` is sparse with at least a ``DENSE_FILL`` fraction of non-zeros."""
    return sp.issparse(X) and X.nnz >= DENSE_FILL * X.shape[0] * X.shape[1]


def vector(solution: Any, key: str, model: str) -> NDArray:
    """``solution[key]`` as a 1-D float array, or a ModelError naming what is missing."""
    if key not in solution:
        raise ModelError(f"{model}: the solution has no {key!r} (it has {sorted(solution)})")
    return np.asarray(solution[key], dtype=np.float64).reshape(-1)


def scalar(solution: Any, key: str) -> float:
    """``solution[key]`` as a float (shape () or (1,)), 0.0 when absent."""
    if key not in solution:
        return 0.0
    value = np.asarray(solution[key], dtype=np.float64).reshape(-1)
    return float(value[0]) if value.size else 0.0


def weighted_median(values: NDArray[np.float64], weights: NDArray[np.float64]) -> float:
    r"""A minimizer of :math:`\sum_i c_i \lvert v_i - b\rvert` over :math:`b` (``c >= 0``)."""
    keep = weights > 0
    if not keep.any():
        return 0.0
    order = np.argsort(values[keep], kind="stable")
    v, c = values[keep][order], weights[keep][order]
    cumulative = np.cumsum(c)
    k = int(np.searchsorted(cumulative, 0.5 * cumulative[-1]))
    return float(v[min(k, v.size - 1)])


def root_of_increasing(slope: Any, low: float, high: float, steps: int = 200) -> float:
    """A root of a nondecreasing function ``slope`` of one variable, to the last digit.

    The bracket ``[low, high]`` is widened by doubling until ``slope(low) <= 0 <= slope(high)``,
    then halved until its midpoint is one of its ends (or ``steps`` halvings).
    """
    while slope(low) > 0.0:
        low -= 2.0 * (high - low)
    while slope(high) < 0.0:
        high += 2.0 * (high - low)
    for _ in range(steps):
        middle = 0.5 * (low + high)
        if not low < middle < high:
            break
        if slope(middle) < 0.0:
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)
