"""SMO's steps through w for the linear kernel (optframe/drivers/smo_linear.py)."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

import optframe as of
from optframe.data import Dataset
from optframe.drivers import SMO
from optframe.drivers import smo as smo_module
from optframe.errors import ModelError
from optframe.kernels import RBF
from optframe.models import PULearning, WeightedSVM


def svm_data(n=400, d=12, density=1.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    y = np.where(X[:, 0] - X[:, 1] + 0.8 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def pu_data(p=15, n=300, m=4, seed=1):
    rng = np.random.default_rng(seed)
    pos = rng.normal(1.0, 1.0, size=(p, m))
    n_pos = int(0.4 * n)
    unl = np.vstack([rng.normal(1.0, 1.0, (n_pos, m)), rng.normal(-1.0, 1.0, (n - n_pos, m))])
    X = np.vstack([pos, unl])
    y = np.r_[np.ones(p), np.zeros(n)]
    order = rng.permutation(y.size)
    return Dataset(X=X[order], y=y[order])


def direct(model):
    return of.solve(
        model,
        driver=of.drivers.Direct(form="dual"),
        backend="clarabel",
        solver_options={"tol_gap_rel": 1e-10, "tol_gap_abs": 1e-10},
    )


def check_against(result, ref, model):
    """The w path's result: certified, the Direct objective, a valid bound, an exact w."""
    assert result.stats["linear_steps"] == "weights"
    assert result.stats["kernel_rows"] == 0
    assert result.status is of.Status.OPTIMAL  # the certificate closes at 1e-6
    scale = max(1.0, abs(ref.objective))
    assert abs(result.objective - ref.objective) <= 1e-6 * scale
    assert result.bound <= ref.objective + 1e-8 * scale
    assert result.gap <= 1e-6
    assert result.objective == pytest.approx(model.objective(result.solution), rel=1e-11)
    assert result.stats["w_drift"] <= 1e-12
    assert result.stats["equality_residual"] <= 1e-9 * scale
    duals = [r.extras["dual_objective"] for r in result.history]
    assert all(b >= a - 1e-12 * scale for a, b in itertools.pairwise(duals))


@pytest.mark.parametrize("size", [8, 4096])  # many working sets, or one holding every variable
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_weighted_svm_through_w_matches_direct(sparse, size):
    X, y = svm_data(density=0.15 if sparse else 1.0)
    weights = np.random.default_rng(5).uniform(0.5, 2.0, y.size)
    data = Dataset(X=sp.csr_array(X) if sparse else X, y=y)
    model = WeightedSVM(data, C=2.0, sample_weight=weights)
    ref = direct(model)
    result = of.solve(model, driver=SMO(tol=1e-6, subproblem_size=size, check_every=50))
    check_against(result, ref, model)
    if size == 8:
        assert result.stats["working_sets"] > 10
    assert model.violation(result.solution) <= 1e-9 * 2.0


@pytest.mark.parametrize(("lam", "prior"), [(1e-2, 0.4), (1e-3, 0.5)])  # 0.5: start on the kink
def test_pu_learning_through_w_matches_direct(lam, prior):
    model = PULearning(pu_data(), prior=prior, lam=lam, kernel="linear")
    ref = of.solve(
        model, backend="clarabel", solver_options={"tol_gap_rel": 1e-10, "tol_gap_abs": 1e-10}
    )
    for size in (8, 4096):
        result = of.solve(model, driver=SMO(tol=1e-6, subproblem_size=size, check_every=50))
        check_against(result, ref, model)
        sigma = result.solution["sigma"]
        assert sigma.min() >= 0.0
        assert sigma.max() <= model.c2


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_weights_and_rows_reach_the_same_objective(sparse):
    X, y = svm_data(n=1500, d=20, density=0.1 if sparse else 1.0, seed=2)
    model = WeightedSVM(Dataset(X=sp.csr_array(X) if sparse else X, y=y), C=1.0)
    through_w = of.solve(model, driver=SMO(tol=1e-6))
    rows = of.solve(model, driver=SMO(tol=1e-6, linear_steps="rows"))
    assert (through_w.stats["linear_steps"], rows.stats["linear_steps"]) == ("weights", "rows")
    assert rows.stats["kernel_rows"] > 0
    scale = max(1.0, abs(rows.objective))
    assert abs(through_w.objective - rows.objective) <= 1e-7 * scale
    assert through_w.bound <= rows.objective + 1e-9 * scale
    assert rows.bound <= through_w.objective + 1e-9 * scale
    # the default tolerances: certified by the gap tightening, as with rows
    default = of.solve(model, driver=SMO())
    assert default.status is of.Status.OPTIMAL
    assert default.stats["linear_steps"] == "weights"


def test_a_drifting_w_is_reported_and_the_certificate_stays_honest(monkeypatch):
    """A lying w (off after every chunk) is caught by the drift check; the bound stays valid."""
    X, y = svm_data(n=300)
    model = WeightedSVM(Dataset(X=X, y=y), C=1.0)
    ref = direct(model)
    real = smo_module.linear.run_chunk

    def drifting(Z, w, *args):
        out = real(Z, w, *args)
        w += 1e-3
        return out

    monkeypatch.setattr(smo_module.linear, "run_chunk", drifting)
    result = of.solve(model, driver=SMO(tol=1e-6, check_every=20), max_iter=3000)
    assert result.stats["w_drift"] > 1e-4
    scale = max(1.0, abs(ref.objective))
    assert result.bound <= ref.objective + 1e-8 * scale  # from the gradient from scratch
    assert result.objective >= ref.objective - 1e-8 * scale


def test_iteration_limit_counts_pair_steps():
    X, y = svm_data()
    model = WeightedSVM(Dataset(X=X, y=y), C=1.0)
    ref = direct(model)
    result = of.solve(model, driver=SMO(tol=1e-9), max_iter=5)
    assert result.status is of.Status.ITERATION_LIMIT
    assert result.iterations == 5
    assert result.stats["steps"] == 5
    scale = max(1.0, abs(ref.objective))
    assert result.bound <= ref.objective + 1e-9 * scale
    assert result.objective >= ref.objective - 1e-9 * scale


def test_which_steps_run():
    X, y = svm_data(n=120)
    data = Dataset(X=X, y=y)
    linear = WeightedSVM(data, C=1.0)
    assert of.solve(linear, driver=SMO()).stats["linear_steps"] == "weights"
    assert of.solve(linear, driver=SMO(linear_steps="rows")).stats["linear_steps"] == "rows"
    # the paper's rule and the other kernels go by kernel rows
    pu = PULearning(pu_data(n=80), prior=0.4, lam=1e-2, kernel="linear")
    assert of.solve(pu, driver=SMO(stopping="paper")).stats["linear_steps"] == "rows"
    rbf = WeightedSVM(data, C=1.0, kernel=RBF(gamma=0.1))
    assert of.solve(rbf, driver=SMO(linear_steps="weights")).stats["linear_steps"] == "rows"
    with pytest.raises(ModelError, match="linear_steps"):
        SMO(linear_steps="columns")
    with pytest.raises(ModelError, match="subproblem_size"):
        SMO(subproblem_size=1)
