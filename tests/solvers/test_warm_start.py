"""Starting HiGHS from a basis: the final basis restarts the same LP with no simplex iteration."""

import optframe as of
from optframe.backend import SolveOptions
from optframe.basis import Basis
from optframe.data import make_lad_set_a
from optframe.models import LADRegression
from optframe.registry import resolve_backend


def _lad(form):
    model = LADRegression(make_lad_set_a(400, 5, random_state=1))
    backend = resolve_backend("matrix:highs", model, form)
    return model.build("matrix", form), backend


def test_highs_returns_a_basis_that_restarts_without_iterations():
    for form in ("dual", "primal"):
        formulation, backend = _lad(form)
        cold = backend.solve(formulation, SolveOptions(threads=1))
        assert cold.status is of.Status.OPTIMAL
        assert cold.iterations > 0
        assert set(cold.basis.variables) == set(formulation.variables)
        warm = backend.solve(formulation, SolveOptions(threads=1, start=cold.basis))
        assert warm.status is of.Status.OPTIMAL
        assert warm.iterations == 0
        assert abs(warm.objective - cold.objective) <= 1e-9 * abs(cold.objective)


def test_a_basis_that_does_not_fit_is_dropped():
    formulation, backend = _lad("dual")
    cold = backend.solve(formulation, SolveOptions(threads=1))
    wrong = Basis(
        {name: block[:-1] for name, block in cold.basis.variables.items()},
        dict(cold.basis.constraints),
    )
    result = backend.solve(formulation, SolveOptions(threads=1, start=wrong))
    assert result.status is of.Status.OPTIMAL
    assert abs(result.objective - cold.objective) <= 1e-9 * abs(cold.objective)
