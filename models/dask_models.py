r"""LAD and the linear weighted SVM on a :class:`~optframe.data.dask.DaskDataset`, chunk by chunk.

:class:`DaskLADRegression` and :class:`DaskWeightedSVM` are :class:`~optframe.models.LADRegression`
and the linear :class:`~optframe.models.WeightedSVM` on data held in row chunks by a Dask
cluster. They declare the same problems, with the same parameters, but are never built whole:
they are solved by :class:`~optframe.drivers.AggregateDisaggregate`, whose aggregated problems
(cluster centroids, small) are the in-memory models, built by :meth:`with_data` and solved on the
client. Everything that touches the samples is a map over the chunks and a reduction:

* the objective (the oracle every certificate uses);
* the certificate's bound, :meth:`dual_bound`, from the lifted dual point (LAD: the projection of
  :math:`\theta` onto :math:`\{X^\top\theta = 0, \mathbf 1^\top\theta = 0\}` through
  :math:`(m+1) \times (m+1)` normal equations; SVM: the balance of :math:`y^\top\alpha = 0` and
  :math:`\lVert X^\top(\alpha\circ y)\rVert^2`), with the operations of the in-memory models;
* the piecewise-linear structure AID uses (loss arguments, pieces, the clustering embedding), as
  per-chunk kernels (:attr:`chunk_loss`) and as lazy dask arrays.

Solutions hold the parameters as NumPy arrays (``beta``/``w``, ``intercept``) and the per-sample
arrays (``residual``/``xi``, the duals ``theta``/``alpha``) as lazy dask arrays with the data's
row chunks: they are computed on the workers only when asked for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from optframe.data import Dataset
from optframe.data.dask import DaskDataset, rows_text
from optframe.duality import abs_products, solve_normal
from optframe.errors import DataError, IncompatibleDriver, ModelError
from optframe.model import Formulation, Model, ProblemClass, Solution

from ._common import check_features, check_flag, check_positive, scalar, vector
from .lad import LADRegression
from .weighted_svm import WeightedSVM

# The weighted median of y (LAD's objective floor) is found by histograms of this many bins,
# until the samples left in the median's bin are few enough to gather.
MEDIAN_BINS = 4096
MEDIAN_GATHER = 200_000


# ----------------------------------------------------------------------- per-chunk kernels
@dataclass(frozen=True)
class AbsoluteLossChunks:
    r"""A residual loss :math:`\max(g_- r, g_+ r)` per sample, evaluated on one chunk (no data).

    Loss argument :math:`r_i = y_i - x_i^\top\beta - b`, pieces :math:`[r_i > 0]`, embedding
    :math:`(r_i, y_i)`, one group; the same expressions, in the same order of operations, as
    :class:`~optframe.models.LADRegression` (slopes :math:`\mp 1`, the absolute loss) or the
    quantile regression ``EmpiricalRisk(data, Pinball(tau), penalty=None)`` (slopes
    :math:`\tau - 1, \tau`; its names ``w`` and ``alpha``).
    """

    fit_intercept: bool = True
    below: float = -1.0
    above: float = 1.0
    coef: str = "beta"
    sample_dual: str = "theta"
    owner: str = "LADRegression"
    n_groups: ClassVar[int] = 1
    n_pieces: ClassVar[int] = 2
    per_sample: ClassVar[str] = "residual"

    def params(self, solution: Solution) -> dict[str, NDArray[np.float64]]:
        """The coefficients and ``intercept`` of ``solution`` (the intercept 0 when absent)."""
        beta = vector(solution, self.coef, self.owner)
        return {self.coef: beta, "intercept": np.array([scalar(solution, "intercept")])}

    def loss(self, r: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`\max(g_- r, g_+ r)`; the absolute value when the slopes are -1 and 1."""
        if (self.below, self.above) == (-1.0, 1.0):
            return np.abs(r)
        return np.maximum(self.below * r, self.above * r)

    def groups(self, y: NDArray[np.float64]) -> NDArray[np.int64]:
        """One group."""
        return np.zeros(y.shape[0], dtype=np.int64)

    def evaluate(
        self, X: Any, y: NDArray, w: NDArray, params: dict[str, NDArray]
    ) -> tuple[NDArray[np.float64], float]:
        r"""The loss arguments and :math:`\sum_i w_i \lvert r_i\rvert` of the chunk."""
        fitted = np.asarray(X @ params[self.coef], dtype=np.float64)
        b = float(params["intercept"][0])
        argument = y - (fitted + b)
        return argument, float(w @ self.loss(y - fitted - b))

    def embedding(self, X: Any, y: NDArray, params: dict[str, NDArray]) -> NDArray[np.float64]:
        """``(residual, y)`` per sample."""
        fitted = np.asarray(X @ params[self.coef], dtype=np.float64)
        return np.column_stack([y - (fitted + float(params["intercept"][0])), y])

    def values(self, X: Any, y: NDArray, params: dict[str, NDArray]) -> NDArray[np.float64]:
        """The residuals as the solution reports them."""
        return y - X @ params[self.coef] - float(params["intercept"][0])

    def regularizer(self, params: dict[str, NDArray]) -> float:
        """None: 0."""
        return 0.0


