r"""Support vector classifiers: the hinge-loss C-SVM and the L2-SVM with penalized bias."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike

from optframe.data import Dataset
from optframe.drivers.base import Driver
from optframe.kernels import Kernel

from ._base import BinaryClassifier, check_bool, check_number, validate_data
from ._kernels import make_kernel

#: A sample is a support vector when its dual variable exceeds this share of its upper bound.
SUPPORT_TOL = 1e-6


class SVMClassifier(BinaryClassifier):
    r"""The C-SVM with hinge loss, linear or with a kernel, solved by optframe.

    With the two classes of ``y`` mapped to :math:`y_i \in \{-1, +1\}` (``classes_[1]`` is +1)
    and sample weights :math:`s_i` (ones by default):

    .. math::

        \min_{w, b} \; \tfrac12 \lVert w \rVert^2
        + C \sum_{i=1}^n s_i \max\bigl(0,\, 1 - y_i (w^\top \phi(x_i) + b)\bigr),

    with :math:`b = 0` when ``fit_intercept=False``. It is :class:`optframe.models.WeightedSVM`
    (the primal QP for the linear kernel, the dual QP otherwise); scikit-learn's
    ``SVC(C=C, kernel=...)`` solves the same problem with LIBSVM.

    Parameters
    ----------
    C : float, default=1.0
        The penalty :math:`C > 0`.
    kernel : {"linear", "rbf", "poly"} or optframe.kernels.Kernel, default="linear"
        :math:`k(x, z) = \phi(x)^\top\phi(z)`: :math:`x^\top z`,
        :math:`\exp(-\gamma\lVert x - z\rVert^2)` or :math:`(\gamma x^\top z + c_0)^d`.
    gamma : {"scale", "auto"} or float, default="scale"
        :math:`\gamma` of ``"rbf"`` and ``"poly"``: ``"scale"`` is
        :math:`1 / (m \operatorname{Var}(X))`, ``"auto"`` is :math:`1/m`, as in ``SVC``.
    degree : int, default=3
        :math:`d` of ``"poly"``.
    coef0 : float, default=0.0
        :math:`c_0 \ge 0` of ``"poly"``.
    fit_intercept : bool, default=True
        Whether to fit the bias :math:`b`.
    driver : str or Driver, default="auto"
        ``"auto"`` picks the driver from the model's structures and size
        (:mod:`optframe.drivers.auto`); otherwise ``"direct"`` (one QP solve) or a
        driver such as ``optframe.drivers.SMO()`` or ``AggregateDisaggregate()``.
    backend : str, default="auto"
        The QP solver (``"auto"`` is Clarabel).
    solve_options : dict, optional
        Further keyword options of :func:`optframe.solve` (``tol``, ``max_iter``, ``time_limit``,
        ``threads``, ``verbose``, ``callback``, ``solver_options``).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class.
    coef_ : ndarray of shape (1, n_features)
        :math:`w` (linear kernel only).
    intercept_ : ndarray of shape (1,)
        :math:`b`.
    support_ : ndarray of int
        Indices of the support vectors (:math:`\alpha_i > 10^{-6} C s_i`), when the solution has
        dual variables :math:`\alpha` (Direct and SMO return them).
    support_vectors_ : ndarray or sparse matrix of shape (n_SV, n_features)
        The support vectors.
    dual_coef_ : ndarray of shape (1, n_SV)
        :math:`\alpha_i y_i` at the support vectors: the decision function is
        ``dual_coef_ @ K(support_vectors_, x) + intercept_``.
    result_ : optframe.Result
        The result of the last solve.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Examples
    --------
    >>> from optframe.sklearn import SVMClassifier
    >>> X, y = [[0.0], [1.0], [3.0], [4.0]], ["no", "no", "yes", "yes"]
    >>> clf = SVMClassifier(C=10.0).fit(X, y)
    >>> clf.predict([[0.5], [3.5]]).tolist()
    ['no', 'yes']
    >>> round(clf.result_.objective, 6)
    0.5
    """

    def __init__(
        self,
        C: float = 1.0,
        kernel: str | Kernel = "linear",
        gamma: str | float = "scale",
        degree: int = 3,
        coef0: float = 0.0,
        fit_intercept: bool = True,
        driver: str | Driver = "auto",
        backend: str = "auto",
        solve_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.fit_intercept = fit_intercept
        self.driver = driver
        self.backend = backend
        self.solve_options = solve_options

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit the SVM.

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
        SVMClassifier
            The fitted estimator.
        """
        from optframe.models import WeightedSVM

        self._clear_fitted()
        owner = type(self).__name__
        C = check_number(self.C, "C", owner, low=0.0, strict=True)
        fit_intercept = check_bool(self.fit_intercept, "fit_intercept", owner)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        weights = self._sample_weight(sample_weight, X)
        signs = self._encode(y, weights)
        kernel = make_kernel(self.kernel, self.gamma, self.degree, self.coef0, X, owner)
        data = Dataset(X=X, y=signs, sample_weight=weights)
        model = WeightedSVM(data, C=C, kernel=kernel, fit_intercept=fit_intercept)
        solution = self._solve(model).solution
        self.intercept_ = np.array([float(np.ravel(solution["intercept"])[0])])
        if "w" in solution:
            self.coef_ = np.asarray(solution["w"], dtype=np.float64).reshape(1, -1)
        if "alpha" in solution:
            alpha = np.asarray(solution["alpha"], dtype=np.float64).reshape(-1)
            self.support_ = np.flatnonzero(alpha > SUPPORT_TOL * model.upper_bounds)
            self.support_vectors_ = X[self.support_]
            self.dual_coef_ = (alpha * signs)[self.support_].reshape(1, -1)
        return self


