"""Result.certificate: the dual point, its repairs and terms, checked apart from the models' code.

For every kind of certificate (LAD's LP dual, the SVM's box dual, the L2-SVM's simplex, the kernel
SVM, a screened box dual, the safe bound from a solver's duals on a user's LP and QP):

* the certificate's value is the result's bound, and its terms sum to it;
* the dual point satisfies the dual's constraints, checked here with numpy from the data, and
  the dual objective evaluated here at the point is the value;
* a perturbed solution gives a certificate whose value is still at most the Direct optimum;
* ``explain()`` speaks of the objective, the bound and the gap.
"""

from __future__ import annotations

import doctest
import importlib
import math
from dataclasses import dataclass

import numpy as np
import pytest
from user_models import UserLeastAbsolute, UserRidge

import optframe as of
from optframe.capabilities import LinearBoxDual
from optframe.certificate import Certificate, RepairStep, certify
from optframe.data import Dataset
from optframe.drivers import Direct
from optframe.errors import ModelError
from optframe.kernels import RBF
from optframe.models import L2SVM, LADRegression, WeightedSVM
from optframe.result import Result, Status

EPS = np.finfo(np.float64).eps


def _regression(seed=0, n=80, m=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    return Dataset(X=X, y=X @ np.arange(1.0, m + 1) + rng.laplace(size=n))


def _classification(seed=0, n=80, m=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.6 * rng.normal(size=n) > 0, 1.0, -1.0)
    return Dataset(X=X, y=y)


def _rows_hold(A, v, factor=1e3):
    """``A'v = 0`` to rounding: each sum within ``factor * n * eps * (|A|'|v|)_j``."""
    A = np.asarray(A)
    residual = np.abs(A.T @ v)
    allowed = factor * A.shape[0] * EPS * (np.abs(A).T @ np.abs(v)) + 1e-300
    return bool(np.all(residual <= allowed))


def _common_checks(result):
    certificate = result.certificate
    assert isinstance(certificate, Certificate)
    assert certificate.value == result.bound
    assert math.fsum(certificate.terms.values()) == pytest.approx(certificate.value, rel=1e-12,
                                                                 abs=1e-12)  # fmt: skip
    assert certificate.objective == result.objective
    text = certificate.explain()
    for word in ("objective", "bound", "gap", "Weak duality"):
        assert word in text, text
    return certificate


# --- LAD: max y'theta s.t. X'theta = 0, 1'theta = 0, |theta| <= w ---------------------------------
def _lad_checks(model, certificate):
    X, y = np.asarray(model.data.X), np.asarray(model.data.y)
    theta = certificate.dual_point["theta"]
    assert np.all(np.abs(theta) <= 1.0)  # unit weights
    assert _rows_hold(np.column_stack([X, np.ones(len(y))]), theta)
    assert float(y @ theta) == pytest.approx(certificate.value, rel=1e-12)


@pytest.mark.parametrize("form", ["dual", "primal"])
def test_lad_certificate_is_a_feasible_point_of_the_lp_dual(form):
    model = LADRegression(_regression())
    result = of.solve(model, Direct(form=form), backend="matrix:highs")
    assert result.status is Status.OPTIMAL
    certificate = _common_checks(result)
    assert set(certificate.dual_point) == {"theta"}
    _lad_checks(model, certificate)
    assert "y'theta" in certificate.dual


def test_lad_perturbed_solution_is_repaired_and_bounds_the_optimum():
    model = LADRegression(_regression(seed=1))
    optimum = of.solve(model, backend="highs").objective
    rng = np.random.default_rng(3)
    for scale in (1e-4, 1e-2, 0.3):
        beta = np.arange(1.0, 4.0) + scale * rng.normal(size=3)
        certificate = model.dual_certificate({"beta": beta, "intercept": [scale]})
        assert certificate.value <= optimum * (1 + 1e-12)
        assert certificate.value > 0.5 * optimum  # a useful bound, not -inf
        kinds = [step.kind for step in certificate.steps]
        assert "fill" in kinds
        assert "project" in kinds
        assert kinds[-1] == "check"
        _lad_checks(model, certificate)


# --- the linear SVM: max 1'alpha - |X'(y alpha)|^2/2 s.t. y'alpha = 0, 0 <= alpha <= C ------------
def _svm_value(X, y, alpha):
    w = X.T @ (y * alpha)
    return float(alpha.sum() - 0.5 * w @ w)


def test_svm_certificate_is_a_feasible_point_of_the_box_dual():
    data = _classification()
    model = WeightedSVM(data, C=0.5)
    result = of.solve(model)
    certificate = _common_checks(result)
    alpha = certificate.dual_point["alpha"]
    X, y = np.asarray(data.X), np.asarray(data.y)
    assert np.all((alpha >= 0) & (alpha <= 0.5))
    assert abs(float(y @ alpha)) <= 1e3 * EPS * float(np.abs(alpha).sum())
    assert _svm_value(X, y, alpha) == pytest.approx(certificate.value, rel=1e-10)


def test_svm_perturbed_solution_bounds_the_optimum():
    data = _classification(seed=2)
    model = WeightedSVM(data, C=1.0)
    reference = of.solve(model)
    X, y = np.asarray(data.X), np.asarray(data.y)
    rng = np.random.default_rng(0)
    w = np.asarray(reference.solution["w"])
    for scale in (1e-3, 0.1, 1.0):
        noisy = {"w": w + scale * rng.normal(size=w.size), "intercept": [scale]}
        certificate = model.dual_certificate(noisy)
        assert certificate.value <= reference.objective * (1 + 1e-12)
        alpha = certificate.dual_point["alpha"]
        assert np.all((alpha >= 0) & (alpha <= 1.0))
        assert abs(float(y @ alpha)) <= 1e3 * EPS * max(float(np.abs(alpha).sum()), 1.0)
        assert _svm_value(X, y, alpha) == pytest.approx(certificate.value, rel=1e-10, abs=1e-12)
        assert any(step.kind == "balance" for step in certificate.steps)


def test_kernel_svm_certificate():
    data = _classification(seed=4, n=60)
    model = WeightedSVM(data, C=2.0, kernel=RBF(gamma=0.5))
    result = of.solve(model)
    certificate = _common_checks(result)
    alpha = certificate.dual_point["alpha"]
    X, y = np.asarray(data.X), np.asarray(data.y)
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
    assert np.all((alpha >= 0) & (alpha <= 2.0))
    assert abs(float(y @ alpha)) <= 1e3 * EPS * float(np.abs(alpha).sum())
    v = y * alpha
    assert float(alpha.sum() - 0.5 * v @ K @ v) == pytest.approx(certificate.value, rel=1e-9)


# --- the L2-SVM: max -alpha' Kt alpha / 2 on the simplex ------------------------------------------
def _l2svm_value(X, y, C, alpha):
    v = y * alpha
    z = X.T @ v
    return -0.5 * float(z @ z + v.sum() ** 2 + alpha @ alpha / C)


def test_l2svm_certificate_is_a_point_of_the_simplex():
    data = _classification(seed=5)
    model = L2SVM(data, C=1.0)
    reference = of.solve(model)
    certificate = _common_checks(reference)
    X, y = np.asarray(data.X), np.asarray(data.y)
    alpha = certificate.dual_point["alpha"]
    assert np.all(alpha >= 0)
    assert float(alpha.sum()) == pytest.approx(1.0, abs=1e-14)
    assert _l2svm_value(X, y, 1.0, alpha) == pytest.approx(certificate.value, rel=1e-10)
    rng = np.random.default_rng(1)
    w = np.asarray(reference.solution["w"])
    noisy = {"w": w + 0.2 * rng.normal(size=w.size), "intercept": [0.1]}
    perturbed = model.dual_certificate(noisy)
    assert perturbed.value <= reference.objective + 1e-12 * abs(reference.objective)
    alpha = perturbed.dual_point["alpha"]
    assert np.all(alpha >= 0)
    assert float(alpha.sum()) == pytest.approx(1.0, abs=1e-14)
    assert _l2svm_value(X, y, 1.0, alpha) == pytest.approx(perturbed.value, rel=1e-10)


# --- a box dual with screened samples fixed -------------------------------------------------------
def test_fixed_sample_dual_certificate():
    data = _classification(seed=6)
    svm = WeightedSVM(data, C=1.0, fit_intercept=False)
    dual = svm.structure(LinearBoxDual)
    fixed = np.zeros(dual.n, dtype=bool)
    fixed[:5] = True
    reduced = dual.with_fixed(fixed, np.where(fixed, dual.upper, 0.0))
    result = of.solve(reduced, backend="clarabel")
    certificate = _common_checks(result)
    alpha = certificate.dual_point[dual.dual_key]
    assert np.all((alpha >= dual.lower) & (alpha <= dual.upper))
    assert np.all(alpha[:5] == dual.upper[:5])
    Z = np.asarray(dual.Z)
    w = Z.T @ alpha
    assert float(dual.target @ alpha - 0.5 * w @ w) == pytest.approx(certificate.value, rel=1e-12)
    noisy = reduced.dual_certificate({dual.primal_key: w + 0.3})
    assert noisy.value <= result.objective * (1 + 1e-12)
    assert noisy.steps[0].kind == "fill"


# --- a user's model without a dual: the safe bound from the solver's duals ------------------------


def test_users_lp_on_highs_lists_the_safe_bound_steps():
    model = UserLeastAbsolute(_regression(seed=7, n=50))
    result = of.solve(model, Direct(), backend="matrix:highs")
    assert result.status is Status.OPTIMAL
    certificate = _common_checks(result)
    assert certificate.value == result.stats["safe_bound"]
    kinds = [step.kind for step in certificate.steps]
    assert kinds[-1] == "correction"
    assert "Neumaier-Shcherbina" in certificate.steps[-1].what
    assert "balance" in kinds  # beta is free: its reduced costs are balanced to zero
    assert set(certificate.dual_point) == {"y", "z"}
    # the multipliers point at finite row sides, and z is c - A'y (to its rounding error)
    problem = model.build("matrix").problem
    y, z = certificate.dual_point["y"], certificate.dual_point["z"]
    assert np.all(y[np.isinf(problem.row_lower)] <= 0)
    assert np.all(y[np.isinf(problem.row_upper)] >= 0)
    A = problem.A.toarray()
    scale = np.abs(A).T @ np.abs(y) + np.abs(problem.c)
    assert np.all(np.abs(z - (problem.c - A.T @ y)) <= 1e-9 * np.maximum(scale, 1.0))
    # weak duality checked by hand: on the box (beta free, t >= 0) the bound is y'r_l + sum of
    # min over t >= 0 of z_t t, which is finite only when z_beta = 0 and z_t >= 0
    m = model.data.n_features
    assert np.all(z[:m] == 0)
    assert np.all(z[m:] >= -1e-9)
    by_hand = float(y @ problem.row_lower)
    assert by_hand == pytest.approx(certificate.value, rel=1e-9)
    reference = of.solve(LADRegression(model.data, fit_intercept=False))
    assert certificate.value <= reference.objective * (1 + 1e-12)


def test_users_qp_safe_bound_keeps_the_diagonal_curvature():
    model = UserRidge(_regression(seed=8, n=40))
    result = of.solve(model, Direct(), backend="matrix:clarabel", tol=1e-9)
    certificate = _common_checks(result)
    kinds = [step.kind for step in certificate.steps]
    assert kinds == ["linearize", "correction"]  # P = I: every column keeps its curvature
    assert "kept on 43 columns" in certificate.steps[0].what
    assert "safe" in certificate.origin


def test_a_lying_solver_still_gets_a_valid_certificate(monkeypatch):
    from optframe.drivers import direct
    from optframe.registry import backends

    inner = next(cls for cls in backends()["highs"] if cls.layer == "matrix")()

    class Liar:
        def __getattr__(self, name):
            return getattr(inner, name)

        def solve(self, formulation, options):
            from dataclasses import replace

            raw = inner.solve(formulation, options)
            dual = {k: v * 1.1 for k, v in raw.values.dual.items()}
            return replace(raw, values=replace(raw.values, dual=dual))

    monkeypatch.setattr(direct, "resolve_backend", lambda *args, **kwargs: Liar())
    model = UserLeastAbsolute(_regression(seed=9, n=40))
    result = of.solve(model, Direct(), backend="matrix:highs")
    reference = of.solve(LADRegression(model.data, fit_intercept=False))
    if result.certificate is not None:
        assert result.certificate.value <= reference.objective * (1 + 1e-12)
        assert result.certificate.steps


# --- the hook's default, and the edges ------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ValueOnly(UserLeastAbsolute):
    """A user's LP whose dual bound is a number without its point (the LAD's, reused)."""

    def dual_bound(self, solution):
        lad = LADRegression(self.data, fit_intercept=False)
        return lad.dual_bound({"beta": solution["beta"], "intercept": [0.0]})


def test_a_model_with_dual_bound_only_gets_a_value_certificate():
    model = ValueOnly(_regression(seed=10, n=30))
    assert model.writes_dual()
    result = of.solve(model, Direct(), backend="matrix:highs")
    certificate = _common_checks(result)
    assert certificate.dual_point == {}
    assert certificate.steps == ()
    assert "safe_bound" not in result.stats


def test_no_bound_no_certificate():
    model = LADRegression(_regression(n=10))
    empty = Result(Status.ERROR, math.nan, None, {})
    assert certify(model, empty, 1e-6).certificate is None


def test_the_point_is_frozen_and_copied_once():
    theta = np.array([1.0, -1.0])
    certificate = Certificate(0.0, {"theta": theta})
    assert theta.flags.writeable  # the caller's array is left alone
    assert not certificate.dual_point["theta"].flags.writeable
    capped = certificate.with_objective(1.0, 1.0)
    assert capped.dual_point["theta"] is certificate.dual_point["theta"]


def test_a_certificate_above_the_objective_is_capped_with_a_step():
    certificate = Certificate(1.0 + 1e-13, terms={"a": 0.5, "b": 0.5 + 1e-13})
    capped = certificate.with_objective(1.0, 1.0)
    assert capped.value == 1.0
    assert capped.steps[-1].kind == "cap"
    assert math.fsum(capped.terms.values()) == pytest.approx(1.0, rel=1e-15)


@pytest.mark.parametrize(
    "build",
    [
        lambda: Certificate("1.0"),
        lambda: Certificate(1.0, terms={"a": "x"}),
        lambda: Certificate(1.0, steps=("clip",)),
        lambda: Certificate(1.0, dual_point={"a": ["x"]}),
        lambda: RepairStep("clip", "into the box", before="0.1"),
        lambda: RepairStep(3, "into the box"),
    ],
)
def test_bad_certificates_are_refused(build):
    with pytest.raises(ModelError):
        build()


@pytest.mark.parametrize(
    "name",
    ["optframe.certificate", "optframe.safe_bound", "optframe.models._box_dual",
     "optframe.models.empirical_risk", "optframe.model", "optframe.duality"],
)  # fmt: skip
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    failures, tried = doctest.testmod(module, optionflags=flags)
    assert tried > 0
    assert failures == 0
