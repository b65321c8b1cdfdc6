r"""Regularized empirical risk: a PLQ loss and a penalty composed into a model with three layers."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from optframe import row_blocks
from optframe.capabilities import (
    BoxQPDual,
    ElasticNetSmoothLoss,
    EntropyBoxDual,
    LinearBoxDual,
    PiecewiseBoxDual,
    PiecewiseLinearSampleLoss,
    SimplexQP,
    Structure,
)
from optframe.certificate import Certificate, RepairStep, enough_gap
from optframe.data import Dataset
from optframe.data.aggregate import aggregate_samples
from optframe.data.dask import DaskDataset
from optframe.errors import DataError, ModelError
from optframe.kernel_sums import kernel_times
from optframe.kernels import ClusterMeanKernel, Kernel, Linear, as_kernel
from optframe.losses import PLQLoss
from optframe.model import Formulation, Model, ProblemClass, RawSolution, Solution
from optframe.penalties import L2, Penalty, as_penalty
from optframe.registry import register_model

from ._common import (
    check_dataset,
    check_features,
    check_flag,
    check_gram,
    check_positive,
    kernel_product,
    primal_or_dual,
    relabel_hint,
    resolve_weights,
    scalar,
    vector,
    weighted_median,
)
from ._risk_dual import dual_point, kernel_certificate, subgradient_theta
from ._risk_dual_form import build_dual_cvxpy, build_dual_matrix, recover_dual
from ._risk_latex import dual_latex, primal_latex, simplex_dual_latex
from ._risk_layers import build_cvxpy, build_matrix, build_pyomo, pyomo_from_matrix
from ._risk_losses import SampleLosses, loss_kind, sample_losses
from ._risk_margin import (
    alpha_box,
    margin_certificate,
    margin_of,
    simplex_qp,
    simplex_qp_refusal,
)
from ._risk_sparse import elastic_net_smooth_loss, elastic_net_smooth_refusal
from ._risk_structures import (
    box_qp_dual,
    entropy_box_dual,
    linear_box_dual,
    piecewise_box_dual,
    quadratic_box_qp_dual,
    quadratic_box_refusal,
    signs,
)

#: Relative distances to a kink within which a sample counts as on it, one certificate
#: candidate each (see :meth:`EmpiricalRisk.dual_bound`).
KINK_TOLERANCES = (1e-9, 1e-7, 1e-5, 1e-3, 1e-1)
# kernel values (rows x support) from which kernel_values runs compiled (below: numpy blocks,
# nothing to compile)
COMPILED_SUMS_FROM = 4_000_000
#: A candidate within this relative distance of the objective ends the search for a bound.
CLOSED = 1e-12


class _Internal(dict):
    """A solution under :class:`EmpiricalRisk`'s own names (``w``, ``alpha``), mapped once."""


