"""EmpiricalRisk's dual form (generated from the loss's pieces) and its kernel models."""

import numpy as np
import pytest
from sklearn.svm import SVR

import optframe as of
from optframe.data import make_classification_svm, make_lad_set_a
from optframe.drivers import Direct
from optframe.errors import ModelError
from optframe.kernels import RBF, Polynomial
from optframe.losses import Absolute, EpsilonInsensitive, Hinge, Huber, Pinball, SquaredHinge
from optframe.models import EmpiricalRisk
from optframe.penalties import L1, L2, ElasticNet

SVM = make_classification_svm(50, 3, separation=1.5, random_state=1)
LAD = make_lad_set_a(50, 3, random_state=1)

LINEAR = [
    EmpiricalRisk(SVM, Hinge(), C=2.0),
    EmpiricalRisk(SVM, Hinge(), C=0.5, fit_intercept=False),
    EmpiricalRisk(SVM, SquaredHinge(), C=1.0),
    EmpiricalRisk(LAD, Absolute(), penalty=None),
    EmpiricalRisk(LAD, Pinball(0.3), penalty=None, fit_intercept=False),
    EmpiricalRisk(LAD, Huber(0.7), C=3.0),
    EmpiricalRisk(LAD, EpsilonInsensitive(0.4), penalty=ElasticNet(0.0), C=1.0),
]


@pytest.mark.parametrize(
    "backend", ["matrix:clarabel", "cvxpy:clarabel", "matrix:highs", "piqp", "pyomo:highs"]
)
@pytest.mark.parametrize("model", LINEAR, ids=lambda m: f"{m.loss!r}-{m.penalty!r}")
def test_the_dual_form_reaches_the_primal_optimum(model, backend):
    if backend.startswith("pyomo") and not model.loss.is_piecewise_linear:
        backend = "cvxpy:highs"  # the pyomo dual is stated for piecewise-linear losses
    primal = of.solve(model, backend="clarabel", tol=1e-10)
    dual = of.solve(model, Direct(form="dual"), backend)
    assert dual.status is of.Status.OPTIMAL
    assert dual.objective == pytest.approx(primal.objective, rel=1e-7)
    assert np.allclose(dual.solution["w"], primal.solution["w"], atol=1e-4)  # the sign of w


@pytest.mark.parametrize("kernel", [RBF(gamma=0.5), Polynomial(degree=2, gamma=0.5, coef0=1.0)])
def test_the_kernel_svr_is_scikit_learns_svr(kernel):
    model = EmpiricalRisk(LAD, EpsilonInsensitive(0.3), C=2.0, kernel=kernel)
    result = of.solve(model)
    assert result.status is of.Status.OPTIMAL
    assert result.driver == "direct"
    assert result.backend.endswith("clarabel")
    params = {"gamma": kernel.gamma} | (
        {"degree": kernel.degree, "coef0": kernel.coef0} if isinstance(kernel, Polynomial) else {}
    )
    name = "rbf" if isinstance(kernel, RBF) else "poly"
    fitted = SVR(kernel=name, C=2.0, epsilon=0.3, tol=1e-10, **params).fit(LAD.X, LAD.y)
    alpha = np.zeros(LAD.n_samples)
    alpha[fitted.support_] = fitted.dual_coef_.ravel()
    theirs = {"alpha": alpha, "intercept": np.array([fitted.intercept_[0]])}
    assert model.objective(theirs) == pytest.approx(result.objective, rel=1e-6)
    assert model.objective(theirs) >= result.bound
    predicted = model.decision_function(result.solution, LAD.X[:10])
    assert np.allclose(predicted, fitted.predict(LAD.X[:10]), atol=1e-3)
    smo = of.solve(model, "smo")
    assert smo.status is of.Status.OPTIMAL
    assert smo.objective == pytest.approx(result.objective, rel=1e-5)


def test_a_kernel_hinge_model_is_the_weighted_svm():
    kernel = RBF(gamma=0.5)
    ours = of.solve(EmpiricalRisk(SVM, Hinge(), C=2.0, kernel=kernel))
    svm = of.solve(of.models.WeightedSVM(SVM, C=2.0, kernel=kernel))
    assert ours.objective == pytest.approx(svm.objective, rel=1e-7)


