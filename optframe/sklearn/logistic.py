r"""L2-regularized logistic regression, certified: the logistic loss of :class:`EmpiricalRisk`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from optframe.data import Dataset
from optframe.drivers.base import Driver

from ._base import BinaryClassifier, check_bool, check_number, validate_data


class LogisticRegression(BinaryClassifier):
    r"""Binary logistic regression with the ridge penalty, solved and certified by optframe.

    With the two classes of ``y`` mapped to :math:`y_i \in \{-1, +1\}` (``classes_[1]`` is +1)
    and sample weights :math:`s_i` (ones by default):

    .. math::

        \min_{w, b} \; \tfrac12 \lVert w \rVert^2
        + C \sum_{i=1}^n s_i \log\bigl(1 + e^{-y_i (x_i^\top w + b)}\bigr),

    scikit-learn's ``LogisticRegression(C=C)`` objective (``solver="lbfgs"``, the intercept
    unpenalized). It is :class:`optframe.models.EmpiricalRisk` with the loss
    :class:`optframe.losses.Logistic` and the penalty ``L2()``; the result carries optframe's
    certificate (the Fenchel dual with the entropy conjugate), and ``result_.status`` is
    ``optimal`` only when it closes.

    With ``intercept_scaling=s`` the intercept is instead a feature of constant value :math:`s`
    under the penalty (LIBLINEAR's ``-B s``, scikit-learn's ``solver="liblinear"``): the
    objective gains :math:`\tfrac12 (b/s)^2`, and the model, without an unpenalized intercept,
    offers the dual that ``optframe.drivers.DCD`` solves (Yu, Huang and Lin's dual coordinate
    descent, which ``driver="auto"`` picks from 2,000 samples).

    Parameters
    ----------
    C : float, default=1.0
        The inverse regularization strength :math:`C > 0`.
    fit_intercept : bool, default=True
        Whether to fit the intercept :math:`b`.
    intercept_scaling : float or None, default=None
        ``None``: the intercept is unpenalized (an exponential-cone program for Direct on
        Clarabel). A number :math:`s > 0`: the intercept is the coefficient of a constant
        feature :math:`s`, penalized with :math:`w` (``intercept_ = s`` times it).
    tol : float, default=1e-8
        The relative duality gap that proves optimality (``result_.status`` is ``optimal``
        when optframe's own certificate closes to it); also the tolerance handed to the solver.
        A key ``tol`` in ``solve_options`` overrides it.
    driver : str or Driver, default="auto"
        ``"auto"`` picks the driver from the model's structures and size
        (:mod:`optframe.drivers.auto`); otherwise ``"direct"`` or ``optframe.drivers.DCD()``
        (no unpenalized intercept).
    backend : str, default="auto"
        The solver of Direct (``"auto"`` is Clarabel through CVXPY, the one back-end here that
        takes exponential cones).
    solve_options : dict, optional
        Further keyword options of :func:`optframe.solve` (``tol``, ``max_iter``, ...).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class.
    coef_ : ndarray of shape (1, n_features)
        :math:`w`.
    intercept_ : ndarray of shape (1,)
        :math:`b`.
    n_iter_ : ndarray of shape (1,)
        The driver's iterations.
    result_ : optframe.Result
        The result of the last solve (objective, certified bound, status).
    n_features_in_ : int
        Number of features seen in ``fit``.

    Examples
    --------
    >>> from optframe.sklearn import LogisticRegression
    >>> X, y = [[0.0], [1.0], [2.0], [3.0]], [0, 1, 0, 1]
    >>> clf = LogisticRegression(C=1.0).fit(X, y)
    >>> clf.result_.status.value
    'optimal'
    >>> clf.predict_proba([[1.5]]).shape
    (1, 2)
    """

    def __init__(
        self,
        C: float = 1.0,
        fit_intercept: bool = True,
        intercept_scaling: float | None = None,
        tol: float = 1e-8,
        driver: str | Driver = "auto",
        backend: str = "auto",
        solve_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.C = C
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.driver = driver
        self.backend = backend
        self.solve_options = solve_options

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit the model.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Two class labels of any type.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights :math:`s`; an integer weight equals repeating the row.

        Returns
        -------
        LogisticRegression
            The fitted estimator.
        """
        from optframe.losses import Logistic
        from optframe.models import EmpiricalRisk

        self._clear_fitted()
        owner = type(self).__name__
        C = check_number(self.C, "C", owner, low=0.0, strict=True)
        fit_intercept = check_bool(self.fit_intercept, "fit_intercept", owner)
        scaling = self.intercept_scaling
        if scaling is not None:
            scaling = check_number(scaling, "intercept_scaling", owner, low=0.0, strict=True)
        tol = check_number(self.tol, "tol", owner, low=0.0, strict=True)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        weights = self._sample_weight(sample_weight, X)
        signs = self._encode(y, weights)
        as_feature = fit_intercept and scaling is not None
        features = _with_constant(X, scaling) if as_feature else X
        data = Dataset(X=features, y=signs, sample_weight=weights)
        model = EmpiricalRisk(data, Logistic(), C=C, fit_intercept=fit_intercept and not as_feature)
        result = self._solve(model, defaults={"tol": tol})
        w = np.asarray(result.solution["w"], dtype=np.float64).reshape(-1)
        b = float(np.ravel(result.solution["intercept"])[0])
        if as_feature:
            assert scaling is not None
            w, b = w[:-1], float(w[-1]) * scaling
        self.coef_ = w.reshape(1, -1)
        self.intercept_ = np.array([b])
        self.n_iter_ = np.array([int(result.iterations)])
        return self

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        r"""Class probabilities :math:`(1 - \sigma(f), \sigma(f))`, columns as ``classes_``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples, 2)
        """
        from scipy.special import expit

        positive = expit(self.decision_function(X))
        return np.column_stack([1.0 - positive, positive])

    def predict_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        r"""The logarithms of :meth:`predict_proba`, computed without underflow.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples, 2)
        """
        f = self.decision_function(X)
        return np.column_stack([-np.logaddexp(0.0, f), -np.logaddexp(0.0, -f)])


def _with_constant(X: Any, value: float) -> Any:
    """``X`` with a last column equal to ``value`` (sparse stays sparse)."""
    n = X.shape[0]
    if sp.issparse(X):
        column = sp.csr_array(np.full((n, 1), value))
        return sp.hstack([sp.csr_array(X), column], format="csr")
    return np.hstack([np.asarray(X, dtype=np.float64), np.full((n, 1), value)])
