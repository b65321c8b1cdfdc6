"""AggregateDisaggregate against the Direct reference, and the invariants of notes/aid.md."""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp

import optframe as of
from optframe.data import Dataset, make_classification_svm, make_lad_set_a
from optframe.data.aggregate import aggregate_samples
from optframe.drivers import AggregateDisaggregate, Direct
from optframe.drivers import clusters as cl
from optframe.models import KnowledgeBasedSVM, LADRegression, WeightedSVM


def lad_model(n=3000, m=8, seed=0, **kwargs):
    return LADRegression(make_lad_set_a(n, m, random_state=seed), **kwargs)


def svm_model(n=2000, m=6, seed=0, C=1.0, **kwargs):
    data = make_classification_svm(n, m, separation=1.0, random_state=seed)
    return WeightedSVM(data, C=C, **kwargs)


def record_history(result):
    return [
        (r.extras["clusters"], r.extras["aggregated_objective"], r.bound) for r in result.history
    ]


CASES = {
    "lad": lambda: lad_model(),
    "lad-no-intercept": lambda: lad_model(fit_intercept=False),
    "lad-weighted": lambda: lad_model(
        sample_weight=np.random.default_rng(1).uniform(0.1, 3.0, 3000)
    ),
    "lad-sparse": lambda: LADRegression(
        Dataset(
            X=sp.random(3000, 20, density=0.2, random_state=2, format="csr"),
            y=np.random.default_rng(2).laplace(size=3000),
        )
    ),
    "svm": lambda: svm_model(),
    "svm-weighted": lambda: svm_model(
        sample_weight=np.random.default_rng(3).uniform(0.1, 2.0, 2000)
    ),
    "svm-no-intercept": lambda: svm_model(fit_intercept=False, C=0.3),
}


@pytest.fixture(params=list(CASES), scope="module")
def case(request):
    model = CASES[request.param]()
    reference = of.solve(model)
    result = of.solve(model, driver=AggregateDisaggregate())
    return model, reference, result


def test_aid_matches_direct_and_certifies(case):
    model, reference, result = case
    assert result.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(reference.objective, rel=1e-6)
    assert result.bound is not None
    assert result.bound <= reference.objective * (1 + 1e-7) + 1e-9
    assert result.gap <= 1e-6 + 1e-9
    assert result.objective == pytest.approx(model.objective(result.solution))


def test_lower_bound_is_monotone_and_below_the_optimum(case):
    _model, reference, result = case
    bounds = [r.bound for r in result.history]
    assert all(b2 >= b1 - 1e-9 * max(1, abs(b1)) for b1, b2 in itertools.pairwise(bounds))
    aggregated = [r.extras["aggregated_objective"] for r in result.history]
    # F_t never decreases (Propositions 2 and 4) and never exceeds E* (Jensen).
    assert all(f2 >= f1 * (1 - 1e-7) - 1e-7 for f1, f2 in itertools.pairwise(aggregated))
    assert all(f <= reference.objective * (1 + 1e-7) + 1e-7 for f in aggregated)
    # E_best never increases and clusters only ever grow.
    values = [r.objective for r in result.history]
    assert all(v2 <= v1 for v1, v2 in itertools.pairwise(values))
    counts = [r.extras["clusters"] for r in result.history]
    assert all(c2 > c1 for c1, c2 in itertools.pairwise(counts))


def test_lifted_dual_is_feasible_and_reproduces_w():
    model = svm_model()
    result = of.solve(model, driver=AggregateDisaggregate())
    alpha = result.solution["alpha"]
    assert np.all(alpha >= -1e-9)
    assert np.all(alpha <= model.upper_bounds + 1e-7)
    assert abs(alpha @ model.data.y) <= 1e-6 * model.upper_bounds.sum()
    w = model.data.X.T @ (alpha * model.data.y)
    np.testing.assert_allclose(w, result.solution["w"], atol=1e-6 * (1 + np.abs(w).max()))
    # a feasible dual point gives a valid lower bound, and it closes the gap at the optimum
    assert model.dual_objective(alpha) <= result.objective + 1e-7
    assert model.dual_objective(alpha) == pytest.approx(result.objective, rel=1e-5)


def test_lifted_lad_theta_is_dual_feasible():
    model = lad_model(sample_weight=np.random.default_rng(4).uniform(0.5, 2.0, 3000))
    result = of.solve(model, driver=AggregateDisaggregate())
    theta = result.solution["theta"]
    assert np.all(np.abs(theta) <= model.weights * (1 + 1e-9))
    np.testing.assert_allclose(model.data.X.T @ theta, 0.0, atol=1e-6 * model.weights.sum())
    assert model.data.y @ theta == pytest.approx(result.objective, rel=1e-7)


