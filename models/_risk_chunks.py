r"""The per-chunk kernels of an :class:`~optframe.models.EmpiricalRisk` on a Dask dataset.

Everything here runs on one chunk of a :class:`~optframe.data.dask.DaskDataset` (a NumPy or CSR
``X``, ``y``, the weights ``s``, its first row ``lo``) and returns a small result that the client
sums: the loss's values, pieces and embedding (:class:`PLQChunkLoss`, the ``chunk_loss`` that
:mod:`optframe.drivers.aid_dask` reads), the passes of the certificate and of the objective's
floor. The expressions are those of the in-memory model (:mod:`optframe.models._risk_dual`), in
the same order of operations, so a chunked model and the in-memory one agree to rounding.

Notation of :mod:`optframe.models._risk_dual`: :math:`c_i = C s_i`, the loss argument
:math:`a_i = p_i + q_i f_i` (:math:`p = 0, q = y` for a margin; :math:`p = y, q = -1` for a
residual), multipliers :math:`\theta_i \in c_i \operatorname{dom}\ell^*` and
:math:`v_i = -q_i\theta_i`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.duality import abs_products
from optframe.losses import PLQLoss
from optframe.model import Solution
from optframe.penalties import Penalty

from ._common import scalar, vector


@dataclass(frozen=True)
class PLQChunkLoss:
    r"""A piecewise-linear loss and a penalty, evaluated on one chunk (holds no data).

    The ``chunk_loss`` of a chunked :class:`~optframe.models.EmpiricalRisk`: loss argument
    :math:`a_i` (margin or residual), its linear piece (the kinks' ``searchsorted``, a kink
    counting left, as :meth:`EmpiricalRisk.loss_pieces`), groups (the classes of a margin loss,
    else one), the clustering embedding (``(residual, y)``, or the signed distance to the
    hyperplane) and the weighted loss sum :math:`C\sum_i s_i \ell(a_i)`.

    Parameters
    ----------
    loss : PLQLoss
        A loss with ReLU pieces only and no affine part.
    penalty : Penalty
        The penalty :math:`P` (its value is :meth:`regularizer`).
    C : float
        The loss weight.
    fit_intercept : bool
        Whether the model has an intercept.
    coef, sample_dual : str
        The solution's names of the coefficients and of the per-sample dual variable.
    per_sample : str or None
        The name of the per-sample values a solution reports (``"residual"``: the arguments;
        ``"xi"``: the losses), or ``None``.
    owner : str
        The model's name, for messages.
    """

    loss: PLQLoss
    penalty: Penalty
    C: float = 1.0
    fit_intercept: bool = True
    coef: str = "w"
    sample_dual: str = "alpha"
    per_sample: str | None = None
    owner: str = "EmpiricalRisk"

    @property
    def classification(self) -> bool:
        """Whether the argument is the margin :math:`y_i f(x_i)`."""
        return self.loss.is_classification

    @property
    def n_groups(self) -> int:
        """Two groups (the classes) for a margin loss, else one."""
        return 2 if self.classification else 1

    @property
    def homogeneous(self) -> bool:
        r"""Whether :math:`\ell^*` is positively homogeneous (the loss is 0 at every kink).

        :math:`\ell^*(\beta) = \beta j_k - \ell(j_k)` between the slopes around the kink
        :math:`j_k`, so the dual's loss terms at :math:`v / t` are those at :math:`v` over
        :math:`t`: the absolute, pinball, hinge and epsilon-insensitive losses.
        """
        kinks = self.loss.linear_pieces[0]
        return bool(np.all(self.loss.value(kinks) == 0.0))

    @property
    def n_pieces(self) -> int:
        """The number of linear pieces of the loss."""
        return int(self.loss.linear_pieces[0].size) + 1

    def params(self, solution: Solution) -> dict[str, NDArray[np.float64]]:
        """The coefficients and ``intercept`` of ``solution`` (the intercept 0 when absent)."""
        coef = vector(solution, self.coef, self.owner)
        return {self.coef: coef, "intercept": np.array([scalar(solution, "intercept")])}

    def groups(self, y: NDArray[np.float64]) -> NDArray[np.int64]:
        """The class (1 for :math:`y_i > 0`, else 0) for a margin loss; one group else."""
        if self.classification:
            return (y > 0).astype(np.int64)
        return np.zeros(y.shape[0], dtype=np.int64)

    def argument(self, X: Any, y: NDArray, params: dict[str, NDArray]) -> NDArray[np.float64]:
        r""":math:`a_i = p_i + q_i (x_i^\top w + b)`."""
        f = np.asarray(X @ params[self.coef], dtype=np.float64) + float(params["intercept"][0])
        return y * f if self.classification else y + -f

    def evaluate(
        self, X: Any, y: NDArray, w: NDArray, params: dict[str, NDArray]
    ) -> tuple[NDArray[np.float64], float]:
        r"""The loss arguments and :math:`C\sum_i s_i \ell(a_i)` of the chunk."""
        a = self.argument(X, y, params)
        return a, float((self.C * w) @ self.loss.value(a))

    def pieces(self, a: NDArray[np.float64]) -> NDArray[np.int64]:
        """The linear piece each argument sits on (a kink counts left)."""
        kinks = self.loss.linear_pieces[0]
        return np.searchsorted(kinks, a, side="left").astype(np.int64)

    def embedding(self, X: Any, y: NDArray, params: dict[str, NDArray]) -> NDArray[np.float64]:
        """``(residual, y)`` for a residual loss; the signed distance to the hyperplane else."""
        a = self.argument(X, y, params)
        if not self.classification:
            return np.column_stack([a, y])
        norm = math.sqrt(2.0 * self.regularizer(params)) or 1.0
        return (y * a / norm).reshape(-1, 1)

    def values(self, X: Any, y: NDArray, params: dict[str, NDArray]) -> NDArray[np.float64]:
        """The per-sample values a solution reports: residuals, or the losses (``xi``)."""
        a = self.argument(X, y, params)
        return a if self.per_sample == "residual" else self.loss.value(a)

    def regularizer(self, params: dict[str, NDArray]) -> float:
        """The penalty :math:`P(w)`."""
        return self.penalty.value(params[self.coef])

    # ------------------------------------------------------------------------- certificate
    def box(self, w: NDArray) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        r"""The box :math:`c_i\operatorname{dom}\ell^*` of :math:`\theta` (0 for a zero weight)."""
        lo, hi = self.loss.conjugate_domain
        c = self.C * w
        with np.errstate(invalid="ignore"):
            return np.where(c > 0, c * lo, 0.0), np.where(c > 0, c * hi, 0.0)

    def slope(self, y: NDArray) -> NDArray[np.float64]:
        r""":math:`q`: :math:`y` for a margin, -1 for a residual."""
        return y if self.classification else -np.ones_like(y)

    def multiplier(
        self, X: Any, y: NDArray, w: NDArray, lo: int, item: Any, params: dict[str, NDArray]
    ) -> NDArray[np.float64]:
        r""":math:`v = -q\theta` with :math:`\theta` clipped into its box.

        :math:`\theta` from ``item``: the chunk of the solution's dual variable (in its
        convention, :math:`\alpha = -\theta` for a margin loss), or a :class:`KinkFill` (the
        loss's subgradient :math:`c_i\ell'(a_i)` with the samples near a kink filled, as
        :func:`~optframe.models._risk_dual.subgradient_theta` fills them).
        """
        if isinstance(item, KinkFill):
            theta = item.theta(self, X, y, w, lo, params)
        else:
            alpha = np.nan_to_num(np.asarray(item, dtype=np.float64).reshape(-1))
            theta = -alpha if self.classification else alpha
        low, high = self.box(w)
        return -self.slope(y) * np.clip(theta, low, high)

    def loss_terms(self, y: NDArray, w: NDArray, v: NDArray) -> tuple[float, float]:
        r"""The dual's loss terms :math:`\theta^\top p` and :math:`-\sum_i c_i\ell^*(\beta_i)`.

        At :math:`\theta = -q\odot v` (``v`` in its box), :math:`\beta_i = \theta_i / c_i`.
        """
        theta = -self.slope(y) * v
        c = self.C * w
        counted = c > 0
        beta = np.zeros_like(theta)
        beta[counted] = theta[counted] / c[counted]
        lo, hi = self.loss.conjugate_domain
        conjugate = self.loss.conjugate(np.clip(beta, lo, hi))
        linear = 0.0 if self.classification else float(theta @ y)
        return linear, -float(c[counted] @ conjugate[counted])


# --------------------------------------------------------------------- per-chunk functions
def loss_sum(X: Any, y: NDArray, w: NDArray, lo: int, loss: PLQChunkLoss, params: dict) -> float:
    """The chunk's weighted loss sum."""
    return loss.evaluate(X, y, w, params)[1]


def arguments(X: Any, y: NDArray, w: NDArray, lo: int, loss: PLQChunkLoss, params: dict) -> NDArray:
    """The chunk's loss arguments."""
    return loss.argument(X, y, params)


def pieces(X: Any, y: NDArray, w: NDArray, lo: int, loss: PLQChunkLoss, params: dict) -> NDArray:
    """The chunk's loss pieces."""
    return loss.pieces(loss.argument(X, y, params))


def embedding(X: Any, y: NDArray, w: NDArray, lo: int, loss: PLQChunkLoss, params: dict) -> NDArray:
    """The chunk's clustering embedding."""
    return loss.embedding(X, y, params)


def values(X: Any, y: NDArray, w: NDArray, lo: int, loss: PLQChunkLoss, params: dict) -> NDArray:
    """The chunk's per-sample values (residuals or losses)."""
    return loss.values(X, y, params)


def groups(X: Any, y: NDArray, w: NDArray, lo: int, loss: PLQChunkLoss) -> NDArray:
    """The chunk's groups."""
    return loss.groups(y)


def group_counts(X: Any, y: NDArray, w: NDArray, lo: int, loss: PLQChunkLoss) -> NDArray:
    """Positive-weight samples per group in the chunk."""
    return np.bincount(loss.groups(y)[w > 0], minlength=loss.n_groups).astype(np.int64)


def label_check(X: Any, y: NDArray, w: NDArray, lo: int) -> tuple[Any, ...]:
    """Labels outside {-1, +1} (first row, values) and per-class member and weight counts."""
    bad = (y != 1.0) & (y != -1.0)
    first = int(np.flatnonzero(bad)[0]) + lo if bad.any() else -1
    members = np.array([np.count_nonzero(y == -1.0), np.count_nonzero(y == 1.0)])
    positive = np.array(
        [np.count_nonzero((y == -1.0) & (w > 0)), np.count_nonzero((y == 1.0) & (w > 0))]
    )
    return first, np.unique(y[bad])[:7], members, positive


def predict_block(X: Any, coef: NDArray, intercept: float) -> NDArray[np.float64]:
    """:math:`Xw + b` of a block of rows."""
    return np.asarray(X @ coef, dtype=np.float64) + intercept


# ------------------------------------------------------------- certificate, penalized
def sides(
    X: Any, y: NDArray, w: NDArray, lo: int, item: Any, loss: PLQChunkLoss, params: dict
) -> NDArray[np.float64]:
    r"""The sums of the positive and of the negative entries of :math:`v` (the balance's sides)."""
    v = loss.multiplier(X, y, w, lo, item, params)
    return np.array([v[v > 0].sum(), -v[v < 0].sum()])


def penalized_dual(
    X: Any,
    y: NDArray,
    w: NDArray,
    lo: int,
    item: Any,
    loss: PLQChunkLoss,
    params: dict,
    scale: tuple[float, float, float],
) -> tuple[float, float, NDArray[np.float64]]:
    r""":math:`\theta^\top p`, :math:`-\sum c_i\ell^*`, :math:`X^\top v` at the scaled :math:`v`.

    ``scale`` is (positive side, negative side, all): the balance's factors of the two sides of
    :math:`v`, then the lasso's factor of the whole.
    """
    v = loss.multiplier(X, y, w, lo, item, params)
    v = np.where(v > 0, v * scale[0], np.where(v < 0, v * scale[1], v)) * scale[2]
    linear, conjugate = loss.loss_terms(y, w, v)
    return linear, conjugate, np.asarray(X.T @ v, dtype=np.float64).reshape(-1)


# ---------------------------------------------------------- certificate, no penalty
def multiplier_size(
    X: Any, y: NDArray, w: NDArray, lo: int, item: Any, loss: PLQChunkLoss, params: dict
) -> float:
    r""":math:`\max_i \lvert v_i\rvert` on the chunk (the scale of the pinning tolerance)."""
    return float(np.max(np.abs(loss.multiplier(X, y, w, lo, item, params)), initial=0.0))


def with_ones(X: Any, fit_intercept: bool) -> Any:
    r""":math:`[X, \mathbf 1]` (or :math:`X`): the columns of the dual's equality rows."""
    if not fit_intercept:
        return X
    ones = np.ones((X.shape[0], 1))
    if sp.issparse(X):
        return sp.hstack([X, ones], format="csr")
    return np.hstack([X, ones])


def transposed_times(X: Any, v: NDArray, fit_intercept: bool) -> NDArray[np.float64]:
    r""":math:`[X, \mathbf 1]^\top v` (or :math:`X^\top v`), without a copy of ``X``."""
    out = np.asarray(X.T @ v, dtype=np.float64).reshape(-1)
    return np.append(out, v.sum()) if fit_intercept else out


def _times(X: Any, c: NDArray, fit_intercept: bool) -> NDArray[np.float64]:
    r""":math:`[X, \mathbf 1]\,c` (or :math:`Xc`), without a copy of ``X``."""
    m = X.shape[1]
    out = np.asarray(X @ c[:m], dtype=np.float64).reshape(-1)
    return out + c[m] if fit_intercept else out


def _projected_part(
    X: Any,
    y: NDArray,
    w: NDArray,
    lo: int,
    item: Any,
    loss: PLQChunkLoss,
    params: dict,
    pin: float,
    correction: NDArray | None,
) -> tuple[NDArray, NDArray[np.bool_], NDArray, NDArray]:
    r""":math:`v - Ac` for ``correction`` :math:`c` (0 on the rows held at 0), free rows, box.

    Rows held at 0: a zero weight, or :math:`\lvert v_i\rvert \le` ``pin`` at a box end of 0.
    """
    v = loss.multiplier(X, y, w, lo, item, params)
    low, high = loss.box(w)
    q = loss.slope(y)
    v_low, v_high = np.minimum(-q * low, -q * high), np.maximum(-q * low, -q * high)
    pinned = (loss.C * w <= 0) | ((np.abs(v) <= pin) & ((v_low == 0) | (v_high == 0)))
    free = ~pinned & ((v_high > 0) | (v_low < 0))
    part = np.where(free, v, 0.0)
    if correction is not None:
        part = part - np.where(free, _times(X, correction, loss.fit_intercept), 0.0)
    return part, free, v_low, v_high


def projection_step(
    X: Any,
    y: NDArray,
    w: NDArray,
    lo: int,
    item: Any,
    loss: PLQChunkLoss,
    params: dict,
    pin: float,
    correction: NDArray | None,
    gram: bool,
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    r"""One least-squares pass of :func:`~optframe.duality.project_null` on the chunk.

    :math:`A^\top v` after ``correction`` (:math:`v \leftarrow v - A c` on the free rows,
    :math:`A = [X, \mathbf 1]`, :math:`c` the sum of the previous passes' least-squares
    solutions), and :math:`A_F^\top A_F` of the free rows when ``gram``.
    """
    part, free, _, _ = _projected_part(X, y, w, lo, item, loss, params, pin, correction)
    rhs = transposed_times(X, part, loss.fit_intercept)
    if not gram:
        return rhs, None
    A = with_ones(X[free], loss.fit_intercept)
    product = A.T @ A
    return rhs, np.asarray(product.toarray() if sp.issparse(product) else product)


def projection_check(
    X: Any,
    y: NDArray,
    w: NDArray,
    lo: int,
    item: Any,
    loss: PLQChunkLoss,
    params: dict,
    pin: float,
    correction: NDArray | None,
) -> tuple[float, NDArray[np.float64], NDArray[np.float64], tuple[float, float]]:
    r"""The point's largest ratio to its box's end, :math:`A^\top v`, :math:`|A|^\top|v|`, terms.

    The second and third check the equality rows at the point used (as
    :func:`~optframe.duality.equality_residuals`); the last are the dual's loss terms at the
    point, the bound when the ratio is at most 1.
    """
    part, _, v_low, v_high = _projected_part(X, y, w, lo, item, loss, params, pin, correction)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(part > 0, part / v_high, np.where(part < 0, part / v_low, 0.0))
    excess = float(np.max(ratio, initial=0.0))
    residual = transposed_times(X, part, loss.fit_intercept)
    scale = abs_products(X, part)
    if loss.fit_intercept:
        scale = np.append(scale, np.abs(part).sum())
    return excess, residual, scale, loss.loss_terms(y, w, part)


def projection_value(
    X: Any,
    y: NDArray,
    w: NDArray,
    lo: int,
    item: Any,
    loss: PLQChunkLoss,
    params: dict,
    pin: float,
    correction: NDArray | None,
    divisor: float,
) -> tuple[float, float]:
    r"""The loss terms of the dual at the projected point divided by ``divisor`` (into its box)."""
    part, _, _, _ = _projected_part(X, y, w, lo, item, loss, params, pin, correction)
    return loss.loss_terms(y, w, part / divisor)


# ------------------------------------------------------- certificate, the subgradient
@dataclass(frozen=True)
class KinkFill:
    r"""The loss's subgradient at :math:`(w, b)`, the samples near a kink filled by least squares.

    As :func:`~optframe.models._risk_dual.subgradient_theta` in memory: :math:`\theta_i =
    c_i\ell'(a_i)` off the kinks; on the samples within ``tol`` of a kink (and the ``nearest``
    rows), :math:`v_K = \operatorname{clip}(Z_K\,\text{correction})` into :math:`c_i` times
    the subdifferential, with :math:`Z = [X_{:,J}, \mathbf 1]` (:math:`J` the ``fixed``
    columns, the ones with an intercept): the least-squares solution of the stationarity rows
    :math:`Z_K^\top v_K = \text{goal} - Z_{\bar K}^\top v_{\bar K}`. Without
    ``correction`` it is the plain subgradient (what the system's pass reads).

    Parameters
    ----------
    tol : float
        The distance to a kink within which a sample counts as on it (absolute).
    nearest : tuple of int
        Global rows that count as on a kink whatever their distance.
    fixed : ndarray of bool, shape (m,)
        The columns whose penalty subgradient is one value.
    correction : ndarray, optional
        The coefficients :math:`Z_K^+`-solved on the client; ``None``: no fill.
    """

    tol: float
    nearest: tuple[int, ...]
    fixed: NDArray[np.bool_]
    correction: NDArray[np.float64] | None = None

    def near(self, loss: PLQChunkLoss, a: NDArray, w: NDArray, lo: int) -> NDArray[np.bool_]:
        """The chunk's samples counted on a kink (positive weight only)."""
        distance, _ = loss.loss.kink_distance(a)
        near = np.abs(distance) <= self.tol
        rows = np.asarray(self.nearest, dtype=np.int64) - lo
        near[rows[(rows >= 0) & (rows < a.size)]] = True
        return near & (loss.C * w > 0)

    def columns(self, X: Any) -> Any:
        r""":math:`X_{:,J}` of the chunk (``X`` itself when every column is fixed)."""
        return X if bool(np.all(self.fixed)) else X[:, np.flatnonzero(self.fixed)]

    def theta(
        self, loss: PLQChunkLoss, X: Any, y: NDArray, w: NDArray, lo: int, params: dict
    ) -> NDArray[np.float64]:
        r""":math:`\theta` on the chunk whose first row is ``lo``."""
        a = loss.argument(X, y, params)
        c = loss.C * w
        theta = c * loss.loss.derivative(a)
        if self.correction is None:
            return theta
        near = self.near(loss, a, w, lo)
        if not near.any():
            return theta
        _, kink = loss.loss.kink_distance(a[near])
        left, right = loss.loss.subdifferential(kink)
        q = loss.slope(y)[near]
        low, high = c[near] * left, c[near] * right
        v_low, v_high = np.minimum(-q * low, -q * high), np.maximum(-q * low, -q * high)
        Z = with_ones(self.columns(X)[near], loss.fit_intercept)
        v = np.clip(np.asarray(Z @ self.correction, dtype=np.float64).reshape(-1), v_low, v_high)
        theta[near] = -q * v
        return theta


def kink_nearest(
    X: Any, y: NDArray, w: NDArray, lo: int, loss: PLQChunkLoss, params: dict, count: int
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The chunk's ``count`` smallest distances to a kink and their global rows."""
    distance, _ = loss.loss.kink_distance(loss.argument(X, y, params))
    order = np.argsort(np.abs(distance), kind="stable")[:count]
    return np.abs(distance)[order], order + lo


def fill_system(
    X: Any, y: NDArray, w: NDArray, lo: int, loss: PLQChunkLoss, params: dict, fill: KinkFill
) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
    r""":math:`Z_K^\top Z_K`, :math:`Z_{\bar K}^\top v_{\bar K}` and :math:`|K|` of the chunk."""
    a = loss.argument(X, y, params)
    near = fill.near(loss, a, w, lo)
    v = -loss.slope(y) * (loss.C * w * loss.loss.derivative(a))
    X_J = fill.columns(X)
    rest = transposed_times(X_J, np.where(near, 0.0, v), loss.fit_intercept)
    Z_near = with_ones(X_J[near], loss.fit_intercept)
    gram = Z_near.T @ Z_near
    gram = np.asarray(gram.toarray() if sp.issparse(gram) else gram, dtype=np.float64)
    return gram, rest, int(near.sum())


# ----------------------------------------------------------------------------- the floor
def value_range(X: Any, y: NDArray, w: NDArray, lo: int) -> tuple[float, float, float]:
    """The smallest and largest positive-weight ``y`` and the weights' sum."""
    keep = w > 0
    if not keep.any():
        return math.inf, -math.inf, 0.0
    return float(y[keep].min()), float(y[keep].max()), float(w[keep].sum())


def histogram(
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


def between(
    X: Any, y: NDArray, w: NDArray, lo: int, low: float, high: float, closed: bool
) -> tuple[NDArray, NDArray, float]:
    """The positive-weight ``y`` in ``[low, high)`` (or ``]``), their weights, weight below."""
    keep = w > 0
    v, c = y[keep], w[keep]
    inside = (v >= low) & ((v <= high) if closed else (v < high))
    return v[inside], c[inside], float(c[v < low].sum())


def largest_target(X: Any, y: NDArray, w: NDArray, lo: int) -> float:
    r"""The chunk's largest :math:`\lvert y_i\rvert`."""
    return float(np.max(np.abs(y), initial=0.0))


def floor_sum(X: Any, y: NDArray, w: NDArray, lo: int, loss: PLQChunkLoss, center: float) -> float:
    r""":math:`C\sum_i s_i \max(\ell(r_i), \lvert r_i\rvert)`, :math:`r_i = y_i - m`."""
    r = y - center
    return float((loss.C * w) @ np.maximum(loss.loss.value(r), np.abs(r)))
