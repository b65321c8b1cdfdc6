"""SMO against Direct (Clarabel) and SVC, and the invariants of notes/usmo.md section 6."""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer
from sklearn.svm import SVC

import optframe as of
from optframe.bench.suites.pu import paper_start
from optframe.data import Dataset
from optframe.drivers import SMO
from optframe.drivers import smo_core as core
from optframe.drivers.smo import BoxQPDual, _kernel_code, points, row_points
from optframe.errors import IncompatibleDriver, ModelError
from optframe.kernel_sums import kernel_sums
from optframe.kernels import RBF, Linear, Polynomial
from optframe.models import PULearning, WeightedSVM


def pu_data(p=10, n=60, m=3, seed=0, duplicates=0):
    rng = np.random.default_rng(seed)
    pos = rng.normal(1.0, 1.0, size=(p, m))
    n_pos = int(0.4 * n)
    unl = np.vstack([rng.normal(1.0, 1.0, (n_pos, m)), rng.normal(-1.0, 1.0, (n - n_pos, m))])
    if duplicates:
        unl[-duplicates:] = unl[:duplicates]  # identical rows: eta = 0 pairs
    X = np.vstack([pos, unl])
    y = np.r_[np.ones(p), np.zeros(n)]
    order = rng.permutation(y.size)
    return Dataset(X=X[order], y=y[order])


def reference(model):
    return of.solve(
        model, backend="clarabel", solver_options={"tol_gap_rel": 1e-10, "tol_gap_abs": 1e-10}
    )


def fresh_violation(model, solution):
    """Max up - min low (notes/usmo.md 2.4) from F recomputed from scratch; the bias interval."""
    XU = model.data.X[model.unlabeled]
    beta = solution["intercept"][0]
    F = model.decision_function({k: v for k, v in solution.items() if k != "intercept"}, XU)
    sigma, c2 = solution["sigma"], model.c2
    up = np.where(sigma < c2 / 2, F + 1, np.where(sigma < c2, F - 1, -np.inf))
    low = np.where(sigma > c2 / 2, F - 1, np.where(sigma > 0, F + 1, np.inf))
    return up.max() - low.min(), (np.max(-low), np.min(-up)), beta


PU_CASES = [
    ("linear", 1e-2, 0.4, 0),
    ("linear", 1e-4, 0.3, 0),
    ("linear", 1e-1, 0.5, 3),  # prior 1/2: the start sits on the kink; duplicates: eta = 0
    (RBF(gamma=0.5), 1e-2, 0.4, 0),
    (RBF(gamma=0.5), 1e-3, 0.2, 2),
    (RBF(gamma=0.5), 1e-1, 0.8, 0),
]


@pytest.mark.parametrize("working_set", ["second_order", "mvp"])
@pytest.mark.parametrize(("kernel", "lam", "prior", "dups"), PU_CASES)
def test_pu_smo_matches_direct_and_invariants(kernel, lam, prior, dups, working_set):
    model = PULearning(pu_data(duplicates=dups), prior=prior, lam=lam, kernel=kernel)
    ref = reference(model)
    tol = 1e-6
    result = of.solve(model, driver=SMO(tol=tol, working_set=working_set, check_every=20))
    assert result.status is of.Status.OPTIMAL  # the certificate closes at 1e-6
    scale = max(1.0, abs(ref.objective))
    # Agreement with the generic QP (objective and bound), and a valid bound.
    assert abs(result.objective - ref.objective) <= 1e-7 * scale
    assert result.bound <= ref.objective + 1e-8 * scale
    assert result.gap <= 1e-7
    assert result.objective == pytest.approx(model.objective(result.solution), rel=1e-12)
    # Feasibility: equality, box, alpha.
    sigma = result.solution["sigma"]
    c1p = model.c1 * model.positives.size
    assert abs(sigma.sum() - c1p) <= 1e-10 * max(1.0, c1p)
    assert sigma.min() >= 0
    assert sigma.max() <= model.c2
    assert abs(result.solution["alpha"].sum()) <= 1e-10 * max(1.0, c1p)
    # Termination certificate from freshly recomputed F; bias in its KKT interval.
    gap, (lo, hi), beta = fresh_violation(model, result.solution)
    assert gap <= tol * (1 + 1e-6) + 1e-9 * max(1.0, model.c2)
    assert lo - 2 * tol <= beta <= hi + 2 * tol
    # Monotone dual objective over the history.
    duals = [r.extras["dual_objective"] for r in result.history]
    assert all(b >= a - 1e-12 * scale for a, b in itertools.pairwise(duals))
    # Decision values agree with the reference (Kalpha is unique).
    X = model.data.X
    np.testing.assert_allclose(
        result.decision_function(X), ref.decision_function(X), atol=1e-3 * max(1.0, abs(beta))
    )


