"""EmpiricalRisk: six models declared in a line each, solved on every back-end, certified, checked.

References are independent of optframe: scikit-learn where it solves the same problem
(QuantileRegressor; LinearSVR and LinearSVC without intercept, since LIBLINEAR penalizes the
intercept), else a CVXPY solve of the objective written from its mathematics (atoms, not the
loss's pieces). Objectives are compared, not argmins.
"""

import math

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from model_testing import classification_data, regression_data
from sklearn.linear_model import QuantileRegressor
from sklearn.svm import LinearSVC, LinearSVR

import optframe as of
from optframe.conformance import assert_conforms
from optframe.data import Dataset
from optframe.errors import DataError, ModelError
from optframe.losses import (
    Absolute,
    EpsilonInsensitive,
    Hinge,
    Huber,
    Pinball,
    PLQLoss,
    SquaredHinge,
)
from optframe.models import EmpiricalRisk
from optframe.penalties import L1, L2, ElasticNet

N = 60
ALPHA = 0.05  # QuantileRegressor's alpha: its objective is ours divided by n alpha
X_REG, Y_REG = regression_data(n=N, m=3)
X_CLS, Y_CLS = classification_data(n=N, m=3)
REG, CLS = Dataset(X=X_REG, y=Y_REG), Dataset(X=X_CLS, y=Y_CLS)

# The six models of the issue, each declared in one line.
DECLARED = {
    "quantile-0.1": EmpiricalRisk(REG, Pinball(0.1), penalty=L1(), C=1 / (N * ALPHA)),
    "quantile-0.5": EmpiricalRisk(REG, Pinball(0.5), penalty=L1(), C=1 / (N * ALPHA)),
    "quantile-0.9": EmpiricalRisk(REG, Pinball(0.9), penalty=L1(), C=1 / (N * ALPHA)),
    "svr": EmpiricalRisk(REG, EpsilonInsensitive(0.5), penalty=L2(), C=1.0),
    "squared-hinge-svm": EmpiricalRisk(CLS, SquaredHinge(), penalty=L2(), C=1.0),
    "l1-svm": EmpiricalRisk(CLS, Hinge(), penalty=L1(), C=1.0),
    "enet-lad": EmpiricalRisk(REG, Absolute(), penalty=ElasticNet(0.5), C=1.0),
    "huber": EmpiricalRisk(REG, Huber(1.0), penalty=L2(), C=1.0),
}

# The same objectives written from their mathematics, for CVXPY: (loss of (y, f), penalty of w).
STATED = {
    "svr": (lambda y, f: cp.pos(cp.abs(y - f) - 0.5), lambda w: cp.sum_squares(w) / 2),
    "squared-hinge-svm": (
        lambda y, f: cp.square(cp.pos(1 - cp.multiply(y, f))),
        lambda w: cp.sum_squares(w) / 2,
    ),
    "l1-svm": (lambda y, f: cp.pos(1 - cp.multiply(y, f)), cp.norm1),
    "enet-lad": (
        lambda y, f: cp.abs(y - f),
        lambda w: 0.5 * cp.norm1(w) + 0.25 * cp.sum_squares(w),
    ),
    "huber": (lambda y, f: cp.huber(y - f, 1.0) / 2, lambda w: cp.sum_squares(w) / 2),
}

BACKENDS = [
    "matrix:highs",
    "cvxpy:highs",
    "pyomo:highs",
    "matrix:clarabel",
    "cvxpy:clarabel",
    "matrix:osqp",
    "cvxpy:osqp",
    "matrix:piqp",
    "cvxpy:piqp",
    "matrix:scip",
    "cvxpy:scip",
    "pyomo:scip",
]


def cvxpy_optimum(data, loss, penalty, C, fit_intercept=True):
    """The optimal value of penalty(w) + C sum_i loss(y_i, x_i'w + b), solved by CVXPY."""
    w = cp.Variable(data.n_features)
    f = data.X @ w + (cp.Variable() if fit_intercept else 0.0)
    problem = cp.Problem(cp.Minimize(penalty(w) + C * cp.sum(loss(data.y, f))))
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    assert problem.status == cp.OPTIMAL
    return float(problem.value)


def reference(name):
    model = DECLARED[name]
    if name.startswith("quantile"):
        fitted = QuantileRegressor(quantile=model.loss.tau, alpha=ALPHA, solver="highs")
        fitted.fit(model.data.X, model.data.y)
        return model.objective({"w": fitted.coef_, "intercept": [fitted.intercept_]})
    loss, penalty = STATED[name]
    return cvxpy_optimum(model.data, loss, penalty, model.C)


REFERENCES = {name: reference(name) for name in DECLARED}


def relative(a, b):
    return abs(a - b) / max(1.0, abs(b))


