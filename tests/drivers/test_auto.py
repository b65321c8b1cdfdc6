"""driver="auto": the rules pick by structure and size, and the result says what ran."""

import numpy as np
import pytest
import scipy.sparse as sp

import optframe as of
from optframe.data import Dataset, load_dataset, make_classification_svm, make_lad_set_a
from optframe.drivers import auto
from optframe.kernels import RBF
from optframe.losses import Hinge, Huber, Pinball, SquaredHinge
from optframe.models import (
    L2SVM,
    EmpiricalRisk,
    LADRegression,
    SemiSupervisedSVM,
    WeightedSVM,
)
from optframe.penalties import L1

BIG_LAD = make_lad_set_a(auto.AID_MIN_SAMPLES, 3, random_state=0)
SMALL_LAD = make_lad_set_a(200, 3, random_state=0)
KERNEL_SVM = make_classification_svm(auto.SMO_MIN_SAMPLES, 3, random_state=0)


def picked(model, backend="auto", solver_options=False):
    choice = auto.choose(model, backend, solver_options)
    return choice.driver.name + (f" on {choice.backend}" if choice.backend else "")


def test_the_rules():
    assert picked(LADRegression(SMALL_LAD)) == "direct"
    assert picked(LADRegression(BIG_LAD)) == "direct on matrix:fn"
    assert picked(LADRegression(BIG_LAD), solver_options=True) == "aid"  # HiGHS's options
    assert picked(EmpiricalRisk(BIG_LAD, Pinball(0.9), penalty=None)) == "direct on matrix:fn"
    at_fn = make_lad_set_a(auto.FN_MIN_SAMPLES, 3, random_state=0)
    below = at_fn.subset(np.arange(auto.FN_MIN_SAMPLES - 1))
    assert picked(LADRegression(at_fn)) == "direct on matrix:fn"
    assert picked(LADRegression(below)) == "direct"
    # wide and long: still Direct on fn (AID on fn was slower on a quiet machine)
    wide = Dataset(X=np.zeros((200_000, 100)), y=np.zeros(200_000))
    assert picked(LADRegression(wide)) == "direct on matrix:fn"
    assert picked(EmpiricalRisk(BIG_LAD, Huber(1.0))) == "newton"  # differentiable, the ridge
    assert picked(EmpiricalRisk(BIG_LAD, Huber(1.0), penalty=L1())) == "cd"
    assert BIG_LAD.n_samples < auto.AID_MIN_SAMPLES_QP
    # a ridge QP of a piecewise-linear loss: its dual on fn (the rule before AID's)
    assert picked(EmpiricalRisk(BIG_LAD, Pinball(0.9))) == "direct on matrix:fn"
    assert picked(LADRegression(BIG_LAD), backend="clarabel") == "direct"  # as asked
    rbf = RBF(gamma=0.5)
    assert picked(WeightedSVM(KERNEL_SVM, kernel=rbf)) == "smo"
    assert picked(WeightedSVM(KERNEL_SVM.subset(np.arange(100)), kernel=rbf)) == "direct"
    assert picked(L2SVM(KERNEL_SVM, kernel=rbf)) == "smo"  # its simplex QP as a box QP
    assert picked(WeightedSVM(KERNEL_SVM)) == "direct on matrix:fn"  # linear: the ridge dual
    linear = make_classification_svm(auto.DCD_MIN_SAMPLES, 3, random_state=0)
    assert picked(WeightedSVM(linear, fit_intercept=False)) == "dcd"  # a box dual
    assert picked(WeightedSVM(linear)) == "direct on matrix:fn"  # the intercept's row: no DCD
    y = np.where(np.arange(BIG_LAD.n_samples) < 50, np.sign(BIG_LAD.y - np.median(BIG_LAD.y)), 0)
    s3vm = SemiSupervisedSVM(Dataset(X=BIG_LAD.X, y=y))
    assert picked(s3vm) == "direct"  # a non-convex loss: AID would be a heuristic