@dataclass(frozen=True)
class HingeLossChunks:
    r"""The linear weighted SVM's per-sample structure, evaluated on one chunk (no data).

    Loss argument :math:`h_i = 1 - y_i(x_i^\top w + b)`, pieces :math:`[h_i > 0]`, embedding the
    signed distance :math:`(x_i^\top w + b)/\lVert w\rVert`, groups the classes; as in
    :class:`~optframe.models.WeightedSVM`.
    """

    C: float = 1.0
    fit_intercept: bool = True
    n_groups: ClassVar[int] = 2
    n_pieces: ClassVar[int] = 2
    sample_dual: ClassVar[str] = "alpha"
    per_sample: ClassVar[str] = "xi"

    def params(self, solution: Solution) -> dict[str, NDArray[np.float64]]:
        """``w`` and ``intercept`` of ``solution`` (the intercept 0 when absent)."""
        w = vector(solution, "w", "WeightedSVM")
        return {"w": w, "intercept": np.array([scalar(solution, "intercept")])}

    def groups(self, y: NDArray[np.float64]) -> NDArray[np.int64]:
        """The class: 1 for :math:`y_i > 0`, else 0."""
        return (y > 0).astype(np.int64)

    def _f(self, X: Any, params: dict[str, NDArray]) -> NDArray[np.float64]:
        return np.asarray(X @ params["w"], dtype=np.float64)

    def evaluate(
        self, X: Any, y: NDArray, w: NDArray, params: dict[str, NDArray]
    ) -> tuple[NDArray[np.float64], float]:
        r"""The hinge arguments and :math:`C\sum_i s_i \max(0, h_i)` of the chunk."""
        g = self._f(X, params)
        b = float(params["intercept"][0])
        argument = 1.0 - y * (g + b)
        return argument, float((self.C * w) @ np.maximum(0.0, 1.0 - y * (g + b)))

    def embedding(self, X: Any, y: NDArray, params: dict[str, NDArray]) -> NDArray[np.float64]:
        """The signed distance to the hyperplane, shape (rows, 1)."""
        norm = math.sqrt(2.0 * self.regularizer(params)) or 1.0
        g = self._f(X, params)
        return ((g + float(params["intercept"][0])) / norm).reshape(-1, 1)

    def values(self, X: Any, y: NDArray, params: dict[str, NDArray]) -> NDArray[np.float64]:
        r"""The slacks :math:`\xi_i = \max(0, h_i)`."""
        g = self._f(X, params)
        return np.maximum(0.0, 1.0 - y * (g + float(params["intercept"][0])))

    def regularizer(self, params: dict[str, NDArray]) -> float:
        r""":math:`\tfrac12\lVert w\rVert^2`."""
        w = params["w"]
        return 0.5 * float(w @ w)


def _loss_sum(X: Any, y: NDArray, w: NDArray, lo: int, loss: Any, params: dict) -> float:
    return loss.evaluate(X, y, w, params)[1]


def _argument(X: Any, y: NDArray, w: NDArray, lo: int, loss: Any, params: dict) -> NDArray:
    return loss.evaluate(X, y, w, params)[0]


def _pieces(X: Any, y: NDArray, w: NDArray, lo: int, loss: Any, params: dict) -> NDArray:
    return (loss.evaluate(X, y, w, params)[0] > 0).astype(np.int64)


def _embedding(X: Any, y: NDArray, w: NDArray, lo: int, loss: Any, params: dict) -> NDArray:
    return loss.embedding(X, y, params)


def _values(X: Any, y: NDArray, w: NDArray, lo: int, loss: Any, params: dict) -> NDArray:
    return loss.values(X, y, params)


def _groups(X: Any, y: NDArray, w: NDArray, lo: int, loss: Any) -> NDArray:
    return loss.groups(y)


def _group_counts(X: Any, y: NDArray, w: NDArray, lo: int, loss: Any) -> NDArray[np.int64]:
    groups = loss.groups(y)
    return np.bincount(groups[w > 0], minlength=loss.n_groups).astype(np.int64)


