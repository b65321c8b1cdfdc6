"""KnowledgeBasedSVM: formulation vs independent CVXPY, back-ends, KKT, restriction, bad input."""

import itertools

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from model_testing import classification_data, close
from scipy.optimize import linprog

import optframe as of
from optframe.data import Dataset, make_knowledge_data
from optframe.errors import DataError, ModelError
from optframe.models import KnowledgeBasedSVM, KnowledgeSet, WeightedSVM
from optframe.models.knowledge_svm import InfeasibleKnowledge


def knowledge_problem(n=40, m=200, seed=0, **kwargs):
    train, _ = make_knowledge_data(n, 20, m, random_state=seed, block_size=10)
    sets = [KnowledgeSet(k["B"], k["d"], k["label"]) for k in train.meta["knowledge"]]
    params = {"lam1": 2e-3, "lam2": 1e-2, "rho": 1.0} | kwargs
    return KnowledgeBasedSVM(train, knowledge=sets, **params)


def enet(seed=0, n=50, m=8, sparse=False, **kwargs):
    X, y = classification_data(n, m, seed=seed, sparse=sparse)
    return KnowledgeBasedSVM(Dataset(X=X, y=y), **({"lam1": 0.01, "lam2": 0.05} | kwargs))


def independent_enet_value(model):
    """Elastic-net SVM written from scratch in CVXPY, solved by Clarabel."""
    X = model.data.X.toarray() if sp.issparse(model.data.X) else model.data.X
    y, n, m = model.data.y, *model.data.X.shape
    w, b = cp.Variable(m), cp.Variable()
    loss = cp.sum(cp.pos(1 - cp.multiply(y, X @ w + b))) / n
    objective = loss + model.lam1 * cp.norm1(w) + model.lam2 / 2 * cp.sum_squares(w)
    problem = cp.Problem(cp.Minimize(objective))
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return problem.value


@pytest.fixture(scope="module")
def kmodel():
    model = knowledge_problem()
    return model, of.solve(model, tol=1e-10)


# ----------------------------------------------------------------------------- formulation
@pytest.mark.parametrize("sparse", [False, True])
def test_without_knowledge_is_the_elastic_net_svm(sparse):
    model = enet(sparse=sparse)
    result = of.solve(model)
    assert result.status is of.Status.OPTIMAL
    assert close(result.objective, independent_enet_value(model), 1e-6)
    assert close(result.objective, result.stats["solver_objective"], 1e-6)


def test_pyomo_layer_without_knowledge():
    model = enet(sparse=True)
    assert close(of.solve(model, backend="pyomo:highs").objective, of.solve(model).objective, 1e-6)


def test_lam1_zero_is_weighted_svm_scaled():
    model = enet(lam1=0.0, lam2=0.1)
    n = model.data.n_samples
    svm = WeightedSVM(model.data, C=1.0 / (n * model.lam2))
    ours, theirs = of.solve(model), of.solve(svm)
    assert close(ours.objective, model.lam2 * theirs.objective, 1e-6)
    np.testing.assert_allclose(ours.solution["w"], theirs.solution["w"], atol=1e-4)


@pytest.mark.parametrize("backend", ["cvxpy:highs", "cvxpy:scip", "cvxpy:osqp", "pyomo:highs"])
def test_backends_agree_with_clarabel(kmodel, backend):
    model, reference = kmodel
    result = of.solve(model, backend=backend)
    assert result.status.is_success
    rtol = 1e-3 if "osqp" in backend else 1e-6
    assert close(result.objective, reference.objective, rtol)
    assert model.violation(result.solution) <= 1e-7


def test_kkt_residuals_vanish_at_the_reference(kmodel):
    model, reference = kmodel
    assert reference.status is of.Status.OPTIMAL
    kkt = model.kkt_residuals(reference.solution)
    assert set(kkt) == {"w", "alpha", "u", "beta", "intercept", "max"}
    assert kkt["max"] <= 1e-6, kkt
    perturbed = dict(reference.solution, w=reference.solution["w"] + 1e-2)
    assert model.kkt_residuals(perturbed)["max"] > 1e-3


def test_dual_bound_is_below_the_optimum():
    model = enet()
    result = of.solve(model)
    bound = model.dual_bound(result.solution)
    assert bound <= result.objective + 1e-9
    assert close(bound, result.objective, 1e-6)
    with_knowledge = knowledge_problem()
    reference = of.solve(with_knowledge)
    bound = with_knowledge.dual_bound(reference.solution)
    assert bound <= reference.objective + 1e-9
    assert close(bound, reference.objective, 1e-6)


def test_objective_oracle_matches_the_solver(kmodel):
    _model, reference = kmodel
    assert close(reference.objective, reference.stats["solver_objective"], 1e-7)


