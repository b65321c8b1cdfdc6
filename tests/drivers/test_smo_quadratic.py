"""SMO on box QPs with a diagonal: losses of ReHU pieces with a kernel and a free intercept.

The squared hinge (the L2-loss SVM's standard dual: diagonal :math:`1/(2C)`, variables unbounded
above) and Huber (a finite box, diagonal :math:`1/C`), each against a Direct reference solve by
objective and by the model's own certificate; a perturbed solution and a lying structure are
caught; the losses the box QP cannot state are refused by name.
"""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from certificate_check import certified_status
from xor_data import xor_data

import optframe as of
from optframe.capabilities import BoxQPDual
from optframe.data import Dataset
from optframe.drivers import SMO
from optframe.errors import IncompatibleDriver
from optframe.jit import needs_of
from optframe.kernels import RBF, Linear, Polynomial
from optframe.losses import Huber, PLQLoss, SquaredHinge
from optframe.models import EmpiricalRisk, WeightedSVM
from optframe.models._risk_structures import quadratic_intercept
from optframe.penalties import L1

TIGHT = {"tol_gap_rel": 1e-12, "tol_gap_abs": 1e-12, "tol_feas": 1e-12}
KERNELS = [Linear(), RBF(gamma=0.5), Polynomial(degree=2, gamma=0.5, coef0=1.0)]
IDS = ["linear", "rbf", "poly"]


def classes(m=120, seed=0, sparse=False):
    return xor_data(m, seed, sparse, d=4)


def regression(m=100, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 3))
    y = np.sin(X[:, 0]) + X[:, 1] + rng.standard_t(3, size=m)
    return Dataset(X=X, y=y)


def q_of(dual: BoxQPDual) -> np.ndarray:
    """Q + D from the box QP's fields, as its docstring states it."""
    X = dual.X.toarray() if sp.issparse(dual.X) else np.asarray(dual.X)
    K = dual.kernel.matrix(X)
    return np.outer(dual.sign, dual.sign) * K + np.diag(dual.diagonal)


def check_against_direct(model, rel=1e-7):
    ref = of.solve(model, backend="clarabel", solver_options=TIGHT)
    assert ref.status is of.Status.OPTIMAL
    result = of.solve(model, driver=SMO(), gap_tol=1e-8)
    assert result.status is of.Status.OPTIMAL
    assert certified_status(result) is of.Status.OPTIMAL
    assert result.bound <= result.objective  # the gap is never negative
    assert result.gap >= 0.0
    assert result.objective == pytest.approx(ref.objective, rel=rel, abs=1e-12)
    assert result.bound <= ref.objective + 1e-9 * abs(ref.objective)
    assert model.objective(result.solution) == pytest.approx(result.objective, rel=1e-12)
    return ref, result


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_squared_hinge_with_intercept_matches_direct(kernel):
    model = EmpiricalRisk(classes(), SquaredHinge(), C=0.8, kernel=kernel)
    dual = model.structure(BoxQPDual)
    assert np.all(np.isinf(dual.upper))  # unbounded above
    np.testing.assert_allclose(dual.diagonal, 1.0 / (2.0 * 0.8))  # the L2-SVM's 1/(2C)
    ref, result = check_against_direct(model)
    b_ref = float(ref.solution["intercept"][0])
    assert float(result.solution["intercept"][0]) == pytest.approx(b_ref, abs=1e-4)


def test_squared_hinge_sparse_points_and_sample_weights():
    d = classes(m=90, seed=3, sparse=True)
    weights = np.random.default_rng(2).uniform(0.0, 2.0, size=90)
    weights[:5] = 0.0  # zero weight: a one-point box, no diagonal
    model = EmpiricalRisk(d, SquaredHinge(), C=2.0, kernel=RBF(gamma=0.7), sample_weight=weights)
    dual = model.structure(BoxQPDual)
    assert np.all(dual.upper[:5] == 0.0)
    assert np.all(dual.diagonal[:5] == 0.0)
    result = of.solve(model, driver=SMO(), gap_tol=1e-8)
    assert result.status is of.Status.OPTIMAL
    assert certified_status(result) is of.Status.OPTIMAL
    assert np.all(result.solution["alpha"][:5] == 0.0)
    # the reference: Direct on the samples that count (the dual form takes no zero weight)
    kept = EmpiricalRisk(
        Dataset(X=d.X[5:].toarray(), y=d.y[5:]), SquaredHinge(), C=2.0, kernel=RBF(gamma=0.7),
        sample_weight=weights[5:],
    )  # fmt: skip
    ref = of.solve(kept, backend="clarabel")
    assert ref.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(ref.objective, rel=1e-7)