def _label_check(X: Any, y: NDArray, w: NDArray, lo: int) -> tuple[Any, ...]:
    """Labels outside {-1, +1} (first row, values) and per-class member and weight counts."""
    bad = (y != 1.0) & (y != -1.0)
    first = int(np.flatnonzero(bad)[0]) + lo if bad.any() else -1
    members = np.array([np.count_nonzero(y == -1.0), np.count_nonzero(y == 1.0)])
    positive = np.array(
        [np.count_nonzero((y == -1.0) & (w > 0)), np.count_nonzero((y == 1.0) & (w > 0))]
    )
    return first, np.unique(y[bad])[:7], members, positive


def _chunk_of(value: Any, data: DaskDataset, what: str) -> list[Any]:
    """A per-sample vector (dask or NumPy) as one item per chunk, aligned with ``data``."""
    import dask.array as da

    n = data.n_samples
    if isinstance(value, da.Array):
        if value.shape != (n,):
            raise ModelError(f"the solution's {what!r} has shape {value.shape}; expected ({n},)")
        if value.chunks[0] != data.X.chunks[0]:
            value = value.rechunk((data.X.chunks[0],))
        return list(value.to_delayed().ravel())
    array = np.asarray(value, dtype=np.float64).reshape(-1)
    if array.shape != (n,):
        raise ModelError(f"the solution's {what!r} has shape {array.shape}; expected ({n},)")
    return [array[lo:hi] for lo, hi in data.row_ranges]


def _with_ones(X: Any, fit_intercept: bool) -> Any:
    """``[X, 1]`` (or ``X``): the columns of LAD's dual equality rows, for one chunk."""
    if not fit_intercept:
        return X
    ones = np.ones((X.shape[0], 1))
    if sp.issparse(X):
        return sp.hstack([X, ones], format="csr")
    return np.hstack([X, ones])


def _lad_dual_step(
    X: Any,
    y: NDArray,
    w: NDArray,
    lo: int,
    theta: Any,
    fit_intercept: bool,
    corrections: tuple[NDArray, ...],
    gram: bool,
    final: bool,
    box: tuple[float, float] = (-1.0, 1.0),
) -> tuple[Any, ...]:
    """One pass of :func:`~optframe.duality.project_null` on a chunk.

    ``theta`` minus ``A c`` for each correction ``c`` (free rows: positive weight), then either
    ``(A'theta, A'A or None)`` or, when ``final``, ``(the largest theta_i / end of its box
    [box[0] w_i, box[1] w_i], y'theta, A'theta, |A|'|theta|, rows)``: the last three check the
    equality rows at the point evaluated (:func:`~optframe.duality.equality_residual`).
    """
    free = w > 0
    A = _with_ones(X, fit_intercept)[free]
    part = np.asarray(theta, dtype=np.float64).reshape(-1)[free]
    for c in corrections:
        part = part - np.asarray(A @ c).reshape(-1)
    if final:
        if box == (-1.0, 1.0):
            ratio = np.abs(part) / w[free]
        else:
            ratio = np.where(part > 0, part / (box[1] * w[free]), part / (box[0] * w[free]))
        excess = float(np.max(ratio)) if part.size else 0.0
        residual = np.asarray(A.T @ part, dtype=np.float64).reshape(-1)
        return excess, float(y[free] @ part), residual, abs_products(A, part), part.size
    rhs = np.asarray(A.T @ part, dtype=np.float64).reshape(-1)
    if not gram:
        return rhs, None
    product = A.T @ A
    return rhs, np.asarray(product.toarray() if sp.issparse(product) else product)


def _svm_alpha(alpha: Any, w: NDArray, C: float) -> NDArray[np.float64]:
    return np.clip(np.asarray(alpha, dtype=np.float64).reshape(-1), 0.0, C * w)


def _svm_sides(X: Any, y: NDArray, w: NDArray, lo: int, alpha: Any, C: float) -> NDArray:
    terms = y * _svm_alpha(alpha, w, C)
    return np.array([terms[terms > 0].sum(), -terms[terms < 0].sum()])


def _svm_dual(
    X: Any, y: NDArray, w: NDArray, lo: int, alpha: Any, C: float, scale: tuple[float, float]
) -> tuple[float, NDArray]:
    """``(sum alpha, X'(alpha y))`` of a chunk after scaling the positive/negative terms."""
    alpha = _svm_alpha(alpha, w, C)
    terms = y * alpha
    alpha = np.where(terms > 0, alpha * scale[0], np.where(terms < 0, alpha * scale[1], alpha))
    support = np.flatnonzero(alpha)
    v = alpha[support] * y[support]
    return float(alpha.sum()), np.asarray(X[support].T @ v, dtype=np.float64).reshape(-1)


