"""One merge of the common options for every driver: ``None`` is unset, 0 is an error.

Before the merge was shared, ``max_iter=0`` (or a driver field of 0) meant "the default" in
SMO, FrankWolfe, CoreVectorMachine and DCD (``options.max_iter or self.max_iter``) and "no
iteration" in ADMM and AID; these tests fail on that behaviour.
"""

import math

import numpy as np
import pytest

import optframe as of
from optframe.backend import SolveOptions
from optframe.data import Dataset, make_toy
from optframe.drivers import (
    ADMM,
    DCD,
    MFW,
    SMO,
    AggregateDisaggregate,
    CoreVectorMachine,
    FrankWolfe,
    PrimalNewton,
    RunContext,
)
from optframe.errors import ModelError
from optframe.kernels import RBF
from optframe.losses import Logistic
from optframe.models import L2SVM, EmpiricalRisk, KnowledgeBasedSVM, LADRegression, WeightedSVM
from optframe.penalties import L2


def _svm(fit_intercept=True):
    return WeightedSVM(make_toy(2, 1, n_per_class=30), C=1.0, fit_intercept=fit_intercept)


def _l2svm():
    return L2SVM(make_toy(2, 1, n_per_class=30), C=1.0, kernel=RBF(gamma=0.5))


def _lad():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    return LADRegression(Dataset(X=X, y=X @ [1.0, -2.0, 0.5] + rng.laplace(size=200)))


def _kbsvm():
    rng = np.random.default_rng(0)
    y = np.where(np.arange(30) < 15, 1.0, -1.0)
    X = rng.normal(size=(30, 20)) + 0.7 * y[:, None]
    return KnowledgeBasedSVM(Dataset(X=X, y=y), lam1=0.02, lam2=0.5)


def _smooth():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=200) > 0, 1.0, -1.0)
    return EmpiricalRisk(Dataset(X=X, y=y), Logistic(), penalty=L2())


# (driver, model factory, the driver's field that max_iter overrides)
DRIVERS = {
    "smo": (SMO(), _svm, "max_iter"),
    "dcd": (DCD(), lambda: _svm(fit_intercept=False), "max_epochs"),
    "mfw": (MFW(), _l2svm, "max_iter"),
    "cvm": (CoreVectorMachine(), _l2svm, "max_iter"),
    "admm": (ADMM(), _kbsvm, "max_iter"),
    "aid": (AggregateDisaggregate(), _lad, "max_iter"),
    "newton": (PrimalNewton(), _smooth, "max_iter"),
}


def _run(driver, model, **options):
    return driver.run(model, RunContext("auto", SolveOptions(**options)))


@pytest.mark.parametrize("name", sorted(DRIVERS))
def test_max_iter_zero_from_options_is_an_error(name):
    driver, model, _ = DRIVERS[name]
    with pytest.raises(ModelError, match=r"max_iter from solve\(max_iter=\.\.\.\) .*>= 1; got 0"):
        _run(driver, model(), max_iter=0)


@pytest.mark.parametrize("name", sorted(DRIVERS))
def test_max_iter_zero_as_a_driver_field_is_an_error(name):
    driver, _, field = DRIVERS[name]
    with pytest.raises(ModelError, match=f"{field} must be an integer >= 1; got 0"):
        type(driver)(**{field: 0})


@pytest.mark.parametrize("name", ["smo", "dcd", "mfw", "cvm", "admm", "newton"])
def test_tol_zero_is_an_error_where_it_cannot_be_met(name):
    driver, model, _ = DRIVERS[name]
    message = r"tol from solve\(tol=\.\.\.\) must be a finite number > 0"
    with pytest.raises(ModelError, match=message):
        _run(driver, model(), tol=0.0)


def test_aid_takes_tol_zero():
    # AID's tol is a gap: a pure split closes it exactly
    result = _run(AggregateDisaggregate(), _lad(), tol=0.0)
    assert result.status is of.Status.OPTIMAL


@pytest.mark.parametrize("limit", [0.0, -1.0, math.nan, "1"])
def test_time_limit_must_be_positive(limit):
    with pytest.raises(ModelError, match="time_limit must be a number > 0 or None"):
        _run(SMO(), _svm(), time_limit=limit)


def test_options_win_over_fields_and_none_is_unset():
    driver = SMO(tol=1e-2, max_iter=7)
    own = driver.common_options(SolveOptions(), tol=driver.tol, max_iter=driver.max_iter)
    assert (own.tol, own.max_iter, own.time_limit, own.verbose) == (1e-2, 7, None, False)
    given = SolveOptions(tol=1e-5, max_iter=3, time_limit=math.inf, verbose=True)
    common = driver.common_options(given, tol=driver.tol, max_iter=driver.max_iter)
    assert (common.tol, common.max_iter, common.time_limit, common.verbose) == (1e-5, 3, None, True)
    fallback = FrankWolfe().common_options(
        SolveOptions(), tol=1e-6, max_iter=None, default_max_iter=10**6
    )
    assert fallback.max_iter == 10**6


def test_max_iter_one_means_one():
    # the smallest limit is kept, never replaced by a default
    result = of.solve(_svm(), driver=SMO(tol=1e-9, check_every=1), max_iter=1)
    assert result.iterations == 1
    assert result.status is of.Status.ITERATION_LIMIT
