"""EmpiricalRisk with a loss per label and losses with an affine part, against references."""

import cvxpy as cp
import numpy as np
import pytest
from model_testing import close

import optframe as of
from optframe.capabilities import BoxQPDual, LinearBoxDual, PiecewiseLinearSampleLoss
from optframe.data import Dataset, make_classification_svm
from optframe.drivers import SMO, Direct
from optframe.errors import ModelError
from optframe.kernels import RBF
from optframe.losses import DoubleHinge, Hinge, LinearLoss, PLQLoss, SquaredHinge
from optframe.models import EmpiricalRisk, PULearning
from optframe.penalties import L1

DATA = make_classification_svm(40, 3, separation=1.0, random_state=1)
WEIGHTS = np.linspace(0.5, 2.0, 40)
AFFINE_HINGE = PLQLoss(relu=[(-1.0, 1.0)], linear=0.25, kind="classification")
PU_WEIGHTS = np.where(DATA.y > 0, 0.3, 1.0)  # positives' total below the negatives'
HEAVY = np.where(DATA.y > 0, 2.0, 1.0)  # above: the intercept lowers the objective without end
DECLARATIONS = {
    "hinge/double": ({1: Hinge(), -1: DoubleHinge()}, WEIGHTS),
    "affine": ({1: AFFINE_HINGE, -1: Hinge()}, WEIGHTS),
    "pu": ({1: LinearLoss(-1.0), -1: DoubleHinge()}, PU_WEIGHTS),
}


def per_sample_values(loss, a):
    """Each sample's loss written out by hand (not through optframe's pieces)."""
    values = {
        "hinge": np.maximum(0.0, 1.0 - a),
        "double": np.maximum(np.maximum(0.0, -a), 0.5 - 0.5 * a),
        "affine": np.maximum(0.0, 1.0 - a) + 0.25 * a,
        "linear": -a,
    }
    names = {"hinge/double": ("hinge", "double"), "affine": ("affine", "hinge")}
    names["pu"] = ("linear", "double")
    plus, minus = names[loss]
    return np.where(DATA.y > 0, values[plus], values[minus])


def reference(name, kernel):
    """The optimum of the written-out risk (Clarabel through CVXPY on its own statement)."""
    y, X = DATA.y, DATA.X
    c = DECLARATIONS[name][1]
    b = cp.Variable()
    if kernel is None:
        w = cp.Variable(X.shape[1])
        f, reg = X @ w + b, cp.sum_squares(w) / 2
    else:
        K = kernel.matrix(X)
        v = cp.Variable(X.shape[0])
        f, reg = K @ v + b, cp.quad_form(v, cp.psd_wrap(0.5 * (K + K.T))) / 2
    a = cp.multiply(y, f)
    pos, neg = y > 0, y < 0
    losses = {
        "hinge": lambda t: cp.pos(1 - t),
        "double": lambda t: cp.maximum(0, -t, 0.5 - 0.5 * t),
        "affine": lambda t: cp.pos(1 - t) + 0.25 * t,
        "linear": lambda t: -t,
    }
    names = {"hinge/double": ("hinge", "double"), "affine": ("affine", "hinge")}
    names["pu"] = ("linear", "double")
    plus, minus = names[name]
    risk = c[pos] @ losses[plus](a[pos]) + c[neg] @ losses[minus](a[neg])
    problem = cp.Problem(cp.Minimize(reg + risk))
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return problem.value


def model_of(name, kernel):
    loss, weights = DECLARATIONS[name]
    return EmpiricalRisk(DATA, loss, C=1.0, sample_weight=weights, kernel=kernel)


@pytest.mark.parametrize("kernel", [None, RBF(gamma=0.5)], ids=["linear", "rbf"])
@pytest.mark.parametrize("name", list(DECLARATIONS))
def test_every_path_matches_the_written_out_risk(name, kernel):
    model = model_of(name, kernel)
    optimum = reference(name, kernel)
    forms = ("primal", "dual") if kernel is None else ("dual",)
    backend = "cvxpy:clarabel"
    results = [of.solve(model, driver=Direct(form=form), backend=backend) for form in forms]
    results.append(of.solve(model, driver=SMO(tol=1e-7)))
    for result in results:
        assert result.status is of.Status.OPTIMAL, result
        assert close(result.objective, optimum, 1e-6)
        assert result.bound <= optimum + 1e-7 * max(1.0, abs(optimum))  # a proven lower bound
        assert close(result.bound, optimum, 1e-6)
    # the objective is the written-out risk at the solution
    solution = results[0].solution
    f = model.decision_function(solution, DATA.X)
    penalty = model.objective(solution) - float(model.costs @ per_sample_values(name, DATA.y * f))
    assert penalty >= -1e-9
    # a perturbed solution is caught: a worse objective, a bound still below the optimum
    moved = dict(solution, intercept=solution["intercept"] + 0.3)
    assert model.objective(moved) > optimum + 1e-6 * max(1.0, abs(optimum))
    assert model.dual_bound(moved) <= optimum + 1e-7 * max(1.0, abs(optimum))


