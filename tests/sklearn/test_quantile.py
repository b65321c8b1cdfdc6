"""QuantileRegressor: scikit-learn's problem and names, solved and certified by optframe."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import QuantileRegressor as SklearnQuantileRegressor

from optframe.data import load_dataset
from optframe.errors import ModelError
from optframe.result import Status
from optframe.sklearn import QuantileRegressor


def _sklearn_objective(X, y, coef, intercept, quantile, alpha, weights=None):
    """scikit-learn's objective: the weighted mean pinball loss plus alpha ||w||_1."""
    weights = np.ones_like(y) if weights is None else weights
    residual = y - X @ coef - intercept
    loss = np.maximum(quantile * residual, (quantile - 1.0) * residual)
    return float(weights @ loss / weights.sum() + alpha * np.abs(coef).sum())


@pytest.mark.parametrize(
    ("name", "rows", "quantile", "alpha"),
    [
        ("diabetes_sklearn", None, 0.9, 0.01),
        ("diabetes_sklearn", None, 0.5, 1.0),
        ("diabetes_sklearn", None, 0.25, 0.0),
        ("cpusmall", 2000, 0.9, 0.01),
        ("cpusmall", None, 0.25, 0.0),
    ],
)
def test_objective_at_least_as_good_as_sklearn(name, rows, quantile, alpha):
    data = load_dataset(name)
    X, y = np.asarray(data.X), data.y
    if rows is not None:
        X, y = X[:rows], y[:rows]
    ours = QuantileRegressor(quantile=quantile, alpha=alpha).fit(X, y)
    theirs = SklearnQuantileRegressor(quantile=quantile, alpha=alpha, solver="highs").fit(X, y)
    mine = _sklearn_objective(X, y, ours.coef_, ours.intercept_, quantile, alpha)
    reference = _sklearn_objective(X, y, theirs.coef_, theirs.intercept_, quantile, alpha)
    assert mine <= reference * (1 + 1e-6)
    assert ours.result_.status is Status.OPTIMAL  # optframe's own certificate
    scale = alpha if alpha > 0 else 1.0  # the model's objective is alpha times scikit-learn's
    assert ours.result_.objective * scale == pytest.approx(mine, rel=1e-9)


def test_weights_follow_sklearn():
    data = load_dataset("diabetes_sklearn")
    X, y = np.asarray(data.X), data.y
    w = np.random.default_rng(0).integers(0, 4, size=y.size).astype(float)
    ours = QuantileRegressor(quantile=0.7, alpha=0.05).fit(X, y, sample_weight=w)
    theirs = SklearnQuantileRegressor(quantile=0.7, alpha=0.05, solver="highs")
    theirs.fit(X, y, sample_weight=w)
    mine = _sklearn_objective(X, y, ours.coef_, ours.intercept_, 0.7, 0.05, w)
    reference = _sklearn_objective(X, y, theirs.coef_, theirs.intercept_, 0.7, 0.05, w)
    assert mine <= reference * (1 + 1e-6)


def test_no_intercept():
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    est = QuantileRegressor(alpha=0.0, fit_intercept=False).fit(X, 2.0 * X[:, 0])
    assert est.intercept_ == 0.0
    assert est.coef_[0] == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"quantile": 1.0}, r"quantile must be a finite number in \(0, 1\)"),
        ({"quantile": "0.5"}, "a string is not converted"),
        ({"alpha": -1.0}, "alpha must be a finite number >= 0"),
        ({"fit_intercept": "yes"}, "fit_intercept must be True or False"),
    ],
)
def test_bad_parameters(params, match):
    with pytest.raises(ModelError, match=match):
        QuantileRegressor(**params).fit([[0.0], [1.0]], [0.0, 1.0])