# --------------------------------------------------------------------------- every back-end
def test_problem_classes():
    classes = {name: model.problem_class.value for name, model in DECLARED.items()}
    assert classes == {
        "quantile-0.1": "LP",
        "quantile-0.5": "LP",
        "quantile-0.9": "LP",
        "svr": "QP",
        "squared-hinge-svm": "QP",
        "l1-svm": "LP",
        "enet-lad": "QP",
        "huber": "QP",
    }


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")  # cvxpy, on OSQP's LP solves
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(DECLARED))
def test_every_backend_is_certified_against_the_reference(name, backend):
    model, ref = DECLARED[name], REFERENCES[name]
    result = of.solve(model, backend=backend)
    assert result.objective == pytest.approx(model.objective(result.solution), rel=1e-12)
    assert result.bound is not None
    assert result.bound <= ref + 1e-9 * max(1.0, abs(ref))  # weak duality, any back-end
    if "osqp" not in backend:
        assert result.status is of.Status.OPTIMAL, (result.status, result.gap, result.stats)
    else:  # first order: may stop short, but OPTIMAL must be true
        assert result.status in (of.Status.OPTIMAL, of.Status.CONVERGED, of.Status.ITERATION_LIMIT)
    if result.status is of.Status.OPTIMAL:
        assert result.gap <= 1e-6
        assert relative(result.objective, ref) <= 1e-6
    assert result.solution["w"].shape == (3,)
    assert result.solution["intercept"].shape == (1,)


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_every_applicable_driver_reaches_the_reference_certified(name):
    """Each declaration through every (driver, back-end, layer, form) it offers, against Direct."""
    checks = assert_conforms(DECLARED[name])
    drivers = {check.label.split()[0] for check in checks[1:]}
    piecewise_linear = DECLARED[name].loss.is_piecewise_linear
    assert ("aid" in drivers) == piecewise_linear  # AID for every piecewise-linear loss
    # the box QP: ridge penalty, intercept; at most 3 linear pieces, or ReHU pieces of one
    # curvature with multipliers bounded on one side (a diagonal of its own)
    assert ("smo" in drivers) == (name in ("svr", "squared-hinge-svm", "huber"))
    for check in checks[1:]:
        if check.status == "optimal":
            assert abs(check.objective - REFERENCES[name]) <= 1e-6 * max(1.0, REFERENCES[name])


def test_the_linear_and_kernel_svr_by_smo_and_direct():
    """The epsilon-SVR by SMO (a kink in the box) and the kernel SVR by both."""
    from optframe.kernels import RBF

    for model in (
        EmpiricalRisk(REG, EpsilonInsensitive(0.5), C=1.0),
        EmpiricalRisk(REG, EpsilonInsensitive(0.5), C=1.0, kernel=RBF(gamma=0.5)),
    ):
        direct, smo = of.solve(model), of.solve(model, "smo")
        assert smo.status is of.Status.OPTIMAL
        assert smo.objective == pytest.approx(direct.objective, rel=1e-6)


def test_layers_return_the_loss_multipliers():
    model = DECLARED["l1-svm"]
    for backend in ("matrix:highs", "cvxpy:clarabel", "pyomo:highs"):
        alpha = of.solve(model, backend=backend).solution["alpha"]
        assert np.all(alpha >= -1e-9)
        assert np.all(alpha <= model.C + 1e-9)
        assert abs(alpha @ model.data.y) <= 1e-6  # the intercept's row
    alpha = of.solve(DECLARED["quantile-0.9"], backend="matrix:highs").solution["alpha"]
    c = DECLARED["quantile-0.9"].C
    assert alpha.min() >= -0.1 * c - 1e-9
    assert alpha.max() <= 0.9 * c + 1e-9
    assert abs(alpha.sum()) <= 1e-8


# ------------------------------------------------------------------------- scikit-learn
def test_linear_svr_without_intercept_is_the_same_problem():
    model = EmpiricalRisk(REG, EpsilonInsensitive(0.5), C=1.0, fit_intercept=False)
    fitted = LinearSVR(epsilon=0.5, C=1.0, fit_intercept=False, dual=True, tol=1e-10)
    fitted.set_params(max_iter=1_000_000).fit(REG.X, REG.y)
    theirs = model.objective({"w": fitted.coef_})
    result = of.solve(model, backend="matrix:highs")
    assert result.status is of.Status.OPTIMAL
    assert relative(result.objective, theirs) <= 1e-7
    assert result.solution["intercept"][0] == 0.0


