"""SMO's kernel working sets for the RBF and polynomial kernels (optframe/drivers/smo_sets.py)."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from test_smo_linear import direct, pu_data, svm_data

import optframe as of
from optframe.data import Dataset
from optframe.drivers import SMO
from optframe.drivers import smo as smo_module
from optframe.errors import ModelError
from optframe.kernels import RBF, Polynomial
from optframe.losses import SquaredHinge
from optframe.models import EmpiricalRisk, PULearning, WeightedSVM


def binary_data(n=400, d=40, seed=3):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.12).astype(np.float64)
    y = np.where(X[:, :5].sum(axis=1) - X[:, 5:10].sum(axis=1) + 0.5 * rng.normal(size=n) > 0,
                 1.0, -1.0)  # fmt: skip
    return sp.csr_array(X), y


def check_against(result, ref, model):
    """Certified by the sets, at the Direct objective, with a valid bound."""
    assert result.stats["kernel_steps"] == "sets"
    assert result.stats["working_sets"] > 0
    assert result.stats["cache_rows"] == 0  # no row over all the variables is kept
    assert result.status is of.Status.OPTIMAL
    scale = max(1.0, abs(ref.objective))
    assert abs(result.objective - ref.objective) <= 1e-6 * scale
    assert result.bound <= ref.objective + 1e-8 * scale
    assert result.objective == pytest.approx(model.objective(result.solution), rel=1e-11)
    assert result.stats["equality_residual"] <= 1e-9 * scale
    duals = [r.extras["dual_objective"] for r in result.history]
    assert all(b >= a - 1e-12 * scale for a, b in itertools.pairwise(duals))


def by_sets_against_direct(model, size):
    """The sets of ``size`` variables at tol 1e-6 against Direct (many sets when size is 8)."""
    ref = direct(model)
    driver = SMO(tol=1e-6, subproblem_size=size, check_every=50, kernel_steps="sets")
    result = of.solve(model, driver=driver)
    check_against(result, ref, model)
    if size == 8:
        assert result.stats["working_sets"] > 10


@pytest.mark.parametrize("size", [8, 64, 4096])  # many sets, a few, one holding every variable
@pytest.mark.parametrize("layout", ["dense", "sparse", "binary"])
def test_weighted_svm_by_sets_matches_direct(layout, size):
    if layout == "binary":
        X, y = binary_data()
    else:
        X, y = svm_data(density=0.15 if layout == "sparse" else 1.0)
        X = sp.csr_array(X) if layout == "sparse" else X
    weights = np.random.default_rng(5).uniform(0.5, 2.0, y.size)
    model = WeightedSVM(Dataset(X=X, y=y), C=2.0, sample_weight=weights, kernel=RBF(gamma=0.2))
    by_sets_against_direct(model, size)


@pytest.mark.parametrize("size", [8, 4096])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_squared_hinge_by_sets_matches_direct(sparse, size):
    """The L2-loss SVM's standard dual: a diagonal of its own, no upper bounds."""
    X, y = svm_data(n=300, density=0.2 if sparse else 1.0, seed=6)
    weights = np.random.default_rng(7).uniform(0.5, 2.0, y.size)
    data = Dataset(X=sp.csr_array(X) if sparse else X, y=y, sample_weight=weights)
    model = EmpiricalRisk(data, SquaredHinge(), kernel=RBF(gamma=0.2), C=3.0)
    by_sets_against_direct(model, size)


@pytest.mark.parametrize("size", [8, 4096])
@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_no_intercept_by_sets_matches_direct(sparse, loss, size):
    """No equality row: the sets take single-variable steps (with the squared hinge's D)."""
    X, y = svm_data(n=300, density=0.2 if sparse else 1.0, seed=8)
    weights = np.random.default_rng(9).uniform(0.5, 2.0, y.size)
    data = Dataset(X=sp.csr_array(X) if sparse else X, y=y, sample_weight=weights)
    if loss == "hinge":
        model = WeightedSVM(data, C=2.0, kernel=RBF(gamma=0.2), fit_intercept=False)
    else:
        model = EmpiricalRisk(data, SquaredHinge(), kernel=RBF(gamma=0.2), C=3.0,
                              fit_intercept=False)  # fmt: skip
    ref = direct(model)
    driver = SMO(tol=1e-6, subproblem_size=size, check_every=50, kernel_steps="sets")
    result = of.solve(model, driver=driver)
    assert result.stats["single_steps"]
    check_against(result, ref, model)
    if size == 8:
        assert result.stats["working_sets"] > 10


@pytest.mark.parametrize("intercept", [True, False])
def test_sets_that_keep_meeting_their_rule_early_grow(monkeypatch, intercept):
    """Short sets double, up to GROW_TO times the size asked (every set counts as short here)."""
    X, y = svm_data(n=300, seed=6)
    model = EmpiricalRisk(Dataset(X=X, y=y), SquaredHinge(), kernel=RBF(gamma=0.2), C=3.0,
                          fit_intercept=intercept)  # fmt: skip
    ref = direct(model)
    driver = SMO(tol=1e-6, subproblem_size=16, check_every=50, kernel_steps="sets")
    assert of.solve(model, driver=driver).stats["set_size"] == 16
    monkeypatch.setattr(smo_module.sets.linear, "SHORT_SET", 1)
    result = of.solve(model, driver=driver)
    assert 16 < result.stats["set_size"] <= 16 * smo_module.sets.GROW_TO
    check_against(result, ref, model)


def test_polynomial_kernel_by_sets_matches_direct():
    X, y = svm_data(n=300, d=6)
    model = WeightedSVM(Dataset(X=X, y=y), C=1.0, kernel=Polynomial(degree=2, gamma=0.3))
    ref = direct(model)
    driver = SMO(tol=1e-6, subproblem_size=32, check_every=50, kernel_steps="sets")
    check_against(of.solve(model, driver=driver), ref, model)


