"""Pairwise Frank-Wolfe (PFW) against Direct (Clarabel), and its invariants.

A pairwise step moves lambda in [0, alpha_j] from the away vertex j (argmax s on the coreset) to
the toward vertex i: alpha + lambda (e_i - e_j) (Lacoste-Julien and Jaggi 2015).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from certificate_check import certified_status
from scipy.optimize import minimize_scalar
from xor_data import xor_data

import optframe as of
from optframe.data import Dataset
from optframe.drivers import MFW, PFW, FrankWolfe
from optframe.errors import ModelError
from optframe.kernels import RBF, Linear, Polynomial
from optframe.models import L2SVM

TIGHT = {"tol_gap_rel": 1e-12, "tol_gap_abs": 1e-12, "tol_feas": 1e-12}
POLY = Polynomial(degree=2, gamma=0.5, coef0=0.0)  # non-constant diagonal of K~
KERNELS = [RBF(gamma=0.5), Linear(), POLY]
IDS = ["rbf", "linear", "poly"]


data = xor_data


def R_of(K, alpha):
    return float(alpha @ K @ alpha)


@pytest.fixture(scope="module")
def rbf_model():
    return L2SVM(data(), C=10.0, kernel=RBF(gamma=0.5))


@pytest.fixture(scope="module")
def poly_model():
    return L2SVM(data(m=40, seed=1), C=4.0, kernel=POLY)


# ------------------------------------------------------------------------- against Direct
@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
@pytest.mark.parametrize("sample_size", [None, 59], ids=["exact", "sampled"])
def test_matches_direct(kernel, sample_size):
    model = L2SVM(data(), C=10.0, kernel=kernel)
    ref = of.solve(model, backend="clarabel", solver_options=TIGHT)
    assert ref.status is of.Status.OPTIMAL
    result = of.solve(model, driver=PFW(eps=1e-8, sample_size=sample_size))
    assert result.status is of.Status.OPTIMAL
    assert result.stats["variant"] == "pfw"
    assert result.stats["proven"]
    assert result.stats["delta_plus"] <= result.stats["threshold"]
    assert result.objective == pytest.approx(ref.objective, rel=1e-6, abs=1e-10)
    assert result.bound <= ref.objective + 1e-12
    assert ref.objective <= result.stats["upper_bound"] + 1e-12
    assert result.objective == pytest.approx(model.objective(result.solution), rel=1e-12)
    assert result.gap <= 1e-7
    # only pairwise steps (with or without a drop)
    st = result.stats
    assert st["fw_steps"] == st["away_steps"] == 0
    assert st["pair_steps"] + st["drop_steps"] == result.iterations
    agree = np.sign(result.decision_function(model.data.X)) == np.sign(
        ref.decision_function(model.data.X)
    )
    assert agree.mean() >= 0.98


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_certificate(kernel):
    """I-9: g <= g* <= (1 + eps~) g at exit, with g* from Direct, at a loose eps."""
    model = L2SVM(data(), C=10.0, kernel=kernel)
    ref = of.solve(model, backend="clarabel", solver_options=TIGHT)
    eps = 1e-3
    result = of.solve(model, driver=PFW(eps=eps, sample_size=None))
    assert result.stats["proven"]  # the radius rule held on every point
    assert result.status is certified_status(result)
    g, g_star = result.stats["g"], result.stats["delta2"] + 2.0 * ref.objective  # R* = -2 P*
    eps_t = 2 * eps + eps**2
    assert g <= g_star + 1e-9
    assert g_star <= (1 + eps_t) * g + 1e-9


# ------------------------------------------------------------------------ invariants
@pytest.mark.parametrize("fixture", ["rbf_model", "poly_model"])
def test_simplex_and_drops_exactly_zero(fixture, request):
    """I-1, I-3: alpha >= 0, sum 1, support = coreset after every step; drops leave exact 0."""
    model = request.getfixturevalue(fixture)
    trace = of.solve(model, driver=PFW(sample_size=None, trace=True)).stats["trace"]
    kinds = trace["kind"]
    assert set(np.unique(kinds)) <= {3, 4}
    drops = np.flatnonzero(kinds == 4)
    assert drops.size > 0
    checked = sorted({*range(1, 40, 3), *(drops[:6] + 1)})
    for k in checked:
        alpha = of.solve(model, driver=PFW(sample_size=None), max_iter=k).solution["alpha"]
        assert alpha.min() >= 0.0
        assert abs(alpha.sum() - 1.0) <= 1e-12
        assert np.count_nonzero(alpha) == trace["coreset"][k - 1]
        if kinds[k - 1] == 4:
            assert alpha[trace["away_index"][k - 1]] == 0.0  # exactly


def test_monotone_objective_and_step_range(rbf_model, poly_model):
    """I-4, I-8: R non-increasing; 0 <= lambda; the away vertex is in the coreset."""
    for model in (rbf_model, poly_model):
        tr = of.solve(model, driver=PFW(sample_size=None, trace=True)).stats["trace"]
        assert np.all(np.diff(tr["R"]) <= 1e-12 * tr["R"][1:])
        assert np.all(tr["lam"] >= 0.0)
        assert np.all(tr["delta_plus"] >= 0.0)
        assert np.all(tr["away_index"] >= 0)
        assert np.all(tr["away_index"] != tr["index"])


def test_cached_R_and_s_equal_recomputed(rbf_model, poly_model):
    """I-6: the maintained R (r^2 = Delta^2 - R) and s = K~ alpha equal their recomputation."""
    for model in (rbf_model, poly_model):
        K = model.modified_gram()
        driver = PFW(sample_size=None, eps=1e-9, trace=True, recompute=False)
        result = of.solve(model, driver=driver)
        assert result.iterations > 1000
        alpha = result.solution["alpha"]
        delta2 = result.stats["delta2"]
        # recompute=False: stats["R"] and g are the maintained values
        assert result.stats["R"] == pytest.approx(R_of(K, alpha), rel=1e-12)
        assert result.stats["g"] == pytest.approx(delta2 - R_of(K, alpha), rel=1e-12)
        np.testing.assert_allclose(result.stats["trace"]["s"], K @ alpha, rtol=0, atol=1e-12)
        checked = of.solve(model, driver=PFW(sample_size=None, eps=1e-9))
        assert checked.stats["cache_drift"] <= 1e-12
        assert checked.stats["R_drift"] <= 1e-13
        # the per-step trace of R is the recomputed R of the iterate after that step
        tr = result.stats["trace"]["R"]
        for k in (1, 7, 50, 400):
            short = PFW(sample_size=None, eps=1e-9)
            a = of.solve(model, driver=short, max_iter=k).solution["alpha"]
            assert tr[k - 1] == pytest.approx(R_of(K, a), rel=1e-12)


@pytest.mark.parametrize("fixture", ["poly_model", "rbf_model"])
def test_exact_line_search(fixture, request):
    """I-7: each pairwise lambda minimizes R(alpha + mu (e_i - e_j)) on [0, alpha_j]."""
    model = request.getfixturevalue(fixture)
    K = model.modified_gram()
    full = of.solve(model, driver=PFW(sample_size=None, trace=True)).stats["trace"]
    drops = 0
    for k in [*range(1, 60, 3), *np.flatnonzero(full["kind"] == 4)[:3]]:
        alpha = of.solve(model, driver=PFW(sample_size=None), max_iter=k).solution["alpha"]
        after = of.solve(model, driver=PFW(sample_size=None), max_iter=k + 1).solution["alpha"]
        i, j, lam = full["index"][k], full["away_index"][k], full["lam"][k]
        assert alpha[j] > 0.0
        s = K @ alpha
        assert s[j] >= s[alpha > 0].max() - 1e-12  # the away vertex (ties to rounding)
        assert s[i] <= s.min() + 1e-12  # the toward vertex (exact search)
        d = np.zeros_like(alpha)
        d[i], d[j] = 1.0, -1.0
        np.testing.assert_allclose(after, alpha + lam * d, atol=1e-12)
        assert 0.0 <= lam <= alpha[j] * (1 + 1e-14)  # alpha rescaled to sum 1 (rounding)
        drops += full["kind"][k] == 4
        # (the model rescales alpha to sum 1: equal to rounding)
        assert (full["kind"][k] == 4) == (lam >= alpha[j] * (1 - 1e-14))
        assert (full["kind"][k] == 4) == (after[j] == 0.0)

        def along(mu, alpha=alpha, d=d):
            return R_of(K, alpha + mu * d)

        grid = np.linspace(0.0, alpha[j], 2001)
        best = along(lam)
        assert best <= min(along(mu) for mu in grid) + 1e-13
        brute = minimize_scalar(along, bounds=(0.0, alpha[j]), method="bounded",
                                options={"xatol": 1e-14})  # fmt: skip
        assert best <= brute.fun + 1e-13
        assert lam == pytest.approx(brute.x, abs=1e-6 * max(alpha[j], 1e-3))
    assert drops > 0  # drop steps (lambda at its bound alpha_j) were checked too


def test_kkt_at_exit(rbf_model, poly_model):
    """I-11: y_i h(x_i) + alpha_i / C >= rho - eps~ g / 2, with equality on the support."""
    eps = 1e-6
    for model in (rbf_model, poly_model):
        result = of.solve(model, driver=PFW(eps=eps, sample_size=None))
        alpha, C, R = result.solution["alpha"], model.C, result.stats["R"]
        lhs = model.data.y * result.decision_function(model.data.X) + alpha / C
        slack = (2 * eps + eps**2) * result.stats["g"] / 2
        assert lhs.min() >= R - slack - 1e-12
        # complementary slackness in the alpha-weighted sense: lhs = s = K~ alpha, and
        # sum_i alpha_i (s_i - R) = 0 with s_i - R >= -slack give sum alpha |s - R| <= 2 slack
        assert alpha @ np.abs(lhs - R) <= 2 * slack + 1e-12
        assert result.solution["rho"][0] == pytest.approx(R, rel=1e-3)


def test_two_columns_per_step_and_tiny_cache(rbf_model):
    """A pairwise step reads two columns (hits + misses + 2); a 2-slot cache gives the same path."""
    calls = []
    for k in (10, 11, 30, 31):
        st = of.solve(rbf_model, driver=PFW(sample_size=None, recompute=False), max_iter=k).stats
        calls.append(st["cache_hits"] + st["cache_misses"])
    assert calls[1] - calls[0] == 2
    assert calls[3] - calls[2] == 2
    big = of.solve(rbf_model, driver=PFW(eps=1e-8, sample_size=None))
    tiny = of.solve(rbf_model, driver=PFW(eps=1e-8, sample_size=None, cache_bytes=1))
    assert tiny.stats["cache_slots"] == 2
    assert tiny.stats["cache_misses"] > big.stats["cache_misses"]
    # same path; to rounding, since the exact passes fill a big cache by block products
    # (BLAS, vectorized exp) and a 2-slot cache one column at a time
    assert tiny.iterations == big.iterations
    np.testing.assert_allclose(tiny.solution["alpha"], big.solution["alpha"], rtol=0, atol=1e-15)
    X = sp.csr_array(rbf_model.data.X)
    sparse = L2SVM(Dataset(X=X, y=rbf_model.data.y), C=10.0, kernel=RBF(gamma=0.5))
    other = of.solve(sparse, driver=PFW(eps=1e-8, sample_size=None, dense_bytes=0))
    np.testing.assert_allclose(other.solution["alpha"], big.solution["alpha"], atol=1e-12)


def test_sampled_with_verification_is_proven():
    """59 draws and the coreset, the exact pass before stopping: the stop is proven."""
    model = L2SVM(data(m=300, seed=4), C=10.0, kernel=RBF(gamma=0.5))
    K = model.modified_gram()
    result = of.solve(model, driver=PFW(eps=1e-7))
    alpha = result.solution["alpha"]
    s, R = K @ alpha, R_of(K, alpha)
    true = 2 * (R - s.min()) / (result.stats["delta2"] - R)
    assert result.stats["delta_plus"] == pytest.approx(true, rel=1e-6, abs=1e-12)
    assert true <= result.stats["threshold"]
    assert result.status is of.Status.OPTIMAL
    mfw = of.solve(model, driver=MFW(eps=1e-7))
    assert result.objective == pytest.approx(mfw.objective, rel=1e-6)


def test_registry_and_options(rbf_model):
    assert of.solve(rbf_model, driver="pfw").stats["variant"] == "pfw"
    assert of.solve(rbf_model, driver=FrankWolfe(variant="pfw")).status is of.Status.OPTIMAL
    limited = of.solve(rbf_model, driver="pfw", max_iter=5)
    assert limited.status is of.Status.ITERATION_LIMIT
    assert limited.iterations == 5
    assert limited.bound <= limited.objective
    for radius in ("recursion", "paper"):
        with pytest.raises(ModelError, match="pfw"):
            PFW(radius=radius)