@pytest.mark.parametrize("penalty", ["l1", "l2"])
def test_linear_svc_without_intercept_is_the_same_problem(penalty):
    model = EmpiricalRisk(
        CLS, SquaredHinge(), penalty=L1() if penalty == "l1" else L2(), C=1.0, fit_intercept=False
    )
    fitted = LinearSVC(
        penalty=penalty, loss="squared_hinge", dual=False, C=1.0, fit_intercept=False
    )
    fitted.set_params(tol=1e-10, max_iter=100_000).fit(CLS.X, CLS.y)
    theirs = model.objective({"w": fitted.coef_.ravel()})
    result = of.solve(model, backend="matrix:clarabel")
    assert result.status is of.Status.OPTIMAL
    assert relative(result.objective, theirs) <= 1e-7
    assert np.mean(result.predict(CLS.X) == fitted.predict(CLS.X)) >= 0.95


def test_quantile_without_penalty_matches_quantile_regressor():
    model = EmpiricalRisk(REG, Pinball(0.9), penalty=None)
    fitted = QuantileRegressor(quantile=0.9, alpha=0.0, solver="highs").fit(REG.X, REG.y)
    theirs = model.objective({"w": fitted.coef_, "intercept": [fitted.intercept_]})
    for backend in ("matrix:highs", "cvxpy:clarabel", "pyomo:scip"):  # pyomo:scip: no duals
        result = of.solve(model, backend=backend)
        assert result.status is of.Status.OPTIMAL, backend
        assert relative(result.objective, theirs) <= 1e-7
    assert model.objective_floor() > 0  # a perfect fit is possible without a penalty


# ---------------------------------------------------------------------------- certificate
@pytest.mark.parametrize("name", list(DECLARED))
def test_dual_bound_is_below_the_optimum_for_any_point(name):
    model, ref = DECLARED[name], REFERENCES[name]
    exact = of.solve(model, backend="matrix:highs").solution
    rng = np.random.default_rng(5)
    slack = 1e-9 * max(1.0, abs(ref))
    for size in (1e-6, 1e-3, 0.1, 1.0, 10.0):
        w = exact["w"] + size * rng.normal(size=3)
        b = exact["intercept"] + size * rng.normal(size=1)
        alpha = exact["alpha"] + size * model.C * rng.normal(size=N)
        for solution in ({"w": w, "intercept": b}, {"w": w, "intercept": b, "alpha": alpha}):
            bound = model.dual_bound(solution)
            assert bound <= ref + slack
            if size <= 1e-6:  # the repairs move a nearly optimal point a little
                assert bound >= ref - 1e-4 * max(1.0, abs(ref)), solution.keys()
            assert model.objective(solution) >= ref - slack
    wild = {"w": 100 * rng.normal(size=3), "alpha": 1e3 * rng.normal(size=N)}
    assert model.dual_bound(wild) <= ref + slack


@pytest.mark.parametrize("name", list(DECLARED))
def test_dual_bound_from_the_primal_alone_is_tight(name):
    model, ref = DECLARED[name], REFERENCES[name]
    exact = of.solve(model, backend="matrix:highs").solution
    primal = {"w": exact["w"], "intercept": exact["intercept"]}
    assert relative(model.dual_bound(primal), ref) <= 1e-7


def test_l1_svm_bound_is_its_dual_lp_value():
    # Hinge and lasso: D(alpha) = sum(alpha) at alpha in [0, C], y'alpha = 0, |X'(alpha y)| <= 1.
    model = DECLARED["l1-svm"]
    solution = of.solve(model, backend="matrix:highs").solution
    alpha = solution["alpha"]
    assert model.dual_bound(solution) == pytest.approx(alpha.sum(), rel=1e-9)
    assert alpha.sum() > 1.0


def test_the_lasso_dual_is_scaled_into_its_ball():
    # alpha 1% too large leaves |X'(alpha y)| <= 1; the bound scales it back, losing about 1%.
    model, ref = DECLARED["l1-svm"], REFERENCES["l1-svm"]
    alpha = of.solve(model, backend="matrix:highs").solution["alpha"]
    solution = {"w": np.zeros(3), "intercept": [0.0], "alpha": 1.01 * alpha}
    assert 0.98 * ref <= model.dual_bound(solution) <= ref


# ------------------------------------------------------------------- a loss of your own
def test_a_user_declared_loss_in_ten_lines():
    # The smoothed hinge: 0 above margin 1, (1 - m)^2 / 2 on [0, 1], 1/2 - m below 0.
    smooth_hinge = PLQLoss(rehu=[(-1.0, 1.0, 1.0)], kind="classification")
    model = EmpiricalRisk(CLS, smooth_hinge, penalty=L2(), C=2.0)
    results = [
        of.solve(model, backend=b) for b in ("matrix:highs", "cvxpy:clarabel", "pyomo:highs")
    ]

    def stated(y, f):
        m = cp.multiply(y, f)
        return cp.huber(cp.pos(1 - m), 1.0) / 2

    ref = cvxpy_optimum(CLS, stated, lambda w: cp.sum_squares(w) / 2, 2.0)
    for result in results:
        assert result.status is of.Status.OPTIMAL
        assert relative(result.objective, ref) <= 1e-7
    assert set(np.unique(results[0].predict(CLS.X))) == {-1.0, 1.0}
    assert model.is_classifier
    assert model.problem_class is of.ProblemClass.QP