def _hinge_alpha(X: Any, y: NDArray, w: NDArray, lo: int, loss: Any, params: dict) -> NDArray:
    """The hinge's subgradient at a linear solution: C s_i where y f < 1, 0 elsewhere."""
    margin = y * (loss._f(X, params) + float(params["intercept"][0]))
    return np.where(margin < 1.0 - 1e-7, loss.C * w, 0.0)


def _sign_theta(X: Any, y: NDArray, w: NDArray, lo: int, loss: Any, params: dict) -> NDArray:
    """The loss's slope times ``w_i``: 0 on the kink (|r_i| <= 1e-9 max(1, |y|))."""
    residual = loss.evaluate(X, y, w, params)[0]
    tol = 1e-9 * max(1.0, float(np.max(np.abs(y))) if y.size else 1.0)
    slope = np.where(residual > 0, loss.above, loss.below)
    return np.where(np.abs(residual) <= tol, 0.0, w * slope)


def _range(X: Any, y: NDArray, w: NDArray, lo: int) -> tuple[float, float, float]:
    keep = w > 0
    if not keep.any():
        return math.inf, -math.inf, 0.0
    return float(y[keep].min()), float(y[keep].max()), float(w[keep].sum())


def _histogram(
    X: Any, y: NDArray, w: NDArray, lo: int, edges: NDArray, closed: bool
) -> tuple[NDArray, NDArray, float]:
    """Weights and counts of the positive-weight ``y`` per bin of ``edges``, weight below."""
    keep = w > 0
    v, c = y[keep], w[keep]
    below = float(c[v < edges[0]].sum())
    inside = (v >= edges[0]) & ((v <= edges[-1]) if closed else (v < edges[-1]))
    bins = np.clip(np.searchsorted(edges, v[inside], side="right") - 1, 0, edges.size - 2)
    weights = np.bincount(bins, weights=c[inside], minlength=edges.size - 1)
    counts = np.bincount(bins, minlength=edges.size - 1)
    return weights, counts, below


def _between(
    X: Any, y: NDArray, w: NDArray, lo: int, low: float, high: float, closed: bool
) -> tuple[NDArray, NDArray, float]:
    keep = w > 0
    v, c = y[keep], w[keep]
    inside = (v >= low) & ((v <= high) if closed else (v < high))
    return v[inside], c[inside], float(c[v < low].sum())


def _absolute_sum(X: Any, y: NDArray, w: NDArray, lo: int, center: float) -> float:
    return float(w @ np.abs(y - center))


def _predict_block(X: Any, loss: Any, params: dict) -> NDArray[np.float64]:
    key = "beta" if "beta" in params else "w"
    return np.asarray(X @ params[key], dtype=np.float64) + float(params["intercept"][0])


