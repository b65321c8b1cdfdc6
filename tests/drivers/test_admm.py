"""ADMM and ADMMThenIPM (HIPAD): hipad.md section 7 invariants and agreement with Direct."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar

import optframe as of
from optframe.data import Dataset, make_knowledge_data
from optframe.drivers import ADMM, ADMMThenIPM
from optframe.drivers.admm_core import ADMMIteration, WBSystem, hinge_prox, soft_threshold
from optframe.errors import IncompatibleDriver
from optframe.models import KnowledgeBasedSVM, KnowledgeSet, WeightedSVM


def toy(n=50, m=300, seed=0, lam1=0.02, lam2=0.5, sparse=False):
    """Ye et al.'s toy: 15 informative shifted features among m."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) < n // 2, 1.0, -1.0)
    X = rng.normal(size=(n, m))
    X[:, :15] += 0.7 * y[:, None]
    if sparse:
        X[rng.random((n, m)) < 0.6] = 0.0
        X = sp.csr_array(X)
    return KnowledgeBasedSVM(Dataset(X=X, y=y), lam1=lam1, lam2=lam2)


def knowledge(n=40, m=200, seed=0, rho=1.0):
    train, _ = make_knowledge_data(n, 20, m, random_state=seed, block_size=10)
    sets = [KnowledgeSet(k["B"], k["d"], k["label"]) for k in train.meta["knowledge"]]
    return KnowledgeBasedSVM(train, lam1=2e-3, lam2=1e-2, knowledge=sets, rho=rho)


def rel(a, b):
    return abs(a - b) / max(1.0, abs(b))


def jaccard(a, b):
    a, b = set(np.flatnonzero(a)), set(np.flatnonzero(b))
    return len(a & b) / max(1, len(a | b))


TIGHT = ADMM(tol=1e-9, max_iter=30_000)


# ------------------------------------------------------------------------------- operators
@pytest.mark.parametrize("lam", [0.3, 1.7])
def test_prox_operators_are_exact(lam):
    def hinge(z, o):
        return lam * max(z, 0.0) + 0.5 * (z - o) ** 2

    def l1(z, o):
        return lam * abs(z) + 0.5 * (z - o) ** 2

    for omega in [-2.0, -lam, -0.1, 0.0, 0.05, lam, 2.5]:
        for prox, f in ((hinge_prox, hinge), (soft_threshold, l1)):
            z = prox(np.array([omega]), lam)[0]
            ref = minimize_scalar(
                f, args=(omega,), bounds=(-5, 5), method="bounded", options={"xatol": 1e-12}
            )
            assert z == pytest.approx(ref.x, abs=1e-7)
            assert f(z, omega) <= ref.fun + 1e-15  # never worse than the numerical minimizer
            assert f(z, omega) <= min(f(z + h, omega) for h in (-1e-6, 1e-6))
    assert soft_threshold(np.array([lam, -lam, 0.0]), lam).tolist() == [0.0, 0.0, 0.0]
    assert hinge_prox(np.array([0.0, lam]), lam).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("shape", [(30, 8), (12, 40)])
@pytest.mark.parametrize("kappa2", [0.0, 2.5])
@pytest.mark.parametrize("sparse", [False, True])
def test_wb_system_matches_a_dense_solve(shape, kappa2, sparse):
    rng = np.random.default_rng(1)
    X = rng.normal(size=shape)
    if sparse:
        X[rng.random(shape) < 0.5] = 0.0
        X = sp.csr_array(X)
    system = WBSystem(X)
    system.factor(kappa1=0.7, kappa2=kappa2, mu1=3.0)
    r_w, r_b = rng.normal(size=shape[1]), 0.8
    w, b = system.solve(r_w, r_b)
    dense = np.linalg.solve(system.matrix(), np.append(r_w, r_b))
    np.testing.assert_allclose(np.append(w, b), dense, rtol=1e-8, atol=1e-10)


def test_multiplier_invariants_every_iteration():
    model = knowledge()
    it = ADMMIteration(model, mu=1.0, order="gauss-seidel")
    for _ in range(200):
        it.step()
        assert np.all(it.g1 >= -1e-15)
        assert np.all(it.g1 <= it.cost * (1 + 1e-12))
        assert np.all(np.abs(it.g2) <= model.lam1 * (1 + 1e-12))
        nz = it.c != 0
        np.testing.assert_allclose(it.g2[nz], model.lam1 * np.sign(it.c[nz]), rtol=1e-12)
        for t, g, u in zip(it.t, it.gu, it.u, strict=True):
            assert np.all(t >= 0)
            assert np.all(g >= -1e-14)
            assert np.all(np.abs(g * t) <= 1e-10 * (1 + np.abs(u).max()))
        assert np.all(it.gq >= -1e-14)
        assert np.all(it.gq <= model.rho_hinge * (1 + 1e-12))


def test_dual_residual_identity_ensvm():
    model = toy(m=60)
    it = ADMMIteration(model, mu=2.0, order="gauss-seidel")
    X, y, mu = model.data.X, model.data.y, 2.0
    for _ in range(50):
        a_old, c_old = it.a.copy(), it.c.copy()
        it.step()
        lhs = model.lam2 * it.w - X.T @ (y * it.g1) + it.g2
        rhs = mu * X.T @ (y * (it.a - a_old)) - mu * (it.c - c_old)
        np.testing.assert_allclose(lhs, rhs, atol=1e-10)
        assert y @ it.g1 == pytest.approx(-mu * y @ (it.a - a_old), abs=1e-11)


