"""Inside ``optframe.solve`` a model's certificate stops at a candidate that already proves it.

``optframe.certificate.enough_gap``: while ``certify`` evaluates the model's certificate, the
search over dual candidates may stop at a tenth of the proving gap instead of 1e-12. The bound
is still the value of a dual-feasible point (weak duality), so only its tightness can change;
outside a solve the model searches as before.
"""

from __future__ import annotations

import numpy as np

import optframe as of
import optframe.models.empirical_risk as empirical_risk
from optframe import certificate
from optframe.data import Dataset
from optframe.drivers import Direct
from optframe.losses import Hinge
from optframe.models import EmpiricalRisk
from optframe.penalties import L2


def _model() -> EmpiricalRisk:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 5))
    y = np.where(X @ rng.normal(size=5) + 0.3 * rng.normal(size=400) > 0, 1.0, -1.0)
    return EmpiricalRisk(Dataset(X=X, y=y), Hinge(), penalty=L2(), C=1.0, fit_intercept=True)


def _counting(monkeypatch) -> list[float]:
    calls: list[float] = []
    honest = empirical_risk.subgradient_theta

    def counted(*args, **kwargs):
        calls.append(args[3])
        return honest(*args, **kwargs)

    monkeypatch.setattr(empirical_risk, "subgradient_theta", counted)
    return calls


def test_enough_gap_is_the_model_s_own_outside_a_solve():
    assert certificate.enough_gap(1e-12) == 1e-12
    with certificate._enough_within(1e-7):
        assert certificate.enough_gap(1e-12) == 1e-7
        assert certificate.enough_gap(1e-3) == 1e-3  # never tighter than the model's own
    assert certificate.enough_gap(1e-12) == 1e-12


def test_a_solve_stops_at_the_first_candidate_that_proves_it(monkeypatch):
    model = _model()
    calls = _counting(monkeypatch)
    result = of.solve(model, driver=Direct(form="dual"), backend="clarabel")
    assert result.status is of.Status.OPTIMAL
    assert calls == []  # the solver's own multipliers closed the gap: nothing else was tried
    gap = (result.objective - result.bound) / result.scale
    assert 0.0 <= gap <= certificate.ENOUGH_FRACTION * result.stats["gap_tol"]

    # outside a solve, the same solution: the model looks on toward 1e-12
    own = model.dual_certificate(result.solution)
    assert calls, "the subgradient candidate is tried outside a solve"
    assert own.value >= result.bound - 1e-9 * result.scale


def test_a_candidate_short_of_enough_does_not_stop_the_search(monkeypatch):
    model = _model()
    reference = of.solve(model, driver=Direct(form="dual"), backend="clarabel")
    calls = _counting(monkeypatch)
    solution = dict(reference.solution)
    solution["alpha"] = 0.97 * np.asarray(solution["alpha"])  # a poorer multiplier
    with certificate._enough_within(1e-7):
        found = model.dual_certificate(solution)
    assert calls, "a first candidate short of the target is backed up by the subgradient"
    assert found.value <= reference.objective + 1e-9 * reference.scale