# --------------------------------------------------------------------------------- models
class _ChunkedSampleModel(Model):
    """What the chunked models share: checks, lazy per-sample arrays, chunk-wise objective."""

    layers: ClassVar[tuple[str, ...]] = ()
    convex_sample_loss: ClassVar[bool] = True
    data: DaskDataset
    _cache: dict[str, Any]

    @property
    def chunk_loss(self) -> Any:
        """The per-chunk kernels (:class:`AbsoluteLossChunks` or :class:`HingeLossChunks`)."""
        raise NotImplementedError

    @property
    def sample_duals(self) -> tuple[str, ...]:
        """The per-sample dual variable's name (lifted by weight share in AID)."""
        return (self.chunk_loss.sample_dual,)

    def _check_data(self) -> None:
        if not isinstance(self.data, DaskDataset):
            raise DataError(
                f"{self.name} takes an optframe.data.DaskDataset; got {type(self.data).__name__}. "
                "Wrap dask arrays with DaskDataset(X=X, y=y), or use the in-memory model "
                "on a Dataset."
            )
        if self.data.y is None:
            raise DataError(f"{self.name} needs targets, but data.y is None.")
        object.__setattr__(
            self, "fit_intercept", check_flag(self.fit_intercept, "fit_intercept", self.name)
        )
        object.__setattr__(self, "_cache", {"objective": {}})

    # ----------------------------------------------------------------------- structure
    @property
    def weights(self) -> Any:
        """The sample weights as a dask array (ones when the data have none)."""
        return self.data.weights

    @property
    def group_counts(self) -> NDArray[np.int64]:
        """Positive-weight samples per chunk and group, shape (chunks, groups)."""
        if "groups" not in self._cache:
            counts = self.data.map_chunks(_group_counts, self.chunk_loss)
            self._cache["groups"] = np.array(counts, dtype=np.int64)
        return self._cache["groups"]

    def _rowwise(self, function: Any, *args: Any, dtype: Any, tail: tuple = ()) -> Any:
        import dask.array as da

        blocks = [
            da.from_delayed(task, shape=(hi - lo, *tail), dtype=dtype)
            for task, (lo, hi) in zip(
                self.data.chunk_tasks(function, *args), self.data.row_ranges, strict=True
            )
        ]
        return da.concatenate(blocks)

    def sample_groups(self) -> Any:
        """The group of each sample, a lazy dask array (samples of a group share centroids)."""
        return self._rowwise(_groups, self.chunk_loss, dtype=np.int64)

    def loss_argument(self, solution: Solution) -> Any:
        """The loss argument of each sample at ``solution``, a lazy dask array."""
        params = self.chunk_loss.params(solution)
        return self._rowwise(_argument, self.chunk_loss, params, dtype=np.float64)

    def loss_pieces(self, solution: Solution) -> Any:
        """1 where the loss argument is positive, else 0: a lazy dask array."""
        params = self.chunk_loss.params(solution)
        return self._rowwise(_pieces, self.chunk_loss, params, dtype=np.int64)

    def sample_embedding(self, solution: Solution) -> Any:
        """The clustering embedding of each sample, a lazy dask array (rows, d)."""
        params = self.chunk_loss.params(solution)
        d = 2 if isinstance(self.chunk_loss, AbsoluteLossChunks) else 1
        return self._rowwise(_embedding, self.chunk_loss, params, dtype=np.float64, tail=(d,))

    def complete_solution(self, solution: Solution) -> dict[str, Any]:
        """The parameters of ``solution`` and the lazy per-sample values on this model's data."""
        loss = self.chunk_loss
        params = loss.params(solution)
        out: dict[str, Any] = dict(params)
        out[loss.per_sample] = self._rowwise(_values, loss, params, dtype=np.float64)
        return out

    # ---------------------------------------------------------------------- evaluation
    def objective(self, solution: Solution) -> float:
        """The objective at ``solution``'s parameters, summed chunk by chunk on the cluster."""
        loss = self.chunk_loss
        params = loss.params(solution)
        key = b"".join(np.ascontiguousarray(params[k]).tobytes() for k in sorted(params))
        cached = self._cache["objective"]
        if key not in cached:
            parts = self.data.map_chunks(_loss_sum, loss, params)
            if len(cached) > 64:
                cached.clear()
            cached[key] = loss.regularizer(params) + float(sum(parts))
        return cached[key]

    def remember_objective(self, solution: Solution, value: float) -> None:
        """Record the objective at ``solution`` computed by a driver's own chunk pass."""
        params = self.chunk_loss.params(solution)
        key = b"".join(np.ascontiguousarray(params[k]).tobytes() for k in sorted(params))
        self._cache["objective"][key] = float(value)

    def decision_function(self, solution: Solution, X: ArrayLike) -> Any:
        """Predictions at ``X`` (NumPy or sparse; a dask array gives a lazy dask array)."""
        import dask.array as da

        params = self.chunk_loss.params(solution)
        if isinstance(X, da.Array):
            return X.map_blocks(
                _predict_block, self.chunk_loss, params, drop_axis=1, dtype=np.float64
            )
        X = check_features(X, self.data.n_features, self.name)
        return _predict_block(X, self.chunk_loss, params)

    def check_form(self, form: str | None) -> str:
        """Refuse: a driver that builds the whole problem (Direct) cannot take this model."""
        raise IncompatibleDriver(
            f"{self.name} keeps its samples in chunks on a Dask cluster and is never built "
            "whole, which Direct needs; solve it with driver=AggregateDisaggregate() (its "
            "aggregated models are built in memory and solved by the back-end)."
        )

    def build(self, layer: str, form: str | None = None) -> Formulation:
        """Not built whole: solve with AggregateDisaggregate (see the module's docstring)."""
        raise ModelError(
            f"{self.name} holds its data in chunks on a Dask cluster and is not built whole; "
            "solve it with driver=AggregateDisaggregate(), whose aggregated models are built "
            "in memory."
        )

    def offers(self, layer: str, form: str | None = None) -> bool:
        """Never: no layer builds the whole problem."""
        return False