def test_pu_equals_split_qp():
    """The reduced dual's optimum equals the 2n-variable split form's (a, b in [0, c2/2])."""
    import cvxpy as cp

    model = PULearning(pu_data(n=30), prior=0.4, lam=1e-2, kernel=RBF(gamma=0.5))
    dual = model.structure(BoxQPDual)
    K = model.kernel.matrix(dual.X)
    n = K.shape[0]
    a, b = cp.Variable(n), cp.Variable(n)
    s = a + b
    problem = cp.Problem(
        cp.Minimize(cp.quad_form(s, cp.psd_wrap(K)) / 2 + dual.linear @ s - cp.sum(a) + cp.sum(b)),
        [a >= 0, b >= 0, a <= model.c2 / 2, b <= model.c2 / 2, cp.sum(s) == dual.rhs],
    )
    problem.solve(solver="CLARABEL")
    result = of.solve(model, driver=SMO(tol=1e-7))
    assert not result.stats["stalled"]
    phi = -(result.bound - dual.bound_offset)
    assert phi == pytest.approx(problem.value, rel=1e-7, abs=1e-9)


def test_pair_step_equals_brute_force(rng):
    """The exact 1-D step (the four cases, eta = 0 included) against a dense grid on [0, T]."""
    for trial in range(300):
        c2 = rng.uniform(0.1, 3.0)
        kink = c2 / 2
        xi, xj = (rng.choice([0.0, kink, c2, rng.uniform(0, c2)]) for _ in range(2))
        gi, gj = rng.normal(scale=2, size=2)
        eta = 0.0 if trial % 4 == 0 else rng.uniform(0.0, 3.0)
        args = (1.0, 1.0, xi, xj, gi, gj, eta, c2, c2, kink, -1.0, 1.0, kink, -1.0, 1.0)
        t, phi = core.pair_step(*args)
        T = min(c2 - xi, xj)
        if T <= 0:
            assert (t, phi) == (0.0, 0.0)
            continue
        grid = np.linspace(0.0, T, 4001)
        values = [core.pair_phi(g, *args[:7], kink, -1.0, 1.0, kink, -1.0, 1.0) for g in grid]
        assert phi <= min(min(values), 0.0) + 1e-12
        assert 0.0 <= t <= T
        assert phi == pytest.approx(core.pair_phi(t, *args[:7], kink, -1, 1, kink, -1, 1))


def test_paper_stopping_rule_stops_early():
    """notes/usmo.md P1: the paper's rule (g1)-(g3) stops at non-optimal points; ours does not.

    Measured on these seeds (linear kernel, tol 1e-3): the paper's rule stopped with complete
    violations 0.14 to 11.8 and objectives 0.5% to 100% above the optimum.
    """
    early = 0
    for seed in range(8):
        model = PULearning(pu_data(p=8, n=50, seed=seed), prior=0.3, lam=1e-2)
        ref = reference(model)
        paper = of.solve(model, driver=SMO(tol=1e-3, stopping="paper", working_set="mvp"))
        complete = of.solve(model, driver=SMO(tol=1e-3))
        scale = max(1.0, abs(ref.objective))
        assert complete.stats["violation"] <= 1e-3
        assert abs(complete.objective - ref.objective) <= 1e-4 * scale
        assert ref.objective - complete.bound <= 1e-4 * scale
        assert paper.stats["paper_violation"] <= 1e-3  # the paper's rule is met ...
        if paper.stats["violation"] > 0.1 and paper.objective - ref.objective > 1e-3 * scale:
            early += 1  # ... at a point that is far from optimal
    assert early >= 6


