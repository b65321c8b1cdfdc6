"""AID on a model that writes no dual bound: its certificate is the best safe bound of an
aggregated problem (Direct's, from the inner solver's duals), valid for a convex sample loss."""

from dataclasses import dataclass, replace
from typing import ClassVar

import pytest

import optframe as of
from optframe.data import Dataset, make_regression_lad
from optframe.drivers import AggregateDisaggregate, Direct
from optframe.model import Model
from optframe.models import LADRegression


@dataclass(frozen=True, eq=False)
class LADWithoutDual(LADRegression):
    """LAD regression as a user might write it: no ``dual_bound`` of its own."""

    dual_bound = Model.dual_bound
    dual_certificate = Model.dual_certificate

    def with_data(self, data: Dataset) -> "LADWithoutDual":
        return LADWithoutDual(data, fit_intercept=self.fit_intercept)


@dataclass(frozen=True, eq=False)
class LADNotDeclaredConvex(LADWithoutDual):
    """The same, with its sample loss not declared convex: aggregated optima bound nothing."""

    convex_sample_loss: ClassVar[bool] = False

    def with_data(self, data: Dataset) -> "LADNotDeclaredConvex":
        return LADNotDeclaredConvex(data, fit_intercept=self.fit_intercept)


def _aid(**options):
    # the primal LP: a safe bound from the solver's duals bounds its optimum (the dual form's
    # would bound the dual's)
    return AggregateDisaggregate(inner=Direct(form="primal"), **options)


@pytest.fixture(scope="module")
def data():
    return make_regression_lad(n=600, m=4, random_state=3)


@pytest.fixture(scope="module")
def optimum(data):
    reference = of.solve(LADRegression(data), Direct(), backend="highs")
    assert reference.status is of.Status.OPTIMAL
    return reference.objective


@pytest.mark.parametrize("backend", ["highs", "clarabel"])
def test_aid_proves_a_users_model_through_the_aggregated_safe_bounds(data, optimum, backend):
    result = of.solve(LADWithoutDual(data), _aid(), backend=backend)
    assert result.stats["safe_bound_how"].startswith("the best safe bound of an aggregated")
    assert result.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(optimum, rel=1e-6)
    assert result.bound <= optimum * (1 + 1e-12)


def test_a_stopped_run_keeps_a_valid_bound_and_no_claim(data, optimum):
    result = of.solve(LADWithoutDual(data), _aid(), max_iter=2)
    assert result.status is not of.Status.OPTIMAL
    assert result.bound is not None
    assert result.bound <= optimum * (1 + 1e-12)
    assert result.gap > 1e-6


def test_no_bound_unless_the_sample_loss_is_declared_convex(data):
    result = of.solve(LADNotDeclaredConvex(data), _aid())
    assert "safe_bound" not in result.stats
    assert result.bound is None
    assert result.status is of.Status.CONVERGED


def test_an_inner_solve_without_a_safe_bound_gives_none(data):
    # LADRegression writes its own dual: Direct computes no safe bound for the aggregated
    # problems, and the certificate is the model's dual bound as before.
    result = of.solve(LADRegression(data), _aid())
    assert "safe_bound" not in result.stats
    assert result.status is of.Status.OPTIMAL


def test_a_lying_inner_back_end_cannot_make_aid_optimal(monkeypatch, data, optimum):
    from optframe.drivers import direct

    real = direct.resolve_backend

    class Lying:
        """The solver moved off the optimum, duals and all, still saying optimal."""

        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def solve(self, formulation, options):
            raw = self.inner.solve(formulation, options)
            primal = {k: v + 0.05 for k, v in raw.values.primal.items()}
            dual = {k: v * 1.05 for k, v in raw.values.dual.items()}
            return replace(raw, values=replace(raw.values, primal=primal, dual=dual))

    monkeypatch.setattr(direct, "resolve_backend", lambda *a, **k: Lying(real(*a, **k)))
    result = of.solve(LADWithoutDual(data), _aid(), backend="highs")
    assert result.bound is None or result.bound <= optimum * (1 + 1e-12)
    assert result.status is not of.Status.OPTIMAL
