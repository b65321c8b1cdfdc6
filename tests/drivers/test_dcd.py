"""DCD (dual coordinate descent) against Direct (Clarabel) on the no-intercept SVM and LAD duals."""

import numpy as np
import pytest
import scipy.sparse as sp

import optframe as of
from optframe.capabilities import LinearBoxDual
from optframe.data import Dataset, make_toy
from optframe.drivers import DCD, Direct
from optframe.errors import IncompatibleDriver, ModelError
from optframe.kernels import RBF
from optframe.models import RegularizedLAD, WeightedSVM

TIGHT = {"tol_gap_rel": 1e-10, "tol_gap_abs": 1e-10, "tol_feas": 1e-10}


def reference(model, form=None):
    return of.solve(model, driver=Direct(form=form), backend="clarabel", solver_options=TIGHT)


def lad_data(n=300, m=5, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    if sparse:
        X[rng.random(X.shape) < 0.6] = 0.0
        X = sp.csr_array(X)
    y = np.asarray(X @ rng.normal(size=m)).reshape(-1) + rng.laplace(size=n)
    return Dataset(X=X, y=y)


def check(result, ref, rel=1e-6):
    assert result.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(ref.objective, rel=rel)
    assert result.bound <= ref.objective + 1e-9 * max(1.0, abs(ref.objective))
    assert result.objective - result.bound <= rel * max(1.0, abs(result.objective))


@pytest.mark.parametrize("C", [0.01, 1.0, 10.0])
def test_svm_matches_direct(C):
    model = WeightedSVM(make_toy(2, 1, n_per_class=150), C=C, fit_intercept=False)
    result = of.solve(model, driver=DCD(tol=1e-8))
    check(result, reference(model))
    # alpha in the box, w = sum alpha_i y_i x_i, b = 0
    alpha = result.solution["alpha"]
    assert np.all(alpha >= 0)
    assert np.all(alpha <= C + 1e-15)
    np.testing.assert_allclose(result.solution["w"], model.data.X.T @ (alpha * model.data.y))
    assert result.solution["intercept"][0] == 0.0


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("C", [0.05, 2.0])
def test_lad_matches_direct_dual_and_primal(C, sparse):
    model = RegularizedLAD(lad_data(sparse=sparse), C=C, fit_intercept=False)
    result = of.solve(model, driver=DCD(tol=1e-8))
    check(result, reference(model, "dual"))
    check(result, reference(model, "primal"))
    theta = result.solution["theta"]
    assert np.all(np.abs(theta) <= C + 1e-15)


def test_sample_weights_and_zero_rows():
    data = lad_data(n=80, seed=3)
    X = data.X.copy()
    X[:5] = 0.0  # ||x_i|| = 0: the coordinate step has no curvature
    weights = np.r_[np.zeros(3), np.full(77, 2.0)]
    model = RegularizedLAD(Dataset(X=X, y=data.y, sample_weight=weights), C=0.5,
                           fit_intercept=False)  # fmt: skip
    check(of.solve(model, driver=DCD(tol=1e-9)), reference(model))
    svm = WeightedSVM(Dataset(X=X, y=np.sign(data.y) + (data.y == 0)), C=0.5, fit_intercept=False)
    check(of.solve(svm, driver=DCD(tol=1e-9)), reference(svm))


def test_reduced_problem_matches_direct_and_keeps_fixed_values():
    model = WeightedSVM(make_toy(3, 2, n_per_class=100), C=1.0, fit_intercept=False)
    rng = np.random.default_rng(0)
    fixed = rng.random(200) < 0.3
    values = np.where(rng.random(200) < 0.5, 0.0, 1.0)
    reduced = model.structure(LinearBoxDual).with_fixed(fixed, values)
    result = of.solve(reduced, driver=DCD(tol=1e-9))
    ref = reference(reduced)
    check(result, ref)
    np.testing.assert_array_equal(result.solution["alpha"][fixed], values[fixed])
    # the reduced objective identity (notes/dvi.md 6.4): the full dual at the lifted alpha
    dual = model.structure(LinearBoxDual)
    assert dual.dual_value(result.solution["alpha"]) == pytest.approx(result.bound, rel=1e-12)


def test_warm_start_from_the_optimum_needs_one_check():
    model = RegularizedLAD(lad_data(), C=1.0, fit_intercept=False)
    cold = of.solve(model, driver=DCD(tol=1e-9))
    warm = of.solve(model, driver=DCD(tol=1e-9, warm_start=cold.solution["theta"]))
    assert warm.status is of.Status.OPTIMAL
    assert warm.iterations < cold.iterations / 5
    assert warm.objective == pytest.approx(cold.objective, rel=1e-9)


def test_shrinking_and_seed_do_not_change_the_optimum():
    model = WeightedSVM(make_toy(1, 4, n_per_class=150), C=3.0, fit_intercept=False)
    values = [
        of.solve(model, driver=DCD(tol=1e-9, shrinking=s, seed=seed)).objective
        for s in (True, False)
        for seed in (0, 1)
    ]
    assert max(values) - min(values) <= 1e-8 * abs(values[0])


def test_limits_are_statuses():
    model = WeightedSVM(make_toy(3, 0, n_per_class=200), C=10.0, fit_intercept=False)
    result = of.solve(model, driver=DCD(tol=1e-12, check_every=1), max_iter=2)
    assert result.status is of.Status.ITERATION_LIMIT
    assert result.bound <= result.objective


def test_bad_input():
    toy = make_toy(1, 0, n_per_class=10)
    with pytest.raises(IncompatibleDriver, match="fit_intercept=True"):
        of.solve(WeightedSVM(toy, C=1.0), driver=DCD())
    with pytest.raises(IncompatibleDriver, match="linear kernel"):
        of.solve(WeightedSVM(toy, C=1.0, kernel=RBF(gamma=1.0), fit_intercept=False), driver=DCD())
    with pytest.raises(IncompatibleDriver, match="fit_intercept=True"):
        of.solve(RegularizedLAD(lad_data(n=20), C=1.0), driver=DCD())
    with pytest.raises(IncompatibleDriver, match="LinearBoxDual"):
        of.solve(of.models.LADRegression(lad_data(n=20)), driver=DCD())  # no such structure
    with pytest.raises(ModelError):
        DCD(tol=0.0)
    with pytest.raises(ModelError):
        DCD(max_epochs=0)
    model = WeightedSVM(toy, C=1.0, fit_intercept=False)
    with pytest.raises(ModelError, match="outside the dual box"):
        model.structure(LinearBoxDual).with_fixed(np.ones(20, dtype=bool), np.full(20, 2.0))
    with pytest.raises(ModelError, match="shape"):
        model.structure(LinearBoxDual).with_fixed(np.ones(3, dtype=bool), np.zeros(3))


def test_prepared_matrices_are_not_confused_between_models():
    # DCD caches the CSR view of Z per matrix object; alternating models must not mix them
    first, second = lad_data(seed=1), lad_data(seed=2)
    models = [RegularizedLAD(d, C=1.0, fit_intercept=False) for d in (first, second)]
    refs = [reference(m) for m in models]
    for m, ref in [*zip(models, refs, strict=True), (models[0], refs[0])]:
        check(of.solve(m, driver=DCD(tol=1e-8)), ref)


def test_svm_box_dual_matrix_is_shared_along_a_path():
    data = make_toy(1, 0, n_per_class=30)
    a = WeightedSVM(data, C=0.1, fit_intercept=False)
    b = WeightedSVM(data, C=1.0, fit_intercept=False)
    assert a.structure(LinearBoxDual).Z is b.structure(LinearBoxDual).Z
    other = WeightedSVM(make_toy(1, 1, n_per_class=30), C=0.1, fit_intercept=False)
    Z = other.structure(LinearBoxDual).Z
    np.testing.assert_array_equal(Z, other.data.X * other.data.y[:, None])
