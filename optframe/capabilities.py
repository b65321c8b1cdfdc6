"""Mathematical structure that drivers ask of models.

A driver names the attributes it needs in ``Driver.requires``; a model offers them by having them.
These protocols document each structure once, with the mathematics it stands for, so a model author
knows what to implement and a driver author what can be relied upon.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    from optframe.data import Dataset
    from optframe.model import Model, Solution


@runtime_checkable
class CertifiedBound(Protocol):
    r"""A lower bound the model proves from any solution: the certificate of every result.

    :meth:`dual_bound` builds a point of the model's dual feasible set from ``solution`` (the
    solver's dual variables when the solution has them, else the loss's subgradient at the
    primal point), repairs it into the dual's constraints exactly (a projection onto equality
    rows, a scaling into a box, a clip), and returns the dual objective there. Weak duality makes
    the value a lower bound on the optimum whatever produced the solution, exact or not: a
    solver's error can loosen the bound, never invalidate it. :meth:`objective_floor` is the
    magnitude below which optimal values count as zero (0 when the optimum is never 0).
    :func:`optframe.certificate.certify` reads both; every model in :mod:`optframe.models` but
    the mixed-integer S3VM (which keeps its solver's branch-and-bound bound) offers them.
    """

    def dual_bound(self, solution: Solution) -> float | None:
        """A proven lower bound on the optimal value, from ``solution``."""
        ...

    def objective_floor(self) -> float:
        """The magnitude floor of the gap's scale."""
        ...


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
    (:class:`~optframe.kernels.ClusterMeanKernel`). It may also name ``singleton_groups``, groups
    (codes of :meth:`sample_groups`) whose samples are cheap to keep unaggregated.

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


# --- linear box-constrained dual without intercept (DCD driver, DVI/SSNSV/ESSNSV screening) -------
@dataclass(frozen=True, eq=False)
class LinearBoxDual:
    r"""A linear model's dual over a box, with no equality row (no intercept).

    The primal and its dual (the unified form of DVI, notes/dvi.md section 1, in the
    :math:`\alpha = C\theta` scale) are

    .. math::

        P(w) = \tfrac12 \lVert w \rVert^2 + \sum_i \max(l_i t_i, u_i t_i),
        \qquad t_i = \bar y_i - \langle w, z_i \rangle,

        D(\alpha) = \bar y^\top \alpha - \tfrac12 \lVert Z^\top \alpha \rVert^2,
        \qquad l \le \alpha \le u, \qquad w = Z^\top \alpha,

    so :math:`D(\alpha) \le P(w)` for every :math:`\alpha` in the box and every :math:`w`
    (weak duality), and :math:`P` is 1-strongly convex: :math:`\lVert w - w^\star\rVert \le
    \sqrt{2 (P(w) - D(\alpha))}`. Samples marked ``fixed`` keep :math:`\alpha_i` at
    ``fixed_values[i]``: their term in :math:`P` is the linear piece :math:`\alpha_i t_i`.
    The SVM (hinge) has :math:`z_i = y_i x_i`, :math:`\bar y_i = 1`, box :math:`[0, C s_i]`; the
    regularized LAD has :math:`z_i = x_i`, :math:`\bar y_i = y_i`, box :math:`[-C s_i, C s_i]`.

    Screening reads the KKT conditions: :math:`\langle w^\star, z_i\rangle > \bar y_i` implies
    :math:`\alpha_i = l_i` (the set R), :math:`\langle w^\star, z_i\rangle < \bar y_i` implies
    :math:`\alpha_i = u_i` (the set L).

    Parameters
    ----------
    Z : array (n, m) or sparse
        The rows :math:`z_i`.
    target : array (n,)
        :math:`\bar y`.
    lower, upper : arrays (n,)
        The box :math:`l \le u`; both scale linearly with the model's loss parameter.
    fixed : bool array (n,), optional
        Samples whose :math:`\alpha_i` is fixed.
    fixed_values : array (n,), optional
        Their values (read where ``fixed``), inside the box.
    primal_key, dual_key : str
        Where the model's solution keeps :math:`w` and :math:`\alpha`.
    """

    Z: Any
    target: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    fixed: NDArray[np.bool_] | None = None
    fixed_values: NDArray[np.float64] | None = None
    primal_key: str = "w"
    dual_key: str = "alpha"

    @classmethod
    def of(cls, offered: LinearBoxDual | Mapping[str, Any]) -> LinearBoxDual:
        """Accept the dataclass or the mapping of its fields that a model returns."""
        return offered if isinstance(offered, LinearBoxDual) else cls(**offered)

    @property
    def n(self) -> int:
        """Number of samples."""
        return int(self.target.shape[0])

    def start_point(self, alpha: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        """``alpha`` (default 0) clipped to the box, with the fixed entries set."""
        x = np.zeros(self.n) if alpha is None else np.array(alpha, dtype=np.float64).reshape(-1)
        x = np.clip(x, self.lower, self.upper)
        if self.fixed is not None and self.fixed_values is not None:
            x[self.fixed] = self.fixed_values[self.fixed]
        return x

    def dual_value(self, alpha: NDArray[np.float64]) -> float:
        r""":math:`D(\alpha)` (``alpha`` must lie in the box for it to be a bound)."""
        w = np.asarray(self.Z.T @ alpha, dtype=np.float64).reshape(-1)
        return float(self.target @ alpha) - 0.5 * float(w @ w)

    def primal_value(self, w: NDArray[np.float64]) -> float:
        r""":math:`P(w)`, fixed samples on their linear piece."""
        t = self.target - np.asarray(self.Z @ w, dtype=np.float64).reshape(-1)
        loss = np.maximum(self.lower * t, self.upper * t)
        if self.fixed is not None and self.fixed_values is not None:
            loss = np.where(self.fixed, self.fixed_values * t, loss)
        return 0.5 * float(w @ w) + float(loss.sum())


@runtime_checkable
class SupportsLinearBoxDual(Protocol):
    r"""What the DCD driver and the screening rules need from a model (their ``requires``).

    Attributes
    ----------
    box_dual_parameter : str
        The name of the parameter :math:`C` that multiplies the loss (the box is :math:`C` times
        a box that does not depend on :math:`C`); screening along a path runs over it.
    """

    box_dual_parameter: ClassVar[str]

    def box_dual(self) -> LinearBoxDual | Mapping[str, Any]:
        """The dual (or the mapping of its fields: models do not import drivers)."""
        ...

    def box_dual_solution(self, alpha: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        r"""The model's solution at the dual point ``alpha`` (with :math:`w = Z^\top\alpha`)."""
        ...

    def lacks_box_dual(self) -> str | None:
        """Why this instance offers no box dual (an intercept, a kernel), or ``None``."""
        ...

    def with_fixed(self, fixed: NDArray[np.bool_], values: NDArray[np.float64]) -> Model:
        r"""The reduced model: ``alpha[fixed] = values[fixed]`` kept as constant terms.

        Its solution holds the full-length :math:`\alpha` under the same ``dual_key``; it offers
        :meth:`box_dual` itself (solvable by DCD) and at least the ``"matrix"`` layer (Direct).
        """
        ...


@runtime_checkable
class MEBStructure(Protocol):
    r"""A model whose dual is a simplex QP with a modified kernel (FW, MFW, CVM drivers).

    .. math::

        R^\star = \min_\alpha \alpha^\top\tilde K\alpha \quad\text{s.t.}\quad
        \textstyle\sum_i\alpha_i = 1,\ \alpha \ge 0, \qquad
        \tilde K_{ij} = a_i a_j (k(x_i, x_j) + 1) + \delta_{ij}\,\text{ridge},

    with the model's optimal value ``scale * R* + offset``. With a constant kernel diagonal it
    is a minimal-enclosing-ball problem (the L2-SVM of CVM: :math:`a = y`, ridge :math:`= 1/C`,
    scale :math:`-1/2`).
    """

    def meb_dual(self) -> dict[str, Any]:
        """The fields of ``optframe.drivers.frank_wolfe.MEBDual``.

        They are ``X``, ``sign``, ``kernel``, ``ridge``, ``scale`` and ``offset``.
        """
        ...

    def meb_solution(self, alpha: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        """The model's solution at a point ``alpha`` of the simplex."""
        ...


@runtime_checkable
class ElasticNetKnowledge(Protocol):
    r"""An elastic-net hinge-loss classifier with penalized polyhedral knowledge.

    .. math::

        \min_{w, b, u_k \ge 0} \sum_i c_i (1 - y_i(x_i^\top w + b))_+ + \lambda_1\lVert w\rVert_1
        + \tfrac{\lambda_2}{2}\lVert w\rVert^2 + \sum_k \tfrac{\rho}{2}\bigl(\lVert B_k^\top u_k
        + \ell_k w\rVert^2 + \lVert F_k^\top u_k\rVert^2\bigr)
        + \rho_h (d_k^\top u_k - \ell_k b + 1)_+

    Attributes
    ----------
    data : Dataset
        ``X`` (N, m) and ``y`` in {-1, +1}.
    hinge_costs : ndarray (N,)
        :math:`c_i > 0`.
    lam1, lam2, rho, rho_hinge : float
        :math:`\lambda_1 \ge 0`, :math:`\lambda_2 > 0`, :math:`\rho, \rho_h \ge 0`.
    knowledge : sequence
        Objects with ``B`` (k, m), ``B_fixed`` :math:`F` (k, r), ``d`` (k,), ``label``
        :math:`\ell \in \{\pm 1\}`.

    Methods ``restrict_features(support) -> model`` (the same structure on ``X[:, support]``, the
    weights outside fixed at 0), ``pad_solution(solution, support)``, ``kkt_residuals(solution)``,
    ``smooth_gradient_w(solution)`` and ``dual_bound(solution)`` (a proven bound or ``None``).
    Solutions hold ``w``, ``intercept``, ``u``, ``alpha`` (margin multipliers) and ``beta``.
    """

    lam1: float
    lam2: float
    rho: float
    rho_hinge: float
    knowledge: Sequence[Any]

    def restrict_features(self, support: ArrayLike) -> Model:
        """The model with the weights outside ``support`` fixed at 0."""
        ...

    def kkt_residuals(self, solution: Solution) -> dict[str, float]:
        """Optimality residuals (``"max"`` is the largest)."""
        ...


@runtime_checkable
class SupportsBoxQPDual(Protocol):
    """What SMO needs from a model (its ``requires``): the dual and the way back from it."""

    def smo_dual(self) -> Any:
        """The dual problem, or a mapping of its fields (models do not import drivers)."""
        ...

    def smo_solution(
        self, x: NDArray[np.float64], gradient: NDArray[np.float64]
    ) -> dict[str, NDArray[np.float64]]:
        r"""The model's solution at dual point ``x``, given :math:`\nabla = Qx + c` there."""
        ...