def test_cache_budget_does_not_change_the_path():
    model = PULearning(pu_data(n=80), prior=0.4, lam=1e-3, kernel=RBF(gamma=0.5))
    big = of.solve(model, driver=SMO(tol=1e-6))
    small = of.solve(model, driver=SMO(tol=1e-6, cache_bytes=1))
    assert small.stats["cache_rows"] == 2
    assert big.stats["cache_rows"] == 80
    np.testing.assert_array_equal(small.solution["sigma"], big.solution["sigma"])
    assert small.stats["kernel_rows"] > big.stats["kernel_rows"]
    # The cached gradient gives the same bias as F recomputed from scratch.
    fresh = model.solution_from_sigma(big.solution["sigma"])
    assert fresh["intercept"][0] == pytest.approx(big.solution["intercept"][0], abs=1e-8)


def test_warm_start():
    model = PULearning(pu_data(), prior=0.4, lam=1e-2, kernel=RBF(gamma=0.5))
    cold = of.solve(model, driver=SMO(tol=1e-6))
    warm = of.solve(model, driver=SMO(tol=1e-6, warm_start=cold.solution["sigma"]))
    assert warm.iterations <= 2
    assert warm.objective == pytest.approx(cold.objective, rel=1e-10)
    with pytest.raises(ModelError, match="equality"):
        of.solve(model, driver=SMO(warm_start=np.zeros(model.unlabeled.size)))


@pytest.mark.parametrize("kernel", ["linear", RBF(gamma=0.5)])
def test_paper_initialization(kernel):
    model = PULearning(pu_data(n=80), prior=0.3, lam=1e-2, kernel=kernel)
    sigma = paper_start(model)
    c1p = model.c1 * model.positives.size
    assert sigma.min() >= 0
    assert sigma.max() <= model.c2
    assert abs(sigma.sum() - c1p) <= 1e-12 * max(1.0, c1p)
    ref = reference(model)
    result = of.solve(model, driver=SMO(tol=1e-6, warm_start=sigma))
    assert abs(result.objective - ref.objective) <= 1e-6 * max(1.0, abs(ref.objective))


# ------------------------------------------------------------------------------ WeightedSVM
@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    rows = np.random.default_rng(11).choice(y.size, 200, replace=False)
    X = X[rows]
    return (X - X.mean(axis=0)) / X.std(axis=0), 2.0 * y[rows] - 1.0


@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("C", [0.1, 5.0])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_svm_smo_matches_direct_and_svc(cancer, kernel, C, shrinking):
    X, y = cancer
    s = np.random.default_rng(2).uniform(0.5, 2.0, y.size)
    gamma = 0.05
    model = WeightedSVM(
        Dataset(X=X, y=y),
        C=C,
        kernel=RBF(gamma=gamma) if kernel == "rbf" else "linear",
        sample_weight=s,
    )
    ref = of.solve(model, driver=of.drivers.Direct(form="dual"), backend="clarabel")
    result = of.solve(model, driver=SMO(tol=1e-6, shrinking=shrinking, check_every=50))
    assert result.status is of.Status.OPTIMAL  # the certificate closes at 1e-6
    scale = max(1.0, abs(ref.objective))
    assert abs(result.objective - ref.objective) <= 1e-6 * scale
    assert result.bound <= ref.objective + 1e-8 * scale
    assert model.violation(result.solution) <= 1e-9 * C
    duals = [r.extras["dual_objective"] for r in result.history]
    assert all(b >= a - 1e-12 * scale for a, b in itertools.pairwise(duals))
    svc = SVC(C=C, kernel=kernel, gamma=gamma, tol=1e-6).fit(X, y, sample_weight=s)
    alpha = np.zeros(y.size)
    alpha[svc.support_] = svc.dual_coef_.ravel() * y[svc.support_]
    svc_value = model.objective({"alpha": alpha, "intercept": svc.intercept_})
    assert abs(result.objective - svc_value) <= 1e-4 * scale
    np.testing.assert_array_equal(
        result.predict(X)[np.abs(svc.decision_function(X)) > 1e-3],
        svc.predict(X)[np.abs(svc.decision_function(X)) > 1e-3],
    )