def test_a_back_end_without_duals_gets_w_from_complementary_slackness():
    model = EmpiricalRisk(LAD, Pinball(0.7), penalty=None)
    reference = of.solve(model, backend="highs")
    for backend in ("scip", "pyomo:scip"):
        result = of.solve(model, Direct(form="dual"), backend)
        assert result.status is of.Status.OPTIMAL
        assert result.objective == pytest.approx(reference.objective, rel=1e-8)


def test_forms_that_do_not_exist_are_refused_by_name():
    kernel_model = EmpiricalRisk(LAD, Absolute(), kernel=RBF(gamma=1.0))
    assert kernel_model.default_form == "dual"
    assert not kernel_model.offers("matrix", "primal")
    with pytest.raises(ModelError, match="primal form needs the linear kernel"):
        kernel_model.build("matrix", "primal")
    lasso = EmpiricalRisk(LAD, Absolute(), penalty=L1())
    assert not lasso.offers("matrix", "dual")
    with pytest.raises(ModelError, match="ridge penalty or none"):
        lasso.build("cvxpy", "dual")
    with pytest.raises(ModelError, match="pyomo layer states the dual"):
        EmpiricalRisk(LAD, Huber(1.0), penalty=L2()).build("pyomo", "dual")
    with pytest.raises(of.IncompatibleDriver, match="quadratic pieces"):
        of.solve(EmpiricalRisk(LAD, Huber(1.0), kernel=RBF(gamma=1.0)), "aid")


def test_aid_aggregates_a_kernel_model_in_feature_space():
    model = EmpiricalRisk(LAD, EpsilonInsensitive(0.2), C=2.0, kernel=RBF(gamma=0.5))
    direct = of.solve(model)
    aid = of.solve(model, "aid")
    assert aid.status is of.Status.OPTIMAL
    assert aid.objective == pytest.approx(direct.objective, rel=1e-6)
    assert aid.history[0].extras["clusters"] < LAD.n_samples


def test_the_kernel_bound_reuses_the_solutions_kv_only_where_it_stays_a_bound():
    """A slightly unbalanced alpha: the bound from K v_0 and the exact dual at the repaired v."""
    from optframe.duality import balance
    from optframe.models._risk_dual import kernel_dual_bound, loss_part

    kernel = RBF(gamma=0.5)
    model = EmpiricalRisk(SVM, Hinge(), C=2.0, kernel=kernel)
    alpha = of.solve(model).solution["alpha"].copy()
    alpha[SVM.y > 0] *= 1.0 + 1e-7  # y'alpha = 0 no longer holds: the bound rebalances it
    solution = {"alpha": alpha, "intercept": np.array([0.0])}
    v = balance(SVM.y * np.clip(alpha, 0.0, 2.0), np.ones_like(alpha))
    exact = loss_part(model, v) - 0.5 * float(v @ kernel.matrix(SVM.X) @ v)
    bound = kernel_dual_bound(model, solution)
    assert bound <= exact + 1e-12 * abs(exact)
    assert bound == pytest.approx(exact, rel=1e-11)


def test_the_kernel_bound_from_the_change_of_v_equals_the_direct_one(monkeypatch):
    """The subgradient candidate's v'Kv from K v_0 and K d (d with few non-zeros) is exact.

    A solution whose alpha lost a few support vectors (and so its balance): both candidates
    differ from it on fewer rows than their own support, so the bound computes K d only. The
    same bound with every v'Kv computed directly from the dense kernel matrix is the
    reference.
    """
    from optframe.models import _risk_dual

    kernel = RBF(gamma=0.5)
    model = EmpiricalRisk(SVM, Hinge(), C=2.0, kernel=kernel)
    alpha = of.solve(model).solution["alpha"].copy()
    support = np.flatnonzero(alpha)
    alpha[support[:3]] = 0.0
    solution = {"alpha": alpha, "intercept": np.array([0.0])}
    K = kernel.matrix(SVM.X)
    sizes = []

    def dense_values(self, v):
        sizes.append(np.count_nonzero(v))
        return K @ v

    monkeypatch.setattr(EmpiricalRisk, "kernel_values", dense_values)
    bound = _risk_dual.kernel_dual_bound(model, solution)
    assert len(sizes) >= 2
    assert max(sizes[1:]) < sizes[0]  # after the solution's own K v: K d only
    monkeypatch.setattr(_risk_dual, "_quad_from_own", lambda *args: None)
    direct = _risk_dual.kernel_dual_bound(model, solution)
    assert bound == pytest.approx(direct, rel=1e-12)