def test_a_linear_loss_fixes_its_multipliers_and_leaves_the_box_qp():
    model = model_of("pu", None)
    dual = model.structure(BoxQPDual)
    negatives = np.flatnonzero(DATA.y < 0)
    assert dual.n == negatives.size  # the positives' multipliers are fixed: eliminated
    np.testing.assert_array_equal(dual.sign, np.ones(dual.n))  # the row times -1: 1'x = rhs
    c = PU_WEIGHTS
    assert dual.rhs == pytest.approx(c[DATA.y > 0].sum())
    K = DATA.X @ DATA.X.T
    P = DATA.y > 0
    np.testing.assert_allclose(dual.linear, -K[np.ix_(negatives, P)] @ c[P], atol=1e-12)
    assert dual.bound_offset == pytest.approx(-0.5 * c[P] @ K[np.ix_(P, P)] @ c[P])
    assert abs(dual.start.sum() - dual.rhs) <= 1e-12 * dual.rhs
    assert np.all((dual.start >= 0) & (dual.start <= dual.upper))
    # the structure's cheap objective is the model's at the recovered solution
    x = dual.start
    gradient = (DATA.X[negatives] @ (DATA.X[negatives].T @ x)) + dual.linear
    solution = dual.recover(x, gradient)
    assert dual.objective(x, gradient) == pytest.approx(model.objective(solution), rel=1e-12)


def test_pu_learning_is_the_declaration():
    data = Dataset(X=DATA.X, y=(DATA.y > 0) & (np.arange(40) % 2 == 0))
    for kernel in ("linear", RBF(gamma=0.5)):
        pu = PULearning(data, prior=0.4, lam=0.05, kernel=kernel)
        declared = EmpiricalRisk(
            Dataset(X=data.X, y=2.0 * data.y - 1.0),
            {1: LinearLoss(-1.0), -1: DoubleHinge()},
            sample_weight=np.where(data.y > 0, pu.c1, pu.c2),
            kernel=kernel,
        )
        a, b = of.solve(pu, driver=SMO(tol=1e-7)), of.solve(declared, driver=SMO(tol=1e-7))
        assert close(a.objective, b.objective, 1e-9)
        np.testing.assert_allclose(a.solution["alpha"], b.solution["alpha"] * declared.slope)
        dual = pu.structure(BoxQPDual)  # USMO's reduced dual, as notes/usmo.md states it
        np.testing.assert_allclose(dual.start, np.full(pu.unlabeled.size, pu.prior * pu.c2))
        np.testing.assert_allclose(dual.kink, pu.c2 / 2)
        np.testing.assert_array_equal(dual.slope_below, -1.0)
        np.testing.assert_array_equal(dual.slope_above, 1.0)


def test_the_affine_part_and_the_linear_loss():
    loss = AFFINE_HINGE
    a = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(loss.value(a), np.maximum(0, 1 - a) + 0.25 * a)
    assert loss.conjugate_domain == (-0.75, 0.25)
    grid = np.linspace(-60, 60, 240001)
    for beta in (-0.75, -0.5, 0.0, 0.25):  # sup_a beta a - l(a), by brute force
        assert float(loss.conjugate(beta)[0]) == pytest.approx(
            np.max(beta * grid - loss.value(grid)), abs=1e-6
        )
    linear = LinearLoss(-2.0)
    assert linear.conjugate_domain == (-2.0, -2.0)
    assert float(linear.conjugate(-2.0)[0]) == 0.0
    assert linear.is_linear
    assert not loss.is_linear
    assert linear == PLQLoss(kind="classification", linear=-2.0)
    assert loss.zero_set() is None


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: LinearLoss(0.0), "nonzero"),
        (lambda: PLQLoss(), "linear= slope"),
        (lambda: PLQLoss(relu=[(1.0, 0.0)], linear=float("inf")), "finite"),
        (lambda: EmpiricalRisk(DATA, {0: Hinge(), 1: Hinge()}), "keyed by the labels"),
        (lambda: EmpiricalRisk(DATA, {1: Hinge(), -1: "hinge"}), "must be a loss instance"),
        (lambda: EmpiricalRisk(DATA, {1: Hinge()}), "have no loss"),
        (lambda: EmpiricalRisk(DATA, []), "mapping from the labels"),
        (lambda: EmpiricalRisk(DATA, {1: Hinge(), -1: AFFINE_HINGE}, penalty=L1()), "ridge"),
        (lambda: EmpiricalRisk(DATA, {1: LinearLoss(-1.0), -1: Hinge()}, penalty=None), "ridge"),
        (lambda: EmpiricalRisk(DATA, DECLARATIONS["pu"][0], sample_weight=HEAVY), "unbounded"),
    ],
)
def test_bad_declarations_are_refused_by_name(build, match):
    with pytest.raises(ModelError, match=match):
        build()


def test_regression_losses_are_not_given_per_label():
    from optframe.losses import Absolute

    with pytest.raises(ModelError, match="margin"):
        EmpiricalRisk(DATA, {1: Absolute(), -1: Absolute()})


def test_what_a_per_label_model_does_not_offer_is_refused():
    model = model_of("hinge/double", None)
    for layer in ("matrix", "pyomo"):
        assert not model.offers(layer, "primal")
        with pytest.raises(ModelError, match="cvxpy layer"):
            model.build(layer, "primal")
    assert model.offers_structure(BoxQPDual)
    for kind in (PiecewiseLinearSampleLoss, LinearBoxDual):
        assert "one loss" in model.structure_refusal(kind)
    squared = EmpiricalRisk(DATA, {1: SquaredHinge(), -1: Hinge()})
    assert "quadratic pieces" in squared.structure_refusal(BoxQPDual)
    result = of.solve(squared, backend="cvxpy:clarabel")  # the cvxpy dual and its certificate
    assert result.status is of.Status.OPTIMAL