@pytest.mark.parametrize("kernel", [Linear(), RBF(gamma=0.5)], ids=["linear", "rbf"])
def test_svm_smo_on_sparse_rows_equals_dense(rng, kernel):
    X = rng.normal(size=(150, 20)) * (rng.random((150, 20)) < 0.2)
    y = np.where(X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=150) > 0, 1.0, -1.0)
    dense = WeightedSVM(Dataset(X=X, y=y), C=2.0, kernel=kernel)
    sparse = WeightedSVM(Dataset(X=sp.csr_array(X), y=y), C=2.0, kernel=kernel)
    ref = of.solve(dense, driver=of.drivers.Direct(form="dual"), backend="clarabel")
    for model in (dense, sparse):
        result = of.solve(model, driver=SMO(tol=1e-7))
        assert result.objective == pytest.approx(ref.objective, rel=1e-6)


def test_svm_without_intercept_takes_single_variable_steps(cancer):
    # no equality row: SMO steps one variable at a time (tests/drivers/test_smo_single.py)
    X, y = cancer
    model = WeightedSVM(Dataset(X=X, y=y), fit_intercept=False)
    assert SMO().accepts(model)
    assert SMO().kernel_needs(model.structure(BoxQPDual)).single
    with pytest.raises(IncompatibleDriver, match="stopping='complete'"):
        of.solve(model, driver=SMO(stopping="paper"))


def test_bad_options():
    with pytest.raises(ModelError, match="tol"):
        SMO(tol=0.0)
    with pytest.raises(ModelError, match="working_set"):
        SMO(working_set="third")
    with pytest.raises(ModelError, match="stopping"):
        SMO(stopping="never")


def test_iteration_limit_reports_a_valid_bound():
    model = PULearning(pu_data(n=80), prior=0.4, lam=1e-3, kernel=RBF(gamma=0.5))
    ref = reference(model)
    result = of.solve(model, driver=SMO(tol=1e-9), max_iter=5)
    assert result.status is of.Status.ITERATION_LIMIT
    assert result.iterations == 5
    assert result.bound <= ref.objective + 1e-9 * max(1.0, abs(ref.objective))
    assert result.objective >= ref.objective - 1e-9 * max(1.0, abs(ref.objective))
    assert not math.isnan(result.objective)


# --------------------------------------------------------------- fast paths
LAYOUTS = ["dense", "sparse", "binary"]  # binary: CSR with every value 1, rows from bits


def _random_points(rng, n, d, layout, density=0.2):
    if layout == "binary":  # enough features and non-zeros for bits (kernel_sums.binary_bits)
        X = (rng.random((n, max(d, 70))) < 0.2).astype(float)
    else:
        X = rng.normal(size=(n, d)) * (rng.random((n, d)) < (1.0 if layout == "dense" else density))
    X[3] = X[1]  # a duplicate: exact zero distance
    return X if layout == "dense" else sp.csr_array(X)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kernel", [Linear(), RBF(gamma=0.3), Polynomial(degree=2, gamma=0.5)])
