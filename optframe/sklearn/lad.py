r"""Least absolute deviation regression as a scikit-learn regressor."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike

from optframe.data import Dataset
from optframe.drivers.base import Driver

from ._base import LinearRegressor, check_bool, validate_data


class LADRegressor(LinearRegressor):
    r"""Least absolute deviation (median) regression, solved by optframe.

    .. math::

        \min_{\beta \in \mathbb{R}^m,\; b \in \mathbb{R}} \;
        \sum_{i=1}^n s_i \,\lvert y_i - x_i^\top \beta - b \rvert

    with :math:`b = 0` when ``fit_intercept=False`` and :math:`s` the sample weights (ones by
    default). It is :class:`optframe.models.LADRegression`, a linear program; scikit-learn's
    ``QuantileRegressor(quantile=0.5, alpha=0)`` solves the same problem.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Whether to fit the intercept :math:`b`.
    driver : str or Driver, default="auto"
        ``"auto"`` picks the driver from the model's structures and size
        (:mod:`optframe.drivers.auto`); otherwise ``"direct"`` (one LP solve) or a
        driver such as ``optframe.drivers.AggregateDisaggregate()``.
    backend : str, default="auto"
        The solver of the LP (or of the driver's sub-problems). With ``driver="auto"`` and at
        least 1,000 samples, ``"auto"`` is ``fn``, optframe's Frisch-Newton interior point on
        the dual LP (the measured rule of :mod:`optframe.drivers.auto`); below that, or with
        another driver, it is HiGHS. ``result_.backend`` says which ran.
    solve_options : dict, optional
        Further keyword options of :func:`optframe.solve` (``tol``, ``max_iter``, ``time_limit``,
        ``threads``, ``verbose``, ``callback``, ``solver_options``).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        :math:`\beta`.
    intercept_ : float
        :math:`b` (0.0 when ``fit_intercept=False``).
    result_ : optframe.Result
        The result of the last solve (status, objective, bound, timings, the full solution).
    n_features_in_ : int
        Number of features seen in ``fit``.

    Notes
    -----
    Input may be dense or sparse; sparse stays sparse in the LP. A solution of an LP may not be
    unique; every solution has the optimal objective ``result_.objective``.

    Examples
    --------
    >>> from optframe.sklearn import LADRegressor
    >>> X, y = [[0.0], [1.0], [2.0], [3.0], [4.0]], [0.0, 1.0, 2.0, 3.0, -20.0]
    >>> model = LADRegressor().fit(X, y)
    >>> round(float(model.coef_[0]), 6), round(float(model.intercept_), 6)
    (1.0, 0.0)
    >>> round(model.result_.objective, 6)
    24.0
    """

    def __init__(
        self,
        fit_intercept: bool = True,
        driver: str | Driver = "auto",
        backend: str = "auto",
        solve_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.fit_intercept = fit_intercept
        self.driver = driver
        self.backend = backend
        self.solve_options = solve_options

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit the regression.

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
        LADRegressor
            The fitted estimator.
        """
        from optframe.models import LADRegression

        fit_intercept = check_bool(self.fit_intercept, "fit_intercept", type(self).__name__)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, y_numeric=True)
        data = Dataset(X=X, y=y, sample_weight=self._sample_weight(sample_weight, X))
        result = self._solve(LADRegression(data, fit_intercept=fit_intercept))
        self._fitted(result, "beta")
        return self
