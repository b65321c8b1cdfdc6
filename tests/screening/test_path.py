"""solve_path with and without screening: same objectives, safety on every data set, bad input."""

import dataclasses

import numpy as np
import pytest

import optframe as of
from optframe.bench.suites.dvi import path_model
from optframe.capabilities import LinearBoxDual
from optframe.data import Dataset, make_toy
from optframe.errors import IncompatibleDriver, ModelError
from optframe.kernels import RBF
from optframe.models import RegularizedLAD, WeightedSVM
from optframe.screening import DVI, ESSNSV, SSNSV

GRID = np.logspace(-2, 1, 100)


def lad_model(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = X @ rng.normal(size=5) + rng.laplace(size=n)
    return RegularizedLAD(Dataset(X=X, y=y), C=0.01, fit_intercept=False)


def toy(which):
    return WeightedSVM(make_toy(which, 0), C=0.01, fit_intercept=False)


def rel_diff(a, b):
    return np.max(np.abs(a.objectives - b.objectives) / np.maximum(1.0, np.abs(b.objectives)))


@pytest.mark.parametrize(
    ("model", "rules"),
    [(toy(2), [DVI(), SSNSV(), ESSNSV()]), (lad_model(), [DVI()])],
    ids=["svm-toy2", "lad"],
)
def test_same_objectives_with_and_without_screening(model, rules):
    base = of.solve_path(model, "C", GRID)
    assert {r.status for r in base.results} == {of.Status.OPTIMAL}
    assert np.all(np.isnan(base.rejection))
    for rule in rules:
        path = of.solve_path(model, "C", GRID, screening=rule)
        assert {r.status for r in path.results} == {of.Status.OPTIMAL}
        assert path.fallbacks == 0
        assert rel_diff(path, base) <= 1e-6
        assert np.isnan(path.rejection[0])
        assert np.all(path.rejection[1:] >= 0)
        # the result at each value is the full model's, certified by its own gap
        for result in path.results:
            assert result.objective - result.bound <= 1e-6 * max(1.0, abs(result.objective))
            assert result.source.C in GRID


# Every data set of the dvi suite (first 1500 rows of the seeded shuffle) and the toys.
SUITE = [("toy1", "svm"), ("toy2", "svm"), ("toy3", "svm"), ("wine", "svm"), ("ijcnn1", "svm"),
         ("skin", "svm"), ("magic", "lad"), ("computer", "lad"), ("houses", "lad")]  # fmt: skip


@pytest.mark.parametrize(("name", "problem"), SUITE, ids=[s[0] for s in SUITE])
def test_screening_is_safe_on_every_data_set(name, problem):
    """Sets screened from loose (1e-4) solutions against a tight (1e-10) reference path."""
    model = path_model(name, problem, rows=1500)
    grid = np.logspace(-2, 1, 40)
    reference = of.solve_path(model, "C", grid, tol=1e-10)
    dual = model.structure(LinearBoxDual)
    rules = [DVI()] if problem == "lad" else [DVI(), SSNSV(), ESSNSV()]
    for rule in rules:
        path = of.solve_path(model, "C", grid, screening=rule, tol=1e-4)
        screened = 0
        for k in range(1, grid.size):
            solution = reference.results[k].solution
            s = np.asarray(dual.Z @ solution[dual.primal_key]).reshape(-1) - dual.target
            alpha = solution[dual.dual_key]
            scale = grid[k] / grid[0]
            band = 1e-6 * (1.0 + np.abs(dual.target))
            R, L = path.R[k], path.L[k]
            assert np.all(s[R] > band[R]), f"{rule.name}: R sample on or inside the margin"
            assert np.all(s[L] < -band[L]), f"{rule.name}: L sample on or outside the margin"
            np.testing.assert_allclose(alpha[R], dual.lower[R] * scale, atol=1e-12)
            np.testing.assert_allclose(alpha[L], dual.upper[L] * scale, rtol=1e-12)
            screened += R.size + L.size
        assert screened > 0 or rule.name != "dvi"
        assert rel_diff(path, reference) <= 1e-4


@pytest.mark.parametrize("build", [toy, lambda _: lad_model(300)], ids=["svm", "lad"])
def test_model_parameter_need_not_be_the_first_value(build):
    # the path's box starts at the grid's first value, whatever C the model was declared with
    model = build(2)
    declared = dataclasses.replace(model, C=1.0)
    grid = np.geomspace(0.01, 10, 10)
    base = of.solve_path(model, "C", grid)
    path = of.solve_path(declared, "C", grid, screening=DVI())
    assert {r.status for r in path.results} == {of.Status.OPTIMAL}
    assert rel_diff(path, base) <= 1e-6


def test_toy_rejection_patterns():
    """notes/dvi.md 6.9: Toy1 ~100% mostly R; Toy3 |L| of the order of |R|; DVI >= ESSNSV >=
    SSNSV on average."""
    toy1 = of.solve_path(toy(1), "C", GRID, screening=DVI())
    assert np.nanmean(toy1.rejection) > 0.97
    assert np.nanmean(toy1.rejection_R) > 20 * np.nanmean(toy1.rejection_L)
    toy3 = of.solve_path(toy(3), "C", GRID, screening=DVI())
    assert np.nanmean(toy3.rejection) > 0.9
    ratio = np.nanmean(toy3.rejection_L) / np.nanmean(toy3.rejection_R)
    assert 0.3 < ratio < 3.0
    ss = of.solve_path(toy(3), "C", GRID, screening=SSNSV())
    es = of.solve_path(toy(3), "C", GRID, screening=ESSNSV())
    # per value with the same inputs: test_rules.py; along two paths the iterates differ
    assert np.nanmean(toy3.rejection) > np.nanmean(es.rejection) > np.nanmean(ss.rejection)


def test_direct_backend_on_the_reduced_problem():
    model = WeightedSVM(make_toy(2, 3, n_per_class=100), C=0.01, fit_intercept=False)
    grid = np.logspace(-2, 1, 8)
    dcd = of.solve_path(model, "C", grid, tol=1e-9)
    for rule in (DVI(), ESSNSV()):
        direct = of.solve_path(model, "C", grid, screening=rule, driver="direct",
                               backend="clarabel")  # fmt: skip
        assert direct.results[1].driver == f"direct+{rule.name}"
        assert rel_diff(direct, dcd) <= 1e-6
    lad = lad_model(n=200)
    dcd = of.solve_path(lad, "C", grid, tol=1e-9)
    direct = of.solve_path(lad, "C", grid, screening=DVI(), driver="direct", backend="clarabel")
    assert rel_diff(direct, dcd) <= 1e-6
    assert np.nanmean(direct.rejection) > 0.05  # a coarse grid (rho = 2.7)


def test_path_bookkeeping():
    path = of.solve_path(toy(2), "C", GRID[:30], screening=ESSNSV())
    assert len(path.results) == len(path.R) == len(path.L) == 30
    assert path.timings.total >= path.timings.init + path.timings.screening + path.timings.solve
    assert path.timings.init > 0
    for k in range(1, 30):
        assert np.intersect1d(path.R[k], path.L[k]).size == 0
        expected = (path.R[k].size + path.L[k].size) / 2000
        assert path.rejection[k] == pytest.approx(expected)
    assert path.rule == "essnsv"
    assert path.driver == "dcd"


def test_bad_input():
    model = toy(1)
    with pytest.raises(ModelError, match="increasing"):
        of.solve_path(model, "C", [0.1, 0.05], screening=DVI())
    with pytest.raises(ModelError, match="increasing"):
        of.solve_path(model, "C", [0.1, 0.1], screening=SSNSV())
    with pytest.raises(ModelError, match="positive"):
        of.solve_path(model, "C", [-1.0, 0.1], screening=DVI())
    with pytest.raises(ModelError, match="no parameter 'lam'"):
        of.solve_path(model, "lam", [0.1, 0.2])
    with pytest.raises(ModelError, match="finite"):
        of.solve_path(model, "C", [0.1, np.nan])
    with pytest.raises(ModelError, match="loss parameter 'C'"):
        of.solve_path(model, "fit_intercept", [1.0, 2.0], screening=DVI())
    with pytest.raises(IncompatibleDriver, match="fit_intercept=True adds the equality row"):
        of.solve_path(WeightedSVM(make_toy(1, 0, n_per_class=10), C=0.1), "C", [0.1, 0.2],
                      screening=DVI())  # fmt: skip
    kernel = WeightedSVM(make_toy(1, 0, n_per_class=10), C=0.1, kernel=RBF(gamma=1.0),
                         fit_intercept=False)  # fmt: skip
    with pytest.raises(IncompatibleDriver, match="linear kernel"):
        of.solve_path(kernel, "C", [0.1, 0.2], screening=DVI())
    with pytest.raises(IncompatibleDriver, match="hinge"):
        of.solve_path(lad_model(n=50), "C", [0.1, 0.2], screening=SSNSV())
    # without a rule, any order is fine and the model checks its own values
    path = of.solve_path(model, "C", [1.0, 0.1])
    assert len(path.results) == 2
    with pytest.raises(ModelError, match="C must be a finite number > 0"):
        of.solve_path(model, "C", [0.1, -1.0])
