"""EmpiricalRisk's free margin and penalized intercept, against CVXPY statements written by hand.

The references state each problem from its mathematics with CVXPY atoms (pos, square), never
through optframe's layers; objectives are compared, and the certificate must bound every
optimum from below and catch a perturbed solution.
"""

import math

import cvxpy as cp
import numpy as np
import pytest
from model_testing import classification_data

import optframe as of
from optframe.capabilities import BoxQPDual, SimplexQP
from optframe.data import Dataset
from optframe.errors import IncompatibleDriver, ModelError
from optframe.kernels import RBF
from optframe.losses import Absolute, Hinge, PLQLoss, SquaredHinge
from optframe.models import EmpiricalRisk
from optframe.penalties import L1

N = 50
X, Y = classification_data(n=N, m=3)
DATA = Dataset(X=X, y=Y)
LAYERS = ("matrix:clarabel", "cvxpy:clarabel", "matrix:osqp")


def reference(loss: str, C: float, margin: bool, intercept: str) -> float:
    """The optimum of the problem written out with CVXPY atoms."""
    w, b, r = cp.Variable(3), cp.Variable(), cp.Variable()
    bias = 0.0 if intercept == "none" else b
    shift = r if margin else 0.0
    a = cp.multiply(Y, X @ w + bias) - shift
    if loss == "squared_hinge":  # max(0, 1 - a)^2
        total = C * cp.sum(cp.square(cp.pos(1 - a)))
    else:  # hinge
        total = C * cp.sum(cp.pos(1 - a))
    penalty = 0.5 * cp.sum_squares(w)
    if intercept == "penalized":
        penalty += 0.5 * cp.square(b)
    objective = penalty + total - (r if margin else 0.0)
    problem = cp.Problem(cp.Minimize(objective))
    problem.solve(solver=cp.CLARABEL)
    return float(problem.value)


CASES = [
    ("squared_hinge", 1.0, True, "penalized"),
    ("squared_hinge", 0.3, True, "none"),
    ("squared_hinge", 2.0, False, "penalized"),
    ("hinge", 0.5, True, "penalized"),
    ("hinge", 1.0, False, "penalized"),
]


def model_of(loss: str, C: float, margin: bool, intercept: str, **extra) -> EmpiricalRisk:
    return EmpiricalRisk(
        DATA,
        SquaredHinge() if loss == "squared_hinge" else Hinge(),
        C=C,
        fit_intercept=intercept != "none",
        penalize_intercept=intercept == "penalized",
        free_margin=margin,
        **extra,
    )


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("backend", LAYERS)
def test_layers_match_the_written_out_problem(case, backend):
    model = model_of(*case)
    expected = reference(*case)
    result = of.solve(model, backend=backend)
    assert result.status is of.Status.OPTIMAL
    scale = max(1.0, abs(expected))
    assert abs(result.objective - expected) <= 1e-6 * scale
    assert model.objective(result.solution) == pytest.approx(result.objective, abs=1e-9 * scale)
    bound = model.dual_bound(result.solution)
    assert bound <= expected + 1e-7 * scale  # a lower bound on the true optimum
    assert bound >= expected - 1e-5 * scale  # and tight at the solution
    if case[2]:
        assert "rho" in result.solution


def test_pyomo_layer_states_the_same_problem():
    case = ("squared_hinge", 1.0, True, "penalized")
    result = of.solve(model_of(*case), backend="pyomo:scip")
    expected = reference(*case)
    assert result.objective == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("case", CASES)
def test_a_perturbed_solution_is_caught(case):
    model = model_of(*case)
    expected = reference(*case)
    solution = dict(of.solve(model, backend="matrix:clarabel").solution)
    solution["w"] = solution["w"] + 0.05
    solution.pop("alpha", None)
    objective, bound = model.objective(solution), model.dual_bound(solution)
    assert bound <= expected + 1e-7 * max(1.0, abs(expected))
    assert objective - bound > 1e-4 * max(1.0, abs(expected))  # the gap is visible


def test_the_margin_reward_is_in_the_objective():
    """Shifting rho off its best value raises the objective by the exact amount."""
    model = model_of("squared_hinge", 1.0, True, "penalized")
    solution = dict(of.solve(model, backend="matrix:clarabel").solution)
    w, b, r = solution["w"], float(solution["intercept"][0]), float(solution["rho"][0])
    a = Y * (X @ w + b) - (r + 0.1)
    by_hand = 0.5 * (w @ w + b * b) + float(np.sum(np.maximum(0.0, 1.0 - a) ** 2)) - (r + 0.1)
    solution["rho"] = np.array([r + 0.1])
    assert model.objective(solution) == pytest.approx(by_hand, rel=1e-12)
    without = {key: value for key, value in solution.items() if key != "rho"}
    assert model.objective(without) <= model.objective(solution)  # rho's exact minimizer


def test_rho_is_its_exact_minimizer_for_a_piecewise_linear_loss():
    model = model_of("hinge", 0.5, True, "penalized")
    result = of.solve(model, backend="matrix:clarabel")
    solution = {k: v for k, v in result.solution.items() if k not in ("rho", "alpha")}
    assert model.objective(solution) == pytest.approx(result.objective, abs=1e-7)


