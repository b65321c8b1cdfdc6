"""The logistic loss: its contract, its model (an exponential-cone program), its certificate.

``Logistic()`` meets the smooth-loss contract with no overflow at extreme margins; a loss that
breaks the contract is refused by name; ``EmpiricalRisk(data, Logistic())`` is the problem class
EXP, solved by Clarabel through CVXPY only (every other back-end and layer refuses by name), and
certified by the Fenchel dual with the entropy conjugate: a perturbed solution is not OPTIMAL.
The scikit-learn estimator's objective is at least as good as scikit-learn's own.
"""

import math
import warnings
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

import optframe as of
from optframe.certificate import certify
from optframe.compare import applicable_pairs
from optframe.data import Dataset, load_dataset
from optframe.drivers import DCD, Direct
from optframe.errors import DataError, IncompatibleBackend, LossContractError, ModelError
from optframe.kernels import RBF
from optframe.losses import Logistic, SmoothLoss, check_smooth_loss
from optframe.model import ProblemClass
from optframe.models import EmpiricalRisk
from optframe.penalties import L1, ElasticNet
from optframe.sklearn import LogisticRegression

TIGHT = {"tol_gap_rel": 1e-11, "tol_gap_abs": 1e-11, "tol_feas": 1e-11}


@pytest.fixture(scope="module")
def cancer():
    data = load_dataset("breast_cancer")
    X = np.asarray(data.X, dtype=np.float64)
    return (X - X.mean(axis=0)) / X.std(axis=0), np.asarray(data.y, dtype=np.float64)


def objective(X, y, w, b, C=1.0, weights=None):
    """The objective by its formula, independent of the model."""
    s = np.ones(y.size) if weights is None else weights
    return 0.5 * float(w @ w) + C * float(s @ np.logaddexp(0.0, -y * (X @ w + b)))


# ---------------------------------------------------------------------------------- the loss
def test_logistic_is_stable_at_extreme_margins():
    loss = Logistic()
    a = np.array([-1e308, -800.0, -40.0, 0.0, 40.0, 800.0, 1e308])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        value, slope = loss.value(a), loss.derivative(a)
    np.testing.assert_allclose(value[1:6], [800.0, 40.0, math.log(2.0), 4.248354255291589e-18, 0])
    assert value[0] == 1e308
    assert value[-1] == 0.0
    np.testing.assert_allclose(slope, [-1.0, -1.0, -1.0, -0.5, -4.248354255291589e-18, 0, 0])
    assert np.all(loss.second_derivative(a) >= 0.0)


def test_logistic_conjugate_is_the_binary_entropy():
    loss = Logistic()
    assert loss.conjugate_domain == (-1.0, 0.0)
    q = np.array([0.0, 1e-300, 0.25, 0.5, 1.0])
    expected = [0.0, 1e-300 * math.log(1e-300), 0.25 * math.log(0.25) + 0.75 * math.log(0.75)]
    np.testing.assert_allclose(loss.conjugate(-q)[:3], expected, rtol=1e-12)
    assert loss.conjugate(-0.5)[0] == pytest.approx(math.log(0.5))
    assert loss.conjugate(-1.0)[0] == 0.0  # 0 log 0 = 0 at both ends
    assert np.all(np.isinf(loss.conjugate([0.1, -1.1])))
    # Fenchel-Young: equality at the derivative, inequality elsewhere
    a = np.linspace(-30.0, 30.0, 41)
    at = loss.value(a) + loss.conjugate(loss.derivative(a)) - a * loss.derivative(a)
    np.testing.assert_allclose(at, 0.0, atol=1e-12)
    betas = np.linspace(-1.0, 0.0, 11)
    gaps = loss.value(a)[:, None] + loss.conjugate(betas)[None, :] - np.outer(a, betas)
    assert gaps.min() >= -1e-12
    assert check_smooth_loss(loss, "test") is loss


class _Lying(Logistic):
    def conjugate(self, beta):
        return super().conjugate(beta) - 0.01  # below Fenchel-Young: a bound would be invalid

    def __repr__(self):
        return "Lying()"


class _Concave(Logistic):
    def derivative(self, a):
        return -super().derivative(a) - 1.0  # decreasing

    def __repr__(self):
        return "Concave()"


class _WideSlope(Logistic):
    def derivative(self, a):
        return 2.0 * super().derivative(a)  # leaves [-1, 0]

    def __repr__(self):
        return "WideSlope()"


class _Unfinished(SmoothLoss):
    def __repr__(self):
        return "Unfinished()"


class _BadKind(Logistic):
    kind = "ranking"