def test_singletons_reproduce_the_original_problem():
    model = lad_model(n=200, m=3)
    result = of.solve(model, driver=AggregateDisaggregate(r0=1.0))
    reference = of.solve(model)
    assert result.iterations == 1
    assert result.history[0].extras["clusters"] == 200
    assert result.objective == pytest.approx(reference.objective, rel=1e-9)


def test_pure_clusters_give_e_equal_f():
    model = lad_model(n=2000, m=5)
    result = of.solve(model, driver=AggregateDisaggregate())
    last = result.history[-1]
    assert last.extras["split"] == 0
    assert last.extras["objective_t"] == pytest.approx(
        last.extras["aggregated_objective"], rel=1e-7
    )


def test_split_keeps_a_label_pure_partition():
    rng = np.random.default_rng(0)
    groups = rng.integers(0, 2, 500)
    embedding = rng.normal(size=(500, 2))
    weights = np.ones(500)
    weights[:10] = 0.0
    labels = cl.initial_clusters(embedding, groups, weights, {0: 7, 1: 5}, rng)
    assert np.all(labels[:10] == -1)
    kept = labels >= 0
    for k in np.unique(labels[kept]):
        assert np.unique(groups[labels == k]).size == 1
    pieces = rng.integers(0, 2, 500)
    split, count = cl.split_by_piece(labels, pieces)
    assert np.array_equal(split < 0, labels < 0)
    for k in range(count):
        members = split == k
        assert np.unique(pieces[members]).size == 1
        assert np.unique(labels[members]).size == 1  # a refinement of the old partition


def test_aggregate_and_lift_round_trip():
    rng = np.random.default_rng(5)
    data = Dataset(X=rng.normal(size=(50, 3)), y=rng.normal(size=50))
    weights = rng.uniform(0.5, 2.0, 50)
    labels = rng.integers(0, 6, 50)
    labels, k = cl.compact(labels)
    agg = aggregate_samples(data, weights, labels, k)
    np.testing.assert_allclose(agg.sample_weight.sum(), weights.sum())
    values = rng.normal(size=k)
    lifted = cl.lift(values, weights, labels, k)
    np.testing.assert_allclose(np.bincount(labels, lifted, minlength=k), values)
    np.testing.assert_allclose(data.X.T @ lifted, agg.X.T @ values)


def test_time_and_iteration_limits_are_statuses():
    model = lad_model(n=4000, m=10)
    limited = of.solve(model, driver=AggregateDisaggregate(), max_iter=1)
    assert limited.status is of.Status.ITERATION_LIMIT
    assert math.isfinite(limited.objective)
    assert limited.bound <= limited.objective
    timed = of.solve(model, driver=AggregateDisaggregate(), time_limit=1e-4)
    assert timed.status is of.Status.TIME_LIMIT


def test_inner_driver_and_backend_are_configurable():
    model = lad_model(n=1500, m=4)
    result = of.solve(
        model, driver=AggregateDisaggregate(inner=Direct(form="dual")), backend="pyomo:highs"
    )
    assert result.status is of.Status.OPTIMAL
    assert result.backend == "pyomo:highs"
    assert result.objective == pytest.approx(of.solve(model).objective, rel=1e-6)


def test_bad_input():
    with pytest.raises(of.ModelError, match="r0"):
        AggregateDisaggregate(r0=0.0)
    with pytest.raises(of.ModelError, match="r0"):
        AggregateDisaggregate(r0=1.5)
    # The elastic-net SVM has no piecewise-linear sample structure to aggregate on.
    elastic_net = KnowledgeBasedSVM(make_classification_svm(40, 3, random_state=0), lam1=0.1)
    with pytest.raises(of.IncompatibleDriver, match="sample_groups"):
        of.solve(elastic_net, driver=AggregateDisaggregate())


# ------------------------------------------------------------------ kernel AID (Appendix B)
def _kernel_svm(kernel, n=240, C=1.0):
    data = make_classification_svm(n, 4, separation=1.0, random_state=3)
    return WeightedSVM(data, C=C, kernel=kernel)


