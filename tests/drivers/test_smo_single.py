"""SMO's single-variable steps on box duals without an equality row (no free intercept).

Every cell that only Direct (or AID) reached before is solved by SMO and by Direct on Clarabel
on the same small data; the objectives (each the model's, at each method's own solution) agree
to 1e-6 relative and both are certified optimal. A wrong diagonal in the dual, or a perturbed
solution, must not be certified.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import optframe as of
from optframe.capabilities import BoxQPDual
from optframe.certificate import certify
from optframe.data import Dataset
from optframe.drivers import SMO, Direct
from optframe.errors import IncompatibleDriver
from optframe.kernels import RBF, Linear, Polynomial
from optframe.losses import (
    Absolute,
    DoubleHinge,
    EpsilonInsensitive,
    Hinge,
    Huber,
    Pinball,
    PLQLoss,
    SquaredHinge,
)
from optframe.models import EmpiricalRisk, WeightedSVM
from optframe.result import Status

N = 240
SMOOTHED_HINGE = PLQLoss(rehu=[(-1.0, 1.0, 1.0)], kind="classification")
# free multipliers: split in two bounded variables, each with its own diagonal
EXPECTILE = PLQLoss(rehu=[(math.sqrt(0.6), 0.0, math.inf), (-math.sqrt(1.4), 0.0, math.inf)])
SQUARED_EPS = PLQLoss(rehu=[(1.0, -0.5, math.inf), (-1.0, -0.5, math.inf)])
LEAST_SQUARES = PLQLoss(rehu=[(1.0, 0.0, math.inf), (-1.0, 0.0, math.inf)])
GAP = 1e-8  # both solves to this gap, so that their objectives agree to 1e-6


def _data(classification: bool, n: int = N, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    t = X @ np.array([1.0, -0.5, 0.3, 0.0]) + 0.4 * rng.normal(size=n)
    return Dataset(X=X, y=np.where(t > 0, 1.0, -1.0) if classification else t)


CLASSES, TARGETS = _data(True), _data(False)

CELLS = [
    ("squared hinge", SquaredHinge(), True),
    ("smoothed hinge", SMOOTHED_HINGE, True),
    ("huber", Huber(1.0), False),
    ("hinge", Hinge(), True),
    ("double hinge", DoubleHinge(), True),
    ("absolute", Absolute(), False),
    ("pinball", Pinball(0.3), False),
    ("eps-insensitive", EpsilonInsensitive(0.5), False),
    ("expectile", EXPECTILE, False),
    ("squared eps-insensitive", SQUARED_EPS, False),
]
KERNELS = [("rbf", RBF(gamma=0.5)), ("linear", Linear())]


def _agree(model, smo: SMO | None = None, single: bool = True):
    result = of.solve(model, driver=smo or SMO(), gap_tol=GAP)
    ref = of.solve(model, driver=Direct(), backend="clarabel", gap_tol=GAP)
    assert ref.status is Status.OPTIMAL, ref.stats
    assert result.status is Status.OPTIMAL, (result.gap, result.stats)
    assert math.isfinite(result.gap)
    assert result.gap <= GAP
    assert result.stats["single_steps"] is single
    # each objective is the model's at that method's own solution
    assert model.objective(result.solution) == pytest.approx(result.objective, rel=1e-12)
    assert model.objective(ref.solution) == pytest.approx(ref.objective, rel=1e-12)
    assert result.objective == pytest.approx(ref.objective, rel=1e-6)
    return result, ref


@pytest.mark.parametrize(("kernel_name", "kernel"), KERNELS, ids=[k for k, _ in KERNELS])
@pytest.mark.parametrize(("name", "loss", "classification"), CELLS, ids=[c[0] for c in CELLS])
def test_smo_matches_direct_without_intercept(name, loss, classification, kernel_name, kernel):
    data = CLASSES if classification else TARGETS
    model = EmpiricalRisk(data, loss, C=1.0, fit_intercept=False, kernel=kernel)
    dual = model.structure(BoxQPDual)
    assert dual.rhs is None  # no equality row
    _agree(model)


@pytest.mark.parametrize(
    "loss", [EXPECTILE, SQUARED_EPS, LEAST_SQUARES], ids=["expectile", "squared-eps", "ls"]
)
def test_free_multipliers_are_split_with_and_without_intercept(loss):
    weights = np.random.default_rng(3).uniform(0.0, 2.0, size=N)
    weights[::13] = 0.0
    for intercept in (False, True):
        model = EmpiricalRisk(TARGETS, loss, C=1.0, fit_intercept=intercept, kernel=RBF(gamma=0.5),
                              sample_weight=weights)  # fmt: skip
        dual = model.structure(BoxQPDual)
        assert dual.n == 2 * N  # theta = theta+ - theta-
        assert (dual.rhs is None) is not intercept
        _agree(model, single=not intercept)  # with the intercept: pair steps on a'x = 0


def test_weighted_svm_without_intercept_with_weights_and_a_polynomial_kernel():
    weights = np.random.default_rng(1).uniform(0.2, 3.0, size=N)
    for kernel in (RBF(gamma=0.3), Polynomial(degree=2, gamma=0.5, coef0=1.0)):
        model = WeightedSVM(CLASSES, C=2.0, kernel=kernel, sample_weight=weights,
                            fit_intercept=False)  # fmt: skip
        assert model.structure(BoxQPDual).rhs is None
        _agree(model)


def test_sample_weights_with_quadratic_pieces_and_zero_weights():
    weights = np.random.default_rng(2).uniform(0.0, 2.0, size=N)
    weights[::17] = 0.0  # a zero weight: a one-point box, no diagonal
    for loss, data in ((SquaredHinge(), CLASSES), (Huber(0.5), TARGETS)):
        model = EmpiricalRisk(data, loss, C=0.7, fit_intercept=False, kernel=RBF(gamma=0.4),
                              sample_weight=weights)  # fmt: skip
        _agree(model)


def test_a_weight_is_a_duplicated_row():
    data = _data(True, n=120, seed=5)
    twice = Dataset(X=np.vstack([data.X, data.X[:1]]), y=np.append(data.y, data.y[0]))
    weights = np.ones(120)
    weights[0] = 2.0
    kernel = RBF(gamma=0.5)
    weighted = EmpiricalRisk(data, SquaredHinge(), fit_intercept=False, kernel=kernel,
                             sample_weight=weights)  # fmt: skip
    duplicated = EmpiricalRisk(twice, SquaredHinge(), fit_intercept=False, kernel=kernel)
    a = of.solve(weighted, driver=SMO(), gap_tol=GAP)
    b = of.solve(duplicated, driver=SMO(), gap_tol=GAP)
    assert a.objective == pytest.approx(b.objective, rel=1e-7)


def test_options_do_not_change_the_optimum():
    model = EmpiricalRisk(CLASSES, SquaredHinge(), C=5.0, fit_intercept=False,
                          kernel=RBF(gamma=0.5))  # fmt: skip
    base = of.solve(model, driver=SMO(), gap_tol=GAP)
    for smo in (
        SMO(working_set="mvp"),
        SMO(shrinking=False),
        SMO(cache_bytes=2 * 8 * N),  # a two-row cache
    ):
        other = of.solve(model, driver=smo, gap_tol=GAP)
        assert other.status is Status.OPTIMAL, smo
        assert other.objective == pytest.approx(base.objective, rel=1e-7)


def test_the_rule_is_met_on_the_fresh_gradient():
    model = EmpiricalRisk(TARGETS, Huber(1.0), fit_intercept=False, kernel=RBF(gamma=0.5))
    result = of.solve(model, driver=SMO(tol=1e-4))
    assert result.stats["violation"] <= 1e-4
    assert result.stats["equality_residual"] == 0.0
    assert result.stats["steps"] > 0


def test_the_papers_rule_is_refused_without_an_equality_row():
    model = WeightedSVM(CLASSES, kernel=RBF(gamma=0.5), fit_intercept=False)
    with pytest.raises(IncompatibleDriver, match="stopping='complete'"):
        of.solve(model, driver=SMO(stopping="paper"))


def test_a_perturbed_solution_is_not_certified():
    model = EmpiricalRisk(CLASSES, SquaredHinge(), fit_intercept=False, kernel=RBF(gamma=0.5))
    result = of.solve(model, driver=SMO(), gap_tol=GAP)
    assert result.status is Status.OPTIMAL
    alpha = np.array(result.solution["alpha"]) * 1.05
    moved = dataclasses.replace(result, solution={**result.solution, "alpha": alpha})
    judged = certify(model, moved, GAP)
    assert judged.status is not Status.OPTIMAL
    assert judged.gap > 1e-4


@pytest.mark.parametrize("loss", [SquaredHinge(), Hinge()], ids=["squared hinge", "hinge"])
def test_a_lying_structure_is_not_certified(monkeypatch, loss):
    # the dual with a wrong diagonal (quadratic pieces) or a wrong linear term: SMO solves the
    # wrong problem to its own rule, and the model's certificate must not call it optimal
    model = EmpiricalRisk(CLASSES, loss, C=1.0, fit_intercept=False, kernel=RBF(gamma=0.5))
    true = model.structure(BoxQPDual)
    if true.diagonal is not None:
        lie = dataclasses.replace(true, diagonal=3.0 * true.diagonal)
    else:
        lie = dataclasses.replace(true, linear=true.linear - 0.5)

    def structure(kind):
        return lie if kind is BoxQPDual else type(model).structure(model, kind)

    object.__setattr__(model, "structure", structure)
    result = of.solve(model, driver=SMO(), gap_tol=1e-6)
    assert result.status is not Status.OPTIMAL
    assert result.gap > 1e-4
