"""Mathematical structure that drivers ask of models.

A driver names the attributes it needs in ``Driver.requires``; a model offers them by having them.
These protocols document each structure once, with the mathematics it stands for, so a model author
knows what to implement and a driver author what can be relied upon.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from optframe.data import Dataset
    from optframe.model import Model, Solution


@runtime_checkable
class PiecewiseLinearSampleLoss(Protocol):
    r"""A sample-separable model whose per-sample loss is piecewise linear.

    The objective is :math:`R(\theta) + \sum_i w_i\, \ell_i(a_i(\theta))`, where :math:`R` does not
    depend on the samples, :math:`a_i` is affine in the parameters :math:`\theta` (the *loss
    argument*: the residual for LAD, the hinge argument :math:`1 - y_i f(x_i)` for SVMs) and each
    :math:`\ell_i` is piecewise linear in :math:`a_i`. Replacing a group of samples by their
    weighted centroid with the summed weight gives the same kind of model on fewer samples; if every
    :math:`\ell_i` is convex, that aggregated model's optimum is a lower bound on the original one
    (Jensen's inequality), with equality when every group sits on one linear piece.

    A model may also offer ``aggregate(labels, k)``, the same model on the weighted means of the
    clusters ``labels``; without it, drivers aggregate with ``with_data`` on the input-space
    centroids. A kernel model needs it: its means live in feature space
    (:class:`~optframe.kernels.ClusterMeanKernel`).

    Attributes
    ----------
    weights : ndarray of shape (n,)
        The effective sample weights :math:`w_i`.
    convex_sample_loss : bool
        Whether every :math:`\ell_i` is convex (so aggregation gives lower bounds).
    """

    convex_sample_loss: ClassVar[bool]

    @property
    def weights(self) -> NDArray[np.float64]:
        """The effective sample weights."""
        ...

    def with_data(self, data: Dataset) -> Model:
        """Return the same model (same parameters) on other samples, weighted by ``data``."""
        ...

    def sample_groups(self) -> NDArray[np.int64]:
        """Return a group code per sample: only samples of one group may share a centroid."""
        ...

    def loss_argument(self, solution: Solution) -> NDArray[np.float64]:
        """Return the loss argument :math:`a_i` of every sample at ``solution``."""
        ...

    def loss_pieces(self, solution: Solution) -> NDArray[np.int64]:
        r"""Return the index of the linear piece of :math:`\ell_i` each sample sits on."""
        ...

    def sample_embedding(self, solution: Solution) -> NDArray[np.float64]:
        """Return a cheap low-dimensional description of each sample, shape (n, k)."""
        ...

    @property
    def sample_duals(self) -> tuple[str, ...]:
        """Names of the solution's per-sample dual variables (lifted by weight share)."""
        ...

    def complete_solution(self, solution: Solution) -> dict[str, NDArray[np.float64]]:
        """Return the full solution on this model's samples from a solution's parameters.

        ``solution`` holds the parameters found on other samples (centroids, a subset) and this
        model's per-sample duals, already lifted to its samples.
        """
        ...
