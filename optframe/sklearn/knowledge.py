r"""The elastic-net SVM with polyhedral prior knowledge as a scikit-learn classifier."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self

import numpy as np
from numpy.typing import ArrayLike

from optframe.data import Dataset
from optframe.drivers.base import Driver
from optframe.errors import ModelError

from ._base import BinaryClassifier, check_number, validate_data

if TYPE_CHECKING:
    from optframe.models import KnowledgeSet


class KnowledgeBasedSVMClassifier(BinaryClassifier):
    r"""Elastic-net SVM with Fung-Mangasarian knowledge penalties (HIPAD's ENK-SVM), by optframe.

    With the two classes of ``y`` mapped to :math:`y_i \in \{-1, +1\}` (``classes_[1]`` is +1),
    sample weights :math:`s_i` scaled to mean 1, and knowledge sets
    :math:`B_k x \le d_k \Rightarrow \ell_k (w^\top x + b) \ge 1`:

    .. math::

        \min_{w, b, u_k \ge 0} \;
        \frac{1}{N}\sum_{i=1}^N s_i \bigl(1 - y_i(x_i^\top w + b)\bigr)_+
        + \lambda_1 \lVert w\rVert_1 + \frac{\lambda_2}{2}\lVert w\rVert_2^2
        + \sum_k \Bigl[\frac{\rho}{2}\lVert B_k^\top u_k + \ell_k w\rVert^2
        + \rho_h \bigl(d_k^\top u_k - \ell_k b + 1\bigr)_+\Bigr].

    It is :class:`optframe.models.KnowledgeBasedSVM`, a QP; without knowledge sets it is the
    elastic-net (doubly regularized) SVM.

    Parameters
    ----------
    lam1 : float, default=0.01
        :math:`\lambda_1 \ge 0`, the l1 weight.
    lam2 : float, default=0.01
        :math:`\lambda_2 > 0`, the l2 weight.
    knowledge : list of optframe.models.KnowledgeSet, optional
        The knowledge sets (none by default). A set's ``label`` +1 means ``classes_[1]``, -1 means
        ``classes_[0]``; its ``B`` has one column per feature.
    rho : float, default=1.0
        :math:`\rho \ge 0`, the weight of the squared Farkas residuals.
    rho_hinge : float, optional
        :math:`\rho_h \ge 0` (default ``rho``).
    driver : str or Driver, default="auto"
        ``"auto"`` picks the driver from the model's structures and size
        (:mod:`optframe.drivers.auto`); otherwise
        ``"direct"`` or ``optframe.drivers.ADMM()`` / ``ADMMThenIPM()``.
    backend : str, default="auto"
        The QP solver (``"auto"`` is Clarabel, through CVXPY).
    solve_options : dict, optional
        Further keyword options of :func:`optframe.solve`.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class.
    coef_ : ndarray of shape (1, n_features)
        :math:`w`.
    intercept_ : ndarray of shape (1,)
        :math:`b`.
    result_ : optframe.Result
        The result of the last solve (``result_.solution["u"]`` holds the multipliers).
    n_features_in_ : int
        Number of features seen in ``fit``.

    Notes
    -----
    Sample weights are scaled to mean 1, so that an integer weight equals repeating the row (the
    loss is an average over the rows).

    Examples
    --------
    >>> from optframe.models import KnowledgeSet
    >>> from optframe.sklearn import KnowledgeBasedSVMClassifier
    >>> X, y = [[0.0], [1.0], [3.0], [4.0]], [0, 0, 1, 1]
    >>> prior = [KnowledgeSet(B=[[-1.0]], d=[-5.0], label=+1)]  # x >= 5 implies class 1
    >>> clf = KnowledgeBasedSVMClassifier(lam2=0.1, knowledge=prior).fit(X, y)
    >>> clf.predict([[0.5], [5.0]]).tolist()
    [0, 1]
    """

    def __init__(
        self,
        lam1: float = 0.01,
        lam2: float = 0.01,
        knowledge: Sequence[KnowledgeSet] | None = None,
        rho: float = 1.0,
        rho_hinge: float | None = None,
        driver: str | Driver = "auto",
        backend: str = "auto",
        solve_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.lam1 = lam1
        self.lam2 = lam2
        self.knowledge = knowledge
        self.rho = rho
        self.rho_hinge = rho_hinge
        self.driver = driver
        self.backend = backend
        self.solve_options = solve_options

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit the classifier.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Two class labels of any type.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights, scaled to mean 1.

        Returns
        -------
        KnowledgeBasedSVMClassifier
            The fitted estimator.
        """
        from optframe.models import KnowledgeBasedSVM

        self._clear_fitted()
        owner = type(self).__name__
        lam1 = check_number(self.lam1, "lam1", owner, low=0.0)
        lam2 = check_number(self.lam2, "lam2", owner, low=0.0, strict=True)
        rho = check_number(self.rho, "rho", owner, low=0.0)
        rho_h = rho
        if self.rho_hinge is not None:
            rho_h = check_number(self.rho_hinge, "rho_hinge", owner, low=0.0)
        knowledge = self.knowledge if self.knowledge is not None else ()
        if isinstance(knowledge, str) or not isinstance(knowledge, Sequence):
            raise ModelError(
                f"{owner}: knowledge must be a list of KnowledgeSet or None; got "
                f"{type(knowledge).__name__}"
            )
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        weights = self._sample_weight(sample_weight, X)
        signs = self._encode(y, weights)
        if weights is not None:
            weights = weights * (weights.size / weights.sum())
        data = Dataset(X=X, y=signs, sample_weight=weights)
        model = KnowledgeBasedSVM(
            data, lam1=lam1, lam2=lam2, knowledge=knowledge, rho=rho, rho_hinge=rho_h
        )
        solution = self._solve(model).solution
        self.coef_ = np.asarray(solution["w"], dtype=np.float64).reshape(1, -1)
        self.intercept_ = np.array([float(np.ravel(solution["intercept"])[0])])
        return self