@pytest.mark.parametrize(
    ("loss", "match"),
    [
        (_Lying(), "Fenchel-Young"),
        (_Concave(), "not convex"),
        (_WideSlope(), "leaves the conjugate domain"),
        (_Unfinished(), "does not evaluate its contract"),
        (_BadKind(), "kind 'ranking'"),
    ],
)
def test_a_loss_that_breaks_the_contract_is_refused(cancer, loss, match):
    X, y = cancer
    with pytest.raises(LossContractError, match=match):
        EmpiricalRisk(Dataset(X=X[:50], y=y[:50]), loss)
    assert issubclass(LossContractError, ModelError)


# --------------------------------------------------------------------------------- the model
def test_bad_labels_and_options_are_refused(cancer):
    X, y = cancer
    with pytest.raises(DataError, match=r"labels in \{-1, \+1\}"):
        EmpiricalRisk(Dataset(X=X, y=(y > 0).astype(float)), Logistic())
    data = Dataset(X=X[:60], y=y[:60])
    with pytest.raises(ModelError, match="linear model"):
        EmpiricalRisk(data, Logistic(), kernel=RBF(gamma=0.1))
    with pytest.raises(ModelError, match="penalize_intercept"):
        EmpiricalRisk(data, Logistic(), penalize_intercept=True)
    with pytest.raises(ModelError, match="write Logistic"):
        EmpiricalRisk(data, "logistic")


def test_only_clarabel_through_cvxpy_takes_the_exponential_cone(cancer):
    X, y = cancer
    model = EmpiricalRisk(Dataset(X=X[:80], y=y[:80]), Logistic())
    assert model.problem_class is ProblemClass.EXP
    assert model.problem_class.is_conic
    assert not model.problem_class.is_integer
    for name in ("highs", "osqp", "piqp", "scip", "cvxpy:scip", "pyomo:scip", "matrix:clarabel"):
        with pytest.raises(IncompatibleBackend, match=r"EXP|cvxpy"):
            of.solve(model, backend=name)
    for layer in ("matrix", "pyomo"):
        with pytest.raises(ModelError, match=f"the {layer} layer .* exponential cone"):
            model.build(layer)
    with pytest.raises(ModelError, match="dual form"):
        model.build("cvxpy", form="dual")
    pairs = {(pair.driver.name, pair.backend) for pair in applicable_pairs(model)}
    # DCD needs fit_intercept=False; Newton and CD take the intercept
    assert pairs == {("direct", "cvxpy:clarabel"), ("newton", "auto"), ("cd", "auto")}
    no_b = EmpiricalRisk(Dataset(X=X[:80], y=y[:80]), Logistic(), fit_intercept=False)
    pairs = {(pair.driver.name, pair.backend) for pair in applicable_pairs(no_b)}
    assert pairs == {
        ("direct", "cvxpy:clarabel"),
        ("dcd", "auto"),
        ("newton", "auto"),
        ("cd", "auto"),
    }


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_direct_is_certified_and_matches_the_formula(cancer, sparse):
    X, y = cancer
    weights = np.random.default_rng(0).uniform(0.5, 2.0, y.size)
    data = Dataset(X=sp.csr_array(X) if sparse else X, y=y)
    model = EmpiricalRisk(data, Logistic(), C=0.5, sample_weight=weights)
    result = of.solve(model, Direct(), backend="clarabel", solver_options=TIGHT)
    assert result.backend == "cvxpy:clarabel"
    assert result.status is of.Status.OPTIMAL, result.summary()
    w, b = np.asarray(result.solution["w"]), float(result.solution["intercept"][0])
    assert result.objective == pytest.approx(objective(X, y, w, b, 0.5, weights), rel=1e-12)
    assert 0.0 <= result.gap <= 1e-6
    assert result.bound <= result.objective


def test_the_certificate_does_not_trust_the_point(cancer):
    """A perturbed w (and with or without multipliers): a valid bound, but not OPTIMAL."""
    X, y = cancer
    model = EmpiricalRisk(Dataset(X=X, y=y), Logistic(), C=1.0)
    result = of.solve(model, Direct(), backend="clarabel", solver_options=TIGHT)
    w = np.asarray(result.solution["w"])
    rng = np.random.default_rng(3)
    for keep_alpha in (True, False):
        solution = {"w": w * (1 + 1e-2 * rng.normal(size=w.size)), "intercept": [0.1]}
        if keep_alpha:
            solution["alpha"] = result.solution["alpha"]
        perturbed = certify(model, replace(result, solution=solution), gap_tol=1e-6)
        assert perturbed.status is not of.Status.OPTIMAL
        assert perturbed.bound <= result.objective + 1e-9 * result.objective
        assert perturbed.objective > result.objective
    # the bound from the exact point alone (no multipliers) closes: the subgradient candidate
    alone = certify(model, replace(result, solution={"w": w, **{
        "intercept": result.solution["intercept"]}}), gap_tol=1e-6)  # fmt: skip
    assert alone.status is of.Status.OPTIMAL


