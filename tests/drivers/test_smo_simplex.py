"""SMO on a SimplexQP (the L2-SVM): the box QP it is derived from, against Direct.

A :class:`~optframe.capabilities.SimplexQP` is offered to SMO as the box QP with the equality
row :math:`1^\\top\\alpha = 1`, rows of :math:`\\tilde K = yy^\\top \\circ (K + 1) + \\rho I` and
:math:`\\Phi = R/2` (:meth:`SimplexQP.box_qp`).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from certificate_check import certified_status
from xor_data import xor_data

import optframe as of
from optframe.capabilities import BoxQPDual, SimplexQP
from optframe.drivers import SMO
from optframe.errors import ModelError
from optframe.kernels import RBF, Linear, Polynomial
from optframe.losses import SquaredHinge
from optframe.models import L2SVM, EmpiricalRisk

TIGHT = {"tol_gap_rel": 1e-12, "tol_gap_abs": 1e-12, "tol_feas": 1e-12}
KERNELS = [Linear(), RBF(gamma=0.5), Polynomial(degree=2, gamma=0.5, coef0=0.0)]
IDS = ["linear", "rbf", "poly"]


def data(m=120, seed=0, sparse=False):
    return xor_data(m, seed, sparse, d=4)


def k_tilde(simplex: SimplexQP) -> np.ndarray:
    X = simplex.X.toarray() if sp.issparse(simplex.X) else np.asarray(simplex.X)
    y = np.asarray(simplex.sign)
    return np.outer(y, y) * (simplex.kernel.matrix(X) + 1.0) + simplex.ridge * np.eye(len(y))


def q_of(dual: BoxQPDual) -> np.ndarray:
    """Q from the box QP's fields, as its docstring states it."""
    X = dual.X.toarray() if sp.issparse(dual.X) else np.asarray(dual.X)
    s = dual.sign * (np.ones(dual.n) if dual.row_sign is None else dual.row_sign)
    K = dual.kernel.matrix(X) + dual.kernel_shift
    return np.outer(s, s) * K + dual.ridge * np.eye(dual.n)


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_the_box_qp_is_the_simplex_qp(kernel):
    model = L2SVM(data(m=30), C=3.0, kernel=kernel)
    simplex, dual = model.structure(SimplexQP), model.structure(BoxQPDual)
    np.testing.assert_allclose(q_of(dual), k_tilde(simplex), rtol=1e-13, atol=1e-13)
    assert dual.rhs == 1.0
    assert np.all(dual.sign == 1.0)
    assert np.all(dual.upper == 1.0)
    alpha = np.random.default_rng(1).random(30)
    alpha /= alpha.sum()
    phi = 0.5 * alpha @ q_of(dual) @ alpha + dual.linear @ alpha
    value = simplex.scale * (alpha @ k_tilde(simplex) @ alpha) + simplex.offset
    assert -dual.bound_scale * phi + dual.bound_offset == pytest.approx(value, rel=1e-13)
    assert dual.sign @ dual.start == 1.0
    assert np.all(dual.start >= 0.0)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_smo_matches_direct_on_the_l2svm(kernel, sparse):
    model = L2SVM(data(sparse=sparse), C=10.0, kernel=kernel)
    ref = of.solve(model, backend="clarabel", solver_options=TIGHT)
    assert ref.status is of.Status.OPTIMAL
    result = of.solve(model, driver="smo", gap_tol=1e-8)
    assert result.status is of.Status.OPTIMAL
    assert certified_status(result) is of.Status.OPTIMAL
    assert result.objective == pytest.approx(ref.objective, rel=1e-7, abs=1e-12)
    assert result.bound <= ref.objective + 1e-9 * abs(ref.objective)
    keys = ("intercept", "w") if isinstance(kernel, Linear) else ("intercept",)
    for key in keys:
        expected = np.asarray(ref.solution[key])
        np.testing.assert_allclose(
            result.solution[key], expected, rtol=1e-3, atol=1e-4 * (1.0 + np.abs(expected).max())
        )