# ------------------------------------------------------------------------------- SimplexQP
def squared_model(kernel=None, C: float = 1.0, **options) -> EmpiricalRisk:
    declared = {"free_margin": True, "penalize_intercept": True, **options}
    return EmpiricalRisk(DATA, SquaredHinge(), C=C, kernel=kernel, **declared)


def test_simplex_qp_is_derived_from_the_declaration():
    model = squared_model(kernel=RBF(gamma=0.5), C=2.0)
    qp = model.structure(SimplexQP)
    # SquaredHinge is rehu(sqrt2 (1 - a)): s^2 = 2, kink 1; ridge = rho_2 / (C s^2)
    assert qp.ridge == pytest.approx(1.0 / 4.0)
    assert qp.scale == -0.5
    assert qp.offset == pytest.approx(1.0)
    assert np.array_equal(qp.sign, Y)
    assert qp.kernel is model._kernel


@pytest.mark.parametrize("driver", ["fw", "mfw", "cvm"])
def test_simplex_drivers_reach_the_written_out_optimum(driver):
    C = 1.5
    kernel = RBF(gamma=0.4)
    model = squared_model(kernel=kernel, C=C)
    K = kernel.matrix(X) + 1.0
    K = 0.5 * (K + K.T)
    # the kernel primal written out: f = K~ v (bias inside k + 1), r free
    v, r = cp.Variable(N), cp.Variable()
    f = K @ v
    objective = (
        0.5 * cp.quad_form(v, cp.psd_wrap(K))
        + C * cp.sum(cp.square(cp.pos(1 - cp.multiply(Y, f) + r)))
        - r
    )
    problem = cp.Problem(cp.Minimize(objective))
    problem.solve(solver=cp.CLARABEL)
    result = of.solve(model, driver=driver)
    # plain FW stalls near the optimum (notes/frank_wolfe.md): its own test stops it first
    done = {of.Status.OPTIMAL, of.Status.CONVERGED} if driver == "fw" else {of.Status.OPTIMAL}
    assert result.status in done
    assert result.bound <= problem.value + 1e-7 <= result.objective + 2e-7
    assert result.objective == pytest.approx(problem.value, abs=1e-4)
    assert model.dual_bound(result.solution) <= problem.value + 1e-7


def test_linear_simplex_qp_matches_the_primal():
    model = squared_model(C=0.7)
    expected = of.solve(model, backend="matrix:clarabel").objective
    result = of.solve(model, driver="mfw", tol=1e-9)
    assert result.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(expected, abs=1e-6)


def test_a_one_sided_quadratic_with_another_kink_shifts_the_offset():
    loss = PLQLoss(rehu=[(-2.0, 1.0, math.inf)], kind="classification")  # 2 max(0, 1/2 - a)^2
    model = EmpiricalRisk(DATA, loss, C=1.0, free_margin=True, penalize_intercept=True)
    qp = model.structure(SimplexQP)
    assert qp.offset == pytest.approx(0.5)
    assert qp.ridge == pytest.approx(0.25)
    expected = of.solve(model, backend="cvxpy:clarabel").objective
    assert of.solve(model, driver="mfw", tol=1e-9).objective == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        (lambda: EmpiricalRisk(DATA, Hinge(), free_margin=True, penalize_intercept=True),
         "one-sided quadratic"),
        (lambda: EmpiricalRisk(DATA, SquaredHinge(), penalize_intercept=True), "free_margin"),
        (lambda: EmpiricalRisk(DATA, SquaredHinge(), fit_intercept=False, free_margin=True),
         "penalized"),
        (lambda: EmpiricalRisk(DATA, SquaredHinge(), free_margin=True, penalize_intercept=True,
                               sample_weight=np.linspace(1.0, 2.0, N)), "same cost"),
    ],
)  # fmt: skip
def test_simplex_qp_is_refused_with_its_reason(model, reason):
    model = model()
    refusal = model.structure_refusal(SimplexQP)
    assert refusal is not None
    assert reason in refusal
    with pytest.raises(IncompatibleDriver, match=reason):
        model.structure(SimplexQP)


def test_other_structures_are_refused_with_the_options():
    model = EmpiricalRisk(DATA, Hinge(), penalize_intercept=True)
    assert "penalized intercept" in model.structure_refusal(BoxQPDual)
    assert EmpiricalRisk(DATA, Hinge()).structure_refusal(SimplexQP) is not None


