"""Active-set phases ("shrinking") of FW/MFW/PFW, and the batched fill of kernel columns.

A phase runs the variant's steps on the coreset plus the points of smallest s outside it, then
one exact pass recomputes s on every point; the run stops only on that pass.
"""

import numpy as np
import pytest
import scipy.sparse as sp

import optframe as of
from optframe.data import Dataset
from optframe.drivers import MFW, PFW, FrankWolfe, fw_core
from optframe.drivers.frank_wolfe import Problem
from optframe.drivers.fw_active import choose_active
from optframe.errors import ModelError
from optframe.kernels import RBF, Linear, Polynomial
from optframe.models import L2SVM

TIGHT = {"tol_gap_rel": 1e-12, "tol_gap_abs": 1e-12, "tol_feas": 1e-12}
POLY = Polynomial(degree=2, gamma=0.5, coef0=1.0)  # non-constant diagonal of K~
KERNELS = [RBF(gamma=0.5), Linear(), POLY]
IDS = ["rbf", "linear", "poly"]


def data(m=300, seed=0, sparse=False):
    """Nearly separable by a plane: few support vectors, so the active set stays small."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.1 * rng.normal(size=m) > 0, 1.0, -1.0)
    if sparse:
        X[np.abs(X) < 0.6] = 0.0
        X = sp.csr_array(X)
    return Dataset(X=X, y=y)


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
@pytest.mark.parametrize("driver", [MFW, PFW], ids=["mfw", "pfw"])
def test_matches_direct_over_several_phases(kernel, driver):
    model = L2SVM(data(), C=10.0, kernel=kernel)
    ref = of.solve(model, backend="clarabel", solver_options=TIGHT)
    assert ref.status is of.Status.OPTIMAL
    result = of.solve(
        model, driver=driver(eps=1e-8, shrinking=True, active_extra=10, active_limit=1.0)
    )
    st = result.stats
    assert result.status is of.Status.OPTIMAL
    assert st["shrinking"]
    assert st["proven"]
    assert st["delta_plus"] <= st["threshold"]
    assert st["phases"] >= 3  # the active set grew over several exact passes
    assert st["active_max"] < model.data.y.size
    assert result.objective == pytest.approx(ref.objective, rel=1e-6, abs=1e-10)
    assert result.bound <= ref.objective + 1e-12
    assert ref.objective <= st["upper_bound"] + 1e-12
    # the final exact pass is from scratch: nothing drifted
    assert st["cache_drift"] <= 1e-12


def test_kkt_on_every_point_at_exit():
    """I-11 on all m points: the stop is proven by an exact pass, not on the active set only."""
    model = L2SVM(data(m=400, seed=3), C=30.0, kernel=RBF(gamma=0.8))
    eps = 1e-6
    result = of.solve(model, driver=MFW(eps=eps, shrinking=True, active_extra=15, active_limit=1.0))
    assert result.stats["phases"] >= 3
    alpha, R = result.solution["alpha"], result.stats["R"]
    s = model.modified_gram() @ alpha
    slack = (2 * eps + eps**2) * result.stats["g"] / 2
    assert s.min() >= R - slack - 1e-12
    assert alpha.min() >= 0.0
    assert abs(alpha.sum() - 1.0) <= 1e-12


def test_same_optimum_as_without_shrinking_dense_and_sparse():
    for sparse in (False, True):
        model = L2SVM(data(sparse=sparse), C=10.0, kernel=RBF(gamma=0.5))
        plain = of.solve(model, driver=MFW(eps=1e-9, sample_size=None))
        for driver in (MFW, PFW):
            shrunk = of.solve(
                model, driver=driver(eps=1e-9, shrinking=True, active_extra=20, active_limit=1.0)
            )
            assert shrunk.status is of.Status.OPTIMAL
            assert shrunk.objective == pytest.approx(plain.objective, rel=1e-7)
            np.testing.assert_allclose(
                shrunk.solution["alpha"], plain.solution["alpha"], atol=1e-4 / 300
            )


def test_limits_leave_an_exact_s_and_honest_status():
    model = L2SVM(data(), C=10.0, kernel=RBF(gamma=0.5))
    driver = MFW(eps=1e-10, shrinking=True, active_extra=10, active_limit=1.0, check_every=50)
    result = of.solve(model, driver=driver, max_iter=120)
    assert result.status is of.Status.ITERATION_LIMIT
    assert result.iterations <= 120
    assert not result.stats["proven"]
    assert result.bound <= result.objective
    stopped = of.solve(model, driver=driver, callback=lambda record: record.iteration >= 50)
    assert stopped.status in (of.Status.CONVERGED, of.Status.OPTIMAL)
    assert stopped.stats["cache_drift"] <= 1e-12


@pytest.mark.parametrize("driver", [MFW, PFW], ids=["mfw", "pfw"])
def test_falls_back_to_every_point_when_the_active_set_grows_past_the_limit(driver):
    model = L2SVM(data(), C=10.0, kernel=RBF(gamma=0.5))
    plain = of.solve(model, driver=driver(eps=1e-9, sample_size=None))
    shrunk = driver(eps=1e-9, shrinking=True, active_extra=10, active_limit=0.2,
                    cache_bytes=300 * 8 * 40)  # fmt: skip
    result = of.solve(model, driver=shrunk)
    st = result.stats
    assert st["phases"] >= 1
    assert st["active_max"] <= 0.2 * 300
    assert 0 < st["unshrunk_at"] < result.iterations
    assert st["active_steps"] == st["unshrunk_at"]  # the steps taken inside the phases
    assert st["cache_slots"] == 40  # the full budget once the phases end
    assert result.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(plain.objective, rel=1e-7)
    never = of.solve(model, driver=driver(eps=1e-9, shrinking=True, active_limit=1.0))
    assert never.stats["unshrunk_at"] is None


def test_choose_active_takes_the_smallest_s_outside_the_coreset():
    rng = np.random.default_rng(0)
    s = rng.normal(size=50)
    core = np.array([3, 17, 40])
    members = choose_active(s, core, 5)
    assert np.all(np.diff(members) > 0)
    assert set(core) <= set(members)
    outside = np.setdiff1d(np.arange(50), core)
    expected = outside[np.argsort(s[outside])[:5]]
    assert set(members) - set(core) == set(expected)
    assert choose_active(s, core, 100).size == 50


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_batched_columns_equal_single_columns(kernel, sparse):
    """store_block (one matrix product per block, vectorized exp) = column() entry by entry."""
    model = L2SVM(data(m=200, sparse=sparse), C=3.0, kernel=kernel)
    K = model.modified_gram()
    prob = Problem(model, 10**8, "test", dense_bytes=10**8 if not sparse else 0)
    members = np.array([5, 0, 199, 17, 63], dtype=np.int64)
    prob.store_block(members)
    cols, slot_of, _, _, filled = prob.cache
    assert prob.counters[fw_core.MISSES] == members.size
    assert prob.counters[fw_core.EVALS] == members.size * 200
    for t in members:
        assert filled[slot_of[t]] == prob.m
        np.testing.assert_allclose(cols[slot_of[t]], K[:, t], rtol=1e-14, atol=1e-14)
    prob.set_core(members)
    prob.alpha[members] = 1.0 / members.size
    prob.full_pass()  # all cached: nothing recomputed
    assert prob.counters[fw_core.EVALS] == members.size * 200
    np.testing.assert_allclose(prob.s, K @ prob.alpha, atol=1e-14)


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csc"])
def test_single_full_columns_equal_the_kernel(kernel, sparse):
    """column() on all points (one product, vectorized exp by chunks) = K~ to rounding.

    m exceeds the exponential's chunk, so the chunk boundaries are crossed.
    """
    m = fw_core._EXP_CHUNK + 300
    model = L2SVM(data(m=m, sparse=sparse), C=3.0, kernel=kernel)
    prob = Problem(model, 10**8, "test", dense_bytes=0 if sparse else 10**8)
    assert (prob.Xd.shape[0] > 0) != sparse
    X = model.data.X.toarray() if sparse else model.data.X
    y = model.data.y
    for t in (0, fw_core._EXP_CHUNK - 1, fw_core._EXP_CHUNK, m - 1):
        col = fw_core.column(t, *prob.points, prob.cache, prob.counters)
        k = kernel(X, X[t : t + 1]).ravel()
        expected = y * y[t] * (k + 1.0)
        expected[t] += 1.0 / 3.0
        np.testing.assert_allclose(col, expected, rtol=1e-13, atol=1e-14)


def test_exact_pass_with_a_coreset_larger_than_the_cache():
    model = L2SVM(data(m=120), C=3.0, kernel=RBF(gamma=0.5))
    K = model.modified_gram()
    prob = Problem(model, 3 * 120 * 8, "test")  # 3 slots
    assert prob.slots == 3
    members = np.arange(0, 120, 7, dtype=np.int64)
    prob.set_core(members)
    prob.alpha[members] = 1.0 / members.size
    for _ in range(2):
        prob.full_pass()
        np.testing.assert_allclose(prob.s, K @ prob.alpha, atol=1e-13)
    # the second pass reuses the columns still cached and recomputes only the others
    assert members.size * 120 < prob.counters[fw_core.EVALS] < 2 * members.size * 120


@pytest.mark.parametrize(
    "options",
    [
        {"shrinking": True, "radius": "recursion"},
        {"shrinking": True, "trace": True},
        {"shrinking": True, "active_extra": 0},
        {"shrinking": True, "active_extra": 2.5},
        {"shrinking": True, "active_limit": 0.0},
        {"shrinking": True, "active_limit": 1.5},
    ],
)
def test_bad_shrinking_options(options):
    with pytest.raises(ModelError):
        FrankWolfe(**options)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_restricted_problem_gathers_the_coreset_columns(sparse):
    """The restricted columns of coreset points are read from the cached full ones, exactly."""
    from optframe.drivers.fw_active import Restricted

    model = L2SVM(data(m=150, sparse=sparse), C=3.0, kernel=RBF(gamma=0.5))
    K = model.modified_gram()
    prob = Problem(model, 10**8, "test", dense_bytes=0 if sparse else 10**8)
    core_idx = np.array([4, 40, 77, 120], dtype=np.int64)
    prob.set_core(core_idx)
    prob.alpha[core_idx] = 0.25
    prob.full_pass()
    members = choose_active(prob.s, core_idx, 30)
    evals = int(prob.counters[fw_core.EVALS])
    sub = Restricted(prob, members, 10**7)
    assert prob.counters[fw_core.EVALS] == evals  # gathered, not computed
    cols, slot_of, _, _, filled = sub.cache
    local = np.searchsorted(members, core_idx)
    for k, t in zip(local, core_idx, strict=True):
        assert filled[slot_of[k]] == members.size
        np.testing.assert_array_equal(cols[slot_of[k]], prob.cache[0][prob.cache[1][t]][members])
        np.testing.assert_allclose(cols[slot_of[k]], K[members, t], atol=1e-14)
    np.testing.assert_array_equal(sub.s, prob.s[members])
    assert sub.ints[fw_core.Q] == core_idx.size