# ----------------------------------------------------------------------------- restriction
def test_restricted_model_equals_full_model_with_fixed_zeros(kmodel):
    model, reference = kmodel
    rng = np.random.default_rng(0)
    m = model.data.n_features
    support = np.union1d(
        np.flatnonzero(np.abs(reference.solution["w"]) > 1e-6)[::2],
        rng.choice(m, 20, replace=False),
    )
    reduced = model.restrict_features(support)
    assert reduced.data.n_features == support.size
    result = of.solve(reduced)
    padded = model.pad_solution(result.solution, support)
    # Same value on both models at corresponding points.
    assert close(model.objective(padded), reduced.objective(result.solution), 1e-12)
    # Full problem with the off-support weights constrained to 0 (CVXPY, Clarabel).
    formulation = model.build("cvxpy")
    w = formulation.variables["w"]
    off = np.setdiff1d(np.arange(m), support)
    problem = cp.Problem(
        formulation.problem.objective, [*formulation.problem.constraints, w[off] == 0]
    )
    problem.solve(solver="CLARABEL")
    assert close(result.objective, problem.value, 1e-6)


def test_knowledge_violations_shrink_as_rho_grows():
    norms, hinges = [], []
    for rho in (1.0, 10.0, 100.0, 1000.0):
        model = knowledge_problem(rho=rho)
        violations = of.solve(model).solution
        v = model.knowledge_violations(violations)
        norms.append(v[:, 0].sum())
        hinges.append(v[:, 1].sum())
    assert all(b <= a * (1 + 1e-6) + 1e-9 for a, b in itertools.pairwise(norms))
    assert all(b <= a * (1 + 1e-6) + 1e-9 for a, b in itertools.pairwise(hinges))
    assert norms[-1] < 0.5 * norms[0]


def test_farkas_certificate_proves_the_implication():
    # Box 0 <= x <= 1 in R^2 (B = [I; -I]); if w, b, u satisfy the conditions exactly,
    # min over the box of w'x + b is at least 1.
    B = np.vstack([np.eye(2), -np.eye(2)])
    d = np.array([1.0, 1.0, 0.0, 0.0])
    w = np.array([0.5, 1.0])
    u = np.array([0.0, 0.0, 0.5, 1.0])  # B'u + w = 0
    b = 1.0 + d @ u  # d'u - b + 1 = 0
    data = Dataset(X=[[0.0, 0.0], [1.0, 1.0]], y=[-1, 1])
    model = KnowledgeBasedSVM(data, knowledge=[KnowledgeSet(B, d, +1)], lam1=0.0, lam2=1.0)
    assert np.allclose(model.knowledge_violations({"w": w, "intercept": [b], "u": u}), 0)
    low = linprog(w, A_ub=B, b_ub=d, bounds=[(None, None)] * 2, method="highs")
    assert low.fun + b >= 1 - 1e-7


# ------------------------------------------------------------------------------- bad input
def test_bad_input_raises_named_errors():
    X, y = classification_data(20, 3)
    data = Dataset(X=X, y=y)
    good = KnowledgeSet(np.eye(3), np.ones(3), +1)
    with pytest.raises(ModelError, match="lam1"):
        KnowledgeBasedSVM(data, lam1=-0.1)
    with pytest.raises(ModelError, match="lam2"):
        KnowledgeBasedSVM(data, lam2=0.0)
    with pytest.raises(ModelError, match="rho"):
        KnowledgeBasedSVM(data, knowledge=[good], rho=-1.0)
    with pytest.raises(ModelError, match="columns"):
        KnowledgeBasedSVM(data, knowledge=[KnowledgeSet(np.eye(4), np.ones(4), +1)])
    with pytest.raises(InfeasibleKnowledge, match="empty"):
        KnowledgeSet(np.array([[1.0, 0, 0], [-1.0, 0, 0]]), np.array([-1.0, -1.0]), -1)
    with pytest.raises(ModelError, match="label"):
        KnowledgeSet(np.eye(3), np.ones(3), 0)
    with pytest.raises(ModelError, match="rows"):
        KnowledgeSet(np.eye(3), np.ones(2), 1)
    with pytest.raises(ModelError, match="non-empty"):
        KnowledgeSet(np.zeros((0, 3)), np.zeros(0), 1)
    with pytest.raises(DataError, match="class"):
        KnowledgeBasedSVM(Dataset(X=X, y=np.abs(y)))
    with pytest.raises(ModelError, match="empty"):
        KnowledgeBasedSVM(data).restrict_features([])
    assert issubclass(InfeasibleKnowledge, of.errors.OptframeError)


def test_docstring_example_runs():
    import doctest

    import optframe.models.knowledge_svm as module

    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failures == 0
