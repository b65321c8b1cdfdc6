r"""The per-sample losses of :class:`~optframe.models.EmpiricalRisk`: one loss, or one per label.

A declaration gives either one loss :math:`\ell` for every sample or a loss per label,
:math:`\ell_i = \ell_{y_i}` (``loss={+1: ..., -1: ...}``). :class:`SampleLosses` evaluates
them sample by sample on full-length arrays, so the model's objective, certificate, structures
and layers are written once for both:

* :math:`\ell_i(a_i)`, a subgradient, the one-sided derivatives, the nearest kink;
* the conjugate :math:`\ell_i^*(\beta_i)` and its domain :math:`[\beta^-_i, \beta^+_i]`, which for
  a loss with an affine part :math:`g + k\,a` is :math:`g^*(\beta - k)` on the shifted domain and,
  for a linear loss (:class:`~optframe.losses.LinearLoss`), the single point :math:`\{k\}`: such
  a sample's multiplier :math:`\theta_i = c_i k` is fixed (:attr:`SampleLosses.fixed`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from optframe.errors import ModelError
from optframe.losses import PLQLoss, SmoothLoss, check_smooth_loss


class SampleLosses:
    r"""The losses :math:`\ell_i` of ``n`` samples: ``losses[group[i]]`` for sample :math:`i`.

    Parameters
    ----------
    losses : tuple of PLQLoss
        The distinct losses, all of one ``kind``.
    group : array of int, shape (n,)
        The index into ``losses`` of each sample.
    """

    def __init__(self, losses: tuple[PLQLoss, ...], group: NDArray[np.intp]) -> None:
        self.losses = losses
        self.group = np.asarray(group, dtype=np.intp)
        self.n = int(self.group.size)
        if len(losses) == 1:
            self._members = [np.arange(self.n)]
            lo = np.full(self.n, losses[0].conjugate_domain[0])
            hi = np.full(self.n, losses[0].conjugate_domain[1])
        else:
            self._members = [np.flatnonzero(self.group == g) for g in range(len(losses))]
            lo = np.empty(self.n)
            hi = np.empty(self.n)
            for loss, index in self.parts():
                lo[index], hi[index] = loss.conjugate_domain
        self.domain = (lo, hi)
        self.fixed = lo == hi
        self.fixed.flags.writeable = False

    # ------------------------------------------------------------------------------ description
    @property
    def single(self) -> PLQLoss | None:
        """The loss when every sample has the same one, else ``None``."""
        return self.losses[0] if len(self.losses) == 1 else None

    def parts(self) -> Iterator[tuple[PLQLoss, NDArray[np.intp]]]:
        """``(loss, sample indices)`` per loss (indices sorted)."""
        yield from zip(self.losses, self._members, strict=True)

    @property
    def is_classification(self) -> bool:
        """Whether the arguments are margins (every loss has the same kind)."""
        return self.losses[0].is_classification

    @property
    def is_smooth(self) -> bool:
        """Whether the loss is a :class:`~optframe.losses.SmoothLoss` (logistic): one loss."""
        return isinstance(self.losses[0], SmoothLoss)

    @property
    def is_piecewise_linear(self) -> bool:
        """Whether every loss is piecewise linear."""
        return all(loss.is_piecewise_linear for loss in self.losses)

    @property
    def has_affine(self) -> bool:
        r"""Whether a loss has an affine part :math:`k\,a` (its conjugate domain may miss 0)."""
        return any(loss.affine_slope != 0.0 for loss in self.losses)

    @property
    def max_kinks(self) -> int:
        """The most kinks of a loss (piecewise-linear losses only)."""
        return max(loss.linear_pieces[0].size for loss in self.losses)

    def __repr__(self) -> str:
        return f"SampleLosses({list(self.losses)!r})"

    # ---------------------------------------------------------------------------------- values
    def _map(self, method: str, a: ArrayLike) -> NDArray[np.float64]:
        a = np.asarray(a, dtype=np.float64)
        single = self.single
        if single is not None:
            return getattr(single, method)(a)
        out = np.empty(self.n)
        for loss, index in self.parts():
            out[index] = getattr(loss, method)(a[index])
        return out

    def _map2(self, method: str, a: ArrayLike) -> tuple[NDArray, NDArray]:
        a = np.asarray(a, dtype=np.float64)
        single = self.single
        if single is not None:
            return getattr(single, method)(a)
        first, second = np.empty(self.n), np.empty(self.n)
        for loss, index in self.parts():
            first[index], second[index] = getattr(loss, method)(a[index])
        return first, second

    def value(self, a: ArrayLike) -> NDArray[np.float64]:
        r""":math:`\ell_i(a_i)` (``a`` of shape (n,))."""
        return self._map("value", a)

    def derivative(self, a: ArrayLike) -> NDArray[np.float64]:
        r"""A subgradient of :math:`\ell_i` at :math:`a_i`."""
        return self._map("derivative", a)

    def subdifferential(self, a: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        r"""The one-sided derivatives :math:`\ell'_{i\pm}(a_i)`."""
        return self._map2("subdifferential", a)

    def kink_distance(self, a: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The signed distance of each :math:`a_i` to its loss's nearest kink, and the kink."""
        return self._map2("kink_distance", a)

    def conjugate(self, beta: ArrayLike) -> NDArray[np.float64]:
        r""":math:`\ell_i^*(\beta_i)`, ``beta`` clipped into each domain first."""
        lo, hi = self.domain
        return self._map("conjugate", np.clip(np.asarray(beta, dtype=np.float64), lo, hi))