def test_dual_forms_are_refused_with_the_options():
    model = squared_model()
    assert not model.offers("cvxpy", "dual")
    with pytest.raises(ModelError, match="SimplexQP"):
        model.build("matrix", "dual")
    assert not squared_model(kernel=RBF(gamma=0.5)).offers("cvxpy", "primal")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"loss": SquaredHinge(), "fit_intercept": False, "penalize_intercept": True},
         "fit_intercept=True"),
        ({"loss": Hinge(), "penalty": L1(), "penalize_intercept": True}, "L2()"),
        ({"loss": Hinge(), "free_margin": True}, "unpenalized intercept"),
        ({"loss": Hinge(), "free_margin": True, "fit_intercept": False, "penalty": L1()},
         "ridge"),
        ({"loss": Hinge(), "free_margin": True, "fit_intercept": False, "C": 0.01},
         "raise C"),
        ({"loss": {1: Hinge(), -1: SquaredHinge()}, "free_margin": True,
          "fit_intercept": False}, "one loss"),
        ({"loss": SquaredHinge(), "free_margin": 1, "fit_intercept": False}, "True or False"),
        ({"loss": SquaredHinge(), "penalize_intercept": "yes"}, "True or False"),
    ],
)  # fmt: skip
def test_bad_combinations_raise(kwargs, match):
    with pytest.raises(ModelError, match=match):
        EmpiricalRisk(DATA, **kwargs)


def test_a_free_margin_needs_a_margin_loss():
    data = Dataset(X=X, y=X[:, 0] + 0.1)
    with pytest.raises(ModelError, match="margin loss"):
        EmpiricalRisk(data, Absolute(), fit_intercept=False, free_margin=True)


# ------------------------------------------------------------------------ the L2SVM, declared
def test_l2svm_is_the_declaration_with_a_kink_at_zero():
    """L2SVM(C) is EmpiricalRisk(1/2 max(0, -a)^2, C, free margin, penalized intercept)."""
    from optframe.models import L2SVM

    kernel = RBF(gamma=0.5)
    model = L2SVM(DATA, C=3.0, kernel=kernel)
    assert isinstance(model, EmpiricalRisk)
    assert model.free_margin
    assert model.penalize_intercept
    same = EmpiricalRisk(
        DATA,
        PLQLoss(rehu=[(-1.0, 0.0, math.inf)], kind="classification"),
        C=3.0,
        kernel=kernel,
        free_margin=True,
        penalize_intercept=True,
    )
    qp, other = model.structure(SimplexQP), same.structure(SimplexQP)
    assert (qp.ridge, qp.scale, qp.offset) == (other.ridge, other.scale, other.offset)
    assert qp.ridge == pytest.approx(1.0 / 3.0)
    assert qp.offset == 0.0
    alpha = np.random.default_rng(2).random(N)
    solution, plain = qp.recover(alpha), other.recover(alpha)
    assert set(solution) == {"alpha", "intercept", "rho", "xi"}
    assert model.objective(solution) == pytest.approx(same.objective(plain), rel=1e-12)
    assert model.dual_bound(solution) == pytest.approx(same.dual_bound(plain), rel=1e-12)
    # the bound at a point of the simplex is the dual value -1/2 alpha' K~ alpha
    a = solution["alpha"]
    assert model.dual_bound(solution) == pytest.approx(-0.5 * a @ model.modified_gram() @ a)
    # xi is the slack of the margin rows at rho
    f = model.decision_function(solution, X)
    np.testing.assert_allclose(solution["xi"], np.maximum(0.0, solution["rho"][0] - Y * f))


def test_l2svm_refuses_the_structures_of_other_losses():
    from optframe.capabilities import LinearBoxDual, PiecewiseLinearSampleLoss
    from optframe.models import L2SVM

    model = L2SVM(DATA, C=1.0)
    for kind in (LinearBoxDual, PiecewiseLinearSampleLoss):
        assert not model.offers_structure(kind)
    assert model.offers_structure(SimplexQP)
    assert model.offers_structure(BoxQPDual)  # derived from the SimplexQP


def test_a_penalized_intercept_for_a_residual_loss():
    """Huber regression with the bias in the ridge, against its CVXPY statement."""
    from optframe.losses import Huber

    rng = np.random.default_rng(3)
    y = X @ np.array([1.0, -2.0, 0.5]) + 3.0 + rng.normal(size=N)
    model = EmpiricalRisk(Dataset(X=X, y=y), Huber(1.0), C=2.0, penalize_intercept=True)
    w, b = cp.Variable(3), cp.Variable()
    residual = y - X @ w - b
    problem = cp.Problem(
        cp.Minimize(0.5 * cp.sum_squares(w) + 0.5 * cp.square(b) + cp.sum(cp.huber(residual, 1.0)))
    )  # huber(r, 1) is twice Huber(1.0); C = 2
    problem.solve(solver=cp.CLARABEL)
    for backend in ("matrix:clarabel", "cvxpy:clarabel"):
        result = of.solve(model, backend=backend)
        assert result.status is of.Status.OPTIMAL
        assert result.objective == pytest.approx(problem.value, rel=1e-6)
        assert model.dual_bound(result.solution) == pytest.approx(problem.value, rel=1e-6)
    perturbed = {"w": result.solution["w"] + 0.1, "intercept": result.solution["intercept"]}
    assert model.dual_bound(perturbed) <= problem.value + 1e-7
    assert model.objective(perturbed) - model.dual_bound(perturbed) > 1e-3
