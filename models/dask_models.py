r"""LAD, quantile regression and the linear weighted SVM on a Dask dataset: declarations.

Each is :class:`~optframe.models.chunked_risk.ChunkedEmpiricalRisk` (what
``EmpiricalRisk(dask_data, loss, penalty=...)`` returns) with a fixed loss and penalty, and the
parameters and solution names of its in-memory model:

* :class:`DaskLADRegression` is :class:`~optframe.models.LADRegression` (``Absolute()``, no
  penalty; ``beta``, ``theta``, ``residual``);
* :class:`DaskQuantileRegression` is ``EmpiricalRisk(data, Pinball(tau), penalty=None)``
  (``w``, ``alpha``);
* :class:`DaskWeightedSVM` is the linear :class:`~optframe.models.WeightedSVM` (``Hinge()``,
  ``L2()``; ``w``, ``alpha``, ``xi``).

They are solved by :class:`~optframe.drivers.AggregateDisaggregate`, whose aggregated problems are
the in-memory models, and certified chunk by chunk by the loss's Fenchel dual
(:mod:`optframe.models.chunked_risk`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from numpy.typing import ArrayLike

from optframe.data import Dataset
from optframe.data.dask import DaskDataset
from optframe.losses import Absolute, Hinge, Pinball, PLQLoss
from optframe.model import ProblemClass
from optframe.penalties import L2, Penalty

from .chunked_risk import ChunkedEmpiricalRisk
from .lad import LADRegression
from .weighted_svm import WeightedSVM


@dataclass(frozen=True, eq=False)
class DaskLADRegression(ChunkedEmpiricalRisk):
    r"""Weighted LAD regression on data in row chunks on a Dask cluster.

    .. math::

        \min_{\beta,\, b} \; \sum_{i=1}^n w_i \,\lvert y_i - x_i^\top \beta - b \rvert

    The problem of :class:`~optframe.models.LADRegression`, declared as
    ``EmpiricalRisk(data, Absolute(), penalty=None)`` with LAD's names; solve it with
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
    coef_key: ClassVar[str] = "beta"
    dual_key: ClassVar[str] = "theta"
    values_key: ClassVar[str | None] = "residual"

    data: DaskDataset
    fit_intercept: bool = True
    loss: PLQLoss = field(default_factory=Absolute, init=False, repr=False)
    penalty: Penalty | None = field(default=None, init=False, repr=False)
    C: float = field(default=1.0, init=False, repr=False)
    kernel: Any = field(default=None, init=False, repr=False)
    sample_weight: ArrayLike | None = field(default=None, init=False, repr=False)
    free_margin: bool = field(default=False, init=False, repr=False)
    penalize_intercept: bool = field(default=False, init=False, repr=False)

    def with_data(self, data: Dataset) -> LADRegression:
        """The in-memory LAD (same ``fit_intercept``) on ``data``: AID's aggregated problems."""
        return LADRegression(data, fit_intercept=self.fit_intercept)


@dataclass(frozen=True, eq=False)
class DaskQuantileRegression(ChunkedEmpiricalRisk):
    r"""Weighted quantile regression at level :math:`\tau` on data in row chunks (Dask).

    .. math::

        \min_{w,\, b} \; \sum_{i=1}^n s_i\, \rho_\tau(y_i - x_i^\top w - b),
        \qquad \rho_\tau(r) = \max(\tau r, (\tau - 1) r)

    ``EmpiricalRisk(data, Pinball(tau), penalty=None)`` with its names (``w``, ``alpha``); solve
    it with :class:`~optframe.drivers.AggregateDisaggregate`.

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

    problem_class: ClassVar[ProblemClass] = ProblemClass.LP

    data: DaskDataset
    tau: float = 0.5
    fit_intercept: bool = True
    loss: PLQLoss = field(default_factory=Absolute, init=False, repr=False)
    penalty: Penalty | None = field(default=None, init=False, repr=False)
    C: float = field(default=1.0, init=False, repr=False)
    kernel: Any = field(default=None, init=False, repr=False)
    sample_weight: ArrayLike | None = field(default=None, init=False, repr=False)
    free_margin: bool = field(default=False, init=False, repr=False)
    penalize_intercept: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        loss = Pinball(self.tau)  # ModelError outside (0, 1)
        object.__setattr__(self, "tau", loss.tau)
        object.__setattr__(self, "loss", loss)
        super().__post_init__()


@dataclass(frozen=True, eq=False)
class DaskWeightedSVM(ChunkedEmpiricalRisk):
    r"""The linear weighted hinge-loss C-SVM on data in row chunks on a Dask cluster.

    .. math::

        \min_{w, b} \; \tfrac12 \lVert w \rVert^2 + C \sum_{i=1}^n s_i
        \max\bigl(0,\ 1 - y_i (w^\top x_i + b)\bigr)

    The problem of :class:`~optframe.models.WeightedSVM` with the linear kernel, declared as
    ``EmpiricalRisk(data, Hinge(), C=C)``; solve it with
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

    values_key: ClassVar[str | None] = "xi"

    data: DaskDataset
    C: float = 1.0
    fit_intercept: bool = True
    loss: PLQLoss = field(default_factory=Hinge, init=False, repr=False)
    penalty: Penalty | None = field(default_factory=L2, init=False, repr=False)
    kernel: Any = field(default=None, init=False, repr=False)
    sample_weight: ArrayLike | None = field(default=None, init=False, repr=False)
    free_margin: bool = field(default=False, init=False, repr=False)
    penalize_intercept: bool = field(default=False, init=False, repr=False)

    def with_data(self, data: Dataset) -> WeightedSVM:
        """The in-memory linear SVM (same ``C``, ``fit_intercept``) on ``data``."""
        return WeightedSVM(data, C=self.C, fit_intercept=self.fit_intercept)