def test_cached_rows_equal_the_kernel(rng, kernel, layout):
    X, Z = points(_random_points(rng, 30, 4, layout, density=0.5))
    assert (Z[1].size > 0 and Z[0].shape[0] > 0) == (layout == "binary")  # bits
    Z = row_points(Z)
    sqn = Linear().diagonal(X)
    n = X.shape[0]
    cache = core.row_cache(np.empty((3, n)), n)
    counters = np.zeros(core.N_COUNTERS, dtype=np.int64)
    counters[core.ACTIVE] = n
    code = _kernel_code(kernel)
    full = kernel.matrix(X)
    buf = np.empty(n)
    for i in [0, 5, 7, 0, 9, 5, 29]:  # hits and LRU evictions
        row = core.get_row(i, Z, sqn, *code, core.plain_terms(n), cache, counters, buf, False)
        np.testing.assert_allclose(row, full[i], rtol=1e-12, atol=1e-12)
    assert counters[core.ROWS] == 6  # the second 0 was a hit; 5 was evicted before its reuse
    assert counters[core.HITS] == 1


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kernel", [Linear(), RBF(gamma=0.3), Polynomial(degree=3, gamma=0.2)])
def test_parallel_rows_equal_serial_rows(rng, kernel, layout, dtype):
    n, m = 3 * core.ROW_BLOCK + 17, 2 * core.ROW_BLOCK + 5  # several blocks; a prefix m < n
    X, Z = points(_random_points(rng, n, 7, layout))
    assert (Z[1].size > 0 and Z[0].shape[0] > 0) == (layout == "binary")  # bits
    Zr = row_points(Z, dtype)
    sqn = Linear().diagonal(X)
    code = _kernel_code(kernel)
    full = kernel(X[[1, 2]], X[:m])
    for i, expected in zip([1, 2], full, strict=True):
        serial, parallel = np.full(n, np.nan), np.full(n, np.nan)
        core.fill_row_serial(i, Zr, sqn, *code, m, serial)
        core.fill_row_parallel(i, Zr, sqn, *code, m, parallel)
        np.testing.assert_array_equal(serial, parallel)  # the same numbers, bit for bit
        assert np.isnan(serial[m:]).all()  # only the active prefix is written
        tol = 1e-12 if dtype == np.float64 else 2e-6
        np.testing.assert_allclose(serial[:m], expected, rtol=tol, atol=tol)
    if isinstance(kernel, RBF):
        core.fill_row_serial(1, Zr, sqn, *code, m, serial)
        assert serial[1] == serial[3] == 1.0  # duplicates: exactly 1 on the dense path too


def test_exp_neg_within_one_ulp(rng):
    v = np.r_[0.0, 1e-300, 1e-17, 1e-9, rng.uniform(0, 1, 1000), rng.uniform(0, 1500, 3000)]
    out, bits = v.copy(), np.empty(v.size, dtype=np.int64)
    core.exp_neg(out, 0.5, bits)
    expected = np.exp(-0.5 * v)
    normal = expected > np.exp(-708.0)
    assert np.all(np.abs(out[normal] - expected[normal]) <= 1.01 * np.spacing(expected[normal]))
    assert np.all(out[~normal] == 0.0)  # the subnormal range is flushed
    assert out[0] == 1.0


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kernel", [Linear(), RBF(gamma=0.3), Polynomial(degree=2, gamma=0.5)])
def test_bulk_gradient_matches_kernel_and_ignores_threads(rng, kernel, layout):
    import numba

    n = 700
    X, Z = points(_random_points(rng, n, 9, layout))
    assert (Z[1].size > 0 and Z[0].shape[0] > 0) == (layout == "binary")  # bits
    sqn = Linear().diagonal(X)
    a = rng.choice([-1.0, 1.0], n)
    c = rng.normal(size=n)
    x = rng.uniform(0, 2, n) * (rng.random(n) < 0.6)
    expected = c + a * (kernel.matrix(X) @ (a * x))
    results = []
    for threads in (1, 2):
        before = numba.get_num_threads()
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        try:
            G = np.full(n, np.nan)
            kernel_sums(Z, sqn, *_kernel_code(kernel), a, c, x, 40, n, G)
        finally:
            numba.set_num_threads(before)
        assert np.isnan(G[:40]).all()
        np.testing.assert_allclose(G[40:], expected[40:], rtol=1e-11, atol=1e-11)
        results.append(G)
    np.testing.assert_array_equal(*results)