@pytest.mark.parametrize(("lam", "prior"), [(1e-2, 0.4), (1e-3, 0.5)])  # 0.5: start on the kink
def test_pu_learning_by_sets_matches_direct(lam, prior):
    model = PULearning(pu_data(), prior=prior, lam=lam, kernel=RBF(gamma=0.5))
    ref = of.solve(
        model, backend="clarabel", solver_options={"tol_gap_rel": 1e-10, "tol_gap_abs": 1e-10}
    )
    for size in (8, 4096):
        driver = SMO(tol=1e-6, subproblem_size=size, check_every=50, kernel_steps="sets")
        result = of.solve(model, driver=driver)
        check_against(result, ref, model)


def test_sets_and_pairs_reach_the_same_objective_at_any_thread_count():
    X, y = svm_data(n=1200, d=10, seed=4)
    model = WeightedSVM(Dataset(X=X, y=y), C=1.0, kernel=RBF(gamma=0.1))
    pairs = of.solve(model, driver=SMO(tol=1e-6, kernel_steps="pairs"))
    one = of.solve(model, driver=SMO(tol=1e-6, kernel_steps="sets", subproblem_size=128),
                   threads=1)  # fmt: skip
    two = of.solve(model, driver=SMO(tol=1e-6, kernel_steps="sets", subproblem_size=128),
                   threads=2)  # fmt: skip
    assert pairs.stats["kernel_steps"] == "pairs"
    assert pairs.stats["working_sets"] == 0
    scale = max(1.0, abs(pairs.objective))
    assert abs(one.objective - pairs.objective) <= 1e-7 * scale
    assert one.bound <= pairs.objective + 1e-9 * scale
    # each gradient entry is summed by one thread in a fixed order: the same steps, bit for bit
    assert np.array_equal(one.solution["alpha"], two.solution["alpha"])
    assert one.stats["steps"] == two.stats["steps"]


def test_which_steps_run():
    X, y = svm_data(n=300)
    rbf = WeightedSVM(Dataset(X=X, y=y), C=1.0, kernel=RBF(gamma=0.2))
    assert of.solve(rbf, driver=SMO()).stats["kernel_steps"] == "pairs"  # auto: a small problem
    assert of.solve(rbf, driver=SMO(kernel_steps="sets")).stats["kernel_steps"] == "sets"
    # the paper's rule, the linear kernel, a dual without the equality row: always pairs (or the
    # steps through w)
    pu = PULearning(pu_data(), prior=0.4, lam=1e-2, kernel=RBF(gamma=0.5))
    paper = of.solve(pu, driver=SMO(stopping="paper", kernel_steps="sets"))
    assert paper.stats["kernel_steps"] == "pairs"
    linear = WeightedSVM(Dataset(X=X, y=y), C=1.0)
    assert of.solve(linear, driver=SMO(kernel_steps="sets")).stats["kernel_steps"] == "pairs"
    for intercept in (True, False):  # without the equality row: sets of single steps
        l2 = EmpiricalRisk(Dataset(X=X, y=y), SquaredHinge(), kernel=RBF(gamma=0.2),
                           fit_intercept=intercept)  # fmt: skip
        result = of.solve(l2, driver=SMO(kernel_steps="sets"))
        assert result.stats["kernel_steps"] == "sets"
        assert result.stats["single_steps"] is not intercept
        assert result.status is of.Status.OPTIMAL
        assert of.solve(l2, driver=SMO()).stats["kernel_steps"] == "pairs"  # auto: small
    with pytest.raises(ModelError, match="kernel_steps"):
        SMO(kernel_steps="blocks")


def test_iteration_limit_counts_pair_steps_inside_the_sets():
    X, y = svm_data()
    model = WeightedSVM(Dataset(X=X, y=y), C=1.0, kernel=RBF(gamma=0.2))
    ref = direct(model)
    result = of.solve(model, driver=SMO(tol=1e-9, kernel_steps="sets"), max_iter=5)
    assert result.status is of.Status.ITERATION_LIMIT
    assert result.stats["steps"] == 5
    scale = max(1.0, abs(ref.objective))
    assert result.bound <= ref.objective + 1e-9 * scale
    assert result.objective >= ref.objective - 1e-9 * scale


@pytest.mark.parametrize("intercept", [True, False], ids=["pairs", "single"])
def test_a_gradient_update_that_lies_is_caught_by_the_gradient_from_scratch(monkeypatch, intercept):
    """A wrong update of G (its moves added twice) cannot reach OPTIMAL on a wrong answer."""
    X, y = svm_data(n=300)
    model = WeightedSVM(Dataset(X=X, y=y), C=1.0, kernel=RBF(gamma=0.2), fit_intercept=intercept)
    ref = direct(model)
    real = smo_module.sets.kernel_sums

    def twice(Z, sqn, kind, gamma, coef0, degree, a, c, x, lo, hi, G):
        real(Z, sqn, kind, gamma, coef0, degree, a, c, x, lo, hi, G)
        real(Z, sqn, kind, gamma, coef0, degree, a, G, x, lo, hi, G)

    monkeypatch.setattr(smo_module.sets, "kernel_sums", twice)
    result = of.solve(model, driver=SMO(kernel_steps="sets", subproblem_size=16), max_iter=20000)
    scale = max(1.0, abs(ref.objective))
    assert result.bound <= ref.objective + 1e-8 * scale  # from the gradient from scratch
    if result.status is of.Status.OPTIMAL:
        assert abs(result.objective - ref.objective) <= 1e-6 * scale