def test_a_user_declared_piecewise_linear_loss_is_an_lp():
    check = PLQLoss(relu=[(0.3, 0.0), (-0.7, 0.0)])  # Pinball(0.3), declared by hand
    model = EmpiricalRisk(REG, check, penalty=None)
    assert model.problem_class is of.ProblemClass.LP
    assert not model.is_classifier
    result = of.solve(model)
    assert result.status is of.Status.OPTIMAL
    same = of.solve(EmpiricalRisk(REG, Pinball(0.3), penalty=None))
    assert relative(result.objective, same.objective) <= 1e-9


# --------------------------------------------------------------------- metamorphic, input
def test_sparse_features_give_the_same_optimum():
    Xs = X_REG.copy()
    Xs[np.random.default_rng(2).random(Xs.shape) < 0.5] = 0.0
    dense = EmpiricalRisk(Dataset(X=Xs, y=Y_REG), Huber(0.7), penalty=ElasticNet(0.3))
    sparse = EmpiricalRisk(
        Dataset(X=sp.csr_array(Xs), y=Y_REG), Huber(0.7), penalty=ElasticNet(0.3)
    )
    values = [
        of.solve(m, backend=b).objective
        for m in (dense, sparse)
        for b in ("matrix:clarabel", "cvxpy:clarabel", "pyomo:highs")
    ]
    assert max(values) - min(values) <= 1e-7 * max(1.0, abs(values[0]))


def test_a_duplicated_row_equals_a_doubled_weight():
    weights = np.ones(N)
    weights[:5] = 2.0
    weighted = EmpiricalRisk(REG, Pinball(0.3), penalty=L1(), sample_weight=weights)
    rows = np.r_[np.arange(N), np.arange(5)]
    repeated = EmpiricalRisk(Dataset(X=X_REG[rows], y=Y_REG[rows]), Pinball(0.3), penalty=L1())
    a, b = of.solve(weighted), of.solve(repeated)
    assert a.status is b.status is of.Status.OPTIMAL
    assert relative(a.objective, b.objective) <= 1e-9


def test_zero_weight_samples_are_kept_and_do_not_count():
    weights = np.ones(N)
    weights[::7] = 0.0
    model = EmpiricalRisk(CLS, Hinge(), penalty=L2(), sample_weight=weights)
    result = of.solve(model, backend="matrix:highs")
    assert result.status is of.Status.OPTIMAL
    assert result.solution["alpha"].shape == (N,)
    assert np.all(result.solution["alpha"][::7] == 0.0)


def test_bad_input_is_refused_with_a_named_error():
    with pytest.raises(DataError, match="labels in"):
        EmpiricalRisk(REG, Hinge())
    with pytest.raises(DataError, match="both classes"):
        EmpiricalRisk(Dataset(X=X_CLS, y=np.ones(N)), SquaredHinge())
    with pytest.raises(ModelError, match=r"Hinge\(\)"):
        EmpiricalRisk(CLS, Hinge)
    with pytest.raises(ModelError, match="penalty"):
        EmpiricalRisk(REG, Absolute(), penalty="l1")
    with pytest.raises(ModelError, match="C must"):
        EmpiricalRisk(REG, Absolute(), C=0.0)
    with pytest.raises(ModelError, match="needs the ridge penalty"):
        EmpiricalRisk(REG, Absolute(), kernel="rbf", penalty=None)
    with pytest.raises(ModelError, match="kernel"):
        EmpiricalRisk(REG, Absolute(), kernel="sigmoid")
    with pytest.raises(ModelError, match="fit_intercept"):
        EmpiricalRisk(REG, Absolute(), fit_intercept="yes")
    with pytest.raises(DataError):
        EmpiricalRisk(Dataset(X=X_REG), Absolute())


def test_objective_floor_only_where_the_optimum_can_vanish():
    assert DECLARED["huber"].objective_floor() == 0.0
    assert DECLARED["l1-svm"].objective_floor() == 0.0
    assert DECLARED["svr"].objective_floor() == 0.0  # the targets spread wider than 2 epsilon
    narrow = Dataset(X=X_REG, y=0.1 * np.sign(Y_REG))  # within a band of width 2 epsilon
    assert EmpiricalRisk(narrow, EpsilonInsensitive(0.5)).objective_floor() > 0.0
    exact = EmpiricalRisk(
        Dataset(X=X_REG, y=X_REG @ [1.0, -2.0, 0.5] + 3.0), Absolute(), penalty=None
    )
    result = of.solve(exact)
    assert result.status is of.Status.OPTIMAL
    assert abs(result.objective) <= 1e-7
    assert math.isfinite(result.gap)