def _serial_choice(a, x, G, u, kink, sb, sa, diag, row_i):
    """The selection of the original loop: strict comparisons, first index wins."""
    gmax, gmin, imax, jmin = -math.inf, math.inf, -1, -1
    for k in range(x.size):
        up = core._up(a[k], x[k], G[k], u[k], kink[k], sb[k], sa[k])
        low = core._low(a[k], x[k], G[k], u[k], kink[k], sb[k], sa[k])
        if up > gmax:
            gmax, imax = up, k
        if low < gmin:
            gmin, jmin = low, k
    best, j = math.inf, -1
    for k in range(x.size):
        low = core._low(a[k], x[k], G[k], u[k], kink[k], sb[k], sa[k])
        if low < gmax:
            b = gmax - low
            eta = diag[imax] + diag[k] - 2.0 * row_i[k]
            value = -b * b / (eta if eta > 1e-12 else 1e-12)
            if value < best:
                best, j = value, k
    return gmax, imax, gmin, jmin, j


@pytest.mark.parametrize("trial", range(6))
def test_branch_free_selection_equals_the_serial_scan(rng, trial):
    """Offsets + four lanes give the same extremes and first indices as a serial scan."""
    n = int(rng.integers(5, 60))
    a = rng.choice([-1.0, 1.0], n)
    u = np.full(n, 2.0)
    kink = np.where(rng.random(n) < 0.5, 1.0, 2.0)
    sb, sa = np.where(kink < 2, -1.0, 0.0), np.where(kink < 2, 1.0, 0.0)
    x = rng.choice([0.0, 0.5, 1.0, 1.5, 2.0], n)
    G = rng.choice([-1.0, 0.0, 0.5, 1.0], n) + (trial % 2) * rng.normal(size=n)  # ties
    diag = rng.uniform(0.5, 2.0, n)
    row_i = rng.uniform(-1, 1, n)
    up_off, low_off, low = np.empty(n), np.empty(n), np.empty(n)
    core.set_offsets(a, x, u, kink, sb, sa, up_off, low_off, 0, n)
    NG = -a * G
    gmax, imax, gmin, jmin = core.scan(NG, up_off, low_off, low, n)
    expected = _serial_choice(a, x, G, u, kink, sb, sa, diag, row_i)
    assert (gmax, imax, gmin, jmin) == expected[:4]
    _, j = core.second_order(low, diag, row_i, gmax, diag[imax], n)
    assert j == expected[4]
    # The fused update: NG -= dxi K_i + dxj K_j rounds exactly as G += a (dxi K_i + dxj K_j).
    row_j, dxi, dxj = rng.uniform(-1, 1, n), 0.3, -0.7
    G2 = G + a * (dxi * row_i + dxj * row_j)
    gmax, imax, gmin, jmin = core.update_scan(NG, up_off, low_off, low, n, row_i, row_j, dxi, dxj)
    np.testing.assert_array_equal(-a * NG, G2)
    assert (gmax, imax, gmin, jmin) == _serial_choice(a, x, G2, u, kink, sb, sa, diag, row_i)[:4]


PU_FAST = [("linear", 1e-2, 0.4), (RBF(gamma=0.5), 1e-2, 0.4), (RBF(gamma=0.5), 1e-3, 0.7)]