# ------------------------------------------------------------------------- against Direct
@pytest.mark.parametrize("case", ["dense", "sparse", "tall"])
def test_admm_ensvm_matches_direct(case):
    model = {"dense": toy(), "sparse": toy(sparse=True), "tall": toy(n=200, m=20, lam1=0.01)}[case]
    reference = of.solve(model)
    result = of.solve(model, driver=TIGHT)
    assert result.status is of.Status.OPTIMAL  # the dual bound closes the gap
    assert rel(result.objective, reference.objective) <= 1e-6
    assert result.bound <= reference.objective + 1e-9
    assert jaccard(result.solution["w"], np.abs(reference.solution["w"]) > 1e-6) >= 0.9
    assert result.stats["kkt"]["max"] <= 1e-5
    extras = result.history[-1].extras
    assert {"primal_residual", "dual_residual", "mu", "support"} <= set(extras)


def test_admm_enk_matches_direct():
    model = knowledge()
    reference = of.solve(model)
    result = of.solve(model, driver=TIGHT)
    assert result.status is of.Status.OPTIMAL  # the Lagrange dual with knowledge sets closes
    assert rel(result.objective, reference.objective) <= 1e-6
    np.testing.assert_allclose(result.solution["u"], reference.solution["u"], atol=1e-4)
    assert result.stats["kkt"]["max"] <= 1e-5


def test_printed_enk_order_diverges():
    model = knowledge(rho=1.0)
    printed = of.solve(model, driver=ADMM(order="printed", adaptive=False, max_iter=300))
    fixed = of.solve(model, driver=ADMM(adaptive=False, max_iter=300))
    values = [r.objective for r in printed.history]
    assert printed.status is of.Status.ERROR or max(values) > 1e6 * values[0]
    assert fixed.status.is_success or fixed.status is of.Status.ITERATION_LIMIT
    assert max(r.objective for r in fixed.history[20:]) < 10 * fixed.objective


@pytest.mark.parametrize("case", ["ensvm", "enk"])
def test_hipad_matches_direct_and_proves_its_support(case):
    model = toy(m=400) if case == "ensvm" else knowledge(m=400)
    reference = of.solve(model)
    result = of.solve(model, driver=ADMMThenIPM())
    assert result.status is of.Status.OPTIMAL
    assert result.stats["support_proven_optimal"]
    assert rel(result.objective, reference.objective) <= 1e-6
    w = result.solution["w"]
    assert w.shape == (model.data.n_features,)
    assert jaccard(np.abs(w) > 1e-6, np.abs(reference.solution["w"]) > 1e-6) >= 0.9
    assert np.all(w[np.setdiff1d(np.arange(w.size), np.flatnonzero(w))] == 0)
    assert result.stats["kkt"]["max"] <= 1e-5
    full = of.solve(model, driver=ADMM())
    assert result.stats["phase1_iterations"] <= full.iterations


def test_hipad_safeguard_keeps_support_non_empty_and_repairs():
    model = toy(m=200)
    reference = of.solve(model)
    eager = ADMMThenIPM(
        admm=ADMM(mu=0.01, adaptive=False), min_iter=0, stable_iters=1, switch_tol=1.0
    )
    result = of.solve(model, driver=eager)
    rounds = result.stats["phase2_rounds"]
    assert all(r["support"] > 0 for r in rounds)
    assert rel(result.objective, reference.objective) <= 1e-6
    assert result.stats["support_proven_optimal"]


def test_incompatible_model_and_bad_options():
    data = Dataset(X=[[0.0], [1.0]], y=[-1, 1])
    with pytest.raises(IncompatibleDriver):
        of.solve(WeightedSVM(data), driver=ADMM())
    with pytest.raises(of.errors.ModelError):
        ADMM(order="random")
    with pytest.raises(of.errors.ModelError):
        ADMM(mu=0.0)


def test_paper_stopping_rule_and_single_factorization():
    model = toy(m=100)
    reference = of.solve(model)
    result = of.solve(model, driver=ADMM(stop="paper", adaptive=False, tol=1e-5, tol_w=1e-3))
    assert result.status.is_success
    assert result.stats["factorizations"] == 1  # fixed mu: the (w, b) system is factorized once
    assert rel(result.objective, reference.objective) <= 1e-2
    assert result.objective >= reference.objective - 1e-9
    record = result.history[-1]
    assert record.extras["mu"] == 1.0


def test_deterministic():
    model = knowledge()
    first, second = (of.solve(model, driver=ADMMThenIPM()) for _ in range(2))
    np.testing.assert_array_equal(first.solution["w"], second.solution["w"])
    assert first.iterations == second.iterations


def test_a_column_scaled_by_1e8_is_solved_not_a_linalg_error():
    """Rounding makes the assembled (w, b) system indefinite there (Cholesky raised LinAlgError);
    the eigen fallback solves it."""
    train, _ = make_knowledge_data(40, 20, 60, random_state=0, block_size=10)
    sets = [KnowledgeSet(k["B"], k["d"], k["label"]) for k in train.meta["knowledge"]]
    X = train.X.toarray() if hasattr(train.X, "toarray") else np.array(train.X)
    X[:, 1] *= 1e8
    data = Dataset(X=X, y=train.y)
    model = KnowledgeBasedSVM(data, lam1=2e-3, lam2=1e-2, knowledge=sets, rho=1.0)
    reference = of.solve(model, backend="scip").objective  # attained: above the optimum
    admm = of.solve(model, ADMM(), time_limit=5)
    assert admm.bound <= reference
    result = of.solve(model, ADMMThenIPM(), time_limit=10)
    assert result.status is of.Status.OPTIMAL
    assert result.objective <= reference + 1e-6 * abs(reference)