@pytest.mark.parametrize("kernel", [Linear(), RBF(gamma=0.3)], ids=["linear", "rbf"])
def test_huber_with_intercept_matches_direct(kernel):
    model = EmpiricalRisk(regression(), Huber(0.7), C=1.5, kernel=kernel)
    dual = model.structure(BoxQPDual)
    np.testing.assert_allclose(dual.upper, 2.0 * 1.5 * 0.7)  # theta in [-C delta, C delta]
    np.testing.assert_allclose(dual.diagonal, 1.0 / 1.5)
    check_against_direct(model)


def test_a_smoothed_hinge_with_a_kink_of_its_dual_matches_direct():
    """rehu_1(1 - a) + rehu_1(-1 - a): a flat stretch between two quadratic ones (one kink)."""
    loss = PLQLoss(rehu=[(-1.0, 1.0, 1.0), (-1.0, -1.0, 1.0)], kind="classification")
    model = EmpiricalRisk(classes(m=80, seed=6), loss, C=1.0, kernel=RBF(gamma=0.5))
    dual = model.structure(BoxQPDual)
    assert np.any(dual.slope_above > 0)  # the kink
    check_against_direct(model)


def test_the_dual_value_is_the_models_fenchel_dual():
    """-Phi(x) + offset equals the model's D at alpha = x (squared hinge: e = +1, base 0)."""
    model = EmpiricalRisk(classes(m=40, seed=1), SquaredHinge(), C=1.3, kernel=RBF(gamma=0.5))
    dual = model.structure(BoxQPDual)
    rng = np.random.default_rng(0)
    x = rng.uniform(0.0, 2.0, size=40)
    x[dual.sign > 0] *= x[dual.sign < 0].sum() / x[dual.sign > 0].sum()
    assert abs(dual.sign @ x - dual.rhs) < 1e-12
    phi = 0.5 * x @ q_of(dual) @ x + dual.linear @ x
    y, c = model.data.y, model.costs
    K = model._kernel.matrix(model.data.X)
    v = y * x
    # D = sum_i (-c_i l*(-x_i / c_i)) - v'Kv / 2, l*(beta) = beta + beta^2 / 4
    beta = -x / c
    expected = -float(c @ (beta + beta**2 / 4.0)) - 0.5 * v @ K @ v
    assert -phi + dual.bound_offset == pytest.approx(expected, rel=1e-12)
    # the certificate's best candidate: at least the dual value at x itself
    bound = model.dual_bound({"alpha": x, "intercept": np.zeros(1)})
    assert bound >= expected - 1e-9 * abs(expected)


def test_a_perturbed_solution_is_not_certified():
    model = EmpiricalRisk(classes(m=100, seed=4), SquaredHinge(), C=1.0, kernel=RBF(gamma=0.5))
    result = of.solve(model, driver=SMO(), gap_tol=1e-8)
    assert result.status is of.Status.OPTIMAL
    alpha = result.solution["alpha"].copy()
    alpha[np.argmax(alpha)] *= 1.05
    perturbed = {"alpha": alpha, "intercept": result.solution["intercept"]}
    objective, bound = model.objective(perturbed), model.dual_bound(perturbed)
    assert bound <= objective
    assert (objective - bound) / max(1.0, abs(objective)) > 1e-6


def test_a_box_qp_with_a_wrong_diagonal_is_caught_by_the_certificate(monkeypatch):
    """A structure that lies (diagonal halved) gives a wrong optimum: never certified OPTIMAL."""
    import optframe.models._risk_structures as structures

    model = EmpiricalRisk(classes(m=120, seed=5), SquaredHinge(), C=0.5, kernel=RBF(gamma=0.5))
    honest = structures.quadratic_box_qp_dual

    def lying(model):
        dual = honest(model)
        return dataclasses.replace(dual, diagonal=0.5 * dual.diagonal)

    monkeypatch.setattr(structures, "quadratic_box_qp_dual", lying)
    monkeypatch.setattr("optframe.models.empirical_risk.quadratic_box_qp_dual", lying)
    result = of.solve(model, driver=SMO(), gap_tol=1e-8)
    assert result.status is not of.Status.OPTIMAL
    assert result.gap > 1e-6