@dataclass(frozen=True, eq=False)
class DaskLADRegression(_ChunkedSampleModel):
    r"""Weighted LAD regression on data in row chunks on a Dask cluster.

    .. math::

        \min_{\beta,\, b} \; \sum_{i=1}^n w_i \,\lvert y_i - x_i^\top \beta - b \rvert

    The problem of :class:`~optframe.models.LADRegression`; solve it with
    :class:`~optframe.drivers.AggregateDisaggregate`.

    Parameters
    ----------
    data : DaskDataset
        Features (dense or sparse chunks), targets and, optionally, the weights :math:`w`.
    fit_intercept : bool
        Whether to fit :math:`b`.

    Raises
    ------
    DataError
        If ``data`` is not a DaskDataset or has no ``y``.
    ModelError
        If ``fit_intercept`` is not a bool.

    Notes
    -----
    Solution: ``"beta"`` (m,), ``"intercept"`` (1,) as NumPy arrays; ``"residual"`` and, from
    AID, ``"theta"`` (the lifted dual point) as lazy dask arrays of length n.
    """

    problem_class: ClassVar[ProblemClass] = ProblemClass.LP

    data: DaskDataset
    fit_intercept: bool = True
    _cache: dict[str, Any] = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        self._check_data()

    @property
    def chunk_loss(self) -> AbsoluteLossChunks:
        """LAD's per-chunk kernels."""
        return AbsoluteLossChunks(self.fit_intercept)

    def with_data(self, data: Dataset) -> LADRegression:
        """The in-memory LAD (same ``fit_intercept``) on ``data``: AID's aggregated problems."""
        return LADRegression(data, fit_intercept=self.fit_intercept)

    def dual_bound(self, solution: Solution) -> float:
        r"""A proven lower bound :math:`y^\top\theta`, computed chunk by chunk.

        :math:`\theta` is the solution's ``"theta"`` (a dask or NumPy array of length n), else
        :math:`w_i\,\mathrm{sign}(r_i)` (0 within :math:`10^{-9}\max(1, \lvert y\rvert)` of the
        kink; the in-memory model fills those by least squares, so its bound is tighter there).
        As in :meth:`LADRegression.dual_bound`, it is projected onto
        :math:`\{X^\top\theta = 0,\ \mathbf 1^\top\theta = 0\}` in two least-squares passes
        (:math:`A^\top A` and :math:`A^\top\theta` summed over the chunks, :math:`A = [X,
        \mathbf 1]`) and divided by :math:`\max(1, \max_i \lvert\theta_i\rvert / w_i)`: three
        passes over the chunks, whatever the number of samples. The last pass also sums
        :math:`A^\top\theta` and :math:`\lvert A\rvert^\top\lvert\theta\rvert`: a row left
        above its rounding error (:func:`~optframe.duality.equality_residual`) gives no bound
        (``-inf``).
        """
        data, loss = self.data, self.chunk_loss
        box = (loss.below, loss.above)
        if loss.sample_dual in solution:
            theta = _chunk_of(solution[loss.sample_dual], data, loss.sample_dual)
        else:
            params = loss.params(solution)
            theta = data.chunk_tasks(_sign_theta, loss, params)
        need_gram = "gram" not in self._cache
        first = data.map_chunks(
            _lad_dual_step, self.fit_intercept, (), need_gram, False, box, per_chunk=[theta]
        )
        if need_gram:
            self._cache["gram"] = sum(g for _, g in first)
        gram = self._cache["gram"]
        c1 = solve_normal(gram, sum(r for r, _ in first))
        second = data.map_chunks(
            _lad_dual_step, self.fit_intercept, (c1,), False, False, box, per_chunk=[theta]
        )
        c2 = solve_normal(gram, sum(r for r, _ in second))
        final = data.map_chunks(
            _lad_dual_step, self.fit_intercept, (c1, c2), False, True, box, per_chunk=[theta]
        )
        excess = max(f[0] for f in final)
        value = float(sum(f[1] for f in final))
        residual = np.abs(sum(f[2] for f in final))
        allowed = sum(f[4] for f in final) * np.finfo(np.float64).eps * sum(f[3] for f in final)
        if np.any(residual > allowed):  # a row the projection could not meet: no bound
            return -math.inf
        return value / excess if excess > 1.0 else value

    def objective_floor(self) -> float:
        r"""A thousandth of the constant model's loss, :math:`10^{-3}\sum_i w_i\lvert y_i-m\rvert`.

        As :meth:`LADRegression.objective_floor`; :math:`m`, the weighted median of :math:`y`
        (0 without intercept), is found by histograms over the chunks, then exactly among the
        few samples left in its bin.
        """
        if "floor" not in self._cache:
            center = _weighted_median(self.data) if self.fit_intercept else 0.0
            total = sum(self.data.map_chunks(_absolute_sum, center))
            self._cache["floor"] = 1e-3 * float(total)
        return self._cache["floor"]


