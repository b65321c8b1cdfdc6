r"""Convex piecewise linear-quadratic (PLQ) losses, each declared once by its pieces.

Every loss is written in the form of ReHLine (Dai and Qiu, 2023),

.. math::

    \ell(a) = \sum_{l=1}^{L} \operatorname{relu}(u_l a + v_l)
    + \sum_{h=1}^{H} \operatorname{rehu}_{\tau_h}(s_h a + t_h) + k\,a,

with :math:`\operatorname{relu}(x) = \max(x, 0)` and the rectified Huber function
:math:`\operatorname{rehu}_\tau(x) = 0` for :math:`x \le 0`, :math:`x^2/2` for
:math:`0 < x \le \tau`, :math:`\tau(x - \tau/2)` for :math:`x > \tau` (:math:`\tau` may be
:math:`\infty`), and an optional affine part :math:`k\,a` (``linear=k``, default 0). Every such sum
is convex; without the affine part it is non-negative. The argument :math:`a` is the margin
:math:`y_i f(x_i)` of a ``"classification"`` loss and the residual :math:`y_i - f(x_i)` of a
``"regression"`` loss (the attribute ``kind``).

From the pieces alone each loss derives its value, its one-sided derivatives and kinks, and its
Fenchel conjugate :math:`\ell^*(\beta) = \sup_a \beta a - \ell(a)`. Writing
:math:`\operatorname{relu}(x) = \max_{0 \le \lambda \le 1} \lambda x` and
:math:`\operatorname{rehu}_\tau(x) = \max_{0 \le \gamma \le \tau} \gamma x - \gamma^2/2` shows that

.. math::

    \ell^*(\beta) = \min_{\lambda, \gamma} \Bigl\{ \sum_h \tfrac12\gamma_h^2 - \sum_l \lambda_l v_l
    - \sum_h \gamma_h t_h \;:\; \sum_l \lambda_l u_l + \sum_h \gamma_h s_h = \beta,\;
    0 \le \lambda \le 1,\; 0 \le \gamma \le \tau \Bigr\},

finite on :math:`[\beta_-, \beta_+]` with :math:`\beta_\pm = \lim_{a \to \pm\infty}\ell'(a)`, an
interval that contains 0. The affine part shifts it: :math:`\ell = g + k\,a` has
:math:`\ell^*(\beta) = g^*(\beta - k)` on :math:`[\beta_- + k, \beta_+ + k]`, which contains
:math:`k`; a purely linear loss (:class:`LinearLoss`) has the one-point domain :math:`\{k\}`.
:meth:`PLQLoss.conjugate` evaluates it exactly as
:math:`\max_k \sup_{a \in I_k} \beta a - \ell(a)` over the intervals :math:`I_k` between the
breakpoints, on each of which :math:`\ell` is one quadratic.

A new loss is declared in one expression, for example the squared epsilon-insensitive loss:

>>> from optframe.losses import PLQLoss
>>> squared_eps = PLQLoss(rehu=[(1.0, -0.5, float("inf")), (-1.0, -0.5, float("inf"))])
>>> float(squared_eps.value(1.5)[0])
0.5
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from optframe.errors import ModelError
from optframe.validation import check_number

KINDS = ("classification", "regression")


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _pieces(rows: Iterable[Any], width: int, what: str) -> NDArray[np.float64]:
    try:
        pieces = [tuple(row) for row in rows]
        if not all(len(row) == width and all(map(_is_number, row)) for row in pieces):
            raise TypeError  # a string or a bool is not converted (optframe.validation's rule)
        table = np.array(pieces, dtype=np.float64).reshape(-1, width)
    except (TypeError, ValueError):
        raise ModelError(
            f"{what} pieces must be tuples of {width} numbers, for example "
            f"{'(u, v)' if width == 2 else '(s, t, tau)'}; got {rows!r}"
        ) from None
    return table


class PLQLoss:
    r"""A convex PLQ loss: ReLU pieces :math:`(u, v)` and ReHU pieces :math:`(s, t, \tau)`.

    Parameters
    ----------
    relu : iterable of (u, v)
        The terms :math:`\operatorname{relu}(u a + v)`; finite numbers.
    rehu : iterable of (s, t, tau)
        The terms :math:`\operatorname{rehu}_\tau(s a + t)`; :math:`s, t` finite, :math:`\tau > 0`
        (``float("inf")`` for a one-sided square).
    kind : {"regression", "classification"}
        Whether :math:`a` is the residual :math:`y - f(x)` or the margin :math:`y f(x)`.
    linear : float
        The slope :math:`k` of the affine part :math:`k\,a` (default 0). With it the loss may be
        negative; a model that uses one needs the ridge penalty (see
        :class:`~optframe.models.EmpiricalRisk`).

    Raises
    ------
    ModelError
        If a piece is not a tuple of finite numbers, a :math:`\tau` is not positive, there is
        neither a piece nor an affine part, ``linear`` is not a finite number, or ``kind`` is
        unknown.

    Examples
    --------
    The hinge loss :math:`\max(0, 1 - a)` of a margin :math:`a`:

    >>> hinge = PLQLoss(relu=[(-1.0, 1.0)], kind="classification")
    >>> hinge.value([-1.0, 0.5, 2.0])
    array([2. , 0.5, 0. ])
    >>> hinge.conjugate_domain, float(hinge.conjugate(-0.25)[0])
    ((-1.0, 0.0), -0.25)
    """

    kind: str = "regression"

    def __init__(
        self,
        relu: Iterable[tuple[float, float]] = (),
        rehu: Iterable[tuple[float, float, float]] = (),
        kind: str | None = None,
        linear: float = 0.0,
    ) -> None:
        name = type(self).__name__
        self.k = _check_number(linear, "linear", name, -math.inf, math.inf)
        if kind is not None:
            if kind not in KINDS:
                raise ModelError(f"{name}: kind must be one of {KINDS}; got {kind!r}")
            self.kind = kind
        relu_table, rehu_table = _pieces(relu, 2, "relu"), _pieces(rehu, 3, "rehu")
        if relu_table.size + rehu_table.size == 0 and self.k == 0.0:
            raise ModelError(
                f"{name}: a loss needs at least one relu or rehu piece, or a nonzero linear= slope"
            )
        if not (np.all(np.isfinite(relu_table)) and np.all(np.isfinite(rehu_table[:, :2]))):
            raise ModelError(f"{name}: the coefficients u, v, s, t must be finite numbers")
        if np.any(~(rehu_table[:, 2] > 0)):
            raise ModelError(f"{name}: every rehu tau must be > 0 (inf allowed)")
        self.u, self.v = relu_table[:, 0].copy(), relu_table[:, 1].copy()
        self.s, self.t, self.rehu_tau = (rehu_table[:, k].copy() for k in range(3))
        for array in (self.u, self.v, self.s, self.t, self.rehu_tau):
            array.flags.writeable = False
        self._jumps = np.unique(-self.v[self.u != 0] / self.u[self.u != 0])
        self._relu_slopes = self._relu_slope_at(_midpoints(self._jumps))
        self._segments = self._build_segments()

    # ----------------------------------------------------------------------------- description
    @property
    def relu_pieces(self) -> list[tuple[float, float]]:
        """The :math:`(u_l, v_l)` pairs."""
        return [(float(u), float(v)) for u, v in zip(self.u, self.v, strict=True)]

    @property
    def rehu_pieces(self) -> list[tuple[float, float, float]]:
        r"""The :math:`(s_h, t_h, \tau_h)` triples."""
        return [tuple(map(float, p)) for p in zip(self.s, self.t, self.rehu_tau, strict=True)]  # type: ignore[misc]

    @property
    def is_piecewise_linear(self) -> bool:
        """Whether the loss has no ReHU piece (then, without a quadratic penalty, an LP)."""
        return self.s.size == 0

    @property
    def linear_pieces(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        r"""``(kinks, slopes)`` of a piecewise-linear loss.

        The kinks :math:`j_1 < \dots < j_K` and slopes :math:`g_0 < \dots < g_K`:
        :math:`\ell' = g_k` on :math:`(j_k, j_{k+1})`.

        Its conjugate is then :math:`\ell^*(\beta) = \beta j_k - \ell(j_k)` on
        :math:`[g_{k-1}, g_k]`: piecewise linear with kinks at the inner slopes.

        Raises
        ------
        ModelError
            If the loss has a quadratic (ReHU) piece.
        """
        if not self.is_piecewise_linear:
            raise ModelError(f"{self!r} has quadratic pieces: it is not piecewise linear")
        return self._jumps.copy(), self._relu_slopes.copy()

    @property
    def is_classification(self) -> bool:
        """Whether :math:`a` is the margin :math:`y f(x)` (labels in {-1, +1})."""
        return self.kind == "classification"

    @property
    def affine_slope(self) -> float:
        r"""The slope :math:`k` of the affine part :math:`k\,a` (0 for the usual losses)."""
        return self.k

    @property
    def is_linear(self) -> bool:
        r"""Whether the loss is :math:`k\,a` alone (its conjugate's domain is the point k)."""
        return self.u.size + self.s.size == 0

    def __repr__(self) -> str:
        affine = f", linear={self.k!r}" if self.k else ""
        return (
            f"PLQLoss(relu={self.relu_pieces}, rehu={self.rehu_pieces}, kind={self.kind!r}{affine})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PLQLoss):
            return NotImplemented
        return (
            self.kind == other.kind
            and self.relu_pieces == other.relu_pieces
            and self.rehu_pieces == other.rehu_pieces
            and self.k == other.k
        )

    def __hash__(self) -> int:
        return hash((self.kind, tuple(self.relu_pieces), tuple(self.rehu_pieces), self.k))

    # ---------------------------------------------------------------------------------- values
    def value(self, a: ArrayLike) -> NDArray[np.float64]:
        r""":math:`\ell(a)`, elementwise."""
        a = np.atleast_1d(np.asarray(a, dtype=np.float64))
        out = self.k * a if self.k else np.zeros(a.shape)
        for u, v in zip(self.u, self.v, strict=True):
            out += np.maximum(u * a + v, 0.0)
        for s, t, tau in zip(self.s, self.t, self.rehu_tau, strict=True):
            out += _rehu(s * a + t, tau)
        return out

    def _relu_slope_at(self, a: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.full(a.shape, self.k)  # the affine slope, then the relu pieces
        for u, v in zip(self.u, self.v, strict=True):
            out += np.where(u * a + v > 0, u, 0.0)
        return out

    def _rehu_slope(self, a: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.zeros(a.shape)
        for s, t, tau in zip(self.s, self.t, self.rehu_tau, strict=True):
            out += s * np.clip(s * a + t, 0.0, tau)
        return out

    def subdifferential(self, a: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        r"""The one-sided derivatives :math:`\ell'_\pm(a)`, the ends of :math:`\partial\ell(a)`.

        They differ only at a kink (a breakpoint of a ReLU piece, see :meth:`kink_distance`).
        """
        a = np.atleast_1d(np.asarray(a, dtype=np.float64))
        k = np.searchsorted(self._jumps, a, side="left")
        jumps = np.append(self._jumps, np.nan)  # k == size: past the last kink
        at_jump = jumps[k] == a
        left = self._relu_slopes[k]
        right = self._relu_slopes[np.where(at_jump, k + 1, k)]
        rehu = self._rehu_slope(a)
        return left + rehu, right + rehu

    def derivative(self, a: ArrayLike) -> NDArray[np.float64]:
        r"""A subgradient of :math:`\ell` at :math:`a`: the midpoint of :math:`\partial\ell(a)`."""
        left, right = self.subdifferential(a)
        return 0.5 * (left + right)

    def kink_distance(self, a: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        r"""``(a - k, k)``: the signed distance to the nearest kink :math:`k` and the kink.

        Kinks are the points where :math:`\ell'` jumps (the breakpoints :math:`-v_l/u_l` of the
        ReLU pieces). Without kinks the distance is ``inf`` and ``k`` is ``nan``.
        """
        a = np.atleast_1d(np.asarray(a, dtype=np.float64))
        if self._jumps.size == 0:
            return np.full(a.shape, np.inf), np.full(a.shape, np.nan)
        k = np.clip(np.searchsorted(self._jumps, a), 1, self._jumps.size) - 1
        nearest = self._jumps[k]
        upper = self._jumps[np.minimum(k + 1, self._jumps.size - 1)]
        nearest = np.where(np.abs(upper - a) < np.abs(nearest - a), upper, nearest)
        return a - nearest, nearest

    def kinks(self, a: ArrayLike, tol: float = 0.0) -> NDArray[np.bool_]:
        """Which entries of ``a`` lie within ``tol`` of a kink."""
        distance, _ = self.kink_distance(a)
        return np.abs(distance) <= tol

    # ------------------------------------------------------------------------------- conjugate
    def _build_segments(self) -> list[tuple[float, float, float, float, float, float]]:
        # Breakpoints of the relu pieces and of both ends of every rehu quadratic; on each
        # interval between them the loss is one quadratic: (lo, hi, mid, l(mid), l'(mid), curv).
        points = [self._jumps]
        nonzero = self.s != 0
        s, t, tau = self.s[nonzero], self.t[nonzero], self.rehu_tau[nonzero]
        points.append(-t / s)
        finite = np.isfinite(tau)
        points.append((tau[finite] - t[finite]) / s[finite])
        edges = np.unique(np.concatenate(points))
        mids = _midpoints(edges)
        bounds = np.concatenate([[-np.inf], edges, [np.inf]])
        values = self.value(mids)
        slopes = self._relu_slope_at(mids) + self._rehu_slope(mids)
        curvature = np.zeros(mids.shape)
        for s_h, t_h, tau_h in zip(self.s, self.t, self.rehu_tau, strict=True):
            z = s_h * mids + t_h
            curvature += np.where((z > 0) & (z < tau_h), s_h * s_h, 0.0)
        return [
            (bounds[k], bounds[k + 1], mids[k], values[k], slopes[k], curvature[k])
            for k in range(mids.size)
        ]

    @property
    def conjugate_domain(self) -> tuple[float, float]:
        r"""The interval :math:`[\beta_-, \beta_+]` where :math:`\ell^*` is finite.

        :math:`\beta_\pm = \lim_{a\to\pm\infty} \ell'(a)`: the slopes of the outer pieces, or
        :math:`\mp\infty` where a one-sided square (:math:`\tau = \infty`) grows without bound.
        It contains 0 when :math:`\ell \ge 0` (no affine part), and :math:`k` always.
        """
        first, last = self._segments[0], self._segments[-1]
        lo = first[4] if first[5] == 0 else -math.inf
        hi = last[4] if last[5] == 0 else math.inf
        return float(lo), float(hi)

    def conjugate(self, beta: ArrayLike) -> NDArray[np.float64]:
        r""":math:`\ell^*(\beta) = \sup_a \beta a - \ell(a)` elementwise; ``inf`` off its domain.

        Exact: on each interval :math:`[b_k, b_{k+1}]` between breakpoints
        :math:`\ell(a) = \ell(m) + g(a - m) + \tfrac\kappa2 (a - m)^2` around its midpoint
        :math:`m`, so the supremum over it is reached at
        :math:`\operatorname{clip}(m + (\beta - g)/\kappa, b_k, b_{k+1})` (at an end when
        :math:`\kappa = 0`); :math:`\ell^*(\beta)` is the largest of these.
        """
        beta = np.atleast_1d(np.asarray(beta, dtype=np.float64))
        best = np.full(beta.shape, -np.inf)
        for lo, hi, mid, value, slope, curvature in self._segments:
            excess = beta - slope
            if curvature > 0:
                step = np.clip(excess / curvature, lo - mid, hi - mid)
                gain = excess * step - 0.5 * curvature * step * step
            else:
                end = np.where(excess > 0, hi - mid, np.where(excess < 0, lo - mid, 0.0))
                with np.errstate(invalid="ignore"):
                    gain = np.where(excess == 0, 0.0, excess * end)
            best = np.maximum(best, beta * mid - value + gain)
        return best

    def zero_set(self) -> tuple[float, float] | None:
        r"""The interval where :math:`\ell = 0` (every piece's argument :math:`\le 0`), or None.

        ``None`` too for a loss with an affine part (it is not a non-negative sum of pieces).
        """
        if self.k:
            return None
        lo, hi = -math.inf, math.inf
        for slope, offset in (*zip(self.u, self.v, strict=True), *zip(self.s, self.t, strict=True)):
            if slope > 0:
                hi = min(hi, -offset / slope)
            elif slope < 0:
                lo = max(lo, -offset / slope)
            elif offset > 0:
                return None
        return (float(lo), float(hi)) if lo <= hi else None


def _rehu(x: NDArray[np.float64], tau: float) -> NDArray[np.float64]:
    positive = np.maximum(x, 0.0)
    if math.isinf(tau):
        return 0.5 * positive * positive
    inside = np.minimum(positive, tau)
    return 0.5 * inside * inside + tau * (positive - inside)


def _midpoints(edges: NDArray[np.float64]) -> NDArray[np.float64]:
    """A point inside each interval cut by the sorted ``edges`` (one point if there are none)."""
    if edges.size == 0:
        return np.zeros(1)
    inner = 0.5 * (edges[:-1] + edges[1:])
    return np.concatenate([[edges[0] - 1.0], inner, [edges[-1] + 1.0]])


def _check_number(
    value: Any,
    name: str,
    owner: str,
    low: float,
    high: float,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """The one rule of :func:`optframe.validation.check_number`, for a loss's parameter."""
    number = check_number(
        value, name, owner, low=low, high=high, low_open=low_open, high_open=high_open
    )
    assert number is not None
    return number


def _interval(low: float, high: float) -> str:
    return f"[{low:g}, {high:g}]".replace("[-inf", "(-inf").replace("inf]", "inf)")


class Hinge(PLQLoss):
    r"""The hinge loss :math:`\max(0, 1 - a)` of the margin.

    :math:`\ell^*(\beta) = \beta` on [-1, 0].
    """

    kind = "classification"

    def __init__(self) -> None:
        super().__init__(relu=[(-1.0, 1.0)])

    def __repr__(self) -> str:
        return "Hinge()"


class SquaredHinge(PLQLoss):
    r"""The squared hinge :math:`\max(0, 1 - a)^2` of the margin.

    :math:`\ell^*(\beta) = \beta + \beta^2/4` for :math:`\beta \le 0`. One ReHU piece:
    :math:`\operatorname{rehu}_\infty(\sqrt2 (1 - a))`.
    """

    kind = "classification"

    def __init__(self) -> None:
        root = math.sqrt(2.0)
        super().__init__(rehu=[(-root, root, math.inf)])

    def __repr__(self) -> str:
        return "SquaredHinge()"


class DoubleHinge(PLQLoss):
    r"""du Plessis' double hinge :math:`\max(0, -a, (1 - a)/2)` of the margin :math:`a = y f`.

    For a negative label (:math:`a = -f`) it is :math:`\max(0, f, (1 + f)/2)`, the loss the PU
    risk puts on its unlabeled samples (:class:`~optframe.models.PULearning`). Pieces
    :math:`\operatorname{relu}((1 - a)/2) + \operatorname{relu}((-1 - a)/2)`;
    :math:`\ell^*(\beta) = \max(\beta, -1 - \beta)` on :math:`[-1, 0]`.
    """

    kind = "classification"

    def __init__(self) -> None:
        super().__init__(relu=[(-0.5, 0.5), (-0.5, -0.5)])

    def __repr__(self) -> str:
        return "DoubleHinge()"


class LinearLoss(PLQLoss):
    r"""The linear loss :math:`k\,a` of the margin (or of the residual with ``kind``).

    Not a loss on its own (it is unbounded below) but a part of a risk that is bounded, such as
    the PU risk's term :math:`-f(x_i)` on its labeled positives, declared as ``LinearLoss(-1.0)``
    per label in :class:`~optframe.models.EmpiricalRisk`. :math:`\ell^*` is 0 on the single point
    :math:`\{k\}`: the sample's multiplier is fixed at :math:`c_i k`. ``slope`` must be finite and
    nonzero (ModelError).
    """

    def __init__(self, slope: float = -1.0, kind: str = "classification") -> None:
        value = _check_number(slope, "slope", "LinearLoss", -math.inf, math.inf)
        if value == 0.0:
            raise ModelError(f"LinearLoss: slope must be finite and nonzero; got {slope!r}")
        super().__init__(kind=kind, linear=value)

    def __repr__(self) -> str:
        return f"LinearLoss(slope={self.k!r}, kind={self.kind!r})"


class Absolute(PLQLoss):
    r"""The absolute loss :math:`\lvert a\rvert` of the residual; :math:`\ell^* = 0` on [-1, 1]."""

    kind = "regression"

    def __init__(self) -> None:
        super().__init__(relu=[(1.0, 0.0), (-1.0, 0.0)])

    def __repr__(self) -> str:
        return "Absolute()"


class Pinball(PLQLoss):
    r"""The pinball (check) loss :math:`\max(\tau a, (\tau - 1) a)` of the residual.

    :math:`\ell^* = 0` on :math:`[\tau - 1, \tau]`. ``tau`` must lie in (0, 1) (ModelError).
    """

    kind = "regression"

    def __init__(self, tau: float = 0.5) -> None:
        self.tau = _check_number(tau, "tau", "Pinball", 0.0, 1.0, low_open=True, high_open=True)
        super().__init__(relu=[(self.tau, 0.0), (self.tau - 1.0, 0.0)])

    def __repr__(self) -> str:
        return f"Pinball(tau={self.tau!r})"


class EpsilonInsensitive(PLQLoss):
    r"""Vapnik's epsilon-insensitive loss :math:`\max(0, \lvert a\rvert - \epsilon)`.

    :math:`\ell^*(\beta) = \epsilon\lvert\beta\rvert` on [-1, 1]. ``epsilon`` must be finite and
    :math:`\ge 0` (ModelError).
    """

    kind = "regression"

    def __init__(self, epsilon: float = 0.1) -> None:
        self.epsilon = _check_number(epsilon, "epsilon", "EpsilonInsensitive", 0.0, math.inf)
        super().__init__(relu=[(1.0, -self.epsilon), (-1.0, -self.epsilon)])

    def __repr__(self) -> str:
        return f"EpsilonInsensitive(epsilon={self.epsilon!r})"


class Huber(PLQLoss):
    r"""Huber's loss of the residual, quadratic on :math:`[-\delta, \delta]`.

    :math:`a^2/2` for :math:`\lvert a\rvert \le \delta`, else
    :math:`\delta(\lvert a\rvert - \delta/2)`; pieces
    :math:`\operatorname{rehu}_\delta(a) + \operatorname{rehu}_\delta(-a)`;
    :math:`\ell^*(\beta) = \beta^2/2` on :math:`[-\delta, \delta]`. ``delta`` must be finite and
    :math:`> 0` (ModelError).
    """

    kind = "regression"

    def __init__(self, delta: float = 1.0) -> None:
        self.delta = _check_number(delta, "delta", "Huber", 0.0, math.inf, low_open=True)
        super().__init__(rehu=[(1.0, 0.0, self.delta), (-1.0, 0.0, self.delta)])

    def __repr__(self) -> str:
        return f"Huber(delta={self.delta!r})"


# ------------------------------------------------------------------------------ smooth losses
class SmoothLoss:
    r"""The contract of a smooth convex loss: value, derivative, conjugate and its domain.

    A subclass sets ``kind`` (``"classification"``: :math:`a` is the margin :math:`y f(x)`;
    ``"regression"``: the residual) and implements

    * :meth:`value` :math:`\ell(a)` and :meth:`derivative` :math:`\ell'(a)`, elementwise and
      finite for every finite :math:`a`;
    * :meth:`second_derivative` :math:`\ell''(a) \ge 0` (coordinate Newton steps);
    * :meth:`conjugate` :math:`\ell^*(\beta) = \sup_a \beta a - \ell(a)`, finite on
      :attr:`conjugate_domain` ``(lo, hi)`` (a closed interval that holds every
      :math:`\ell'(a)`), ``inf`` outside;
    * optionally :meth:`cvxpy`, the loss as a CVXPY expression of an affine argument (the
      ``"cvxpy"`` layer of :class:`~optframe.models.EmpiricalRisk` needs it).

    The certificate rests on the Fenchel-Young inequality
    :math:`\ell(a) + \ell^*(\beta) \ge \beta a`: a conjugate that is too small would give a
    bound above the optimum. :func:`check_smooth_loss` tests the contract at sample points
    (values finite, derivative non-decreasing and inside the domain, Fenchel-Young with
    equality at :math:`\beta = \ell'(a)` and as an inequality elsewhere) and raises
    :class:`~optframe.errors.LossContractError` naming what fails; models check every smooth
    loss they are given. The members the piecewise machinery reads (kinks, pieces) have their
    smooth answers here: no kinks, no pieces, no affine part.
    """

    kind: str = "classification"

    # ---------------------------------------------------------------- what a subclass defines
    def value(self, a: ArrayLike) -> NDArray[np.float64]:
        r""":math:`\ell(a)`, elementwise."""
        raise NotImplementedError

    def derivative(self, a: ArrayLike) -> NDArray[np.float64]:
        r""":math:`\ell'(a)`, elementwise."""
        raise NotImplementedError

    def second_derivative(self, a: ArrayLike) -> NDArray[np.float64]:
        r""":math:`\ell''(a)`, elementwise."""
        raise NotImplementedError

    def conjugate(self, beta: ArrayLike) -> NDArray[np.float64]:
        r""":math:`\ell^*(\beta)`, elementwise; ``inf`` off :attr:`conjugate_domain`."""
        raise NotImplementedError

    @property
    def conjugate_domain(self) -> tuple[float, float]:
        r"""The closed interval where :math:`\ell^*` is finite."""
        raise NotImplementedError

    def cvxpy(self, a: Any) -> Any:
        """The loss of the affine CVXPY expression ``a``, elementwise (None: not stated)."""
        return None

    @property
    def latex(self) -> str | None:
        r""":math:`\ell(a)` in LaTeX, for :meth:`~optframe.models.EmpiricalRisk.to_latex`."""
        return None

    # ------------------------------------------------- the piecewise members, smooth answers
    @property
    def is_smooth(self) -> bool:
        """Always True (a :class:`PLQLoss` has no such attribute)."""
        return True

    @property
    def is_classification(self) -> bool:
        """Whether :math:`a` is the margin :math:`y f(x)` (labels in {-1, +1})."""
        return self.kind == "classification"

    @property
    def is_piecewise_linear(self) -> bool:
        """False: a smooth loss is not piecewise linear."""
        return False

    @property
    def is_linear(self) -> bool:
        """False: a smooth loss is not affine."""
        return False

    @property
    def affine_slope(self) -> float:
        """0: no affine part."""
        return 0.0

    @property
    def relu_pieces(self) -> list[tuple[float, float]]:
        """No ReLU pieces."""
        return []

    @property
    def rehu_pieces(self) -> list[tuple[float, float, float]]:
        """No ReHU pieces."""
        return []

    @property
    def linear_pieces(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """ModelError: a smooth loss has no linear pieces."""
        raise ModelError(f"{self!r} is smooth: it is not piecewise linear")

    def subdifferential(self, a: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        r""":math:`(\ell'(a), \ell'(a))`: both one-sided derivatives agree."""
        d = self.derivative(a)
        return d, d.copy()

    def kink_distance(self, a: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(inf, nan)``: no kinks."""
        a = np.atleast_1d(np.asarray(a, dtype=np.float64))
        return np.full(a.shape, np.inf), np.full(a.shape, np.nan)

    def kinks(self, a: ArrayLike, tol: float = 0.0) -> NDArray[np.bool_]:
        """All False: no kinks."""
        return np.zeros(np.atleast_1d(np.asarray(a)).shape, dtype=bool)

    def zero_set(self) -> tuple[float, float] | None:
        """None: a smooth loss used here is positive everywhere (logistic)."""
        return None

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self)))


#: The margins or residuals at which :func:`check_smooth_loss` tests a loss.
CONTRACT_POINTS = np.array([-40.0, -8.0, -2.0, -0.5, 0.0, 0.3, 1.0, 3.0, 10.0, 40.0])


def check_smooth_loss(loss: Any, owner: str) -> SmoothLoss:
    r"""``loss`` if it meets the :class:`SmoothLoss` contract at sample points, else an error.

    Tested at :data:`CONTRACT_POINTS` :math:`a_k` and at :math:`\beta` on a grid of the domain:
    ``kind`` is known; the domain is a pair ``lo <= hi``; :math:`\ell(a_k)`, :math:`\ell'(a_k)`
    are finite, :math:`\ell'` is non-decreasing and inside the domain, :math:`\ell'' \ge 0`;
    :math:`\ell(a) + \ell^*(\ell'(a)) = a\ell'(a)` (Fenchel-Young's equality, to a relative
    1e-7) and :math:`\ell(a) + \ell^*(\beta) \ge \beta a` on the grid (its inequality; a
    conjugate below it would make the dual bound invalid).

    Raises
    ------
    LossContractError
        Naming the first property that fails.
    """
    from optframe.errors import LossContractError

    name = f"{owner}: the smooth loss {loss!r}"
    if not isinstance(loss, SmoothLoss):
        raise LossContractError(f"{name} is not a SmoothLoss instance")
    if loss.kind not in KINDS:
        raise LossContractError(f"{name} has kind {loss.kind!r}; it must be one of {KINDS}")
    try:
        lo, hi = (float(x) for x in loss.conjugate_domain)
        a = CONTRACT_POINTS
        value = np.asarray(loss.value(a), dtype=np.float64)
        slope = np.asarray(loss.derivative(a), dtype=np.float64)
        curvature = np.asarray(loss.second_derivative(a), dtype=np.float64)
        at_slope = np.asarray(loss.conjugate(slope), dtype=np.float64)
        betas = np.linspace(max(lo, -1e6), min(hi, 1e6), 9) if lo <= hi else np.zeros(0)
        grid = np.asarray(loss.conjugate(betas), dtype=np.float64)
    except (NotImplementedError, TypeError, ValueError, ArithmeticError) as error:
        raise LossContractError(
            f"{name} does not evaluate its contract: {type(error).__name__}: {error}"
        ) from None
    if not lo <= hi:
        raise LossContractError(f"{name} has the conjugate domain ({lo}, {hi}): need lo <= hi")
    shapes = {x.shape for x in (value, slope, curvature, at_slope)}
    if shapes != {a.shape} or grid.shape != betas.shape:
        raise LossContractError(f"{name} must evaluate elementwise (shape {a.shape})")
    if not (np.all(np.isfinite(value)) and np.all(np.isfinite(slope))):
        raise LossContractError(f"{name} has a value or a derivative that is not finite")
    if np.any(np.diff(slope) < -1e-12 * (1.0 + np.abs(slope[1:]))) or np.any(curvature < 0):
        raise LossContractError(f"{name} is not convex: its derivative decreases")
    slack = 1e-12 * (1.0 + np.abs(slope))
    if np.any(slope < lo - slack) or np.any(slope > hi + slack):
        raise LossContractError(
            f"{name}: its derivative leaves the conjugate domain [{lo:g}, {hi:g}]"
        )
    scale = 1.0 + np.abs(value) + np.abs(a * slope)
    if not np.all(np.abs(value + at_slope - a * slope) <= 1e-7 * scale):
        raise LossContractError(
            f"{name}: value + conjugate(derivative) != a * derivative (Fenchel-Young's equality)"
        )
    gap = value[:, None] + grid[None, :] - a[:, None] * betas[None, :]
    if not np.all(gap >= -1e-9 * (1.0 + np.abs(a[:, None] * betas[None, :]))):
        raise LossContractError(
            f"{name}: its conjugate is below beta * a - loss(a) somewhere on its domain "
            "(Fenchel-Young's inequality); a bound built on it would be invalid"
        )
    return loss


class Logistic(SmoothLoss):
    r"""The logistic loss :math:`\log(1 + e^{-a})` of the margin :math:`a = y f(x)`.

    :math:`\ell'(a) = -\sigma(-a)`, :math:`\ell''(a) = \sigma(a)\sigma(-a)` with
    :math:`\sigma(t) = 1/(1 + e^{-t})`; evaluated as ``logaddexp(0, -a)`` and ``expit``, so no
    margin overflows. Its conjugate is the binary entropy of :math:`q = -\beta`,

    .. math::

        \ell^*(\beta) = q\log q + (1 - q)\log(1 - q), \qquad q = -\beta \in [0, 1],

    with :math:`0\log 0 = 0` (``inf`` off :math:`[-1, 0]`). With the ridge penalty its dual is
    LIBLINEAR's ``-s 7`` (Yu, Huang and Lin 2011): see
    :class:`~optframe.capabilities.EntropyBoxDual`.

    Examples
    --------
    >>> loss = Logistic()
    >>> [round(float(x), 6) for x in loss.value([-800.0, 0.0, 800.0])]
    [800.0, 0.693147, 0.0]
    >>> float(loss.conjugate(-0.5)[0]) == math.log(0.5)
    True
    """

    kind = "classification"

    def value(self, a: ArrayLike) -> NDArray[np.float64]:
        r""":math:`\log(1 + e^{-a})`, as ``logaddexp(0, -a)``."""
        a = np.atleast_1d(np.asarray(a, dtype=np.float64))
        return np.logaddexp(0.0, -a)

    def derivative(self, a: ArrayLike) -> NDArray[np.float64]:
        r""":math:`-\sigma(-a) = -1/(1 + e^{a})`, in :math:`[-1, 0]`."""
        from scipy.special import expit

        a = np.atleast_1d(np.asarray(a, dtype=np.float64))
        return -expit(-a)

    def second_derivative(self, a: ArrayLike) -> NDArray[np.float64]:
        r""":math:`\sigma(a)\sigma(-a)`."""
        from scipy.special import expit

        a = np.atleast_1d(np.asarray(a, dtype=np.float64))
        return expit(a) * expit(-a)

    def conjugate(self, beta: ArrayLike) -> NDArray[np.float64]:
        r""":math:`q\log q + (1 - q)\log(1 - q)` at :math:`q = -\beta`; ``inf`` off [-1, 0]."""
        from scipy.special import xlogy

        beta = np.atleast_1d(np.asarray(beta, dtype=np.float64))
        q = -beta
        inside = (q >= 0.0) & (q <= 1.0)
        qc = np.clip(q, 0.0, 1.0)
        return np.where(inside, xlogy(qc, qc) + xlogy(1.0 - qc, 1.0 - qc), np.inf)

    @property
    def conjugate_domain(self) -> tuple[float, float]:
        """[-1, 0]: the derivative's range (closed, with the entropy's limits at its ends)."""
        return (-1.0, 0.0)

    def cvxpy(self, a: Any) -> Any:
        r"""``cp.logistic(-a)`` (:math:`\log(1 + e^{-a})`, an exponential-cone atom)."""
        import cvxpy as cp

        return cp.logistic(-a)

    @property
    def latex(self) -> str:
        r""":math:`\log(1 + e^{-a})`."""
        return r"\log(1 + e^{-a})"

    def __repr__(self) -> str:
        return "Logistic()"


__all__ = [
    "Absolute",
    "DoubleHinge",
    "EpsilonInsensitive",
    "Hinge",
    "Huber",
    "LinearLoss",
    "Logistic",
    "PLQLoss",
    "Pinball",
    "SmoothLoss",
    "SquaredHinge",
    "check_smooth_loss",
]
