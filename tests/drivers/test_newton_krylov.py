"""PrimalNewton's inner pieces: conjugate residuals, the compiled logistic passes, the dual.

Conjugate residuals make the residual least over the Krylov space (never above CG's at the same
step) with a decreasing quadratic model; the compiled logistic passes and CSR products agree
with numpy and scipy, also where ``exp`` would overflow; the dual value from Fenchel-Young's
equality agrees with the dual summed term by term; a logistic run takes the residual steps and
still matches Direct; a wrong dual point handed to the model never certifies more than the
optimum.
"""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit
from smooth_loss_data import a1a_rows, reference

import optframe as of
from optframe.capabilities import ElasticNetSmoothLoss
from optframe.data import Dataset
from optframe.drivers import PrimalNewton
from optframe.drivers import newton as newton_module
from optframe.drivers import newton_core as core
from optframe.drivers.dcd import as_csr
from optframe.drivers.smooth_loss import SmoothLoss
from optframe.losses import Logistic, SquaredHinge
from optframe.models import EmpiricalRisk
from optframe.penalties import L2


@pytest.fixture(scope="module")
def a1a():
    """600 rows of a1a (sparse binary features, labels in {-1, +1})."""
    return a1a_rows(600)


def spd_system(seed=0, size=40, condition=1e5):
    """A positive definite matrix with spread eigenvalues and a right-hand side."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(size, size)))
    H = Q @ np.diag(np.geomspace(1.0, condition, size)) @ Q.T
    return H, rng.normal(size=size)


def run(method, H, g, steps, **options):
    stop = newton_module._Stop(steps, 0.0, 0.0, None)
    return method(lambda s: H @ s, g, **options, stop=stop)


def test_conjugate_residuals_make_the_residual_least():
    H, g = spd_system()
    ones = np.ones_like(g)
    values = []
    for steps in range(1, 25):
        s_cr, _ = run(newton_module._conjugate_residuals, H, g, steps)
        s_cg, _ = run(newton_module._conjugate_gradients, H, g, steps, inverse=ones)
        assert np.linalg.norm(H @ s_cr + g) <= np.linalg.norm(H @ s_cg + g) * (1 + 1e-9)
        values.append(float(g @ s_cr + 0.5 * s_cr @ H @ s_cr))
    assert all(b <= a + 1e-12 * abs(a) for a, b in itertools.pairwise(values))
    H, g = spd_system(condition=10.0)
    exact, _ = run(newton_module._conjugate_residuals, H, g, 400)
    assert np.linalg.norm(H @ exact + g) <= 1e-6 * np.linalg.norm(g)


def test_conjugate_residuals_stop_at_the_residual_asked_for():
    H, g = spd_system(1, condition=10.0)
    wanted = 1e-3 * np.linalg.norm(g)
    stop = newton_module._Stop(1_000, 0.0, wanted, None)
    s, steps = newton_module._conjugate_residuals(lambda v: H @ v, g, stop)
    assert np.linalg.norm(H @ s + g) <= wanted * (1 + 1e-6)
    shorter = newton_module._Stop(steps - 1, 0.0, 0.0, None)
    s, _ = newton_module._conjugate_residuals(lambda v: H @ v, g, shorter)
    assert np.linalg.norm(H @ s + g) > wanted


def test_the_compiled_logistic_passes_match_numpy():
    rng = np.random.default_rng(2)
    a = np.concatenate([rng.normal(scale=5.0, size=500), [-800.0, -40.0, 0.0, 40.0, 800.0]])
    costs = rng.uniform(0.0, 2.0, a.size)
    slope = rng.choice([-1.0, 1.0], a.size)
    problem = EmpiricalRisk(Dataset(X=np.ones((2, 1)), y=[1.0, -1.0]), Logistic()).structure(
        ElasticNetSmoothLoss
    )
    value, first, _ = SmoothLoss(problem).slopes(a)
    u, curvature = np.empty_like(a), np.empty_like(a)
    total = core.logistic_slopes(a, costs, slope, u, curvature)
    assert total == pytest.approx(float(costs @ value), rel=1e-13)
    np.testing.assert_allclose(u, costs * slope * first, rtol=1e-13, atol=1e-300)
    exact = costs * expit(a) * expit(-a)  # numpy's 1 - expit(-a) rounds to 0 from a = -37 on
    np.testing.assert_allclose(curvature, exact, rtol=1e-12, atol=1e-300)
    assert math.isfinite(total)


def test_the_compiled_csr_products_match_scipy(a1a):
    X, _ = a1a
    indptr, indices, data = as_csr(sp.csr_array(X))
    rng = np.random.default_rng(3)
    u = rng.normal(size=X.shape[0])
    u[::3] = 0.0
    out = np.empty(X.shape[1] + 1)
    core.transposed_times(indptr, indices, data, u, out)
    np.testing.assert_allclose(out[:-1], X.T @ u, rtol=1e-12, atol=1e-12)
    core.squares_times(indptr, indices, data, np.abs(u), out)
    np.testing.assert_allclose(out[:-1], X.power(2).T @ np.abs(u), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("loss", [Logistic(), SquaredHinge()], ids=["logistic", "sqhinge"])
def test_the_dual_from_fenchel_young_is_the_summed_dual(a1a, loss):
    X, y = a1a
    model = EmpiricalRisk(Dataset(X=X, y=y), loss, penalty=L2(), C=0.5, fit_intercept=False)
    state = newton_module._Newton(model.structure(ElasticNetSmoothLoss), None)
    for _ in range(3):  # iterates short of the optimum
        primal, predicted = state.evaluate(summed=False)
        again, summed = state.evaluate(summed=True)
        assert again == primal
        assert predicted == pytest.approx(summed, rel=1e-9, abs=1e-9 * abs(primal))
        assert predicted < primal
        direction, _ = state.newton_direction(3, 0.5)
        assert state.line_search(direction) > 0.0
        kept = state.evaluate(summed=False)  # the accepted trial's loss and derivatives
        gradient = state.gradient.copy()
        state.refresh()
        assert state.evaluate(summed=False) == pytest.approx(kept, rel=1e-12)
        np.testing.assert_allclose(state.gradient, gradient, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("intercept", [False, True], ids=["no_b", "b"])
def test_a_logistic_run_takes_residual_steps_and_matches_direct(a1a, monkeypatch, intercept):
    X, y = a1a
    model = EmpiricalRisk(
        Dataset(X=X, y=y), Logistic(), penalty=L2(), C=0.5, fit_intercept=intercept
    )
    calls = []
    original = newton_module._conjugate_residuals

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(newton_module, "_conjugate_residuals", counted)
    result = of.solve(model, PrimalNewton())
    ref = reference(model)
    assert calls
    assert result.status is ref.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(ref.objective, rel=1e-6)
    assert result.bound <= ref.objective + 1e-9 * ref.objective
    # residual steps that stop far too early: more iterations, never a false certificate
    monkeypatch.setattr(newton_module, "RESIDUAL_ENOUGH", 50.0)
    loose = of.solve(model, PrimalNewton())
    assert loose.bound <= ref.objective + 1e-9 * ref.objective
    assert loose.status is of.Status.OPTIMAL
    assert loose.objective == pytest.approx(ref.objective, rel=1e-6)


def test_a_wrong_dual_point_never_certifies_more_than_the_optimum(a1a):
    X, y = a1a
    model = EmpiricalRisk(Dataset(X=X, y=y), Logistic(), penalty=L2(), C=0.5, fit_intercept=False)
    ref = reference(model)
    result = of.solve(model, PrimalNewton())
    w = np.asarray(result.solution["w"])
    alpha = -model.costs * Logistic().derivative(model.argument(w, 0.0))  # the point it certifies
    rng = np.random.default_rng(4)
    for wrong in (1.5 * alpha, alpha + rng.normal(scale=0.2, size=alpha.size), -alpha):
        solution = {"w": w, "intercept": np.zeros(1), "alpha": wrong}
        assert model.dual_bound(solution) <= ref.objective + 1e-9 * ref.objective
        perturbed = {"w": 1.05 * w, "intercept": np.zeros(1), "alpha": wrong}
        objective, bound = model.objective(perturbed), model.dual_bound(perturbed)
        assert (objective - bound) / model.gap_scale(objective, bound) > 1e-6


def test_the_logistic_intercept_is_not_damped():
    """Columns centred at 100: the intercept nearly one of them. A damped intercept (as for the
    ReHU losses) made Newton linear and hit the iteration limit; undamped it takes a few steps."""
    rng = np.random.RandomState(0)
    X = rng.normal(loc=100.0, size=(100, 2))
    y = np.where(rng.randint(0, 2, 100) > 0, 1.0, -1.0)
    model = EmpiricalRisk(Dataset(X=X, y=y), Logistic(), penalty=L2(), C=1.0)
    result = of.solve(model, PrimalNewton())
    ref = reference(model)
    assert result.status is ref.status is of.Status.OPTIMAL
    assert result.iterations <= 20
    assert result.objective == pytest.approx(ref.objective, rel=1e-6)
    assert result.bound <= ref.objective + 1e-9 * ref.objective