def test_a_kernel_model_without_intercept_goes_to_smo_from_its_size():
    # its box QP has no equality row: SMO's single-variable steps (docs/results/smo_single.md)
    rbf = RBF(gamma=0.5)
    below = KERNEL_SVM.subset(np.arange(auto.SMO_MIN_SAMPLES - 1))
    for loss in (SquaredHinge(), Hinge()):
        at = EmpiricalRisk(KERNEL_SVM, loss, fit_intercept=False, kernel=rbf)
        choice = auto.choose(at)
        assert choice.driver.name == "smo"
        assert "no equality row" in choice.rule
        assert picked(EmpiricalRisk(below, loss, fit_intercept=False, kernel=rbf)) == "direct"
    assert picked(WeightedSVM(KERNEL_SVM, kernel=rbf, fit_intercept=False)) == "smo"


def test_the_result_says_what_ran_and_why():
    result = of.solve(LADRegression(BIG_LAD))
    assert result.driver == "direct"
    assert result.backend == "matrix:fn"
    assert result.status is of.Status.OPTIMAL
    assert "piecewise-linear" in result.stats["auto_rule"]
    assert "fn" in result.stats["auto_rule"]
    reference = of.solve(LADRegression(BIG_LAD), driver="direct")
    assert reference.backend == "matrix:highs"
    assert result.objective == pytest.approx(reference.objective, rel=1e-9)
    assert "auto_rule" not in reference.stats
    ipm = of.solve(LADRegression(BIG_LAD), solver_options={"solver": "ipm"})
    assert (ipm.driver, ipm.backend) == ("aid", "matrix:highs")  # the options are HiGHS's
    assert ipm.status is of.Status.OPTIMAL
    small = of.solve(LADRegression(SMALL_LAD))
    assert small.driver == "direct"


def test_an_unknown_driver_lists_auto():
    with pytest.raises(of.UnknownDriver, match="'auto'"):
        of.solve(LADRegression(SMALL_LAD), driver="fastest")


def test_a_preferred_back_end_that_refuses_the_built_lp_falls_back(monkeypatch):
    """The fn rule reads the model's shape; fn reads the LP. A refusal goes to the reference.

    A back-end the user names is used as named: no fallback.
    """
    from optframe.solvers.fn import FnMatrixBackend

    monkeypatch.setattr(
        FnMatrixBackend, "refusal", classmethod(lambda cls, formulation: "fn: refused here")
    )
    model = LADRegression(BIG_LAD)
    result = of.solve(model)
    assert (result.driver, result.backend) == ("direct", "matrix:highs")
    assert result.stats["preferred_backend_refused"] == "fn: refused here"
    assert result.status is of.Status.OPTIMAL
    reference = of.solve(model, driver="direct")
    assert result.objective == pytest.approx(reference.objective, rel=1e-9)
    named = of.solve(model, driver="direct", backend="matrix:fn")
    assert "preferred_backend_refused" not in named.stats


def test_a_margin_loss_with_quadratic_pieces_goes_to_dcd_a_residual_one_to_newton():
    from optframe.losses import SquaredHinge

    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 5))
    labels = np.where(X[:, 0] + 0.3 * rng.normal(size=400) > 0, 1.0, -1.0)
    squared = EmpiricalRisk(Dataset(X=X, y=labels), SquaredHinge(), fit_intercept=False)
    assert auto.choose(squared).driver.name == "dcd"
    result = of.solve(squared)
    assert result.driver == "dcd"
    assert result.status is of.Status.OPTIMAL
    huber = EmpiricalRisk(Dataset(X=X, y=X @ np.ones(5)), Huber(1.0), fit_intercept=False)
    assert auto.choose(huber).driver.name == "newton"
    result = of.solve(huber)
    assert result.driver == "newton"
    assert result.status is of.Status.OPTIMAL
    # below DCD's smallest size the margin loss goes to Newton too (as fast as Direct there)
    small = EmpiricalRisk(Dataset(X=X[:100], y=labels[:100]), SquaredHinge(), fit_intercept=False)
    assert auto.choose(small).driver.name == "newton"
    # with an intercept DCD has no dual to take: Newton at every size
    free = EmpiricalRisk(Dataset(X=X, y=labels), SquaredHinge(), fit_intercept=True)
    assert auto.choose(free).driver.name == "newton"