@dataclass(frozen=True, eq=False)
class DaskQuantileRegression(DaskLADRegression):
    r"""Weighted quantile regression at level :math:`\tau` on data in row chunks (Dask).

    .. math::

        \min_{w,\, b} \; \sum_{i=1}^n s_i\, \rho_\tau(y_i - x_i^\top w - b),
        \qquad \rho_\tau(r) = \max(\tau r, (\tau - 1) r)

    The problem of ``EmpiricalRisk(data, Pinball(tau), penalty=None)``, with its names (``w``,
    ``alpha``); solve it with :class:`~optframe.drivers.AggregateDisaggregate`. Everything is
    :class:`DaskLADRegression`'s with the slopes :math:`\tau - 1, \tau`: the dual point
    :math:`\alpha \in [(\tau - 1) s, \tau s]` is projected onto
    :math:`\{X^\top\alpha = 0, \mathbf 1^\top\alpha = 0\}` and scaled into its box, and the
    bound is :math:`y^\top\alpha` (the pinball loss's conjugate is 0 on its box).

    Parameters
    ----------
    data : DaskDataset
        Features (dense or sparse chunks), targets and, optionally, the weights :math:`s`.
    tau : float
        The quantile level, in (0, 1).
    fit_intercept : bool
        Whether to fit :math:`b`.

    Raises
    ------
    DataError
        If ``data`` is not a DaskDataset or has no ``y``.
    ModelError
        If ``tau`` is not in (0, 1) or ``fit_intercept`` is not a bool.
    """

    tau: float = 0.5
    fit_intercept: bool = True

    def __post_init__(self) -> None:
        from optframe.losses import Pinball

        object.__setattr__(self, "tau", Pinball(self.tau).tau)  # ModelError outside (0, 1)
        super().__post_init__()

    @property
    def chunk_loss(self) -> AbsoluteLossChunks:
        """The pinball loss's per-chunk kernels."""
        return AbsoluteLossChunks(
            self.fit_intercept, self.tau - 1.0, self.tau, "w", "alpha", "EmpiricalRisk"
        )

    def with_data(self, data: Dataset) -> Model:
        """``EmpiricalRisk(data, Pinball(tau), penalty=None)``: AID's aggregated problems."""
        from optframe.losses import Pinball

        from .empirical_risk import EmpiricalRisk

        loss = Pinball(self.tau)
        return EmpiricalRisk(data, loss, penalty=None, fit_intercept=self.fit_intercept)


