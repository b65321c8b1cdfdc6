"""DCD on the EntropyBoxDual: L2 logistic regression (Yu, Huang and Lin 2011) against Direct.

Direct solves the exponential-cone program with Clarabel; both results carry the model's own
certificate (the Fenchel dual with the entropy conjugate). Real data, sparse (a1a) and dense
(breast cancer), sample weights, the intercept as a constant feature; a lying structure must not
come back OPTIMAL.
"""

import numpy as np
import pytest
import scipy.sparse as sp

import optframe as of
from optframe.capabilities import EntropyBoxDual, LinearBoxDual, PiecewiseBoxDual
from optframe.data import Dataset, load_dataset
from optframe.drivers import DCD, Direct, PrimalNewton
from optframe.drivers.auto import DCD_MIN_SAMPLES, NEWTON_MIN_SAMPLES, choose
from optframe.errors import IncompatibleDriver
from optframe.losses import Logistic
from optframe.models import EmpiricalRisk
from optframe.penalties import L1

TIGHT = {"tol_gap_rel": 1e-11, "tol_gap_abs": 1e-11, "tol_feas": 1e-11}


@pytest.fixture(scope="module")
def a1a():
    data = load_dataset("a1a")
    return sp.csr_array(data.X), np.asarray(data.y, dtype=np.float64)


@pytest.fixture(scope="module")
def cancer():
    data = load_dataset("breast_cancer")
    X = np.asarray(data.X, dtype=np.float64)
    return (X - X.mean(axis=0)) / X.std(axis=0), np.asarray(data.y, dtype=np.float64)


def reference(model):
    return of.solve(model, Direct(), backend="clarabel", solver_options=TIGHT)


def check(result, ref, rel=1e-6):
    assert result.status is of.Status.OPTIMAL, result.summary()
    assert ref.status is of.Status.OPTIMAL, ref.summary()
    assert result.objective == pytest.approx(ref.objective, rel=rel)
    # each bound is below the other's objective (weak duality, whoever computed the point)
    assert result.bound <= ref.objective + 1e-9 * abs(ref.objective)
    assert ref.bound <= result.objective + 1e-9 * abs(result.objective)
    assert result.gap >= 0.0


@pytest.mark.parametrize("sparse", [True, False], ids=["csr", "dense"])
@pytest.mark.parametrize("C", [0.1, 4.0])
def test_dcd_matches_direct_on_a1a(a1a, sparse, C):
    X, y = a1a
    X = X[:800] if sparse else X[:800].toarray()
    model = EmpiricalRisk(Dataset(X=X, y=y[:800]), Logistic(), C=C, fit_intercept=False)
    assert model.structure_refusal(LinearBoxDual) is not None
    assert model.structure_refusal(PiecewiseBoxDual) is not None
    result = of.solve(model, DCD())
    assert result.stats["dual"] == "EntropyBoxDual"
    assert result.backend == "numba"
    check(result, reference(model))
    alpha = np.asarray(result.solution["alpha"])
    assert np.all((alpha > 0) & (alpha < C))  # strictly inside the box at the optimum


def test_dense_and_sparse_rows_give_the_same_run(cancer):
    X, y = cancer
    runs = [
        of.solve(EmpiricalRisk(Dataset(X=Z, y=y), Logistic(), fit_intercept=False), DCD())
        for Z in (X, sp.csr_array(X))
    ]
    assert runs[0].iterations == runs[1].iterations
    np.testing.assert_allclose(runs[0].solution["w"], runs[1].solution["w"], rtol=1e-10)


def test_intercept_as_a_feature_matches_direct(cancer):
    X, y = cancer
    Xb = np.hstack([X, np.ones((X.shape[0], 1))])  # LIBLINEAR's -B 1
    model = EmpiricalRisk(Dataset(X=Xb, y=y), Logistic(), C=2.0, fit_intercept=False)
    check(of.solve(model, DCD()), reference(model))


def test_sample_weights_count(cancer):
    X, y = cancer
    weights = np.random.default_rng(0).uniform(0.0, 3.0, y.size)
    weights[:25] = 0.0  # zero weight: the variable stays at 0
    data = Dataset(X=X, y=y)
    weighted = EmpiricalRisk(data, Logistic(), fit_intercept=False, sample_weight=weights)
    result = of.solve(weighted, DCD())
    check(result, reference(weighted))
    assert np.all(np.asarray(result.solution["alpha"])[:25] == 0.0)
    plain = of.solve(EmpiricalRisk(data, Logistic(), fit_intercept=False), DCD())
    assert abs(plain.objective - result.objective) > 1e-3 * abs(result.objective)
    # an integer weight is a repeated row
    twice = np.r_[np.full(10, 2.0), np.ones(y.size - 10)]
    doubled = EmpiricalRisk(data, Logistic(), fit_intercept=False, sample_weight=twice)
    repeated = Dataset(X=np.vstack([X[:10], X]), y=np.r_[y[:10], y])
    same = of.solve(EmpiricalRisk(repeated, Logistic(), fit_intercept=False), DCD())
    assert of.solve(doubled, DCD()).objective == pytest.approx(same.objective, rel=1e-6)


