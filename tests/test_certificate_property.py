"""Property: over small random problems of every model, OPTIMAL is never a wrong answer.

Hypothesis draws the data (well or badly scaled), the loss weight from 1e-3 to 1e6 and an
applicable (driver, back-end, form). A tight reference (HiGHS for LPs, Clarabel at 1e-11 for QPs,
SCIP for the S3VM MIQP) brackets the optimum between its proven bound and its objective; whenever
a status is OPTIMAL the objective is within the gap tolerance of that bracket, and every bound is
at most its top.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import optframe as of
from optframe.data import Dataset
from optframe.drivers import DCD, MFW, SMO, AggregateDisaggregate, CoreVectorMachine, Direct
from optframe.model import ProblemClass
from optframe.models import (
    L2SVM,
    LADRegression,
    PULearning,
    RegularizedLAD,
    SemiSupervisedSVM,
    WeightedSVM,
)

TIGHT = {"tol_gap_rel": 1e-11, "tol_gap_abs": 1e-11, "tol_feas": 1e-11}
SETTINGS = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def draw_data(draw, n_low=12, n_high=40, classes=True):
    n = draw(st.integers(n_low, n_high))
    m = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**16))
    scale = draw(st.sampled_from([1.0, 1e-3, 1e3]))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m)) * scale * rng.uniform(0.1, 10.0, size=m)
    signal = X @ rng.normal(size=m) / scale + 0.5 * rng.normal(size=n)
    if not classes:
        return X, signal * draw(st.sampled_from([1.0, 1e3]))
    y = np.where(signal > np.median(signal), 1.0, -1.0)
    return X, y


def reference(model):
    """``(low, high)`` around the optimum: the best proven bound and objective of tight solves.

    Every bound here is optframe's own (valid whatever the solver did) and every objective is
    attained, so combining several tight solves only narrows the bracket.
    """
    if model.problem_class.is_integer:
        runs = [(Direct(), "scip", None)]
    elif model.problem_class is ProblemClass.LP:
        runs = [(Direct(form=form), "matrix:highs", None) for form in model.forms]
    else:
        layer = "matrix" if model.offers("matrix") else "cvxpy"
        runs = [
            (Direct(form=form), f"{layer}:{solver}", TIGHT if solver == "clarabel" else None)
            for solver in ("clarabel", "scip")
            for form in model.forms
            if model.offers(layer, form)
        ]
    lows, highs = [], []
    for driver, backend, options in runs:
        if lows and highs and backend.endswith("scip"):
            continue  # SCIP only where Clarabel gave no bracket
        result = of.solve(model, driver, backend=backend, solver_options=options, time_limit=20)
        if result.has_solution:
            highs.append(result.objective)
        if result.bound is not None:
            lows.append(result.bound)
    assert lows, f"no reference bound for {model!r}"
    assert highs, f"no reference solution for {model!r}"
    return max(lows), min(highs)


def check(model, runs):
    low, high = reference(model)
    slack = 1e-9 * max(1.0, abs(high)) + (high - low)  # the reference's own uncertainty
    for driver, backend in runs:
        result = of.solve(model, driver, backend=backend, time_limit=3)
        label = f"{model!r} {driver} {backend}: {result.summary()}"
        assert result.gap >= 0.0, label
        if result.bound is not None:
            assert result.bound <= high + slack, label
        if result.status is of.Status.OPTIMAL:
            assert result.objective - low <= result.stats["gap_tol"] * result.scale + slack, label


LOSS_WEIGHTS = st.sampled_from([1e-3, 1e-1, 1.0, 1e2, 1e4, 1e6])
QP_BACKENDS = ["matrix:highs", "matrix:clarabel", "matrix:osqp", "matrix:scip", "cvxpy:clarabel"]


@SETTINGS
@given(st.data())
def test_lad(data):
    X, y = draw_data(data.draw, classes=False)
    model = LADRegression(Dataset(X, y), fit_intercept=data.draw(st.booleans()))
    form = data.draw(st.sampled_from(["dual", "primal"]))
    backend = data.draw(st.sampled_from([*QP_BACKENDS, "pyomo:highs", "cvxpy:scip"]))
    check(model, [(Direct(form=form), backend), (AggregateDisaggregate(), "highs")])


@SETTINGS
@given(st.data())
def test_weighted_svm(data):
    X, y = draw_data(data.draw)
    kernel = data.draw(st.sampled_from(["linear", "rbf"]))
    intercept = data.draw(st.booleans())
    model = WeightedSVM(Dataset(X, y), C=data.draw(LOSS_WEIGHTS), kernel=kernel,
                        fit_intercept=intercept)  # fmt: skip
    form = "dual" if kernel == "rbf" else data.draw(st.sampled_from(["primal", "dual"]))
    runs = [(Direct(form=form), data.draw(st.sampled_from(QP_BACKENDS)))]
    runs.append((SMO(), "auto") if intercept else (DCD(), "auto") if kernel == "linear" else
                (Direct(form="dual"), "osqp"))  # fmt: skip
    if kernel == "linear" and intercept:
        runs.append((AggregateDisaggregate(), data.draw(st.sampled_from(["clarabel", "osqp"]))))
    check(model, runs)


@SETTINGS
@given(st.data())
def test_l2svm(data):
    X, y = draw_data(data.draw)
    kernel = data.draw(st.sampled_from(["linear", "rbf"]))
    model = L2SVM(Dataset(X, y), C=data.draw(LOSS_WEIGHTS), kernel=kernel)
    form = "dual" if kernel == "rbf" else data.draw(st.sampled_from(["primal", "dual"]))
    backend = data.draw(st.sampled_from(QP_BACKENDS))
    check(model, [(Direct(form=form), backend), (MFW(), "auto"), (CoreVectorMachine(), "auto")])


@SETTINGS
@given(st.data())
def test_regularized_lad(data):
    X, y = draw_data(data.draw, classes=False)
    intercept = data.draw(st.booleans())
    model = RegularizedLAD(Dataset(X, y), C=data.draw(LOSS_WEIGHTS), fit_intercept=intercept)
    form = data.draw(st.sampled_from(["dual", "primal"]))
    runs = [(Direct(form=form), data.draw(st.sampled_from(QP_BACKENDS[:4])))]
    if not intercept:
        runs.append((DCD(), "auto"))
    check(model, runs)


@SETTINGS
@given(st.data())
def test_pu_learning(data):
    X, y = draw_data(data.draw)
    labels = np.where((y > 0) & (np.arange(y.size) % 2 == 0), 1.0, 0.0)
    if labels.sum() == 0:
        labels[0] = 1.0
    lam = data.draw(st.sampled_from([1e-4, 1e-2, 1.0]))
    kernel = data.draw(st.sampled_from(["linear", "rbf"]))
    model = PULearning(Dataset(X, labels), prior=0.4, lam=lam, kernel=kernel)
    form = data.draw(st.sampled_from(["dual", "primal"]))
    backend = data.draw(st.sampled_from(["cvxpy:clarabel", "cvxpy:osqp", "cvxpy:scip"]))
    check(model, [(Direct(form=form), backend), (SMO(), "auto")])


@settings(max_examples=6, deadline=None, derandomize=True)
@given(st.data())
def test_s3vm(data):
    X, y = draw_data(data.draw, n_low=8, n_high=12)
    y = np.where(np.arange(y.size) % 3 == 0, 0.0, y)  # a third unlabeled
    if not ((y == 1).any() and (y == -1).any()):
        y[:2] = [1.0, -1.0]
    model = SemiSupervisedSVM(Dataset(X, y), C_labeled=1.0, C_unlabeled=data.draw(LOSS_WEIGHTS))
    check(model, [(Direct(), "scip"), (AggregateDisaggregate(), "scip")])


@pytest.mark.parametrize("scale", [1e-6, 1e6])
def test_badly_scaled_never_infeasible(scale):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3)) * scale
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    for model in (WeightedSVM(Dataset(X, y), C=1.0), L2SVM(Dataset(X, y), C=1.0)):
        for backend in QP_BACKENDS:
            result = of.solve(model, backend=backend, time_limit=3)
            assert result.status not in (of.Status.INFEASIBLE, of.Status.UNBOUNDED)