def test_cluster_mean_kernel_is_a_k_a_transpose():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    weights = rng.uniform(0.5, 2.0, size=30)
    labels = rng.integers(0, 6, size=30)
    labels[4] = -1  # a row outside every cluster
    A = np.zeros((6, 30))
    for p in range(6):
        members = labels == p
        A[p, members] = weights[members] / weights[members].sum()
    for base in (of.Linear(), of.RBF(0.7), of.Polynomial(2, 0.5, 1.0)):
        expected = A @ base.matrix(X) @ A.T
        kernel = of.kernels.ClusterMeanKernel(base, X, weights, labels, 6)
        ids = np.arange(6.0).reshape(-1, 1)
        np.testing.assert_allclose(kernel.matrix(ids), expected, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(kernel.diagonal(ids), np.diag(expected), rtol=1e-12)
    # With the linear kernel, the mean's kernel is the inner product of the centroids.
    centroids = A @ X
    kernel = of.kernels.ClusterMeanKernel(of.Linear(), X, weights, labels, 6)
    np.testing.assert_allclose(kernel.gram, centroids @ centroids.T, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kernel", [of.RBF(0.5), of.Polynomial(2, 0.5, 1.0)])
def test_kernel_aid_matches_direct(kernel):
    model = _kernel_svm(kernel)
    reference = of.solve(model, backend="clarabel", tol=1e-9)
    result = of.solve(model, driver=AggregateDisaggregate(r0=0.05), backend="clarabel")
    assert result.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(reference.objective, rel=1e-5)
    assert result.bound <= reference.objective * (1 + 1e-7)
    # The lifted duals are feasible for the original dual.
    assert model.violation({"alpha": result.solution["alpha"]}) < 1e-7
    aggregated = [r.extras["aggregated_objective"] for r in result.history]
    assert all(f <= reference.objective * (1 + 1e-6) for f in aggregated)


def test_kernel_aid_with_a_linear_kernel_equals_primal_aid():
    # notes/aid.md invariant 18: x'z written as a polynomial kernel takes the feature-space path.
    linear = _kernel_svm(of.Linear(), C=0.5)
    as_kernel = _kernel_svm(of.Polynomial(1, 1.0, 0.0), C=0.5)
    driver = AggregateDisaggregate(r0=0.05, max_iter=1)
    primal = of.solve(linear, driver=driver, backend="clarabel", tol=0.0)
    dual = of.solve(as_kernel, driver=driver, backend="clarabel", tol=0.0)
    f_primal = linear.decision_function(primal.solution, linear.data.X)
    f_dual = as_kernel.decision_function(dual.solution, as_kernel.data.X)
    np.testing.assert_allclose(f_dual, f_primal, rtol=1e-4, atol=1e-4)
    assert dual.history[0].extras["aggregated_objective"] == pytest.approx(
        primal.history[0].extras["aggregated_objective"], rel=1e-6
    )


# ---------------------------------------------------------------- warm starts between iterations
def test_basis_refine_keeps_one_basic_child_per_basic_parent():
    from optframe.basis import Basis, BasisStatus

    old = Basis(
        {"theta": np.array([0, 1, 2, 1], dtype=np.int8), "beta": np.array([1, 1], dtype=np.int8)},
        {"rows": np.array([1, 0], dtype=np.int8)},
    )
    parent = np.array([0, 1, 1, 2, 3, 3, 3])
    new = old.refine(parent, 4)
    np.testing.assert_array_equal(new.variables["theta"], [0, 1, 0, 2, 1, 0, 0])
    np.testing.assert_array_equal(new.variables["beta"], [1, 1])
    np.testing.assert_array_equal(new.constraints["rows"], [1, 0])
    basic = sum(int(np.sum(b == BasisStatus.BASIC)) for b in new.variables.values())
    assert basic == 4  # as many basic entries as before


def test_parents_of_a_refined_partition():
    old = np.array([0, 0, 1, 1, -1, 2])
    new = np.array([0, 3, 1, 1, -1, 2])
    np.testing.assert_array_equal(cl.parents(old, new, 4), [0, 1, 2, 0])


def test_warm_started_aid_equals_cold_and_needs_fewer_simplex_iterations():
    model = LADRegression(make_lad_set_a(5000, 10, random_state=4))
    reference = of.solve(model)
    runs = {}
    for warm in (True, False):
        driver = AggregateDisaggregate(inner=Direct(form="dual"), warm_start=warm)
        runs[warm] = of.solve(model, driver=driver, backend="highs", threads=1)
        assert runs[warm].status is of.Status.OPTIMAL
        assert runs[warm].objective == pytest.approx(reference.objective, rel=1e-6)
    warm_flags = [r.extras["warm"] for r in runs[True].history]
    assert warm_flags[0] is False
    assert all(warm_flags[1:])
    assert not any(r.extras["warm"] for r in runs[False].history)

    def simplex_iterations(result):
        return sum(r.extras["inner_iterations"] for r in result.history[1:])

    assert simplex_iterations(runs[True]) < simplex_iterations(runs[False])


def test_a_failed_aggregated_solve_says_why():
    from sklearn.datasets import load_breast_cancer

    from optframe.data import Dataset
    from optframe.drivers import AggregateDisaggregate, Direct
    from optframe.models import WeightedSVM

    X, y = load_breast_cancer(return_X_y=True)
    model = WeightedSVM(Dataset(X, 2.0 * y - 1.0))
    result = of.solve(model, AggregateDisaggregate(inner=Direct(form="dual")), backend="osqp",
                      solver_options={"max_iter": 1})  # fmt: skip
    assert result.status is of.Status.ITERATION_LIMIT
    assert result.stats["inner_status"] == "iteration_limit"
    assert "the aggregated problem of iteration 0" in result.stats["error"]
    assert "OSQP" in result.stats["error"]