def test_the_dual_is_a_bound_anywhere_in_the_box(cancer):
    X, y = cancer
    model = EmpiricalRisk(Dataset(X=X, y=y), Logistic(), C=1.0, fit_intercept=False)
    dual = model.structure(EntropyBoxDual)
    ref = reference(model)
    rng = np.random.default_rng(1)
    for _ in range(5):
        alpha = rng.uniform(0.0, 1.0, dual.size)
        assert dual.dual_value(alpha) <= ref.objective
    alpha = np.asarray(ref.solution["alpha"])
    assert dual.dual_value(alpha) == pytest.approx(ref.objective, rel=1e-7)  # tight there
    w = np.asarray(ref.solution["w"])
    assert dual.primal_value(w) == pytest.approx(ref.objective, rel=1e-12)


@pytest.mark.parametrize("lie", ["upper", "recovery"])
def test_a_lying_structure_is_not_certified(cancer, monkeypatch, lie):
    """A box twice too large (the wrong problem) or a recovery that perturbs w: not OPTIMAL."""
    X, y = cancer
    model = EmpiricalRisk(Dataset(X=X, y=y), Logistic(), fit_intercept=False)
    from optframe.models import _risk_structures

    honest = _risk_structures.entropy_box_dual

    def lying(m):
        dual = honest(m)

        def recover(alpha):
            solution = dual.recover(alpha)
            return {**solution, "w": np.asarray(solution["w"]) * (1 + 1e-3)}

        return EntropyBoxDual(
            X=dual.X,
            coef=dual.coef,
            upper=2.0 * dual.upper if lie == "upper" else dual.upper,
            primal_value=dual.primal_value,
            recover=recover if lie == "recovery" else dual.recover,
        )

    monkeypatch.setattr("optframe.models.empirical_risk.entropy_box_dual", lying)
    result = of.solve(model, DCD())
    assert result.status is not of.Status.OPTIMAL
    assert result.bound <= reference(model).objective


def test_an_iteration_limit_is_not_optimal(cancer):
    X, y = cancer
    model = EmpiricalRisk(Dataset(X=X, y=y), Logistic(), C=100.0, fit_intercept=False)
    result = of.solve(model, DCD(check_every=1), max_iter=1)
    assert result.status is of.Status.ITERATION_LIMIT
    assert result.bound < result.objective


def test_refusals_name_the_reason(cancer):
    X, y = cancer
    data = Dataset(X=X[:100], y=y[:100])
    with pytest.raises(IncompatibleDriver, match=r"EntropyBoxDual.*1'v = 0"):
        of.solve(EmpiricalRisk(data, Logistic()), DCD())
    with pytest.raises(IncompatibleDriver, match="L2"):
        of.solve(EmpiricalRisk(data, Logistic(), penalty=L1(), fit_intercept=False), DCD())


def test_auto_sends_logistic_to_newton_and_dcd_stays_by_name(a1a):
    # PrimalNewton is faster than DCD on the entropy dual at every size measured (auto's notes)
    X, y = a1a
    small = EmpiricalRisk(Dataset(X=X[:500], y=y[:500]), Logistic(), fit_intercept=False)
    assert isinstance(choose(small).driver, PrimalNewton)
    data = load_dataset("svmguide1")  # 3,089 rows
    assert DCD_MIN_SAMPLES <= data.n_samples < NEWTON_MIN_SAMPLES
    model = EmpiricalRisk(data, Logistic(), fit_intercept=False)
    assert isinstance(choose(model).driver, PrimalNewton)
    free = EmpiricalRisk(data, Logistic())
    assert isinstance(choose(free).driver, PrimalNewton)
    by_auto, by_dcd = of.solve(model), of.solve(model, driver=DCD())
    assert by_auto.driver == "newton"
    assert by_auto.status is of.Status.OPTIMAL, by_auto.summary()
    assert by_dcd.status is of.Status.OPTIMAL, by_dcd.summary()
    assert by_dcd.objective == pytest.approx(by_auto.objective, rel=2e-6)


def test_the_kernel_is_registered_for_warm_up(cancer):
    """optframe.jit compiles the entropy kernel alone for a logistic run, before the timer."""
    from optframe.jit import needs_of
    from optframe.losses import SquaredHinge

    X, y = cancer
    data = Dataset(X=X[:50], y=y[:50])
    needs = needs_of(EmpiricalRisk(data, Logistic(), fit_intercept=False), DCD())
    assert (needs.entropy, needs.pieces) == (True, False)
    needs = needs_of(EmpiricalRisk(data, SquaredHinge(), fit_intercept=False), DCD())
    assert (needs.entropy, needs.pieces) == (False, True)
    result = of.solve(EmpiricalRisk(data, Logistic(), fit_intercept=False), DCD())
    assert result.timings.compile >= 0.0
    assert result.status is of.Status.OPTIMAL