def test_smo_and_mfw_agree_and_smo_takes_fewer_steps():
    model = L2SVM(data(m=300, seed=2), C=1.0, kernel=RBF(gamma=0.5))
    smo = of.solve(model, driver="smo", gap_tol=1e-7)
    mfw = of.solve(model, driver="mfw", gap_tol=1e-7)
    assert smo.status is of.Status.OPTIMAL
    assert mfw.status is of.Status.OPTIMAL
    assert smo.objective == pytest.approx(mfw.objective, rel=2e-7)
    assert smo.stats["steps"] < mfw.stats["steps"]


def test_smo_on_a_declared_free_margin_risk():
    """The SimplexQP of a declaration (squared hinge, free margin, bias in the ridge)."""
    d = data(m=80, seed=4)
    linear, rbf = (
        EmpiricalRisk(
            d,
            loss=SquaredHinge(),
            C=2.0,
            kernel=kernel,
            free_margin=True,
            penalize_intercept=True,
        )
        for kernel in (None, RBF(gamma=0.3))
    )
    assert linear.offers_structure(BoxQPDual)
    assert rbf.offers_structure(BoxQPDual)
    ref = of.solve(linear, backend="matrix:clarabel", solver_options=TIGHT)
    result = of.solve(linear, driver=SMO(), gap_tol=1e-8)
    assert result.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(ref.objective, rel=1e-7, abs=1e-12)
    smo, mfw = (of.solve(rbf, driver=name, gap_tol=1e-8) for name in ("smo", "mfw"))
    assert smo.status is of.Status.OPTIMAL
    assert smo.objective == pytest.approx(mfw.objective, rel=1e-6)


def test_a_box_qp_with_a_wrong_ridge_is_caught_by_the_certificate(monkeypatch):
    """A structure that lies (ridge halved) gives a wrong optimum: never certified OPTIMAL."""
    model = L2SVM(data(m=150, seed=3), C=0.5, kernel=RBF(gamma=0.5))
    honest = SimplexQP.box_qp

    def lying(self):
        import dataclasses

        return dataclasses.replace(honest(self), ridge=0.5 * self.ridge)

    monkeypatch.setattr(SimplexQP, "box_qp", lying)
    result = of.solve(model, driver="smo", gap_tol=1e-8)
    assert result.status is not of.Status.OPTIMAL
    assert result.gap > 1e-6


def test_the_fresh_gradient_includes_the_shift_and_the_ridge():
    """The driver's final gradient is Q alpha: checked through the dual bound it reports."""
    model = L2SVM(data(m=60, seed=5), C=2.0, kernel=RBF(gamma=0.7))
    dual, simplex = model.structure(BoxQPDual), model.structure(SimplexQP)
    result = of.solve(model, driver=SMO(tol=1e-2), gap_tol=1.0)
    alpha = result.solution["alpha"]
    value = simplex.scale * (alpha @ k_tilde(simplex) @ alpha) + simplex.offset
    assert result.stats["dual_objective"] == pytest.approx(value, rel=1e-10)
    assert dual.bound_scale == pytest.approx(-2.0 * simplex.scale)


def test_a_minimizing_simplex_qp_is_refused():
    simplex = L2SVM(data(m=10), C=1.0).structure(SimplexQP)
    import dataclasses

    with pytest.raises(ModelError, match="scale"):
        dataclasses.replace(simplex, scale=0.5).box_qp()


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_the_objective_from_scores_is_the_models(kernel):
    """SimplexQP.objective(alpha, K~ alpha) is the model's objective at recover(alpha)."""
    model = L2SVM(data(m=40, seed=6), C=3.0, kernel=kernel)
    simplex = model.structure(SimplexQP)
    alpha = np.random.default_rng(2).random(40) * (np.arange(40) % 3 > 0)
    alpha /= alpha.sum()
    expected = model.objective(simplex.recover(alpha))
    assert simplex.objective(alpha, k_tilde(simplex) @ alpha) == pytest.approx(expected, rel=1e-12)
    wrong = simplex.objective(alpha, 1.001 * (k_tilde(simplex) @ alpha))
    assert wrong != pytest.approx(expected, rel=1e-6)