@pytest.mark.parametrize(("kernel", "lam", "prior"), PU_FAST)
def test_shrinking_and_float32_rows_reach_the_same_optimum(kernel, lam, prior):
    model = PULearning(pu_data(p=20, n=1500), prior=prior, lam=lam, kernel=kernel)
    tol = 1e-6
    plain = of.solve(model, driver=SMO(tol=tol, shrinking=False, check_every=100))
    scale = max(1.0, abs(plain.objective))
    for options in (
        {"shrinking": True},
        {"float32_rows": True},
        {"shrinking": True, "float32_rows": True},
    ):
        result = of.solve(model, driver=SMO(tol=tol, check_every=100, **options))
        assert result.status is of.Status.OPTIMAL  # the certificate closes at 1e-6
        # The certificate is on a gradient recomputed from scratch in float64.
        assert result.stats["violation"] <= tol
        gap, _, _ = fresh_violation(model, result.solution)
        assert gap <= tol * (1 + 1e-6) + 1e-9 * max(1.0, model.c2)
        assert abs(result.objective - plain.objective) <= 1e-7 * scale
        assert result.bound <= plain.objective + 1e-9 * scale
        assert plain.bound <= result.objective + 1e-9 * scale
        assert result.objective == pytest.approx(model.objective(result.solution), rel=1e-11)
        if options.get("shrinking"):
            assert min(r.extras["active"] for r in result.history) < model.unlabeled.size


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_svm_shrinking_and_float32_rows(cancer, kernel):
    X, y = cancer
    model = WeightedSVM(Dataset(X=X, y=y), C=5.0, kernel=RBF(gamma=0.05) if kernel == "rbf" else
                        "linear")  # fmt: skip
    ref = of.solve(model, driver=of.drivers.Direct(form="dual"), backend="clarabel")
    scale = max(1.0, abs(ref.objective))
    for options in ({"shrinking": True, "float32_rows": True}, {"shrinking": False}):
        result = of.solve(model, driver=SMO(tol=1e-6, **options))
        assert abs(result.objective - ref.objective) <= 1e-6 * scale
        assert result.bound <= ref.objective + 1e-8 * scale
        assert result.stats["violation"] <= 1e-6


def test_threads_do_not_change_the_path(monkeypatch):
    from optframe.drivers import smo as smo_module

    monkeypatch.setattr(smo_module, "PARALLEL_ROWS", 1)  # parallel rows even for small n
    model = PULearning(pu_data(n=300), prior=0.4, lam=1e-3, kernel=RBF(gamma=0.5))
    one = of.solve(model, driver=SMO(tol=1e-6, threads=1))
    two = of.solve(model, driver=SMO(tol=1e-6, threads=2, parallel_rows=True))
    np.testing.assert_array_equal(one.solution["sigma"], two.solution["sigma"])
    assert one.objective == two.objective
    assert one.stats["threads"] == 1
    with pytest.raises(ModelError, match="threads"):
        SMO(threads=0)


