"""What every optframe estimator shares: parameter checks, the solve, binary labels, tags."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from optframe.drivers.base import Driver
from optframe.errors import ConvergenceWarning, DataError, ModelError, SolverError
from optframe.result import Status
from optframe.validation import check_number as validate_number

try:
    from sklearn.utils.validation import validate_data
except ImportError:  # scikit-learn < 1.6

    def validate_data(estimator: Any, /, *args: Any, **kwargs: Any) -> Any:
        return estimator._validate_data(*args, **kwargs)


if TYPE_CHECKING:
    from optframe.model import Model
    from optframe.result import Result

#: The keys ``solve_options`` may hold: the keyword options of :func:`optframe.solve`.
SOLVE_OPTIONS = (
    "tol",
    "gap_tol",
    "max_iter",
    "time_limit",
    "threads",
    "verbose",
    "callback",
    "solver_options",
)


def check_number(
    value: Any, name: str, owner: str, *, low: float = -math.inf, strict: bool = False
) -> float:
    """``value`` as a finite float ``> low`` (``strict``) or ``>= low``, else a ModelError.

    The one rule of :func:`optframe.validation.check_number`.
    """
    number = validate_number(value, name, owner, low=low, low_open=strict)
    assert number is not None
    return number


def check_bool(value: Any, name: str, owner: str) -> bool:
    """``value`` as a bool if it is one (numpy bools included), else a ModelError."""
    if not isinstance(value, bool | np.bool_):
        raise ModelError(f"{owner}: {name} must be True or False; got {value!r}")
    return bool(value)


class OptframeEstimator(BaseEstimator):
    """Base of the estimators: checks ``driver``/``backend``/``solve_options`` and solves.

    Subclasses store their constructor arguments unchanged (scikit-learn's convention) and check
    them in ``fit``; ``fit`` builds an optframe model and calls :meth:`_solve`.
    """

    def __sklearn_is_fitted__(self) -> bool:
        """Fitted once a solve has succeeded (``result_`` is set)."""
        return hasattr(self, "result_")

    def _solve(self, model: Model, defaults: Mapping[str, Any] | None = None) -> Result:
        """Solve ``model`` as the parameters say; set and return ``result_``.

        ``defaults``: options of :func:`optframe.solve` that ``solve_options`` may override
        (an estimator's own parameter such as ``tol``).
        """
        import optframe

        owner = type(self).__name__
        driver = self.driver
        if not isinstance(driver, str | Driver):
            raise ModelError(
                f"{owner}: driver must be a driver name (such as 'direct' or 'smo') or a Driver "
                f"instance from optframe.drivers; got {type(driver).__name__}"
            )
        if not isinstance(self.backend, str):
            raise ModelError(
                f"{owner}: backend must be a string such as 'auto', 'highs' or 'matrix:clarabel'; "
                f"got {self.backend!r}"
            )
        options = self.solve_options if self.solve_options is not None else {}
        if not isinstance(options, Mapping):
            raise ModelError(
                f"{owner}: solve_options must be a dict or None; got {type(options).__name__}"
            )
        unknown = sorted(set(options) - set(SOLVE_OPTIONS))
        if unknown:
            raise ModelError(
                f"{owner}: unknown solve_options {unknown}; allowed keys: {list(SOLVE_OPTIONS)}"
            )
        options = {**(defaults or {}), **options}
        result = optframe.solve(model, driver=driver, backend=self.backend, **options)
        if not result.has_solution:
            raise SolverError(f"{owner}: the solve returned no solution ({result.summary()})")
        if result.status is not Status.OPTIMAL:
            warnings.warn(
                f"{owner}: optimality is not proven ({result.summary()}); the fitted model is "
                "the last iterate. Tighten the driver's tol, raise max_iter or time_limit, or "
                "pick another driver or back-end.",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.result_ = result
        return result

    def _clear_fitted(self) -> None:
        """Forget the public fitted attributes of an earlier fit (a refit may not set them all)."""
        for name in [n for n in vars(self) if n.endswith("_") and not n.startswith("_")]:
            delattr(self, name)

    def _sample_weight(self, sample_weight: ArrayLike | None, X: Any) -> NDArray[np.float64] | None:
        """Checked sample weights (scikit-learn's shape checks, then optframe's), or None."""
        if sample_weight is None:
            return None
        return np.asarray(_check_sample_weight(sample_weight, X, dtype=np.float64))


class BinaryClassifier(ClassifierMixin, OptframeEstimator):
    """Base of the two-class estimators: any two labels, mapped to -1/+1 for the model.

    ``classes_`` holds the two labels sorted; ``classes_[1]`` is the positive class (+1 in the
    model), so ``decision_function > 0`` predicts ``classes_[1]``, as in scikit-learn.
    """

    def _encode(
        self, y: NDArray[Any], sample_weight: NDArray[np.float64] | None = None
    ) -> NDArray[np.float64]:
        """Set ``classes_`` from ``y`` (exactly two labels) and return ``y`` as -1/+1."""
        check_classification_targets(y)
        owner = type(self).__name__
        classes, index = np.unique(y, return_inverse=True)
        if classes.size > 2:
            shown = ", ".join(repr(c) for c in classes[:6].tolist())
            raise DataError(
                f"Only binary classification is supported. {owner} separates two classes; y "
                f"holds {classes.size} ({shown}"
                f"{', ...' if classes.size > 6 else ''}). Wrap it in "
                "sklearn.multiclass.OneVsRestClassifier or OneVsOneClassifier for several classes."
            )
        if classes.size < 2:
            raise DataError(
                f"{owner} needs two classes; y holds 1 class ({classes[0]!r}), so there is "
                "nothing to separate."
            )
        signs = 2.0 * index.reshape(-1) - 1.0
        if sample_weight is not None:
            for sign, label in ((-1.0, classes[0]), (1.0, classes[1])):
                if not np.any(sample_weight[signs == sign] > 0):
                    raise DataError(
                        f"{owner}: class {label!r} has zero total sample weight; each of the two "
                        "classes needs a sample with positive weight."
                    )
        self.classes_ = classes
        return signs

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Signed decision values; positive values predict ``classes_[1]``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            The decision function at each sample.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        if hasattr(self, "coef_"):
            return np.asarray(X @ self.coef_.ravel(), dtype=np.float64) + self._intercept
        return self.result_.decision_function(X)

    @property
    def _intercept(self) -> float:
        return float(np.ravel(self.intercept_)[0])

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Predict class labels: ``classes_[1]`` where the decision function is positive.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(np.intp)]

    def __sklearn_tags__(self) -> Any:
        """Sparse input accepted; two classes only."""
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags


class LinearRegressor(RegressorMixin, OptframeEstimator):
    r"""Base of the linear regressors: ``coef_``, ``intercept_``, predictions, sparse input."""

    def _fitted(self, result: Result, coef_key: str) -> None:
        """Keep the solution's coefficients (under ``coef_key``) and intercept."""
        self.coef_ = np.asarray(result.solution[coef_key], dtype=np.float64).reshape(-1)
        self.intercept_ = float(np.ravel(result.solution["intercept"])[0])

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        r"""Predict :math:`x^\top w + b`.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predictions.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_, dtype=np.float64) + self.intercept_

    def __sklearn_tags__(self) -> Any:
        """Sparse input accepted."""
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