@pytest.mark.parametrize(
    ("loss", "words"),
    [
        (PLQLoss(rehu=[(1.0, 0.0, 1.0), (2.0, -2.0, np.inf)]), "curvature"),
        # free multipliers are split in two (least squares, the expectile: test_smo_single.py),
        # but not with two curvatures on one side of the minimum
        (PLQLoss(rehu=[(1.0, 0.0, np.inf), (1.0, -1.0, np.inf), (-1.0, 0.0, np.inf)]), "free"),
        (PLQLoss(relu=[(-1.0, 1.0)], rehu=[(-1.0, 1.0, np.inf)], kind="classification"), "ReLU"),
    ],
    ids=["two-curvatures", "free-two-curvatures", "hinge+squared"],
)
def test_losses_the_box_qp_cannot_state_are_refused_by_name(loss, words):
    d = regression(m=30) if loss.kind == "regression" else classes(m=30)
    model = EmpiricalRisk(d, loss, kernel=RBF(gamma=0.5))
    reason = model.structure_refusal(BoxQPDual)
    assert reason is not None
    assert words in reason
    with pytest.raises(IncompatibleDriver, match="BoxQPDual"):
        of.solve(model, driver=SMO())


def test_the_papers_stopping_rule_is_refused_on_a_dual_with_a_diagonal():
    model = EmpiricalRisk(classes(m=30), SquaredHinge(), kernel=RBF(gamma=0.5))
    with pytest.raises(IncompatibleDriver, match="stopping='complete'"):
        of.solve(model, driver=SMO(stopping="paper"))


def test_no_intercept_and_other_penalties_are_refused():
    d = classes(m=30)
    without = EmpiricalRisk(d, SquaredHinge(), fit_intercept=False, kernel=RBF(gamma=0.5))
    assert without.structure(BoxQPDual).rhs is None  # offered without the row (single steps)
    lasso = EmpiricalRisk(d, SquaredHinge(), penalty=L1())
    assert "L2()" in lasso.structure_refusal(BoxQPDual)


def test_the_quadratic_steps_are_compiled_only_for_a_dual_with_a_diagonal():
    d = classes(m=30)
    assert needs_of(EmpiricalRisk(d, SquaredHinge(), kernel=RBF()), SMO()).quadratic is True
    assert needs_of(WeightedSVM(d, kernel=RBF()), SMO()).quadratic is False
    assert needs_of(WeightedSVM(d), SMO()).quadratic is False  # the demo's SMO runs


@pytest.mark.parametrize("loss", [SquaredHinge(), Huber(0.5)], ids=["sqhinge", "huber"])
def test_the_best_intercept_is_exact(loss):
    rng = np.random.default_rng(7)
    n = 60
    f = rng.normal(size=n)
    if loss.is_classification:
        p, q = np.zeros(n), np.where(rng.random(n) > 0.4, 1.0, -1.0)
    else:
        p, q = rng.normal(size=n) * 2.0, -np.ones(n)
    c = rng.uniform(0.1, 2.0, size=n)

    def total(b):
        return float(c @ loss.value(p + q * (f + b)))

    b = quadratic_intercept(loss, p, q, f, c)
    grid = b + np.linspace(-1e-3, 1e-3, 41)
    assert total(b) <= min(total(t) for t in grid) + 1e-12


QUADRATIC_WARM_UP = """
import json
import numpy as np
from optframe import jit
from optframe.data import Dataset
from optframe.drivers import SMO, smo_quadratic
from optframe.kernels import RBF
from optframe.losses import SquaredHinge
from optframe.models import EmpiricalRisk
rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3))
y = np.where(X[:, 0] > 0, 1.0, -1.0)
needs = jit.needs_of(EmpiricalRisk(Dataset(X=X, y=y), SquaredHinge(), kernel=RBF()), SMO())
jit.compile_kernels(SMO(), needs=needs)
print(json.dumps({"quadratic": needs.quadratic, "failures": [str(k) for k in jit.failures],
                  "compiled": bool(smo_quadratic.run_chunk.signatures)}))
"""


def test_the_warm_up_compiles_the_quadratic_steps():
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", QUADRATIC_WARM_UP], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"quadratic": True, "failures": [], "compiled": True}
