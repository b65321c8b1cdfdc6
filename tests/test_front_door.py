"""solve(): how requests that cannot be carried out fail, and how solver limits come back."""

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
import scipy.sparse as sp

import optframe as of
from optframe.capabilities import Structure
from optframe.data import Dataset
from optframe.drivers import Direct, Driver
from optframe.model import Formulation, MatrixProblem, Model, ProblemClass
from optframe.models import LADRegression


@dataclass(frozen=True)
class TinyMIQP(Model):
    """min (x0 - 0.4)^2 + (x1 - 1.6)^2 over integers in [0, 3]: a user's own model, matrix only."""

    data: Dataset
    problem_class: ClassVar[ProblemClass] = ProblemClass.MIQP
    layers: ClassVar[tuple[str, ...]] = ("matrix",)

    def _build_matrix(self, form):
        problem = MatrixProblem(
            c=np.array([-0.8, -3.2]),
            A=sp.csc_array((0, 2)),
            row_lower=np.zeros(0),
            row_upper=np.zeros(0),
            lower=np.zeros(2),
            upper=np.full(2, 3.0),
            P=sp.csc_array(2.0 * np.eye(2)),
            integrality=np.array([True, True]),
            offset=0.4**2 + 1.6**2,
        )
        return Formulation("matrix", problem, ProblemClass.MIQP, variables={"x": slice(0, 2)})

    def objective(self, solution):
        x = solution["x"]
        return float((x[0] - 0.4) ** 2 + (x[1] - 1.6) ** 2)


class LossPieces(Structure):
    """A user's structure that no model offers."""


@dataclass(frozen=True)
class NeedsAggregation(Driver):
    name: ClassVar[str] = "needs-aggregation"
    needs: ClassVar[tuple[type[Structure], ...]] = (LossPieces,)

    def run(self, model, context):
        raise AssertionError("never reached")


@pytest.fixture
def lad():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    return LADRegression(Dataset(X=X, y=X @ np.arange(5.0) + rng.laplace(size=200)))


def test_unknown_backend_names_the_known_ones(lad):
    with pytest.raises(of.UnknownBackend, match="did you mean 'highs'"):
        of.solve(lad, backend="hihgs")


def test_unknown_layer(lad):
    with pytest.raises(of.UnknownBackend, match="has no 'julia' layer"):
        of.solve(lad, backend="julia:highs")


def test_unknown_driver(lad):
    with pytest.raises(of.UnknownDriver, match="known drivers"):
        of.solve(lad, driver="simulated-annealing")


def test_backend_that_cannot_solve_the_problem_class():
    model = TinyMIQP(Dataset(X=np.zeros((1, 1))))
    with pytest.raises(of.IncompatibleBackend, match="MIQP"):
        of.solve(model, backend="clarabel")


def test_backend_through_a_layer_the_model_does_not_offer():
    model = TinyMIQP(Dataset(X=np.zeros((1, 1))))
    with pytest.raises(of.IncompatibleBackend, match="only declared in"):
        of.solve(model, backend="pyomo:scip")


def test_a_users_own_model_solves_on_the_auto_backend():
    result = of.solve(TinyMIQP(Dataset(X=np.zeros((1, 1)))))
    assert result.status is of.Status.OPTIMAL
    np.testing.assert_allclose(result.solution["x"], [0.0, 2.0], atol=1e-9)
    assert result.objective == pytest.approx(0.16 + 0.16)
    assert result.backend.endswith(":scip")


def test_driver_without_the_structure_it_needs(lad):
    with pytest.raises(of.IncompatibleDriver, match="LossPieces"):
        of.solve(lad, driver=NeedsAggregation())


def test_solve_takes_a_model():
    with pytest.raises(of.ModelError, match="optframe model"):
        of.solve("LADRegression")


def test_unknown_form(lad):
    with pytest.raises(of.ModelError, match="no 'symmetric' form"):
        of.solve(lad, driver=Direct(form="symmetric"))


def test_iteration_limit_is_a_status_with_no_false_claim(lad):
    result = of.solve(lad, backend="matrix:highs", max_iter=1)
    assert result.status is of.Status.ITERATION_LIMIT


def test_time_limit_is_a_status():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 40))
    model = LADRegression(Dataset(X=X, y=rng.laplace(size=3000)))
    result = of.solve(model, backend="matrix:highs", time_limit=1e-3)
    assert result.status is of.Status.TIME_LIMIT


def test_options_are_not_mutated(lad):
    options = {"presolve": "off"}
    of.solve(lad, backend="matrix:highs", solver_options=options)
    assert options == {"presolve": "off"}


def test_solve_takes_its_thread_count_from_optframe_threads(monkeypatch):
    from optframe.drivers.base import Driver

    seen = {}

    class Spy(Driver):
        name = "spy"

        def run(self, model, context):
            seen["threads"] = context.options.threads
            return of.drivers.Direct().run(model, context)

    model = of.models.LADRegression.examples()[0]
    monkeypatch.setenv("OPTFRAME_THREADS", "1")
    of.solve(model, driver=Spy())
    assert seen["threads"] == 1
    of.solve(model, driver=Spy(), threads=2)  # an explicit value wins
    assert seen["threads"] == 2