def test_dense_enough_sparse_points_are_made_dense(rng):
    X = rng.normal(size=(120, 6)) * (rng.random((120, 6)) < 0.6)
    _, Z = points(sp.csr_array(X))
    assert Z[1].size == 0  # dense path
    assert Z[0].shape == X.shape
    _, Z = points(sp.csr_array(X * (rng.random(X.shape) < 0.2)))
    assert Z[1].size == 121  # stays CSR
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    dense = WeightedSVM(Dataset(X=X, y=y), C=1.0, kernel=RBF(gamma=0.2))
    sparse = WeightedSVM(Dataset(X=sp.csr_array(X), y=y), C=1.0, kernel=RBF(gamma=0.2))
    a, b = (of.solve(m, driver=SMO(tol=1e-7)) for m in (dense, sparse))
    np.testing.assert_array_equal(a.solution["alpha"], b.solution["alpha"])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_cached_row_is_completed_when_the_active_set_grows(rng, layout, dtype):
    """Positions appended at the end (the CVM's coreset): only the new entries are computed."""
    X, Z = points(_random_points(rng, 50, 4, layout, density=0.4))
    assert (Z[1].size > 0 and Z[0].shape[0] > 0) == (layout == "binary")  # bits
    Z = row_points(Z, dtype)
    kernel = RBF(gamma=0.6)
    n, full = X.shape[0], kernel.matrix(X)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    terms = (y, 1.0, 0.3, False)  # the rows of K~ = yy'(K + 1) + 0.3 I
    expected = np.outer(y, y) * (full + 1.0) + 0.3 * np.eye(n)
    cache = core.row_cache(np.empty((4, n), dtype=dtype), n)
    counters = np.zeros(core.N_COUNTERS, dtype=np.int64)
    sqn, buf = Linear().diagonal(X).astype(np.float64), np.empty(n)
    tol = 1e-6 if dtype == np.float32 else 1e-12
    for m in (10, 11, 30, 50):
        counters[core.ACTIVE] = m
        for i in (2, 9):
            row = core.get_row(i, Z, sqn, *_kernel_code(kernel), terms, cache, counters, buf, False)
            np.testing.assert_allclose(row[:m], expected[i, :m], rtol=tol, atol=tol)
    assert counters[core.ROWS] == 2
    assert counters[core.EXTENDED] == 6


def test_the_gradients_after_the_first_are_exact():
    """Later gradients are the last exact one plus Q times the change of x: still Q x + c.

    A tightened rule makes several passes (checked); the reported dual value is computed from
    the final gradient, so a pass that dropped the earlier gradient or the change shows here.
    """
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    model = WeightedSVM(Dataset(X=X, y=np.where(y > 0, 1.0, -1.0)), C=10.0, kernel=RBF(gamma=0.05))
    result = of.solve(model, driver=SMO(max_iter=100_000), gap_tol=1e-9)
    assert result.stats["gradient_passes"] >= 4
    value = model.dual_objective(result.solution["alpha"])
    assert result.stats["dual_objective"] == pytest.approx(value, rel=1e-12, abs=1e-12)


def test_smo_on_binary_points_takes_the_same_steps_with_and_without_bits(monkeypatch):
    """Rows and gradients from bits equal those by columns: the same steps, the same alpha.

    1,500 points, so shrinking permutes the points (and their bits) several times.
    """
    import optframe.kernel_sums as sums

    rng = np.random.default_rng(4)
    X = sp.csr_array((rng.random((1500, 150)) < 0.2).astype(float))
    w = rng.normal(size=150)
    y = np.where(X @ w + 0.5 * rng.normal(size=1500) > 0, 1.0, -1.0)
    model = WeightedSVM(Dataset(X=X, y=y), C=1.0, kernel=RBF(gamma=0.02))
    assert points(X)[1][0].shape == (1500, 3)
    bits = of.solve(model, driver=SMO(tol=1e-4))
    monkeypatch.setattr(sums, "BIT_WORDS_MAX", 0)
    assert points(X)[1][0].shape == (0, 0)
    columns = of.solve(model, driver=SMO(tol=1e-4))
    assert bits.stats["steps"] == columns.stats["steps"] > 1500
    np.testing.assert_array_equal(bits.solution["alpha"], columns.solution["alpha"])
    assert bits.status is of.Status.OPTIMAL


def test_a_small_problem_draws_its_history_at_the_default_check_every():
    """300 points converge in far fewer steps than check_every = 2000: records every n / 2."""
    from optframe.data import load_dataset

    data = load_dataset("a1a")
    y = np.where(np.asarray(data.y)[:300] > 0, 1.0, -1.0)
    model = WeightedSVM(Dataset(X=data.X[:300], y=y), C=1.0, kernel=RBF(gamma=0.05))
    result = of.solve(model, SMO())
    assert result.status is of.Status.OPTIMAL
    assert result.iterations < SMO().check_every  # the old records: one per check_every steps
    assert len({record.iteration for record in result.history}) >= 3  # steps apart