class L2SVMClassifier(BinaryClassifier):
    r"""The L2-SVM with penalized bias (Lee and Mangasarian), solved by optframe.

    With the two classes of ``y`` mapped to :math:`y_i \in \{-1, +1\}` (``classes_[1]`` is +1):

    .. math::

        \min_{w, b, \rho, \xi} \; \tfrac12 \bigl(\lVert w \rVert^2 + b^2
        + C \textstyle\sum_i \xi_i^2\bigr) - \rho
        \quad\text{s.t.}\quad y_i (w^\top \phi(x_i) + b) \ge \rho - \xi_i .

    Its dual is a minimal-enclosing-ball problem on the simplex, which the Frank-Wolfe drivers
    (``optframe.drivers.FrankWolfe``, ``MFW``) and the core vector machine solve. It is
    :class:`optframe.models.L2SVM`; :math:`(w, b)/\rho` is the solution of scikit-learn's
    ``LinearSVC(C=C/2, loss="squared_hinge", intercept_scaling=1)`` for the linear kernel.

    Parameters
    ----------
    C : float, default=1.0
        The penalty :math:`C > 0`.
    kernel : {"linear", "rbf", "poly"} or optframe.kernels.Kernel, default="linear"
        The kernel, as in :class:`SVMClassifier`.
    gamma : {"scale", "auto"} or float, default="scale"
        :math:`\gamma` of ``"rbf"`` and ``"poly"``, as in :class:`SVMClassifier`.
    degree : int, default=3
        :math:`d` of ``"poly"``.
    coef0 : float, default=0.0
        :math:`c_0 \ge 0` of ``"poly"``.
    driver : str or Driver, default="auto"
        ``"auto"`` picks the driver from the model's structures and size
        (:mod:`optframe.drivers.auto`); otherwise
        ``"direct"`` (the dual QP) or ``optframe.drivers.FrankWolfe(variant=...)``,
        ``CoreVectorMachine()``, ...
    backend : str, default="auto"
        The QP solver (``"auto"`` is Clarabel).
    solve_options : dict, optional
        Further keyword options of :func:`optframe.solve`.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class.
    coef_ : ndarray of shape (1, n_features)
        :math:`w` (linear kernel only).
    intercept_ : ndarray of shape (1,)
        :math:`b`.
    rho_ : float
        :math:`\rho`, the margin.
    support_ : ndarray of int
        Indices with :math:`\alpha_i > 10^{-6} \max_j \alpha_j` (:math:`\alpha` on the simplex).
    dual_coef_ : ndarray of shape (1, n_SV)
        :math:`\alpha_i y_i` at ``support_``: the decision function is
        :math:`\sum_i \alpha_i y_i (k(x_i, x) + 1)`.
    result_ : optframe.Result
        The result of the last solve.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Examples
    --------
    >>> from optframe.sklearn import L2SVMClassifier
    >>> clf = L2SVMClassifier(C=10.0).fit([[0.0], [1.0], [3.0], [4.0]], [0, 0, 1, 1])
    >>> clf.predict([[0.5], [3.5]]).tolist()
    [0, 1]
    """

    def __init__(
        self,
        C: float = 1.0,
        kernel: str | Kernel = "linear",
        gamma: str | float = "scale",
        degree: int = 3,
        coef0: float = 0.0,
        driver: str | Driver = "auto",
        backend: str = "auto",
        solve_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.driver = driver
        self.backend = backend
        self.solve_options = solve_options

    def fit(self, X: ArrayLike, y: ArrayLike) -> Self:
        """Fit the L2-SVM.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Two class labels of any type.

        Returns
        -------
        L2SVMClassifier
            The fitted estimator.
        """
        from optframe.models import L2SVM

        self._clear_fitted()
        owner = type(self).__name__
        C = check_number(self.C, "C", owner, low=0.0, strict=True)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        signs = self._encode(y)
        kernel = make_kernel(self.kernel, self.gamma, self.degree, self.coef0, X, owner)
        solution = self._solve(L2SVM(Dataset(X=X, y=signs), C=C, kernel=kernel)).solution
        self.intercept_ = np.array([float(np.ravel(solution["intercept"])[0])])
        self.rho_ = float(np.ravel(solution["rho"])[0])
        if "w" in solution:
            self.coef_ = np.asarray(solution["w"], dtype=np.float64).reshape(1, -1)
        if "alpha" in solution:
            alpha = np.asarray(solution["alpha"], dtype=np.float64).reshape(-1)
            self.support_ = np.flatnonzero(alpha > SUPPORT_TOL * alpha.max())
            self.dual_coef_ = (alpha * signs)[self.support_].reshape(1, -1)
        return self
