"""PULearning: primal vs dual (Clarabel), the duality identity, the bias, bad input."""

import numpy as np
import pytest
from model_testing import close, direct, raw_solve

import optframe as of
from optframe.data import Dataset
from optframe.errors import DataError, ModelError
from optframe.kernels import RBF
from optframe.models import PULearning
from optframe.models.pu_learning import best_bias, double_hinge_negative


def pu_data(p=8, n=40, m=3, seed=0, shuffle=True):
    """Labeled positives around +1, unlabeled: a 40/60 mix of positives and negatives."""
    rng = np.random.default_rng(seed)
    pos = rng.normal(1.0, 1.0, size=(p, m))
    n_pos = int(0.4 * n)
    unl = np.vstack([rng.normal(1.0, 1.0, (n_pos, m)), rng.normal(-1.0, 1.0, (n - n_pos, m))])
    X = np.vstack([pos, unl])
    y = np.r_[np.ones(p), np.zeros(n)]
    if shuffle:
        order = rng.permutation(y.size)
        X, y = X[order], y[order]
    return Dataset(X=X, y=y)


CASES = [
    ("linear", 1e-2, 0.4),
    ("linear", 1e-4, 0.3),
    (RBF(gamma=0.5), 1e-2, 0.4),
    (RBF(gamma=0.5), 1e-1, 0.7),
]


@pytest.mark.parametrize(("kernel", "lam", "prior"), CASES)
def test_primal_and_dual_agree(kernel, lam, prior):
    model = PULearning(pu_data(), prior=prior, lam=lam, kernel=kernel)
    primal = direct(model, "cvxpy", "primal")
    dual_formulation = model.build("cvxpy", "dual")
    raw = raw_solve(dual_formulation)
    dual = dual_formulation.recover(raw)
    p_star = model.objective(primal)
    assert close(model.objective(dual), p_star, 1e-6)
    # P* = -F* - c1^2/2 1'K_PP 1: the dual objective of sigma* is the optimum.
    assert close(model.dual_objective(dual["sigma"]), p_star, 1e-6)
    assert model.dual_objective(dual["sigma"]) <= p_star + 1e-7 * max(1, abs(p_star))
    # delta* = 2 min(sigma*, c2 - sigma*) (Lemma 1).
    sigma, delta = raw.primal["sigma"], raw.primal["delta"]
    np.testing.assert_allclose(delta, 2 * np.minimum(sigma, model.c2 - sigma), atol=1e-6 * model.c2)
    assert model.violation(dual) <= 1e-7
    # alpha_P = c1, alpha_U = -sigma, sum(alpha) = 0.
    np.testing.assert_allclose(dual["alpha"][model.positives], model.c1)
    assert abs(dual["alpha"].sum()) <= 1e-6 * model.c1 * model.positives.size
    # The risk is 2 lam times the objective, computed from the decision function.
    f = model.decision_function(dual, model.data.X)
    P, U = model.positives, model.unlabeled
    reg = model.objective(dual) - (
        -model.c1 * f[P].sum() + model.c2 * double_hinge_negative(f[U]).sum()
    )
    risk = -prior / P.size * f[P].sum() + double_hinge_negative(f[U]).mean() + 2 * lam * reg
    assert model.risk(dual) == pytest.approx(risk, rel=1e-9)
    if kernel == "linear":
        np.testing.assert_allclose(
            dual["w"], primal["w"], atol=1e-4 * max(1, abs(primal["w"]).max())
        )


def test_solve_front_door_certifies():
    model = PULearning(pu_data(), prior=0.4, lam=1e-2, kernel=RBF(gamma=0.5))
    result = of.solve(model)
    assert result.status is of.Status.OPTIMAL
    assert result.stats["form"] == "dual"
    assert result.bound is not None
    assert result.gap <= 1e-6
    assert result.objective == pytest.approx(model.objective(result.solution))
    for backend in ("osqp", "cvxpy:clarabel"):
        other = of.solve(model, backend=backend)
        assert close(other.objective, result.objective, 1e-3 if backend == "osqp" else 1e-7)


def test_bias_is_the_exact_minimizer():
    model = PULearning(pu_data(seed=3), prior=0.4, lam=1e-2)
    solution = direct(model, "cvxpy", "dual")
    value = model.objective(solution)
    beta = solution["intercept"][0]
    for shift in (-1e-3, 1e-3, -0.1, 0.1):
        moved = dict(solution, intercept=np.array([beta + shift]))
        assert model.objective(moved) >= value - 1e-9 * max(1.0, abs(value))


def test_best_bias_brute_force(rng):
    for _ in range(20):
        F = rng.normal(size=15)
        c1p, c2 = rng.uniform(0.1, 5.0), rng.uniform(0.5, 2.0)
        c2 = max(c2, 1.01 * c1p / F.size)

        def value(b, F=F, c1p=c1p, c2=c2):
            return -c1p * b + c2 * double_hinge_negative(F + b).sum()

        b = best_bias(F, c1p, c2)
        grid = np.linspace(-6, 6, 24001)
        assert value(b) <= min(value(g) for g in grid) + 1e-9


def test_permutation_and_order_invariance():
    data = pu_data(shuffle=False)
    order = np.random.default_rng(5).permutation(data.n_samples)
    a = PULearning(data, prior=0.4, lam=1e-2, kernel=RBF(gamma=0.5))
    b = PULearning(data.subset(order), prior=0.4, lam=1e-2, kernel=RBF(gamma=0.5))
    va, vb = (m.objective(direct(m, "cvxpy", "dual")) for m in (a, b))
    assert close(va, vb, 1e-7)


def test_decision_function_and_predict():
    model = PULearning(pu_data(), prior=0.4, lam=1e-2, kernel=RBF(gamma=0.5))
    solution = direct(model, "cvxpy", "dual")
    X = model.data.X[:5]
    alpha = solution["alpha"]
    K = model.kernel(X, model.data.X)
    np.testing.assert_allclose(
        model.decision_function(solution, X), K @ alpha + solution["intercept"][0], rtol=1e-10
    )
    assert set(np.unique(model.predict(solution, X))) <= {-1.0, 1.0}


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"prior": 0.0}, ModelError, "prior"),
        ({"prior": 1.0}, ModelError, "prior"),
        ({"prior": -0.2}, ModelError, "prior"),
        ({"lam": 0.0}, ModelError, "lam"),
        ({"lam": -1.0}, ModelError, "lam"),
        ({"lam": float("nan")}, ModelError, "lam"),
        ({"kernel": "sigmoid"}, ModelError, "kernel"),
    ],
)
def test_bad_parameters(kwargs, error, match):
    with pytest.raises(error, match=match):
        PULearning(pu_data(), **{"prior": 0.4, "lam": 1e-2} | kwargs)


def test_bad_kernel_parameter():
    with pytest.raises(ModelError, match="gamma"):
        PULearning(pu_data(), prior=0.4, kernel=RBF(gamma=0.0))


def test_bad_data():
    X = np.random.default_rng(0).normal(size=(6, 2))
    with pytest.raises(DataError, match="labeled positive"):
        PULearning(Dataset(X=X, y=np.zeros(6)), prior=0.4)
    with pytest.raises(DataError, match="unlabeled"):
        PULearning(Dataset(X=X, y=np.ones(6)), prior=0.4)
    with pytest.raises(DataError, match="0"):
        PULearning(Dataset(X=X, y=[1, -1, 0, 0, 0, 0]), prior=0.4)
    with pytest.raises(DataError, match="Dataset"):
        PULearning(X, prior=0.4)