@register_model
@dataclass(frozen=True, eq=False)
class EmpiricalRisk(Model):
    r"""A convex PLQ loss plus a penalty on a linear model, declared in one line.

    .. math::

        \min_{w \in \mathbb{R}^m,\; b \in \mathbb{R}} \; P(w) + C \sum_{i=1}^n s_i\, \ell(a_i),
        \qquad a_i = \begin{cases} y_i (x_i^\top w + b) & \text{classification loss (margin)}\\
        y_i - x_i^\top w - b & \text{regression loss (residual)} \end{cases}

    with :math:`b = 0` when ``fit_intercept=False``, a loss :math:`\ell` from
    :mod:`optframe.losses` (``Hinge()``, ``Pinball(0.9)``, ... or a :class:`PLQLoss` of your own)
    and a penalty :math:`P` from :mod:`optframe.penalties` (``L2()``, ``L1()``,
    ``ElasticNet(l1_ratio)``) or ``None`` for none. It is an LP when the loss is piecewise linear
    and the penalty is ``L1()``, ``ElasticNet(1.0)`` or ``None``; a QP otherwise.

    Parameters
    ----------
    data : Dataset or DaskDataset
        Features ``X`` (dense or sparse) and targets ``y`` (labels in {-1, +1}, both present
        with positive weight, for a classification loss). A
        :class:`~optframe.data.dask.DaskDataset` (rows in chunks on a Dask cluster) makes a
        :class:`~optframe.models.chunked_risk.ChunkedEmpiricalRisk` instead: the same problem
        for a loss with ReLU pieces only, solved by AggregateDisaggregate chunk by chunk.
    loss : PLQLoss or mapping
        The loss :math:`\ell`, an instance; or, for margin losses, a mapping from label to loss,
        ``{+1: loss_plus, -1: loss_minus}``, which gives every sample the loss of its label
        (:math:`\ell_i = \ell_{y_i}`; see *Losses per label* below).
    penalty : Penalty or None
        The penalty :math:`P` (default ``L2()``: :math:`\tfrac12\lVert w\rVert^2`).
    C : float
        The loss weight :math:`C > 0`.
    fit_intercept : bool
        Whether to fit the intercept :math:`b` (unpenalized unless ``penalize_intercept``).
    kernel : None, str or Kernel
        The kernel :math:`k` (``None`` or ``"linear"``: the linear model; any other kernel needs
        the ridge penalty and is stated through its dual).
    sample_weight : array of shape (n,), optional
        The weights :math:`s` (default ``data.sample_weight``, or ones). Zero-weight samples are
        kept and do not count.
    free_margin : bool
        Whether the margin is a variable :math:`r` rewarded in the objective (see *Free margin*
        below). Needs one non-increasing margin loss, the ridge penalty and no unpenalized
        intercept.
    penalize_intercept : bool
        Whether the intercept is penalized with :math:`w`, as a feature equal to 1 (the kernel
        :math:`k + 1`). Needs ``fit_intercept=True`` and the ridge penalty.

    Raises
    ------
    DataError
        If ``data`` is not a Dataset with ``y``, the weights are invalid, or a classification
        loss meets labels outside {-1, +1} or a class without positive weight.
    ModelError
        If ``loss`` is not a PLQLoss instance (or a mapping from the labels +1/-1 to margin
        losses that covers every label), ``penalty`` is not a Penalty or None, ``C`` is not
        finite and positive, ``fit_intercept``, ``free_margin`` or ``penalize_intercept`` is not
        a bool, a loss has an affine part and the penalty is not the ridge, a kernel meets a
        penalty other than the ridge, weights are given twice, or the free margin or the
        penalized intercept meets a combination they are not for (see their parameters).

    Notes
    -----
    Layers ``"matrix"``, ``"cvxpy"`` and ``"pyomo"`` (see :mod:`optframe.models._risk_layers`):
    each has the rows :math:`a_i - q_i (x_i^\top w + b) = p_i` (``"fit"``), whose duals are the
    loss multipliers :math:`\theta_i \in C s_i\,\partial\ell(a_i)`.

    Solution: ``"w"`` (m,), ``"intercept"`` (1,) (``[0.0]`` without intercept) and, when the
    back-end returned duals, ``"alpha"`` (n,): :math:`\alpha_i = -\theta_i` for a classification
    loss (the SVM's :math:`\alpha \ge 0` for the hinge) and :math:`\alpha_i = \theta_i` for a
    regression loss (LAD's :math:`\theta`), clipped into :math:`C s_i\operatorname{dom}\ell^*`.
    Then :math:`w \in \partial P^*(X^\top v)` with :math:`v_i = \alpha_i y_i` (classification) or
    :math:`v_i = \alpha_i` (regression), and :math:`\sum_i v_i = 0` with an intercept.

    The certificate (:meth:`dual_bound`) is the Fenchel dual derived from the loss's pieces and
    the penalty (:mod:`optframe.models._risk_dual`).

    *Losses per label.* With ``loss={+1: l_plus, -1: l_minus}`` the objective is
    :math:`P(w) + C\sum_i s_i\,\ell_{y_i}(y_i f(x_i))` and every derived object (objective,
    certificate, layers, structures) uses each sample's own loss and conjugate. A loss may carry
    an affine part :math:`g(a) + k\,a` (``PLQLoss(..., linear=k)``,
    :class:`~optframe.losses.LinearLoss`), whose conjugate is :math:`g^*(\beta - k)`; its box
    :math:`c_i\operatorname{dom}\ell_i^*` need not contain 0, and a purely linear loss fixes the
    multiplier at :math:`\theta_i = c_i k`. Such losses need the ridge penalty (the repairs of
    the certificate that scale :math:`v` towards 0 are not valid for them). Examples: a class-
    weighted hinge, ``{+1: Hinge(), -1: Hinge()}`` with per-sample weights; the convex PU risk
    of du Plessis et al., ``{+1: LinearLoss(-1.0), -1: DoubleHinge()}`` with weights
    :math:`\pi/(2\lambda p)` on the labeled positives and :math:`1/(2\lambda n)` on the unlabeled
    rows taken as negatives (:class:`~optframe.models.PULearning`). With a loss per label or an
    affine part, the layer is ``"cvxpy"`` and the structure :class:`BoxQPDual`; samples with
    a fixed multiplier are eliminated from it (their kernel columns move into its linear term
    and offset: USMO's reduced dual for PU).

    *Free margin and penalized intercept.* With ``free_margin=True`` and a margin loss the
    problem becomes

    .. math::

        \min_{w, b, r} \; \tfrac{\rho_2}{2}\bigl(\lVert w\rVert^2 + \pi b^2\bigr)
        + C\sum_i s_i\,\ell\bigl(y_i (x_i^\top w + b) - r\bigr) - r,

    with :math:`\pi = 1` when ``penalize_intercept=True`` (else :math:`\pi = 0`, and without
    intercept :math:`b = 0`). Stationarity in :math:`r` makes the multipliers
    :math:`\alpha = -\theta` sum to 1: the dual lives on a scaled simplex, and the certificate
    makes any candidate feasible by clipping it into its box and scaling it
    (:mod:`optframe.models._risk_margin`). The solution gains ``"rho"`` (:math:`r`; from a
    solution without it, its exact minimizer). For the one-sided quadratic
    :math:`\ell(a) = \tfrac12\max(0, s a + t)^2` (``SquaredHinge()`` is :math:`s = -\sqrt2`,
    :math:`t = \sqrt2`) with a penalized intercept this is the L2-SVM of Lee and Mangasarian
    with cost :math:`C s^2` and margin :math:`\rho = r + \kappa`, where :math:`\kappa = -t/s` is
    the loss's kink (the objective is the L2-SVM's plus :math:`\kappa`); its dual,
    :math:`\min \alpha^\top\tilde K\alpha` on the simplex with
    :math:`\tilde K = yy^\top\circ(K + 1) + I\rho_2/(C s^2)`, is offered as
    :class:`~optframe.capabilities.SimplexQP` (FrankWolfe, MFW, CoreVectorMachine). With these
    options the layers state the linear primal (with ``"rho"`` as a column); the dual form is
    not stated.

    Structures offered to drivers, derived from the same declaration
    (:mod:`optframe.models._risk_structures`; :meth:`structure_refusal` says why one is out):

    * :class:`~optframe.capabilities.PiecewiseLinearSampleLoss` (AggregateDisaggregate) for
      every piecewise-linear loss, any penalty;
    * :class:`~optframe.capabilities.BoxQPDual` (SMO) for a piecewise-linear loss of at most
      three pieces and the penalty ``L2()``; and, with a diagonal of its own and variables
      unbounded above, for one loss of ReHU pieces of one curvature whose multipliers are
      bounded on one side (the squared hinge: the L2-loss SVM's standard dual; Huber), or whose
      multipliers are free with one curvature on each side of the loss's minimum, each split in
      two bounded variables (least squares, the expectile, the squared epsilon-insensitive
      loss; :func:`~optframe.models._risk_structures.quadratic_box_refusal` says which are not).
      With an intercept it has the equality row :math:`\text{sgn}^\top\alpha = 0`; without,
      it is a box QP (``rhs`` is ``None``);
    * :class:`~optframe.capabilities.LinearBoxDual` (DualCoordinateDescent, safe screening) for
      a two-piece loss that vanishes at its kink, the penalty ``L2()`` and no intercept;
    * :class:`~optframe.capabilities.PiecewiseBoxDual` (DualCoordinateDescent) for any loss
      (quadratic pieces too: squared hinge, Huber, expectile), the penalty ``L2()``, the linear
      kernel and no intercept;
    * :class:`~optframe.capabilities.SimplexQP` (FrankWolfe, MFW, CoreVectorMachine) for one
      one-sided quadratic loss with equal costs, the ridge penalty, a free margin and a
      penalized intercept (the others are derived without these two options);
    * :class:`~optframe.capabilities.ElasticNetSmoothLoss` (CoordinateDescent) for one
      differentiable loss (ReHU pieces only, or the logistic), a penalty with an L1 part and
      the linear kernel, with or without intercept.

    Examples
    --------
    >>> import optframe as of
    >>> from optframe.data import Dataset
    >>> from optframe.losses import Pinball
    >>> from optframe.models import EmpiricalRisk
    >>> data = Dataset(X=[[0.0], [1.0], [2.0], [3.0]], y=[0.0, 1.0, 1.0, 4.0])
    >>> model = EmpiricalRisk(data, Pinball(0.5), penalty=None)
    >>> result = of.solve(model)
    >>> result.status.value, round(result.objective, 6)
    ('optimal', 1.0)
    """

    problem_class: ClassVar[ProblemClass] = ProblemClass.QP  # per instance: LP or QP
    layers: ClassVar[tuple[str, ...]] = ("matrix", "cvxpy", "pyomo")
    forms: ClassVar[tuple[str, ...]] = ("primal", "dual")
    sample_duals: ClassVar[tuple[str, ...]] = ("alpha",)
    #: The solution's names of the coefficients and of the per-sample dual variable.
    coef_key: ClassVar[str] = "w"
    dual_key: ClassVar[str] = "alpha"
    #: The name of the dual form's row :math:`\mathbf 1^\top v = 0` (its dual is :math:`-b`).
    intercept_row: ClassVar[str] = "intercept"
    convex_sample_loss: ClassVar[bool] = True
    #: Whether the cvxpy layer states the kernel primal, over the representer coefficients
    #: :math:`v` (:math:`f = Kv/\rho_2 + b`, penalty :math:`v^\top K v / (2\rho_2)`, dense Gram).
    kernel_primal: ClassVar[bool] = False
    structures: ClassVar[tuple[type[Structure], ...]] = (
        PiecewiseLinearSampleLoss,
        BoxQPDual,
        LinearBoxDual,
        PiecewiseBoxDual,
        SimplexQP,
        EntropyBoxDual,
        ElasticNetSmoothLoss,
    )

    data: Dataset
    loss: PLQLoss | Any
    penalty: Penalty | None = field(default_factory=L2)
    C: float = 1.0
    fit_intercept: bool = True
    kernel: Any = None
    sample_weight: ArrayLike | None = None
    free_margin: bool = False
    penalize_intercept: bool = False
    _s: NDArray[np.float64] = field(init=False, repr=False)
    _losses: SampleLosses = field(init=False, repr=False)
    _penalty: Penalty = field(init=False, repr=False)
    _kernel: Kernel = field(init=False, repr=False)

    def __new__(cls, data: Any = None, *args: Any, **kwargs: Any) -> Any:
        """On a :class:`~optframe.data.dask.DaskDataset`: a :class:`ChunkedEmpiricalRisk`.

        The same declaration with the same arguments, its samples kept in their chunks
        (:mod:`optframe.models.chunked_risk`); any other ``data`` makes this class.
        """
        if cls is EmpiricalRisk and isinstance(data, DaskDataset):
            from .chunked_risk import ChunkedEmpiricalRisk

            return ChunkedEmpiricalRisk(data, *args, **kwargs)
        return super().__new__(cls)

    def __post_init__(self) -> None:
        check_dataset(self.data, self.name)
        kind = loss_kind(self.loss, self.name)
        object.__setattr__(self, "_penalty", as_penalty(self.penalty, self.name))
        object.__setattr__(self, "C", check_positive(self.C, "C", self.name))
        object.__setattr__(
            self, "fit_intercept", check_flag(self.fit_intercept, "fit_intercept", self.name)
        )
        kernel = Linear() if self.kernel is None else as_kernel(self.kernel)
        object.__setattr__(self, "_kernel", kernel)
        pen = self._penalty
        if not self.is_linear and (pen.l1 > 0 or pen.l2 == 0):
            raise ModelError(
                f"{self.name} with the kernel {self._kernel!r} needs the ridge penalty (L2(), the "
                f"RKHS norm); got {self.penalty!r}. Use kernel=None for L1 or no penalty."
            )
        object.__setattr__(self, "_s", self._weights())
        if kind == "classification":
            self._check_labels()
        losses = sample_losses(self.loss, self._y, self.name)
        object.__setattr__(self, "_losses", losses)
        if losses.has_affine and (pen.l1 > 0 or pen.l2 == 0):
            raise ModelError(
                f"{self.name}: a loss with an affine part ({self.loss!r}) needs the ridge penalty "
                f"L2(); got {self.penalty!r}. Its multipliers' box may miss 0, which the "
                "certificate's repairs for the lasso or no penalty need."
            )
        if losses.has_affine and self.fit_intercept:
            self._check_bounded()
        self._check_options()
        linear = losses.is_piecewise_linear and not self._penalty.is_quadratic
        kind_ = ProblemClass.LP if linear else ProblemClass.QP
        if losses.is_smooth:
            self._check_smooth()
            kind_ = ProblemClass.EXP
        object.__setattr__(self, "problem_class", kind_)
        object.__setattr__(self, "is_classifier", kind == "classification")

    def _check_bounded(self) -> None:
        r"""ModelError unless some multiplier in the box has :math:`\mathbf 1^\top v = 0`.

        Under the ridge penalty that row is the dual's only constraint besides the boxes
        :math:`v_i \in -q_i c_i \operatorname{dom}\ell_i^*`; without a point on it the dual is
        infeasible and the objective is unbounded below (along the intercept).
        """
        lo, hi = self._losses.domain
        c, q = self.costs, self.slope
        ends = -q * c * lo, -q * c * hi
        low, high = float(np.minimum(*ends).sum()), float(np.maximum(*ends).sum())
        if not low <= 0.0 <= high:
            raise ModelError(
                f"{self.name} with {self.loss!r} is unbounded below: the losses' slopes let the "
                f"intercept lower the objective without end (the multipliers sum to [{low:.6g}, "
                f"{high:.6g}], which misses 0). Raise the weight of the samples whose loss grows "
                "with the intercept, or use fit_intercept=False."
            )

    def _check_smooth(self) -> None:
        """ModelError on what a smooth loss (logistic) is not stated for: kernels, the options."""
        if not self.is_linear:
            raise ModelError(
                f"{self.name}: the smooth loss {self.loss!r} is stated for the linear model; got "
                f"the kernel {self._kernel!r} (use kernel=None)"
            )
        if self.extended:
            raise ModelError(
                f"{self.name}: the smooth loss {self.loss!r} is stated without free_margin or "
                "penalize_intercept; for a penalized intercept append a constant feature and "
                "use fit_intercept=False"
            )

    def _check_options(self) -> None:
        """ModelError on a combination the free margin or the penalized intercept is not for."""
        for name in ("free_margin", "penalize_intercept"):
            object.__setattr__(self, name, check_flag(getattr(self, name), name, self.name))
        pen = self._penalty
        ridge = pen.l1 == 0 and pen.l2 > 0
        if self.penalize_intercept:
            if not self.fit_intercept:
                raise ModelError(
                    f"{self.name}: penalize_intercept=True needs fit_intercept=True (the bias is "
                    "then a feature equal to 1 under the penalty)."
                )
            if not ridge:
                raise ModelError(
                    f"{self.name}: penalize_intercept=True puts the bias in the ridge penalty; "
                    f"it needs L2(), got {self.penalty!r}."
                )
        if not self.free_margin:
            return
        problem = None
        if not self._losses.is_classification:
            problem = "a margin loss (a classification loss such as SquaredHinge())"
        elif self.per_sample:
            problem = f"one loss without an affine part; got {self.loss!r}"
        elif not ridge:
            problem = f"the ridge penalty L2(); got {self.penalty!r}"
        elif self.fit_intercept and not self.penalize_intercept:
            problem = (
                "no unpenalized intercept (its row 1'v = 0 beside sum alpha = 1); use "
                "penalize_intercept=True or fit_intercept=False"
            )
        else:
            lo, hi = self._losses.domain
            high = alpha_box(self)[1]
            if float(np.max(hi)) > 0.0 or float(np.min(lo)) >= 0.0:
                problem = f"a non-increasing margin loss that is not flat; got {self.loss!r}"
            elif not float(high.sum()) >= 1.0:
                problem = (
                    f"costs whose multipliers can sum to 1 (they sum to at most "
                    f"{float(high.sum()):.6g}: the margin grows without end); raise C"
                )
        if problem is not None:
            raise ModelError(f"{self.name}: free_margin=True needs {problem}.")

    @property
    def extended(self) -> bool:
        """Whether the free margin or the penalized intercept is on (their own certificate)."""
        return self.free_margin or self.penalize_intercept

    def _weights(self) -> NDArray[np.float64]:
        """The sample weights :math:`s` (a declaration may derive its own: PULearning's costs)."""
        weights = resolve_weights(self.data, self.sample_weight, self.name)
        if self.sample_weight is not None:
            object.__setattr__(self, "sample_weight", weights)
        return weights

    def _check_labels(self) -> None:
        y = self._y
        outside = np.abs(y) != 1.0
        if outside.any():
            shown = ", ".join(f"{v:g}" for v in np.unique(y[outside])[:6])
            raise DataError(
                f"{self.name} with the classification loss {self.loss!r} needs labels in "
                f"{{-1, +1}}; y also holds {shown}. {relabel_hint(y)}"
            )
        s = self._s
        weighted = None if s.min() > 0 else s > 0
        for label, present in ((1.0, y.max() == 1.0), (-1.0, y.min() == -1.0)):
            if not present:
                raise DataError(
                    f"{self.name} needs both classes; class {label:+g} is missing from y "
                    f"(all {y.size} labels are {-label:+g})."
                )
            if weighted is not None and not np.any(weighted & (y == label)):
                raise DataError(
                    f"{self.name}: class {label:+g} has zero total sample weight; each class "
                    "needs a sample with positive weight."
                )

    # ----------------------------------------------------------------------------------- parts
    @property
    def _y(self) -> NDArray[np.float64]:
        """The labels (margin) or targets (residual) the loss sees; a declaration may map them."""
        assert self.data.y is not None
        return self.data.y

    @property
    def losses(self) -> SampleLosses:
        """Each sample's loss (:class:`~optframe.models._risk_losses.SampleLosses`)."""
        return self._losses

    @property
    def per_sample(self) -> bool:
        """Whether the losses differ by sample or carry an affine part (cvxpy layer only)."""
        return self._losses.single is None or self._losses.has_affine

    @property
    def is_linear(self) -> bool:
        """Whether the model is linear in ``x`` (no kernel, or the linear one)."""
        return isinstance(self._kernel, Linear)

    @property
    def default_form(self) -> str:
        """``"dual"`` with a kernel or without a penalty, ``"primal"`` otherwise.

        Without a penalty the dual LP has one row per feature where the primal has one per
        sample: on 20,000 x 10 LAD data HiGHS solves it in 0.64 s against 14.6 s.
        """
        unpenalized = self._penalty.l1 == 0 and self._penalty.l2 == 0
        return "dual" if unpenalized or not self.is_linear else "primal"

    def kernel_matrix(self) -> NDArray[np.float64]:
        """The Gram matrix :math:`K` of the training rows (n x n; ModelError above the limit)."""
        check_gram(
            self.data.n_samples,
            f"the kernel matrix of {self.name} with {self._kernel!r} (its dual form)",
            "Use the SMO driver or a subsample.",
        )
        return self._kernel.matrix(self.data.X)

    def kernel_values(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """:math:`K v` at the training rows, a block of rows at a time.

        From ``COMPILED_SUMS_FROM`` kernel values on, by the compiled sums of
        :func:`optframe.kernel_sums.kernel_times` (the RBF, linear and polynomial kernels;
        w8a, 49,749 rows and 11,000 non-zeros in ``v``: 0.13 s against 1.9 s by numpy blocks).
        """
        support = np.flatnonzero(v)
        if self.data.n_samples * support.size >= COMPILED_SUMS_FROM:
            Kv = kernel_times(self._kernel, self.data.X, np.asarray(v, dtype=np.float64))
            if Kv is not None:
                return Kv
        return kernel_product(self._kernel, self.data.X, self.data.X[support], v[support])

    @property
    def weights(self) -> NDArray[np.float64]:
        """The sample weights :math:`s`, shape (n,)."""
        return self._s

    @property
    def costs(self) -> NDArray[np.float64]:
        r"""The loss weights :math:`c_i = C s_i`, shape (n,)."""
        return self.C * self._s

    @property
    def penalty_term(self) -> Penalty:
        """The penalty as a :class:`~optframe.penalties.Penalty` (``None`` is ``NoPenalty()``)."""
        return self._penalty

    @property
    def offset(self) -> NDArray[np.float64]:
        r""":math:`p` in :math:`a = p + q f`: 0 for a margin, :math:`y` for a residual."""
        return np.zeros_like(self._y) if self._losses.is_classification else self._y

    @property
    def slope(self) -> NDArray[np.float64]:
        r""":math:`q` in :math:`a = p + q f`: :math:`y` for a margin, -1 for a residual."""
        return self._y if self._losses.is_classification else -np.ones_like(self._y)

    def argument(self, w: ArrayLike, b: float) -> NDArray[np.float64]:
        r"""The loss arguments :math:`a_i = p_i + q_i (x_i^\top w + b)`."""
        f = row_blocks.times(self.data.X, np.asarray(w, dtype=np.float64)) + b
        return self.offset + self.slope * f

    def loss_argument(self, solution: Solution) -> NDArray[np.float64]:
        """The loss arguments (margins or residuals) at ``solution``."""
        solution = self._inside(solution)
        f, _ = self._fit(solution)
        a = self.offset + self.slope * (f + scalar(solution, "intercept"))
        return a - margin_of(self, solution, a) if self.free_margin else a

    def _fit(self, solution: Solution) -> tuple[NDArray[np.float64], float]:
        r"""``(f - b, P)`` at the training rows: from ``w``, else from ``alpha``.

        From ``alpha`` (the ridge penalty): :math:`v = \text{sgn}\odot\alpha`,
        :math:`f - b = K v / \rho_2` and :math:`P = v^\top K v / (2\rho_2)`
        (:math:`K = XX^\top` for the linear model, where this is :math:`w = X^\top v/\rho_2`).
        """
        solution = self._inside(solution)
        if "w" in solution:
            w = vector(solution, "w", self.name)
            return row_blocks.times(self.data.X, w), self._penalty.value(w)
        if self._penalty.l1 > 0 or self._penalty.l2 == 0 or "alpha" not in solution:
            raise ModelError(
                f"{self.name}: the solution needs {self.coef_key!r} (or {self.dual_key!r} under "
                f"the ridge penalty); it has {sorted(self._publish_names(solution))}"
            )
        v = signs(self) * vector(solution, "alpha", self.name)
        l2 = self._penalty.l2
        if self.is_linear:
            w = row_blocks.transposed_times(self.data.X, v) / l2
            return row_blocks.times(self.data.X, w), self._penalty.value(w)
        key = v.tobytes()
        last = self.__dict__.get("_last_fit")
        if last is not None and last[0] == key:
            return last[1]  # the same v as a moment ago (the solution, objective, dual bound)
        Kv = self.kernel_values(v)
        fit = (Kv / l2, float(v @ Kv) / (2.0 * l2))
        object.__setattr__(self, "_last_fit", (key, fit))
        return fit

    @classmethod
    def examples(cls) -> tuple[EmpiricalRisk, ...]:
        """Each named loss once, with the penalties and intercepts that change the structures.

        The last two declare a loss per label (the PU risk's losses are PULearning's examples)
        and a free margin with a penalized intercept (the L2-SVM).
        """
        from optframe.data import make_classification_svm, make_lad_set_a
        from optframe.kernels import RBF
        from optframe.losses import (
            Absolute,
            DoubleHinge,
            EpsilonInsensitive,
            Hinge,
            Huber,
            Pinball,
            SquaredHinge,
        )
        from optframe.penalties import L1, ElasticNet

        svm = make_classification_svm(40, 3, separation=1.5, random_state=0)
        lad = make_lad_set_a(40, 3, random_state=0)
        return (
            cls(svm, Hinge(), C=2.0),
            cls(svm, Hinge(), penalty=L1(), C=1.0),
            cls(svm, SquaredHinge(), C=0.5),
            cls(svm, DoubleHinge(), C=1.0),
            cls(lad, Pinball(0.8), penalty=None),
            cls(lad, Pinball(0.3), C=1.0, fit_intercept=False),
            cls(lad, Absolute(), penalty=ElasticNet(0.5), C=1.0),
            cls(lad, EpsilonInsensitive(0.5), C=1.0),
            cls(lad, Huber(1.0), C=1.0),
            cls(lad, EpsilonInsensitive(0.5), C=2.0, kernel=RBF(gamma=0.5)),
            cls(svm, {1: Hinge(), -1: DoubleHinge()}, C=1.0),
            cls(svm, SquaredHinge(), C=0.5, free_margin=True, penalize_intercept=True),
        )

    # ------------------------------------------------------------------------------ structures
    def structure_refusal(self, kind: type[Structure]) -> str | None:
        """Why this instance does not offer ``kind`` (``None`` when it does)."""
        reason = self._refusal(kind)
        return reason if reason is not None else super().structure_refusal(kind)

    def _refusal(self, kind: type[Structure]) -> str | None:
        loss, pen = self.loss, self._penalty
        if kind is ElasticNetSmoothLoss:
            return elastic_net_smooth_refusal(self)
        if self._losses.is_smooth or kind is EntropyBoxDual:
            return self._smooth_refusal(kind)
        if self.per_sample and kind is not BoxQPDual:
            return (
                f"{kind.__name__} is derived for one loss without an affine part; got {loss!r} "
                "(a loss per label or an affine part offers BoxQPDual)"
            )
        if self.extended and kind is BoxQPDual:  # the SimplexQP's pair-step form
            reason = simplex_qp_refusal(self)
            if reason is None:
                return None
            return (
                "BoxQPDual is derived without a free margin or a penalized intercept; with them "
                f"it is the SimplexQP's, which this model does not offer: {reason}"
            )
        if self.extended and kind is not SimplexQP:  # also PiecewiseLinearSampleLoss's members
            return (
                f"{kind.__name__} is derived without a free margin or a penalized intercept; "
                "with them the model offers SimplexQP (one one-sided quadratic loss)"
            )
        if kind not in self.structures:
            return None
        if kind is SimplexQP:
            return simplex_qp_refusal(self)
        if kind is PiecewiseBoxDual:
            return self._piecewise_box_refusal()
        if kind is BoxQPDual and not self._losses.is_piecewise_linear:
            return quadratic_box_refusal(self)  # one variable per sample, with a diagonal
        if not self._losses.is_piecewise_linear:
            why = (
                "AID's aggregation is exact only when each cluster sits on one linear piece"
                if kind is PiecewiseLinearSampleLoss
                else "its dual is a box QP whose quadratic form is the kernel's alone; a "
                "quadratic piece of the loss adds a term per sample that it does not carry"
            )
            return (
                f"the loss {loss!r} has quadratic pieces; {kind.__name__} needs a piecewise-"
                f"linear loss ({why})"
            )
        if kind is PiecewiseLinearSampleLoss:
            return None
        if (pen.l1, pen.l2) != (0.0, 1.0):
            return f"{kind.__name__} is the dual under the penalty L2(); got {self.penalty!r}"
        if kind is BoxQPDual:  # without an intercept: no equality row (rhs None)
            most = self._losses.max_kinks
            if most > 2:
                return f"the loss {loss!r} has {most + 1} pieces; the box QP allows 3"
            return None
        kinks, _ = loss.linear_pieces
        if not self.is_linear:
            return f"the box dual is for the linear kernel (w = Z'alpha); got {self._kernel!r}"
        if self.fit_intercept:
            return (
                "fit_intercept=True adds the equality row 1'v = 0 to the dual: coordinate steps "
                "cannot keep it, and the DVI/SSNSV rules are proved for the model without "
                "intercept (a dual feasible set that is a box); use fit_intercept=False and, if "
                "wanted, a constant feature"
            )
        if kinks.size != 1 or float(loss.value(kinks)[0]) != 0.0:
            return f"the box dual needs a two-piece loss that is 0 at its kink; got {loss!r}"
        return None

    def _smooth_refusal(self, kind: type[Structure]) -> str | None:
        """Why a smooth loss does not offer ``kind``, or a PLQ loss the EntropyBoxDual."""
        from optframe.losses import Logistic

        if not self._losses.is_smooth or not isinstance(self.loss, Logistic):
            return f"EntropyBoxDual is the dual of the logistic loss Logistic(); got {self.loss!r}"
        if kind is not EntropyBoxDual:
            return (
                f"{kind.__name__} is derived for piecewise linear-quadratic losses; the smooth "
                f"loss {self.loss!r} offers EntropyBoxDual"
            )
        pen = self._penalty
        if (pen.l1, pen.l2) != (0.0, 1.0):
            return f"EntropyBoxDual is the dual under the penalty L2(); got {self.penalty!r}"
        if self.fit_intercept:
            return (
                "fit_intercept=True adds the equality row 1'v = 0 to the dual, which coordinate "
                "steps cannot keep; use fit_intercept=False and, if wanted, a constant feature"
            )
        return None

    def _piecewise_box_refusal(self) -> str | None:
        pen = self._penalty
        if (pen.l1, pen.l2) != (0.0, 1.0):
            return f"PiecewiseBoxDual is the dual under the penalty L2(); got {self.penalty!r}"
        if not self.is_linear:
            return f"PiecewiseBoxDual is for the linear kernel (w = Z'alpha); got {self._kernel!r}"
        if self.fit_intercept:
            return (
                "fit_intercept=True adds the equality row 1'v = 0 to the dual, which coordinate "
                "steps cannot keep; use fit_intercept=False and, if wanted, a constant feature"
            )
        return None

    def _structure(self, kind: type[Structure]) -> Structure:
        if kind is ElasticNetSmoothLoss:
            return elastic_net_smooth_loss(self)
        if kind is EntropyBoxDual:
            return entropy_box_dual(self)
        if kind is PiecewiseBoxDual:
            return piecewise_box_dual(self)
        if kind is SimplexQP:
            return simplex_qp(self)
        if kind is PiecewiseLinearSampleLoss:
            return PiecewiseLinearSampleLoss(self, aggregate=self.aggregate)
        if kind is BoxQPDual:
            if self.extended:
                return simplex_qp(self).box_qp()
            if not self._losses.is_piecewise_linear:
                return quadratic_box_qp_dual(self)
            return box_qp_dual(self)
        return linear_box_dual(self)

    # ------------------------------------------------------ piecewise-linear sample structure
    def with_data(self, data: Dataset) -> EmpiricalRisk:
        """The same model (every parameter) on other samples, weighted by ``data``."""
        return dataclasses.replace(self, data=data, sample_weight=None)

    def aggregate(self, labels: NDArray[np.int64], k: int) -> EmpiricalRisk:
        r"""The same model on the weighted means of the clusters ``labels`` (ids ``0..k-1``).

        Linear model: the input-space centroids. With a kernel the means live in feature space
        (Appendix B of Park and Klabjan): the aggregated model's points are the cluster ids and
        its kernel is :class:`~optframe.kernels.ClusterMeanKernel`, :math:`\bar K = A K A^\top`.
        """
        centroids = aggregate_samples(self.data, self._s, labels, k)
        if self.is_linear:
            return self.with_data(centroids)
        ids = Dataset(
            X=np.arange(k, dtype=np.float64).reshape(-1, 1),
            y=centroids.y,
            sample_weight=centroids.sample_weight,
            name=centroids.name,
        )
        kernel = ClusterMeanKernel(self._kernel, self.data.X, self._s, labels, k)
        return dataclasses.replace(self, data=ids, sample_weight=None, kernel=kernel)

    def sample_groups(self) -> NDArray[np.int64]:
        """The class of each sample for a margin loss (centroids keep one label), else one."""
        if self._losses.is_classification:
            return (self._y > 0).astype(np.int64)
        return np.zeros(self.data.n_samples, dtype=np.int64)

    def loss_pieces(self, solution: Solution) -> NDArray[np.int64]:
        """The linear piece of the loss each sample's argument sits on (a kink counts left)."""
        kinks, _ = self.loss.linear_pieces
        return np.searchsorted(kinks, self.loss_argument(solution), side="left").astype(np.int64)

    def sample_embedding(self, solution: Solution) -> NDArray[np.float64]:
        """``(residual, y)`` for a residual loss; the signed distance to the hyperplane else."""
        a = self.loss_argument(solution)
        if not self._losses.is_classification:
            return np.column_stack([a, self._y])
        _, penalty = self._fit(solution)
        norm = math.sqrt(2.0 * penalty) or 1.0
        return (self._y * a / norm).reshape(-1, 1)

    def complete_solution(self, solution: Solution) -> dict[str, NDArray[np.float64]]:
        """``w``, ``intercept`` and, when given, the lifted ``alpha`` on this model's samples."""
        solution = self._inside(solution)
        out = {"intercept": np.array([scalar(solution, "intercept")])}
        if self.is_linear:
            out["w"] = vector(solution, "w", self.name)
        if "alpha" in solution:
            out["alpha"] = vector(solution, "alpha", self.name)
        if "rho" in solution:
            out["rho"] = np.array([scalar(solution, "rho")])
        return self._publish(out)

    # ---------------------------------------------------------------------------------- layers
    def _recover(self, raw: RawSolution) -> dict[str, NDArray[np.float64]]:
        if "alpha" in raw.primal:  # the kernel primal: f's coefficients v = sgn * alpha
            v = np.asarray(raw.primal["alpha"], dtype=np.float64).reshape(-1)
            b = float(np.ravel(raw.primal["intercept"])[0]) if self.fit_intercept else 0.0
            out = {"alpha": signs(self) * v, "intercept": np.array([b])}
            if self.free_margin:
                out["rho"] = np.asarray(raw.primal["rho"], dtype=np.float64).reshape(1)
            return self._publish(out)
        if "w" in raw.primal:
            w = np.asarray(raw.primal["w"], dtype=np.float64).reshape(-1)
        else:
            w = np.asarray(raw.primal["w_plus"] - raw.primal["w_minus"], dtype=np.float64)
        b = float(np.ravel(raw.primal["intercept"])[0]) if self.fit_intercept else 0.0
        solution = {"w": np.nan_to_num(w.reshape(-1)), "intercept": np.array([b])}
        if self.free_margin:
            solution["rho"] = np.asarray(raw.primal["rho"], dtype=np.float64).reshape(1)
        if "fit" in raw.dual:
            theta = np.asarray(raw.dual["fit"], dtype=np.float64).reshape(-1)
            lo, hi = self._losses.domain
            c = self.costs
            with np.errstate(invalid="ignore"):
                theta = np.clip(theta, np.where(c > 0, c * lo, 0.0), np.where(c > 0, c * hi, 0.0))
            solution["alpha"] = -theta if self._losses.is_classification else theta
        return self._publish(solution)

    def _recover_dual(self, raw: RawSolution) -> dict[str, NDArray[np.float64]]:
        return self._publish(recover_dual(self, raw))

    def _inside(self, solution: Solution) -> Solution:
        """``solution`` under the names this module computes with, ``w`` and ``alpha``, once.

        The internal helpers call it again on what it returned; the mapping of a declaration
        need not be idempotent (PULearning's multiplies ``alpha`` by the labels), so an
        :class:`_Internal` solution is passed through as it is.
        """
        if isinstance(solution, _Internal):
            return solution
        return _Internal(self._to_internal(solution))

    def _to_internal(self, solution: Solution) -> dict[str, Any]:
        """The declaration's solution names to ``w`` and ``alpha`` (a renaming here)."""
        names = {self.coef_key: "w", self.dual_key: "alpha"}
        return {names.get(key, key): value for key, value in solution.items()}

    def _publish_names(self, solution: Solution) -> list[str]:
        names = {"w": self.coef_key, "alpha": self.dual_key}
        return [names.get(key, key) for key in solution]

    def _publish(self, solution: dict[str, Any]) -> dict[str, NDArray[np.float64]]:
        """``solution`` under the class's names (:attr:`coef_key`, :attr:`dual_key`), completed."""
        names = {"w": self.coef_key, "alpha": self.dual_key}
        return self._complete({names.get(key, key): value for key, value in solution.items()})

    def _complete(self, solution: dict[str, Any]) -> dict[str, NDArray[np.float64]]:
        """A hook for a declaration's extra solution entries (LAD's residuals); none here."""
        return solution

    def offers(self, layer: str, form: str | None = None) -> bool:
        """Whether ``layer`` and ``form`` can be built (see :meth:`form_refusal`)."""
        form = self.default_form if form is None else form
        return super().offers(layer, form) and self.form_refusal(layer, form) is None

    def form_refusal(self, layer: str, form: str) -> str | None:
        """Why ``form`` in ``layer`` is not offered by this instance, or ``None``."""
        if self._losses.is_smooth:
            if layer != "cvxpy":
                return (
                    f"the {layer} layer states LPs and QPs; the smooth loss {self.loss!r} needs "
                    "the exponential cone: use the cvxpy layer (cvxpy:clarabel)"
                )
            if form == "dual":
                return (
                    f"the dual form is stated for PLQ losses; with {self.loss!r} solve the primal "
                    "(its certificate is the Fenchel dual with the loss's conjugate)"
                )
        if self.extended and (form == "dual" or not self.is_linear):
            return (
                f"with a free margin or a penalized intercept the {layer} layer states the "
                "linear primal; the dual is offered as a structure (SimplexQP for one "
                "one-sided quadratic loss)"
            )
        if self.per_sample and layer != "cvxpy":
            return (
                f"the {layer} layer states one loss without an affine part; with {self.loss!r} "
                "use the cvxpy layer"
            )
        kernel_primal = self.kernel_primal and layer == "cvxpy"
        if form == "primal" and not self.is_linear and not kernel_primal:
            return f"the primal form needs the linear kernel; with {self._kernel!r} use 'dual'"
        if form == "dual":
            if self._penalty.l1 > 0:
                return f"the dual form is for the ridge penalty or none; got {self.penalty!r}"
            if layer == "pyomo" and not (self.is_linear and self._losses.is_piecewise_linear):
                return (
                    "the pyomo layer states the dual for a linear model with a piecewise-linear "
                    "loss; use the matrix or cvxpy layer"
                )
        return None

    def build(self, layer: str, form: str | None = None) -> Formulation:
        """Build ``form`` in ``layer``; ModelError names the reason when it is not offered."""
        form = self.check_form(form)
        reason = self.form_refusal(layer, form)
        if reason is not None:
            raise ModelError(f"{self.name}: {reason}")
        return super().build(layer, form)

    def _formulation(self, layer: str, form: str, built: tuple[Any, dict, dict]) -> Formulation:
        problem, variables, constraints = built
        recover = {"primal": self._recover, "dual": self._recover_dual}
        return primal_or_dual(
            layer, form, problem, self.problem_class, recover,
            variables=variables, constraints=constraints,
        )  # fmt: skip

    def _build_matrix(self, form: str) -> Formulation:
        built = build_matrix(self) if form == "primal" else build_dual_matrix(self)
        return self._formulation("matrix", form, built)

    def _build_cvxpy(self, form: str) -> Formulation:
        built = build_cvxpy(self) if form == "primal" else build_dual_cvxpy(self)
        return self._formulation("cvxpy", form, built)

    def _build_pyomo(self, form: str) -> Formulation:
        if form == "primal":
            return self._formulation("pyomo", form, build_pyomo(self))
        problem, variables, constraints = build_dual_matrix(self)
        built = pyomo_from_matrix(problem, variables, constraints, self.name)
        return self._formulation("pyomo", form, built)

    # ------------------------------------------------------------------------------ evaluation
    def objective(self, solution: Solution) -> float:
        r""":math:`P(w) + C\sum_i s_i \ell(a_i)` at ``solution`` (``intercept`` defaults to 0).

        From ``w``, else from ``alpha`` (the ridge penalty; a kernel's :math:`f` and
        :math:`\lVert f\rVert^2` as in :meth:`decision_function`).
        """
        f, penalty = self._fit(solution)
        solution = self._inside(solution)
        b = scalar(solution, "intercept")
        a = self.offset + self.slope * (f + b)
        if self.penalize_intercept:
            penalty += 0.5 * self._penalty.l2 * b * b
        r = margin_of(self, solution, a)
        return penalty + float(self.costs @ self._losses.value(a - r)) - r

    def decision_function(self, solution: Solution, X: ArrayLike) -> NDArray[np.float64]:
        r""":math:`f(x)` at the rows of ``X`` (predictions for a regression loss).

        :math:`x^\top w + b` from ``w``; with a kernel
        :math:`\sum_i v_i k(x_i, x) / \rho_2 + b`, :math:`v = \text{sgn}\odot\alpha`.
        """
        X = check_features(X, self.data.n_features, self.name)
        solution = self._inside(solution)
        b = scalar(solution, "intercept")
        if "w" in solution or self.is_linear:
            w = vector(solution, "w", self.name) if "w" in solution else self._w_of(solution)
            return np.asarray(X @ w, dtype=np.float64) + b
        v = signs(self) * vector(solution, "alpha", self.name)
        support = np.flatnonzero(v)
        values = kernel_product(self._kernel, X, self.data.X[support], v[support])
        return values / self._penalty.l2 + b

    def _w_of(self, solution: Solution) -> NDArray[np.float64]:
        v = signs(self) * vector(solution, "alpha", self.name)
        return np.asarray(self.data.X.T @ v, dtype=np.float64).reshape(-1) / self._penalty.l2

    # ------------------------------------------------------------------------------- statement
    def to_latex(self, form: str = "primal") -> str:
        r"""The primal or its Fenchel dual in LaTeX, from the loss's pieces and the penalty.

        Examples
        --------
        >>> from optframe.data import Dataset
        >>> from optframe.models import LADRegression
        >>> model = LADRegression(Dataset(X=[[0.0], [1.0], [2.0]], y=[0.0, 1.0, 3.0]))
        >>> print(model.to_latex().split(r" \\ ")[2])
        \ell(a) = \max(0,\, a) + \max(0,\, -a)
        """
        if form not in ("primal", "dual"):
            raise ModelError(f"{self.name}.to_latex: form must be 'primal' or 'dual'; got {form!r}")
        if form == "primal":
            return primal_latex(self)
        if not self.extended:
            return dual_latex(self)
        refusal = self.structure_refusal(SimplexQP)
        if refusal is None:
            return simplex_dual_latex(self)
        raise ModelError(
            f"{self.name}.to_latex: the dual form of a free margin or a penalized intercept is "
            f"stated for the simplex QP only ({refusal}); form='primal' states this model"
        )

    # ----------------------------------------------------------------------------- certificate
    def dual_bound(self, solution: Solution) -> float:
        r"""A proven lower bound: the Fenchel dual :math:`D(\theta)` at a repaired multiplier.

        .. math::

            D(\theta) = \sum_i \bigl(\theta_i p_i - c_i\,\ell^*(\theta_i / c_i)\bigr)
            - P^*(X^\top v), \qquad v_i = -q_i\theta_i,

        (:math:`c_i = C s_i`, :math:`\ell^*` from the loss's pieces, :math:`P^*` the penalty's
        conjugate). The largest over candidates: :math:`\theta` from the solution's ``"alpha"``
        when present, and the loss's subgradient at :math:`(w, b)` with the samples near a kink
        filled by least squares, for each kink tolerance in ``KINK_TOLERANCES`` (an exact
        solution needs a tight one, a perturbed one a loose one; with ``"alpha"`` only the
        tightest). The search stops at a candidate within ``CLOSED`` of the objective (within a
        tenth of the gap that proves optimality when :func:`optframe.solve` certifies a result:
        :func:`optframe.certificate.enough_gap`). Each is
        made feasible exactly
        (clipped into :math:`c_i\operatorname{dom}\ell^*`, :math:`\sum_i v_i = 0` by scaling one
        side, the lasso's :math:`\lVert X^\top v\rVert_\infty \le 1` by scaling,
        :math:`X^\top v = 0` without a penalty by projection), so weak duality makes the value a
        lower bound for any solution. See :mod:`optframe.models._risk_dual` for the derivation.
        """
        certificate = self.dual_certificate(solution)
        return certificate.value

    def dual_certificate(self, solution: Solution) -> Certificate:
        r"""The certificate behind :meth:`dual_bound`, which returns its value.

        The point of the best candidate (see :meth:`dual_bound`) under the solution's dual name
        (:attr:`dual_key`: ``"theta"`` for LAD, ``"alpha"`` for the SVMs) in the solution's
        convention (:math:`\alpha = -\theta` for a margin loss), the repairs that made it
        feasible (clip, balance, projection, scaling), and the dual objective's terms.

        Examples
        --------
        >>> from optframe.data import Dataset
        >>> from optframe.models import LADRegression
        >>> model = LADRegression(Dataset(X=[[0.0], [1.0], [2.0]], y=[0.0, 1.0, 5.0]))
        >>> certificate = model.dual_certificate({"beta": [2.5], "intercept": [0.0]})
        >>> [step.kind for step in certificate.steps][:2]
        ['fill', 'project']
        """
        if self.extended:
            return self._named(margin_certificate(self, solution))
        solution = self._inside(solution)
        if not self.is_linear:
            return self._named(kernel_certificate(self, solution))
        w, b = vector(solution, "w", self.name), scalar(solution, "intercept")
        a = self.argument(w, b)  # the loss arguments: once for every candidate
        objective = self._penalty.value(w) + float(self.costs @ self._losses.value(a))
        # a candidate within this of the objective ends the search (optframe.certificate.enough_gap)
        enough = objective - enough_gap(CLOSED) * self.gap_scale(objective, None)
        # with the solver's multipliers, the subgradient at the tightest tolerance backs them up;
        # without, every tolerance is tried (a perturbed point needs a loose one)
        # a differentiable loss has one multiplier per sample: every tolerance gives the same
        kinked = bool(np.isfinite(self._losses.kink_distance(a)[0]).any())
        tolerances = KINK_TOLERANCES[:1] if "alpha" in solution or not kinked else KINK_TOLERANCES
        candidates = [(tol, None) for tol in tolerances]
        if "alpha" in solution:
            alpha = vector(solution, "alpha", self.name)
            candidates.insert(0, (None, -alpha if self._losses.is_classification else alpha))
        best = None
        for tol, theta in candidates:
            steps: list[RepairStep] = []
            if theta is None:
                theta = subgradient_theta(self, w, b, tol, a, steps)
                origin = f"the loss's subgradient at (w, b), kink tolerance {tol:g}"
            else:
                origin = "the solution's own multipliers"
            found = dual_point(self, theta, enough, origin, tuple(steps))
            if best is None or found.value > best.value:
                best = found
            if best.value >= enough:
                break
        assert best is not None
        return self._named(best)

    def _named(self, certificate: Certificate) -> Certificate:
        """``certificate`` with its point under the solution's names (:meth:`_dual_point`)."""
        alpha = certificate.dual_point.get("alpha")
        if alpha is None:
            return certificate
        return dataclasses.replace(certificate, dual_point=self._dual_point(alpha))

    def _dual_point(self, alpha: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        """The certificate's point under :attr:`dual_key` (a declaration may map it)."""
        return {self.dual_key: alpha}

    def objective_floor(self) -> float:
        r"""A thousandth of a trivial model's loss where the optimum can be 0, else 0.

        With a penalty the optimum is 0 only at :math:`w = 0` with a constant :math:`b` at which
        every loss vanishes: every :math:`a_i` in the loss's zero set :math:`[z_-, z_+]`
        (residuals :math:`y_i - b`, margins :math:`\pm b`), which :meth:`_can_vanish` checks.
        Without a penalty a perfect fit may exist. In both cases the floor is
        :math:`10^{-3}\, C\sum_i s_i \max(\ell(r_i), \lvert r_i\rvert)` with
        :math:`r_i = y_i - m` (:math:`m` the weighted median of :math:`y` with an intercept,
        else 0) for a regression loss, as for LAD, and
        :math:`10^{-3}\, C\sum_i s_i \max(\ell(0), 1)` (margins of :math:`f = 0`, at the margin's
        unit scale) for a classification loss.
        """
        penalized = self._penalty.l1 > 0 or self._penalty.l2 > 0
        if self.free_margin:  # the optimum is negative, of the size of the margin's reward
            return 0.0
        if self.per_sample or (penalized and not self._can_vanish()):
            return 0.0
        if self.loss.is_classification:
            return 1e-3 * float(self.costs.sum()) * max(float(self.loss.value(0.0)[0]), 1.0)
        center = weighted_median(self._y, self._s) if self.fit_intercept else 0.0
        r = self._y - center
        return 1e-3 * float(self.costs @ np.maximum(self.loss.value(r), np.abs(r)))

    def _can_vanish(self) -> bool:
        """Whether some constant model (w = 0) has zero loss on every counted sample."""
        zero = self.loss.zero_set()
        if zero is None:
            return False
        low, high = zero
        free = self.fit_intercept and not self.penalize_intercept  # a penalized b must be 0
        if self.loss.is_classification:  # margins b (class +1) and -b (class -1)
            if not free:
                return low <= 0.0 <= high
            return max(low, -high) <= min(high, -low)
        y = self._y[self._s > 0]
        if not free:
            return bool(np.all((y >= low) & (y <= high)))
        return float(y.max() - y.min()) <= high - low