def _loss_hint(loss: Any) -> str:
    """A pointer for a loss given by name or by class, or for a loss optframe cannot state."""
    import optframe.losses as losses

    if isinstance(loss, type):
        return f" (a class, not an instance: write {loss.__name__}())"
    if not isinstance(loss, str):
        return ""
    key = loss.lower().replace("_", "").replace("-", "").replace(" ", "")
    for name in losses.__all__:
        if name.lower() == key and name not in ("PLQLoss", "LinearLoss"):
            return f" (a name is not a loss: write {name}())"
    if key in ("logistic", "log", "logloss"):
        return " (a name is not a loss: write Logistic())"
    if key in ("squared", "squarederror", "exponential"):
        return (
            f" ({loss!r} is smooth but not piecewise linear-quadratic, so optframe has no exact "
            "dual for it; the nearest it has are SquaredHinge() for classification and "
            "Huber(delta), the squared error within delta, for regression)"
        )
    return " (a name is not a loss: pass an instance)"


def loss_kind(loss: Any, model: str) -> str:
    """The kind of a declaration's ``loss``, after checking it.

    ``loss`` is a :class:`PLQLoss`, or a mapping from the labels +1 and -1 to margin
    (classification) :class:`PLQLoss` instances.

    Raises
    ------
    ModelError
        If ``loss`` is neither, a value is not a loss instance or not a margin loss, or a key is
        not +1 or -1.
    """
    if isinstance(loss, PLQLoss):
        return loss.kind
    if isinstance(loss, SmoothLoss):
        return check_smooth_loss(loss, model).kind
    if not isinstance(loss, Mapping) or not loss:
        raise ModelError(
            f"{model}: loss must be a convex piecewise linear-quadratic loss, an instance of "
            "optframe.losses.PLQLoss: Hinge(), SquaredHinge(), DoubleHinge() for "
            "classification, Absolute(), Pinball(tau), EpsilonInsensitive(epsilon), Huber(delta) "
            "for regression, PLQLoss(relu=..., rehu=...) for another, a smooth loss "
            "(optframe.losses.SmoothLoss: Logistic()), or a mapping from the "
            f"labels +1 and -1 to such losses; got {loss!r}{_loss_hint(loss)}"
        )
    for key, value in loss.items():
        if not isinstance(value, PLQLoss):
            raise ModelError(
                f"{model}: the loss of label {key!r} must be a loss instance from "
                f"optframe.losses, for example Hinge(); got {value!r}"
            )
        if not value.is_classification:
            raise ModelError(
                f"{model}: a loss per label is for margin (classification) losses; the loss of "
                f"label {key!r} is {value!r}"
            )
        if isinstance(key, bool) or key not in (1, -1):
            raise ModelError(
                f"{model}: a loss per label is keyed by the labels +1 and -1; got the key {key!r}"
            )
    return "classification"


def sample_losses(loss: Any, labels: NDArray[np.float64], model: str) -> SampleLosses:
    """The :class:`SampleLosses` of a checked declaration (see :func:`loss_kind`).

    Raises
    ------
    ModelError
        If a label in ``labels`` has no loss in the mapping.
    """
    n = int(labels.size)
    if isinstance(loss, PLQLoss | SmoothLoss):
        return SampleLosses((loss,), np.zeros(n, dtype=np.intp))
    group = np.full(n, -1, dtype=np.intp)
    losses = []
    for g, (key, value) in enumerate(loss.items()):
        group[labels == float(key)] = g
        losses.append(value)
    missing = np.unique(labels[group < 0])
    if missing.size:
        raise ModelError(
            f"{model}: the labels {', '.join(f'{v:+g}' for v in missing[:6])} have no loss; "
            f"the mapping gives one for {sorted(float(k) for k in loss)}"
        )
    return SampleLosses(tuple(losses), group)
