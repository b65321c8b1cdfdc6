"""The screening rules: the invariants of notes/dvi.md section 6, on exact and inexact solutions."""

import cvxpy as cp
import numpy as np
import pytest

import optframe as of
from optframe.capabilities import LinearBoxDual
from optframe.data import Dataset, make_toy
from optframe.drivers import DCD
from optframe.errors import IncompatibleDriver
from optframe.models import RegularizedLAD, WeightedSVM
from optframe.screening import (
    DVI,
    ESSNSV,
    SSNSV,
    ScreeningStep,
    ball_halfspace_min,
    dvi_bounds,
    dvi_gram,
)


def lad_model(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = X @ rng.normal(size=4) + rng.laplace(size=n)
    return RegularizedLAD(Dataset(X=X, y=y), C=0.01, fit_intercept=False)


def svm_model(which=2, n=200, seed=0):
    return WeightedSVM(make_toy(which, seed, n_per_class=n), C=0.01, fit_intercept=False)


def exact(model, C):
    m = model.__class__(**{**_params(model), "C": C})
    # 1e-11: a relative gap of 1e-12 is at the rounding of the certificate's sums on these sizes
    result = of.solve(m, driver=DCD(tol=1e-11, max_epochs=200_000))
    assert result.status is of.Status.OPTIMAL
    dual = m.structure(LinearBoxDual)
    return dual, result.solution[dual.primal_key], result.solution[dual.dual_key]


def _params(model):
    return {"data": model.data, "fit_intercept": False}


def step(dual, w, c_prev, c_next, delta=0.0, reference=None):
    norms = np.sqrt(np.einsum("ij,ij->i", np.asarray(dual.Z), np.asarray(dual.Z)))
    return ScreeningStep(dual.Z, dual.target, norms, w, delta, c_prev, c_next, reference)


def assert_safe(dual, R, L, w_next, alpha_next, tol=1e-7):
    """``dual``: the box dual at the next value (where R and L are claimed)."""
    s = np.asarray(dual.Z @ w_next) - dual.target
    lower, upper = dual.lower, dual.upper
    assert np.all(s[R] >= -tol), "a sample of R is on the margin's wrong side"
    assert np.all(s[L] <= tol), "a sample of L is on the margin's wrong side"
    np.testing.assert_allclose(alpha_next[R], lower[R], atol=1e-9)
    np.testing.assert_allclose(alpha_next[L], upper[L], atol=1e-9)


@pytest.mark.parametrize(
    "model", [svm_model(1), svm_model(3), lad_model()], ids=["toy1", "toy3", "lad"]
)
def test_dvi_word_form_equals_gram_form(model):
    dual, w, alpha = exact(model, 0.3)
    Z = np.asarray(dual.Z)
    G = Z @ Z.T
    for c_next in (0.31, 0.5, 3.0):
        sets = DVI().screen(step(dual, w, 0.3, c_next))
        gram = dvi_gram(G, alpha, dual.target, 0.3, c_next)
        np.testing.assert_array_equal(sets[0], gram[0])
        np.testing.assert_array_equal(sets[1], gram[1])


@pytest.mark.parametrize("model", [svm_model(1), svm_model(2), svm_model(3), lad_model()],
                         ids=["toy1", "toy2", "toy3", "lad"])  # fmt: skip
def test_ball_contains_the_next_solution_in_both_directions(model):
    Cs = [0.05, 0.4, 2.0]
    solutions = {C: exact(model, C)[1] for C in Cs}
    for c0 in Cs:
        for c1 in Cs:
            w0, w1 = solutions[c0], solutions[c1]
            gap = np.linalg.norm(w1 - (c0 + c1) / (2 * c0) * w0)
            assert gap <= abs(c1 - c0) / (2 * c0) * np.linalg.norm(w0) + 1e-7


@pytest.mark.parametrize(
    "model", [svm_model(1), svm_model(3), lad_model()], ids=["toy1", "toy3", "lad"]
)
def test_dvi_bounds_contain_the_next_scores_and_are_nested(model):
    dual, w0, _ = exact(model, 0.2)
    scores = np.asarray(dual.Z @ w0)
    norms = np.sqrt(np.einsum("ij,ij->i", np.asarray(dual.Z), np.asarray(dual.Z)))
    previous = None
    for c_next in (1.0, 0.5, 0.3, 0.21):  # shrinking steps: nested balls, growing sets
        _, w1, _ = exact(model, c_next)
        lo, hi = dvi_bounds(scores, np.linalg.norm(w0), norms, 0.2, c_next)
        s1 = np.asarray(dual.Z @ w1)
        assert np.all(lo <= s1 + 1e-8)
        assert np.all(s1 <= hi + 1e-8)
        R, L = DVI().screen(step(dual, w0, 0.2, c_next))
        if previous is not None:
            assert np.all(R[previous[0]])
            assert np.all(L[previous[1]])
        previous = (R, L)
    # the limit C_next -> C_k is the exact KKT test at C_k
    R, L = DVI().screen(step(dual, w0, 0.2, 0.2))
    s = scores - dual.target
    for chosen, expected in ((R, s > 0), (L, s < 0)):
        mismatch = chosen != expected
        assert np.all(np.abs(s[mismatch]) < 1e-6)


@pytest.mark.parametrize("which", [1, 2, 3])
@pytest.mark.parametrize("rule", [DVI(), SSNSV(), ESSNSV()], ids=["dvi", "ssnsv", "essnsv"])
def test_rules_are_safe_at_exact_solutions(which, rule):
    model = svm_model(which, n=150)
    Cs = np.logspace(-2, 1, 12)
    sol = [exact(model, C) for C in Cs]
    w_hat = sol[-1][1]
    for k in range(len(Cs) - 1):
        dual, w, _ = sol[k]
        R, L = rule.screen(step(dual, w, Cs[k], Cs[k + 1], reference=w_hat))
        assert_safe(*sol[k + 1][:1], R, L, *sol[k + 1][1:])


def test_widening_keeps_inexact_solutions_safe():
    """A deliberately perturbed w_k with its certified delta never screens wrongly."""
    model = svm_model(3, n=200)
    rng = np.random.default_rng(1)
    Cs = np.logspace(-2, 1, 10)
    for k in range(len(Cs) - 1):
        dual, w, alpha = exact(model, Cs[k])
        m_k = WeightedSVM(model.data, C=Cs[k], fit_intercept=False)
        # an inexact dual point and its primal: certify the distance by the duality gap
        noisy = dual.start_point(alpha + 0.05 * Cs[k] * rng.standard_normal(alpha.size))
        w_noisy = np.asarray(dual.Z.T @ noisy)
        gap = m_k.objective({"w": w_noisy}) - dual.dual_value(noisy)
        delta = np.sqrt(2 * gap)
        assert np.linalg.norm(w_noisy - w) <= delta + 1e-9
        R, L = DVI().screen(step(dual, w_noisy, Cs[k], Cs[k + 1], delta=delta))
        dual_next, w_next, alpha_next = exact(model, Cs[k + 1])
        assert_safe(dual_next, R, L, w_next, alpha_next)
        exact_sets = DVI().screen(step(dual, w, Cs[k], Cs[k + 1]))
        assert R.sum() <= exact_sets[0].sum() + 2
        assert L.sum() <= exact_sets[1].sum() + 2


def test_essnsv_rejects_at_least_what_ssnsv_rejects():
    model = svm_model(2, n=200)
    Cs = np.logspace(-2, 1, 15)
    sol = [exact(model, C) for C in Cs]
    total = [0, 0]
    for k in range(len(Cs) - 1):
        dual, w, _ = sol[k]
        for delta in (0.0, 1e-3):
            a = SSNSV().screen(step(dual, w, Cs[k], Cs[k + 1], delta, sol[-1][1]))
            b = ESSNSV().screen(step(dual, w, Cs[k], Cs[k + 1], delta, sol[-1][1]))
            assert np.all(b[0][a[0]])
            assert np.all(b[1][a[1]])
            total[0] += a[0].sum() + a[1].sum()
            total[1] += b[0].sum() + b[1].sum()
    assert total[1] > total[0]  # strictly more on this data


def test_lemma20_matches_a_conic_solve():
    rng = np.random.default_rng(5)
    for _ in range(6):
        m = 3
        u, o, v = rng.normal(size=m), rng.normal(size=m), rng.normal(size=(4, m))
        r = 1.0 + rng.random()
        d = float(u @ o) + rng.uniform(-0.9, 0.9) * r * np.linalg.norm(
            u
        )  # hyperplane cuts the ball
        found = ball_halfspace_min(v @ u, np.linalg.norm(v, axis=1), v @ o, np.linalg.norm(u),
                                   d - float(u @ o), r)  # fmt: skip
        for i in range(4):
            w = cp.Variable(m)
            problem = cp.Problem(cp.Minimize(v[i] @ w), [u @ w <= d, cp.norm(w - o) <= r])
            problem.solve(solver=cp.CLARABEL)
            assert found[i] == pytest.approx(problem.value, abs=1e-6)


def test_rule_refusals_name_the_reason():
    toy = make_toy(1, 0, n_per_class=10)
    with pytest.raises(IncompatibleDriver, match="fit_intercept=True"):
        DVI().check(WeightedSVM(toy, C=1.0))
    with pytest.raises(IncompatibleDriver, match="LinearBoxDual"):
        DVI().check(of.models.LADRegression(toy))
    dual = lad_model().structure(LinearBoxDual)
    with pytest.raises(IncompatibleDriver, match="hinge"):
        ESSNSV().check_dual(dual.lower, dual.upper)
