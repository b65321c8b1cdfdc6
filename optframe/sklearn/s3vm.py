r"""The semi-supervised SVM (S3VM) as a scikit-learn classifier."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike, NDArray

from optframe.data import Dataset
from optframe.drivers.base import Driver
from optframe.errors import DataError, ModelError

from ._base import BinaryClassifier, check_number, validate_data


def unlabeled_mask(y: NDArray[Any], marker: Any) -> NDArray[np.bool_]:
    """Where ``y`` equals ``marker``, elementwise, for numeric and for string or object labels."""
    if y.dtype.kind in "biuf" and isinstance(marker, numbers.Number):
        return np.asarray(y == marker, dtype=bool)
    return np.array([value == marker for value in y.tolist()], dtype=bool)


def _class_costs(weights: NDArray[np.float64], signs: NDArray[np.float64]) -> NDArray[np.float64]:
    """The ``balance="cost"`` weights of :class:`~optframe.models.SemiSupervisedSVM`."""
    plus, minus = weights[signs > 0].sum(), weights[signs < 0].sum()
    return weights * np.where(signs > 0, max(1.0, minus / plus), max(1.0, plus / minus))


class S3VMClassifier(BinaryClassifier):
    r"""The semi-supervised linear SVM (Bennett and Demiriz), solved by optframe.

    Rows whose label equals ``unlabeled`` (-1 by default, scikit-learn's convention, as in
    ``SelfTrainingClassifier`` and ``LabelSpreading``) form :math:`I_u`; the others,
    :math:`I_l`, carry one of exactly two classes, mapped to :math:`y_i \in \{-1, +1\}`
    (``classes_[1]`` is +1). With :math:`f(x) = w^\top x + b` and sample weights :math:`s_i`:

    .. math::

        \min_{w, b} \; \tfrac12 \lVert w \rVert^2
        + C \sum_{i \in I_l} c_i \,[1 - y_i f(x_i)]_+
        + C_u \sum_{i \in I_u} s_i \,[1 - |f(x_i)|]_+ ,

    the labels of the unlabeled rows being :math:`\operatorname{sign} f(x_i)`; :math:`c_i = s_i`
    unless ``balance="cost"``. It is :class:`optframe.models.SemiSupervisedSVM`, a mixed-integer QP
    with one binary variable per unlabeled row (the model's ``y`` is 0 on those rows), solved by
    SCIP by default: keep the unlabeled rows few, or use
    ``driver=optframe.drivers.AggregateDisaggregate()``.

    Without unlabeled rows (or when they all have zero weight) the last term vanishes and the
    problem is the C-SVM on the labeled rows, :class:`optframe.models.WeightedSVM` with penalty
    :math:`C` and weights :math:`c_i` (the balance constraint has no unlabeled rows to act on),
    which is what is solved then.

    Parameters
    ----------
    C : float, default=5.0
        :math:`C > 0`, the penalty of the labeled rows (the model's ``C_labeled``).
    C_unlabeled : float, default=1.0
        :math:`C_u \ge 0`, the penalty of the unlabeled rows.
    big_m : float, optional
        The big-M constant of the MIQP (default: a provably safe value, see the model).
    balance : {"none", "constraint", "cost"}, default="none"
        Class-balance rule of the model: ``"constraint"`` makes the mean of :math:`f` over the
        unlabeled rows equal the labeled mean of :math:`y`; ``"cost"`` weights the minority class.
    unlabeled : object, default=-1
        The label that marks unlabeled rows.
    driver : str or Driver, default="auto"
        ``"auto"`` picks the driver from the model's structures and size
        (:mod:`optframe.drivers.auto`); otherwise
        ``"direct"`` or ``optframe.drivers.AggregateDisaggregate()``.
    backend : str, default="auto"
        The MIQP solver (``"auto"`` is SCIP).
    solve_options : dict, optional
        Further keyword options of :func:`optframe.solve` (``time_limit``, ``tol``, ...).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels of the labeled rows; ``classes_[1]`` is the positive class.
    coef_ : ndarray of shape (1, n_features)
        :math:`w`.
    intercept_ : ndarray of shape (1,)
        :math:`b`.
    transduction_ : ndarray of shape (n_samples,)
        A label from ``classes_`` for every training row: the given one on labeled rows, the
        predicted one on unlabeled rows.
    result_ : optframe.Result
        The result of the last solve.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Notes
    -----
    With the default ``unlabeled=-1`` the label -1 cannot be a class. scikit-learn's
    ``check_classifiers_classes`` fits labels -1 and 1 (it exempts scikit-learn's own
    semi-supervised classifiers by name), which this estimator reads as one class plus unlabeled
    rows: that check is its only expected failure.

    Examples
    --------
    >>> from optframe.sklearn import S3VMClassifier
    >>> X = [[-2.0], [-1.5], [-1.0], [1.0], [1.5], [2.0]]
    >>> clf = S3VMClassifier(C=1.0).fit(X, [0, -1, -1, -1, -1, 1])
    >>> clf.transduction_.tolist()
    [0, 0, 0, 1, 1, 1]
    """

    def __init__(
        self,
        C: float = 5.0,
        C_unlabeled: float = 1.0,
        big_m: float | None = None,
        balance: str = "none",
        unlabeled: Any = -1,
        driver: str | Driver = "auto",
        backend: str = "auto",
        solve_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.C = C
        self.C_unlabeled = C_unlabeled
        self.big_m = big_m
        self.balance = balance
        self.unlabeled = unlabeled
        self.driver = driver
        self.backend = backend
        self.solve_options = solve_options

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit the S3VM on labeled and unlabeled rows.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Two class labels, and ``unlabeled`` on the unlabeled rows.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights :math:`s`.

        Returns
        -------
        S3VMClassifier
            The fitted estimator.
        """
        from optframe.models import SemiSupervisedSVM, WeightedSVM
        from optframe.models.s3vm import BALANCES

        self._clear_fitted()
        owner = type(self).__name__
        C = check_number(self.C, "C", owner, low=0.0, strict=True)
        C_u = check_number(self.C_unlabeled, "C_unlabeled", owner, low=0.0)
        if self.balance not in BALANCES:
            raise ModelError(f"{owner}: balance must be one of {BALANCES}; got {self.balance!r}")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        weights = self._sample_weight(sample_weight, X)
        unl = unlabeled_mask(y, self.unlabeled)
        lab = ~unl
        if not np.any(lab):
            raise DataError(
                f"{owner} needs labeled rows of two classes; all {y.shape[0]} labels equal "
                f"unlabeled={self.unlabeled!r}, the marker of unlabeled rows. Label some rows, or "
                "set unlabeled= to the value that marks unlabeled rows in y."
            )
        signs = self._encode(y[lab], None if weights is None else weights[lab])
        s = np.ones(y.shape[0]) if weights is None else weights
        if np.any(s[unl] > 0):
            target = np.zeros(y.shape[0])
            target[lab] = signs
            model = SemiSupervisedSVM(
                Dataset(X=X, y=target, sample_weight=weights),
                C_labeled=C,
                C_unlabeled=C_u,
                big_m=self.big_m,
                balance=self.balance,
            )
        else:
            cost = _class_costs(s[lab], signs) if self.balance == "cost" else s[lab]
            model = WeightedSVM(Dataset(X=X[lab], y=signs, sample_weight=cost), C=C)
        solution = self._solve(model).solution
        self.coef_ = np.asarray(solution["w"], dtype=np.float64).reshape(1, -1)
        self.intercept_ = np.array([float(np.ravel(solution["intercept"])[0])])
        labels = np.empty(y.shape[0], dtype=np.intp)
        labels[lab] = (signs > 0).astype(np.intp)
        if np.any(unl):
            labels[unl] = (self.decision_function(X[unl]) > 0).astype(np.intp)
        self.transduction_ = self.classes_[labels]
        return self
