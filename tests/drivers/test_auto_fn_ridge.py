"""``auto``'s rule for the ridge dual of a piecewise-linear loss: Direct on ``fn``; its limits."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import optframe as of
from optframe.data import Dataset
from optframe.drivers import auto
from optframe.drivers.auto import FN_MIN_SAMPLES, FN_SPARSE_MAX_FEATURES, choose
from optframe.losses import Absolute, EpsilonInsensitive, Hinge, Pinball
from optframe.models import EmpiricalRisk, RegularizedLAD, WeightedSVM
from optframe.penalties import L1, L2, ElasticNet
from optframe.result import Status


def _data(n: int, d: int, regression: bool = False, sparse: bool = False) -> Dataset:
    rng = np.random.default_rng(3)
    X = rng.standard_normal((n, d))
    t = X @ rng.standard_normal(d)
    y = t + rng.laplace(size=n) if regression else np.where(t + rng.normal(size=n) > 0, 1.0, -1.0)
    if sparse:
        X = sp.csr_array(X * (rng.uniform(size=X.shape) < 0.05))
    return Dataset(X=X, y=y)


N = max(FN_MIN_SAMPLES, 1500)
MODELS = {
    "hinge + intercept": lambda: EmpiricalRisk(_data(N, 8), Hinge(), penalty=L2()),
    "weighted svm": lambda: WeightedSVM(_data(N, 8), C=0.5),
    "pinball + intercept": lambda: EmpiricalRisk(_data(N, 8, True), Pinball(0.3), penalty=L2()),
    "eps-insensitive": lambda: EmpiricalRisk(
        _data(N, 8, True), EpsilonInsensitive(0.5), penalty=L2()
    ),
    "regularized lad": lambda: RegularizedLAD(_data(N, 8, True)),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_the_ridge_dual_goes_to_fn_and_matches_a_direct_reference(name):
    model = MODELS[name]()
    result = of.solve(model)
    assert result.stats["auto_rule"].startswith("the ridge dual of a piecewise-linear loss")
    assert result.backend == "matrix:fn"
    assert result.stats["form"] == "dual"
    reference = of.solve(model, driver="direct", backend="clarabel")
    assert reference.status is Status.OPTIMAL
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(reference.objective, rel=1e-7)
    assert result.bound <= reference.objective * (1 + 1e-9)


def test_below_the_threshold_direct_keeps_its_default():
    model = EmpiricalRisk(_data(FN_MIN_SAMPLES - 1, 8), Hinge(), penalty=L2())
    assert choose(model).backend is None


def test_without_intercept_dcd_keeps_its_range():
    model = EmpiricalRisk(_data(N, 8), Hinge(), penalty=L2(), fit_intercept=False)
    assert choose(model).driver.name == ("dcd" if N >= auto.DCD_MIN_SAMPLES else "direct")


def test_sparse_points_with_many_features_keep_the_other_rules():
    wide = EmpiricalRisk(_data(N, FN_SPARSE_MAX_FEATURES + 1, sparse=True), Hinge(), penalty=L2())
    assert choose(wide).backend is None
    narrow = EmpiricalRisk(_data(N, 40, sparse=True), Hinge(), penalty=L2())
    assert choose(narrow).backend == "matrix:fn"


@pytest.mark.parametrize("penalty", [L1(), ElasticNet(0.5)], ids=["l1", "elastic-net"])
def test_a_dual_that_is_not_fn_s_shape_is_not_sent_there(penalty):
    model = EmpiricalRisk(_data(N, 8), Absolute(), penalty=penalty)
    assert choose(model).backend is None


def test_solver_options_keep_the_default_back_end():
    model = EmpiricalRisk(_data(N, 8), Hinge(), penalty=L2())
    assert choose(model, solver_options=True).backend is None


def test_rows_sorted_by_class_still_reach_fn():
    # the rule builds the model on a few rows to ask fn: every class must be among them
    data = _data(N, 8)
    order = np.argsort(data.y, kind="stable")
    ordered = Dataset(X=data.X[order], y=data.y[order])
    model = EmpiricalRisk(ordered, Hinge(), penalty=L2())
    assert choose(model).backend == "matrix:fn"
    result = of.solve(model)
    assert result.backend == "matrix:fn"
    assert result.status is Status.OPTIMAL
