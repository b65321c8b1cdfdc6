r"""Positive-unlabeled learning (du Plessis et al.'s double hinge risk) as a classifier."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike

from optframe.data import Dataset
from optframe.drivers.base import Driver
from optframe.errors import DataError, ModelError
from optframe.kernels import Kernel

from ._base import BinaryClassifier, check_number, validate_data
from ._kernels import make_kernel


class PUClassifier(BinaryClassifier):
    r"""A classifier learned from positive and unlabeled rows only, solved by optframe.

    ``y`` holds two values: ``classes_[1]`` (the larger, 1 for 0/1 labels) marks the :math:`p`
    *labeled positives* :math:`P`, ``classes_[0]`` (0 for 0/1 labels) the :math:`n` *unlabeled*
    rows :math:`U`, which mix positives and negatives. Prediction returns ``classes_[1]`` for
    positives and ``classes_[0]`` for negatives. With the class prior :math:`\pi` (the share of
    positives among the unlabeled rows), :math:`f(x) = \sum_i \alpha_i k(x_i, x) + \beta` and the
    double hinge loss :math:`\ell(z) = \max(0, z, \tfrac12 + \tfrac12 z)`, it minimizes the convex
    PU risk

    .. math::

        J(f) = -\frac{\pi}{p} \sum_{i \in P} f(x_i) + \frac1n \sum_{u \in U} \ell(f(x_u))
        + \lambda \lVert f \rVert^2_{\mathcal H},

    :class:`optframe.models.PULearning`, a QP (its objective, ``result_.objective``, is
    :math:`J / (2\lambda)`).

    Parameters
    ----------
    prior : float
        :math:`\pi \in (0, 1)`. Required: it is not learned from the data.
    lam : float, default=0.01
        :math:`\lambda > 0`.
    kernel : {"linear", "rbf", "poly"} or optframe.kernels.Kernel, default="linear"
        The kernel, as in :class:`~optframe.sklearn.SVMClassifier`.
    gamma : {"scale", "auto"} or float, default="scale"
        :math:`\gamma` of ``"rbf"`` and ``"poly"``.
    degree : int, default=3
        :math:`d` of ``"poly"``.
    coef0 : float, default=0.0
        :math:`c_0 \ge 0` of ``"poly"``.
    driver : str or Driver, default="auto"
        ``"auto"`` picks the driver from the model's structures and size
        (:mod:`optframe.drivers.auto`); otherwise
        ``"direct"`` or ``optframe.drivers.SMO()``.
    backend : str, default="auto"
        The QP solver (``"auto"`` is Clarabel, through CVXPY).
    solve_options : dict, optional
        Further keyword options of :func:`optframe.solve`.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``[unlabeled / negative label, positive label]``.
    coef_ : ndarray of shape (1, n_features)
        :math:`w = \sum_i \alpha_i x_i` (linear kernel only).
    intercept_ : ndarray of shape (1,)
        :math:`\beta`.
    dual_coef_ : ndarray of shape (1, n_samples)
        :math:`\alpha`, one per training row.
    result_ : optframe.Result
        The result of the last solve.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Examples
    --------
    >>> from optframe.sklearn import PUClassifier
    >>> X = [[2.0], [2.5], [2.2], [-1.0], [-2.0], [1.8], [-1.5]]
    >>> clf = PUClassifier(prior=0.4, lam=0.1).fit(X, [1, 1, 0, 0, 0, 0, 0])
    >>> clf.predict([[2.0], [-2.0]]).tolist()
    [1, 0]
    """

    def __init__(
        self,
        prior: float | None = None,
        lam: float = 0.01,
        kernel: str | Kernel = "linear",
        gamma: str | float = "scale",
        degree: int = 3,
        coef0: float = 0.0,
        driver: str | Driver = "auto",
        backend: str = "auto",
        solve_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.prior = prior
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.driver = driver
        self.backend = backend
        self.solve_options = solve_options

    def fit(self, X: ArrayLike, y: ArrayLike) -> Self:
        """Fit on labeled positives (``classes_[1]``) and unlabeled rows (``classes_[0]``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Two values: the larger marks labeled positives, the smaller unlabeled rows.

        Returns
        -------
        PUClassifier
            The fitted estimator.
        """
        from optframe.models import PULearning

        self._clear_fitted()
        owner = type(self).__name__
        if self.prior is None:
            raise ModelError(
                f"{owner} needs prior=, the share of positives among the unlabeled rows, in (0, 1)"
            )
        prior = check_number(self.prior, "prior", owner, low=0.0, strict=True)
        if not prior < 1.0:
            raise ModelError(f"{owner}: prior must lie in (0, 1); got {self.prior!r}")
        lam = check_number(self.lam, "lam", owner, low=0.0, strict=True)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        if np.unique(y).size == 1:
            raise DataError(
                f"{owner} needs labeled positives and unlabeled rows; y holds 1 class "
                f"({y[0]!r}): see the class docstring for the label convention."
            )
        positive = self._encode(y) > 0
        kernel = make_kernel(self.kernel, self.gamma, self.degree, self.coef0, X, owner)
        data = Dataset(X=X, y=positive.astype(np.float64))
        solution = self._solve(PULearning(data, prior=prior, lam=lam, kernel=kernel)).solution
        self.intercept_ = np.array([float(np.ravel(solution["intercept"])[0])])
        self.dual_coef_ = np.asarray(solution["alpha"], dtype=np.float64).reshape(1, -1)
        if "w" in solution:
            self.coef_ = np.asarray(solution["w"], dtype=np.float64).reshape(1, -1)
        return self