def test_newton_takes_margin_losses_from_its_size_unless_wider_than_long():
    from optframe.losses import Logistic, SquaredHinge

    n = auto.NEWTON_MIN_SAMPLES
    rng = np.random.default_rng(4)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    for loss, under in ((SquaredHinge(), "dcd"), (Logistic(), "newton")):
        at = EmpiricalRisk(Dataset(X=X, y=y), loss, fit_intercept=False)
        below = EmpiricalRisk(Dataset(X=X[: n - 1], y=y[: n - 1]), loss, fit_intercept=False)
        assert auto.choose(at).driver.name == "newton"
        assert auto.choose(below).driver.name == under  # the logistic loss: Newton at any size
    # about one entry a row (sp.random draws its positions without replacement: 15 s here)
    rows, columns = rng.integers(0, n, size=n), rng.integers(0, n + 1, size=n)
    wide = sp.csr_array((rng.uniform(size=n), (rows, columns)), shape=(n, n + 1))
    pieces = EmpiricalRisk(Dataset(X=wide, y=y), SquaredHinge(), fit_intercept=False)
    assert auto.choose(pieces).driver.name == "dcd"  # the pieces' steps are cheaper there
    entropy = EmpiricalRisk(Dataset(X=wide, y=y), Logistic(), fit_intercept=False)
    assert auto.choose(entropy).driver.name == "newton"


def test_newton_without_a_proof_hands_over_to_direct():
    """Raw cpusmall (features up to 2e6): Newton's gap stalls at 1e-4; auto then runs Direct.

    A stop the user's callback asked for is not overridden.
    """
    data = load_dataset("cpusmall").subset(np.arange(300))
    model = EmpiricalRisk(data, Huber(1.0))
    alone = of.solve(model, "newton")
    assert alone.status is of.Status.CONVERGED  # the case: no proof from Newton
    result = of.solve(model)
    assert result.driver == "direct"
    assert result.status is of.Status.OPTIMAL
    first = result.stats["auto_first"]
    assert first["driver"] == "newton"
    assert first["gap"] > 1e-6
    assert result.timings.total >= first["seconds"]
    assert "without a proof" in result.stats["auto_rule"]
    assert result.objective == pytest.approx(alone.objective, rel=1e-9)
    stopped = of.solve(model, callback=lambda record: True)
    assert stopped.driver == "newton"
    assert "auto_first" not in stopped.stats
    standardized = EmpiricalRisk(
        Dataset(X=(data.X - data.X.mean(axis=0)) / data.X.std(axis=0), y=data.y), Huber(1.0)
    )
    assert of.solve(standardized).driver == "newton"  # no hand-over when Newton proves it


def _sparse_hinge_data(n, density, seed=0, features=60):
    rng = np.random.default_rng(seed)
    X = sp.random(n, features, density=density, format="csr", random_state=seed, data_rvs=np.ones)
    y = np.where(X @ rng.normal(size=features) + 0.3 * rng.normal(size=n) > 0.2, 1.0, -1.0)
    return Dataset(X=X, y=y)


def test_a_free_intercept_hinge_on_sparse_points_goes_to_smo_and_matches_direct():
    from optframe.losses import Hinge

    # sparse points with more features than fn's rule takes (w8a's shape)
    wide = auto.FN_SPARSE_MAX_FEATURES + 40
    data = _sparse_hinge_data(auto.SMO_LINEAR_MIN_SAMPLES, 0.03, features=wide)
    model = EmpiricalRisk(data, Hinge(), fit_intercept=True)
    assert picked(model) == "smo"
    below = EmpiricalRisk(data.subset(np.arange(auto.SMO_LINEAR_MIN_SAMPLES - 1)), Hinge())
    assert picked(below) == "direct"
    narrow = _sparse_hinge_data(auto.SMO_LINEAR_MIN_SAMPLES, 0.1)  # a9a's shape: the ridge dual
    assert picked(EmpiricalRisk(narrow, Hinge(), fit_intercept=True)) == "direct on matrix:fn"
    dense = _sparse_hinge_data(auto.AID_MIN_SAMPLES_QP, 0.8)  # kept dense by SMO
    assert picked(EmpiricalRisk(dense, Hinge(), fit_intercept=True)) == "direct on matrix:fn"
    chosen = of.solve(model)
    reference = of.solve(model, "direct")
    assert chosen.driver == "smo"
    assert "SMO through w" in chosen.stats["auto_rule"]
    assert chosen.status is of.Status.OPTIMAL
    assert reference.status is of.Status.OPTIMAL
    assert chosen.objective <= reference.objective * (1 + 2e-6)
    assert chosen.bound <= reference.objective * (1 + 1e-12)
