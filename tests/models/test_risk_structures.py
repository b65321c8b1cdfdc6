"""The structures EmpiricalRisk derives from its loss: exact maps, checked against the optimum."""

import numpy as np
import pytest

import optframe as of
from optframe.capabilities import BoxQPDual, LinearBoxDual
from optframe.data import Dataset, make_classification_svm, make_lad_set_a
from optframe.kernels import RBF
from optframe.losses import (
    Absolute,
    DoubleHinge,
    EpsilonInsensitive,
    Hinge,
    Pinball,
    SquaredHinge,
)
from optframe.models import EmpiricalRisk
from optframe.models._risk_structures import best_intercept
from optframe.penalties import L1
from optframe.screening import DVI

SVM = make_classification_svm(50, 3, separation=1.0, random_state=3)
LAD = make_lad_set_a(50, 3, random_state=3)


@pytest.mark.parametrize("loss", [Hinge(), DoubleHinge(), Pinball(0.2), EpsilonInsensitive(0.3)])
def test_best_intercept_is_the_minimizer(loss):
    rng = np.random.default_rng(0)
    n = 40
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    if loss.is_classification:
        p, q = np.zeros(n), y
    else:
        p, q = rng.normal(size=n), -np.ones(n)
    f, c = rng.normal(size=n), rng.uniform(0.0, 2.0, size=n)
    b = best_intercept(loss, p, q, f, c)
    total = lambda t: float(c @ loss.value(p + q * (f + t)))  # noqa: E731
    grid = np.linspace(b - 3.0, b + 3.0, 6001)
    assert total(b) <= min(total(t) for t in grid) + 1e-12
    moved = best_intercept(loss, p, q, f + 0.25, c)  # shifting f shifts the minimizer back
    assert total(moved + 0.25) == pytest.approx(total(b), abs=1e-12)


BOX_QP_MODELS = [
    EmpiricalRisk(SVM, Hinge(), C=2.0),
    EmpiricalRisk(SVM, DoubleHinge(), C=0.7),
    EmpiricalRisk(LAD, Absolute(), C=0.5),
    EmpiricalRisk(LAD, Pinball(0.8), C=1.5),
    EmpiricalRisk(LAD, EpsilonInsensitive(0.4), C=1.0),
]


@pytest.mark.parametrize("model", BOX_QP_MODELS, ids=lambda m: repr(m.loss))
def test_the_box_qp_maps_the_optimal_dual_to_the_optimum(model):
    """-Phi(x*) + offset equals the optimum; a shifted offset or slope would not."""
    reference = of.solve(model, backend="clarabel", tol=1e-10)
    dual = model.structure(BoxQPDual)
    lower = -dual.start  # the box's lower end (the start is alpha = 0)
    x = np.clip(reference.solution["alpha"] - lower, 0.0, dual.upper)
    Q = (dual.sign[:, None] * model.data.X) @ (dual.sign[:, None] * model.data.X).T
    h = dual.slope_below * np.minimum(x, dual.kink) + dual.slope_above * np.maximum(
        x - dual.kink, 0.0
    )
    phi = 0.5 * x @ Q @ x + dual.linear @ x + h.sum()
    assert -phi + dual.bound_offset == pytest.approx(reference.objective, rel=1e-6)
    assert dual.sign @ x == pytest.approx(dual.rhs, abs=1e-6)
    recovered = dual.recover(x, Q @ x + dual.linear)
    assert model.objective(recovered) == pytest.approx(reference.objective, rel=1e-5)
    assert dual.objective(x, Q @ x + dual.linear) == pytest.approx(
        model.objective(recovered), rel=1e-12
    )


@pytest.mark.parametrize(
    "model",
    [
        EmpiricalRisk(SVM, Hinge(), C=2.0, fit_intercept=False),
        EmpiricalRisk(LAD, Pinball(0.3), C=0.5, fit_intercept=False),
        EmpiricalRisk(LAD, Absolute(), C=1.0, fit_intercept=False),
    ],
    ids=lambda m: repr(m.loss),
)
def test_the_linear_box_dual_is_the_models_problem(model):
    reference = of.solve(model, backend="clarabel", tol=1e-10)
    dual = model.structure(LinearBoxDual)
    w = reference.solution["w"]
    assert dual.primal_value(w) == pytest.approx(model.objective(reference.solution), rel=1e-12)
    alpha = dual.start_point(reference.solution["alpha"])
    assert dual.dual_value(alpha) == pytest.approx(reference.objective, rel=1e-6)
    assert np.allclose(dual.recover(alpha)["w"], w, atol=1e-5)


def test_dcd_and_smo_reach_the_direct_optimum_certified():
    for model, driver in [
        (EmpiricalRisk(LAD, Pinball(0.7), C=1.0, fit_intercept=False), "dcd"),
        (EmpiricalRisk(LAD, EpsilonInsensitive(0.2), C=1.0), "smo"),
    ]:
        reference = of.solve(model)
        result = of.solve(model, driver)
        assert result.status is of.Status.OPTIMAL
        assert result.objective == pytest.approx(reference.objective, rel=1e-5)


def test_a_screened_path_of_quantile_regression_matches_the_plain_path():
    model = EmpiricalRisk(LAD, Pinball(0.25), fit_intercept=False)
    grid = np.geomspace(0.05, 5.0, 6)
    plain = of.solve_path(model, "C", grid)
    screened = of.solve_path(model, "C", grid, screening=DVI())
    for a, b in zip(plain.results, screened.results, strict=True):
        assert b.status is of.Status.OPTIMAL
        assert b.objective == pytest.approx(a.objective, rel=1e-6)
    assert np.nansum(screened.rejection) > 0  # the rule removed samples along the path


def test_refusals_name_the_reason():
    with pytest.raises(of.IncompatibleDriver, match="quadratic pieces"):
        of.solve(EmpiricalRisk(SVM, SquaredHinge()), "aid")
    with pytest.raises(of.IncompatibleDriver, match="penalty L2"):
        of.solve(EmpiricalRisk(SVM, Hinge(), penalty=L1()), "smo")
    # a loss of three pieces reaches DCD through its PiecewiseBoxDual; a kernel does not
    kernel_svr = EmpiricalRisk(
        LAD, EpsilonInsensitive(0.2), fit_intercept=False, kernel=RBF(gamma=0.5)
    )
    with pytest.raises(of.IncompatibleDriver, match="linear kernel"):
        of.solve(kernel_svr, "dcd")
    data = Dataset(X=LAD.X, y=LAD.y)
    with pytest.raises(of.IncompatibleDriver, match="equality row"):
        of.solve(EmpiricalRisk(data, Absolute()), "dcd")
