"""Quantile regression as a scikit-learn regressor: scikit-learn's parameters and objective."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike

from optframe.data import Dataset
from optframe.drivers.base import Driver
from optframe.validation import check_number as validate_number

from ._base import LinearRegressor, check_bool, check_number, validate_data


class QuantileRegressor(LinearRegressor):
    r"""Linear quantile regression with an L1 penalty, solved and certified by optframe.

    scikit-learn's :class:`sklearn.linear_model.QuantileRegressor` problem, with its names:

    .. math::

        \min_{w \in \mathbb{R}^m,\; b \in \mathbb{R}} \;
        \frac{1}{\sum_i s_i} \sum_{i=1}^n s_i\, \rho_q(y_i - x_i^\top w - b)
        + \alpha \lVert w\rVert_1,
        \qquad \rho_q(r) = \max(q r, (q - 1) r)

    with :math:`q` = ``quantile``, :math:`b = 0` when ``fit_intercept=False`` (the intercept is
    not penalized) and :math:`s` the sample weights (ones by default). It is solved as
    :class:`optframe.models.EmpiricalRisk` with the loss ``Pinball(quantile)``, the penalty
    ``L1()`` (none when ``alpha=0``) and ``C = 1 / (alpha * sum(s))`` (``1 / sum(s)`` when
    ``alpha=0``): the same minimizers, and an objective ``alpha`` times scikit-learn's (equal to
    it when ``alpha=0``). An LP.

    Parameters
    ----------
    quantile : float, default=0.5
        The quantile :math:`q \in (0, 1)` to predict; 0.5 is the median (LAD) regression.
    alpha : float, default=1.0
        The L1 penalty's weight :math:`\alpha \ge 0`, as in scikit-learn (whose default is 1.0
        too); 0 fits without a penalty.
    fit_intercept : bool, default=True
        Whether to fit the intercept :math:`b`.
    driver : str or Driver, default="auto"
        ``"auto"`` picks the driver from the model's structures and size
        (:mod:`optframe.drivers.auto`); otherwise ``"direct"`` (one LP solve) or a driver such
        as ``optframe.drivers.AggregateDisaggregate()``.
    backend : str, default="auto"
        The solver of the LP (or of the driver's sub-problems); ``result_.backend`` says which
        ran.
    solve_options : dict, optional
        Further keyword options of :func:`optframe.solve` (``tol``, ``max_iter``, ``time_limit``,
        ``threads``, ``verbose``, ``callback``, ``solver_options``).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        :math:`w`.
    intercept_ : float
        :math:`b` (0.0 when ``fit_intercept=False``).
    result_ : optframe.Result
        The result of the last solve: status (``OPTIMAL`` only when optframe's own certificate
        closed the gap), objective and bound in the model's scale (``alpha`` times
        scikit-learn's objective when ``alpha > 0``), timings and the full solution.
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    LADRegressor : the median regression without a penalty (``quantile=0.5, alpha=0``).

    Examples
    --------
    >>> import numpy as np
    >>> from optframe.sklearn import QuantileRegressor
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
    >>> y = np.array([0.0, 1.0, 2.0, 3.0, -20.0])
    >>> model = QuantileRegressor(quantile=0.5, alpha=0.0).fit(X, y)
    >>> round(float(model.coef_[0]), 6), round(float(model.intercept_), 6)
    (1.0, 0.0)
    >>> str(model.result_.status)
    'OPTIMAL'
    """

    def __init__(
        self,
        quantile: float = 0.5,
        alpha: float = 1.0,
        fit_intercept: bool = True,
        driver: str | Driver = "auto",
        backend: str = "auto",
        solve_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.quantile = quantile
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.driver = driver
        self.backend = backend
        self.solve_options = solve_options

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit the quantile regression.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights :math:`s`; an integer weight equals repeating the row.

        Returns
        -------
        QuantileRegressor
            The fitted estimator.

        Raises
        ------
        ModelError
            If ``quantile`` is not in (0, 1), ``alpha`` is not a finite number >= 0, or
            ``fit_intercept`` is not a bool.
        """
        from optframe.losses import Pinball
        from optframe.models import EmpiricalRisk
        from optframe.penalties import L1

        owner = type(self).__name__
        quantile = validate_number(
            self.quantile, "quantile", owner, low=0.0, high=1.0, low_open=True, high_open=True
        )
        assert quantile is not None
        alpha = check_number(self.alpha, "alpha", owner, low=0.0)
        fit_intercept = check_bool(self.fit_intercept, "fit_intercept", owner)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, y_numeric=True)
        weights = self._sample_weight(sample_weight, X)
        data = Dataset(X=X, y=y, sample_weight=weights)
        total = float(data.weights.sum())
        model = EmpiricalRisk(
            data,
            Pinball(quantile),
            penalty=L1() if alpha > 0 else None,
            C=1.0 / (alpha * total) if alpha > 0 else 1.0 / total,
            fit_intercept=fit_intercept,
        )
        result = self._solve(model)
        self._fitted(result, "w")
        return self