@dataclass(frozen=True, eq=False)
class DaskWeightedSVM(_ChunkedSampleModel):
    r"""The linear weighted hinge-loss C-SVM on data in row chunks on a Dask cluster.

    .. math::

        \min_{w, b} \; \tfrac12 \lVert w \rVert^2 + C \sum_{i=1}^n s_i
        \max\bigl(0,\ 1 - y_i (w^\top x_i + b)\bigr)

    The problem of :class:`~optframe.models.WeightedSVM` with the linear kernel; solve it with
    :class:`~optframe.drivers.AggregateDisaggregate`.

    Parameters
    ----------
    data : DaskDataset
        Features (dense or sparse chunks), labels in :math:`\{-1, +1\}` and, optionally, the
        weights :math:`s`.
    C : float
        The penalty :math:`C > 0`.
    fit_intercept : bool
        Whether to fit the bias :math:`b`.

    Raises
    ------
    DataError
        If ``data`` is not a DaskDataset, has no ``y``, a chunk holds a label other than -1 and
        +1 (the message names the chunk and its rows), or a class is missing or has zero weight.
    ModelError
        If ``C`` is not a finite positive number or ``fit_intercept`` is not a bool.

    Notes
    -----
    Solution: ``"w"`` (m,), ``"intercept"`` (1,) as NumPy arrays; ``"xi"`` and, from AID,
    ``"alpha"`` (the lifted dual point) as lazy dask arrays of length n.
    """

    problem_class: ClassVar[ProblemClass] = ProblemClass.QP
    is_classifier: ClassVar[bool] = True

    data: DaskDataset
    C: float = 1.0
    fit_intercept: bool = True
    _cache: dict[str, Any] = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        self._check_data()
        object.__setattr__(self, "C", check_positive(self.C, "C", self.name))
        checks = self.data.map_chunks(_label_check)
        for index, ((lo, hi), (first, bad, _, _)) in enumerate(
            zip(self.data.row_ranges, checks, strict=True)
        ):
            if first >= 0:
                shown = ", ".join(f"{v:g}" for v in bad[:6]) + (", ..." if bad.size > 6 else "")
                raise DataError(
                    f"{self.name} needs labels in {{-1, +1}}; y also holds {shown} (first at "
                    f"row {first}, in {rows_text(lo, hi, index)}). Map 0/1 labels with "
                    "y = 2 * y - 1."
                )
        members = sum(c[2] for c in checks)
        positive = sum(c[3] for c in checks)
        for code, label in ((1, 1.0), (0, -1.0)):
            if members[code] == 0:
                raise DataError(
                    f"{self.name} needs both classes; class {label:+g} is missing from y "
                    f"(all {self.data.n_samples} labels are {-label:+g})."
                )
            if positive[code] == 0:
                raise DataError(
                    f"{self.name}: class {label:+g} has zero total sample weight; "
                    "each class needs a sample with positive weight."
                )

    @property
    def chunk_loss(self) -> HingeLossChunks:
        """The hinge's per-chunk kernels."""
        return HingeLossChunks(self.C, self.fit_intercept)

    def with_data(self, data: Dataset) -> WeightedSVM:
        """The in-memory linear SVM (same ``C``, ``fit_intercept``) on ``data``."""
        return WeightedSVM(data, C=self.C, fit_intercept=self.fit_intercept)

    def dual_bound(self, solution: Solution) -> float:
        r"""A proven lower bound, the SVM's dual objective, computed chunk by chunk.

        The dual objective is :math:`\mathbf 1^\top\alpha - \tfrac12\lVert X^\top(\alpha\circ
        y)\rVert^2`.

        :math:`\alpha` is the solution's ``"alpha"`` (dask or NumPy, length n), else the hinge's
        subgradient :math:`C s_i [y_i f(x_i) < 1]` (0 within :math:`10^{-7}` of the margin; the
        in-memory model fills those by least squares). As in :meth:`WeightedSVM.dual_bound`, it
        is clipped to :math:`[0, C s_i]` and, with an intercept, the larger class side is scaled
        down so that :math:`y^\top\alpha = 0` exactly: two passes over the chunks.
        """
        data, loss = self.data, self.chunk_loss
        if "alpha" in solution:
            alpha = _chunk_of(solution["alpha"], data, "alpha")
        else:
            alpha = data.chunk_tasks(_hinge_alpha, loss, loss.params(solution))
        scale = (1.0, 1.0)
        if self.fit_intercept:
            positive, negative = sum(data.map_chunks(_svm_sides, self.C, per_chunk=[alpha]))
            if positive > negative:
                scale = (negative / positive, 1.0)
            elif negative > positive:
                scale = (1.0, positive / negative)
        parts = data.map_chunks(_svm_dual, self.C, scale, per_chunk=[alpha])
        total = float(sum(s for s, _ in parts))
        w = sum(v for _, v in parts)
        return total - 0.5 * float(w @ w)


def _weighted_median(data: DaskDataset) -> float:
    """The weighted median of ``data.y`` (as ``weighted_median`` in memory), chunk by chunk."""
    ranges = data.map_chunks(_range)
    total = float(sum(r[2] for r in ranges))
    if total <= 0:
        return 0.0
    low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
    half, below, closed = 0.5 * total, 0.0, True
    for _ in range(8):
        if low == high:
            return float(low)
        edges = np.linspace(low, high, MEDIAN_BINS + 1)
        parts = data.map_chunks(_histogram, edges, closed)
        weights = sum(p[0] for p in parts)
        counts = sum(p[1] for p in parts)
        below = float(sum(p[2] for p in parts))
        if int(counts.sum()) <= MEDIAN_GATHER:
            break
        cumulative = below + np.cumsum(weights)
        j = min(int(np.searchsorted(cumulative, half)), MEDIAN_BINS - 1)
        low, high = float(edges[j]), float(edges[j + 1])
        closed = closed and j == MEDIAN_BINS - 1
    parts = data.map_chunks(_between, low, high, closed)
    values = np.concatenate([p[0] for p in parts])
    weights = np.concatenate([p[1] for p in parts])
    below = float(sum(p[2] for p in parts))
    order = np.argsort(values, kind="stable")
    cumulative = below + np.cumsum(weights[order])
    k = int(np.searchsorted(cumulative, half))
    return float(values[order][min(k, values.size - 1)])