def test_l1_logistic_is_declared_and_certified(cancer):
    X, y = cancer
    for penalty in (L1(), ElasticNet(0.5)):
        model = EmpiricalRisk(Dataset(X=X, y=y), Logistic(), penalty=penalty, C=0.5)
        result = of.solve(model, Direct(), backend="clarabel", solver_options=TIGHT)
        assert result.status is of.Status.OPTIMAL, result.summary()


def test_dcd_and_direct_agree_without_intercept(cancer):
    X, y = cancer
    model = EmpiricalRisk(Dataset(X=X, y=y), Logistic(), C=3.0, fit_intercept=False)
    ref = of.solve(model, Direct(), backend="clarabel", solver_options=TIGHT)
    dcd = of.solve(model, DCD())
    assert dcd.status is of.Status.OPTIMAL
    assert ref.status is of.Status.OPTIMAL
    assert dcd.objective == pytest.approx(ref.objective, rel=1e-6)


# ------------------------------------------------------------------------ the sklearn estimator
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_the_estimator_is_at_least_as_good_as_scikit_learn(cancer, fit_intercept):
    from sklearn.linear_model import LogisticRegression as Reference

    X, y = cancer
    labels = np.where(y > 0, "malignant", "benign")
    C = 0.7
    ours = LogisticRegression(C=C, fit_intercept=fit_intercept).fit(X, labels)
    assert ours.result_.status is of.Status.OPTIMAL
    assert list(ours.classes_) == ["benign", "malignant"]
    mine = objective(X, y, ours.coef_.ravel(), ours.intercept_[0], C)
    assert mine == pytest.approx(ours.result_.objective, rel=1e-12)
    # the certificate proves mine - optimum <= objective - bound (a relative gap of tol = 1e-8),
    # and theirs >= optimum: so mine <= theirs + that gap, whatever the driver auto picked
    proven = ours.result_.objective - ours.result_.bound
    assert proven <= 1e-8 * mine
    for solver in ("lbfgs", "liblinear"):
        extra = {"dual": True, "intercept_scaling": 1.0} if solver == "liblinear" else {}
        ref = Reference(C=C, fit_intercept=fit_intercept, solver=solver, max_iter=10_000, **extra)
        ref.fit(X, labels)
        theirs = objective(X, y, ref.coef_.ravel(), float(np.ravel(ref.intercept_)[0]), C)
        assert mine <= theirs + proven + 1e-12 * theirs, solver
    proba = ours.predict_proba(X[:5])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(ours.predict_log_proba(X[:5])), proba)
    assert ours.score(X, labels) > 0.95


def test_the_estimator_with_the_intercept_as_a_feature_is_liblinears_problem(cancer):
    from sklearn.linear_model import LogisticRegression as Reference

    X, y = cancer
    ours = LogisticRegression(C=2.0, intercept_scaling=1.0, driver="dcd").fit(X, y)
    assert ours.result_.driver == "dcd"
    assert ours.result_.status is of.Status.OPTIMAL
    ref = Reference(C=2.0, solver="liblinear", dual=True, intercept_scaling=1.0)  # its defaults
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LIBLINEAR's dual stops at its max_iter=100 here
        ref.fit(X, y)

    def penalized(coef, b):
        return objective(X, y, coef.ravel(), b, 2.0) + 0.5 * b * b

    mine = penalized(ours.coef_, ours.intercept_[0])
    assert mine == pytest.approx(ours.result_.objective, rel=1e-12)
    assert mine <= penalized(ref.coef_, ref.intercept_[0]) * (1 + 1e-9)
    with pytest.raises(ModelError, match="intercept_scaling"):
        LogisticRegression(intercept_scaling=-1.0).fit(X, y)


def test_the_model_states_itself(cancer):
    X, y = cancer
    model = EmpiricalRisk(Dataset(X=X[:40], y=y[:40]), Logistic())
    assert r"\ell(a) = \log(1 + e^{-a})" in model.to_latex()
    assert r"\theta_i / c_i \in [-1, 0]" in model.to_latex("dual")
    assert "EXP" in model.describe()
