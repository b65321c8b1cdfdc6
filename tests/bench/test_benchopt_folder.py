"""benchmarks/benchopt_optframe: its objective, data sets and solvers, run without benchopt.

benchopt is not a dependency; a stand-in module gives the three base classes the plugins
derive from, so the plugins' use of optframe (models, drivers, results) is checked here. The
benchmark itself runs with ``benchopt run`` (see its README).
"""

import importlib.util
import math
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import optframe as of

FOLDER = Path(__file__).resolve().parents[2] / "benchmarks" / "benchopt_optframe"
PLUGINS = ("objective.py", "datasets/simulated.py", "datasets/named.py")
PLUGINS += ("solvers/direct.py", "solvers/drivers.py")


class _Base:
    def __init__(self, **parameters):
        first = {k: v[0] for k, v in getattr(self, "parameters", {}).items()}
        for name, value in (first | parameters).items():
            setattr(self, name, value)

    def get_seed(self, **_):
        return 0


@pytest.fixture(scope="module")
def plugins():
    """The plugin modules, imported against a stand-in ``benchopt``."""
    stand_in = types.ModuleType("benchopt")
    for name in ("BaseObjective", "BaseDataset", "BaseSolver"):
        setattr(stand_in, name, type(name, (_Base,), {}))
    saved = sys.modules.get("benchopt")
    sys.modules["benchopt"] = stand_in
    modules = {}
    try:
        for path in PLUGINS:
            spec = importlib.util.spec_from_file_location(f"bo_{Path(path).stem}", FOLDER / path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            modules[Path(path).stem] = module
    finally:
        if saved is None:
            sys.modules.pop("benchopt", None)
        else:
            sys.modules["benchopt"] = saved
    return modules


def _run(plugins, solver, task="regression", model="LADRegression"):
    data = plugins["simulated"].Dataset(task=task, n=300, m=5).get_data()
    objective = plugins["objective"].Objective(model=model)
    skip, reason = objective.skip(**data)
    if skip:
        return reason
    objective.set_data(**data)
    problem = objective.get_objective()
    skip, reason = solver.skip(**problem)
    if skip:
        return reason
    solver.set_objective(**problem)
    solver.run(1)
    return objective, objective.evaluate_result(**solver.get_result())


def test_direct_on_highs_scores_the_model_with_its_certificate(plugins):
    objective, scores = _run(plugins, plugins["direct"].Solver(backend="matrix:highs"))
    reference = of.solve(objective.instance)
    assert scores["value"] == pytest.approx(reference.objective, rel=1e-9)
    assert scores["dual_bound"] <= scores["value"] * (1 + 1e-9)
    assert 0 <= scores["gap"] <= 1e-6
    assert scores["optimal"] == 1.0
    assert set(scores) == {"value", "dual_bound", "gap", "optimal"}


def test_a_driver_runs_and_an_inapplicable_one_is_skipped(plugins):
    drivers = plugins["drivers"]
    _, scores = _run(plugins, drivers.Solver(driver="smo"), "classification", "WeightedSVM")
    assert scores["gap"] <= 1e-3
    assert _run(plugins, drivers.Solver(driver="smo")) == "smo does not accept LADRegression"


def test_a_model_that_does_not_fit_the_data_is_skipped(plugins):
    solver = plugins["direct"].Solver(backend="matrix:clarabel")
    reason = _run(plugins, solver, "regression", "WeightedSVM")
    assert reason.startswith("WeightedSVM refuses")
    reason = _run(plugins, solver, "classification", "LADRegression")
    assert "a classification data set" in reason


def test_the_named_data_set_takes_its_first_rows(plugins):
    data = plugins["named"].Dataset(data="cpusmall", rows=50).get_data()["data"]
    assert data.n_samples == 50
    assert np.all(np.isfinite(data.y))


def test_a_run_without_a_solution_scores_inf(plugins):
    objective = plugins["objective"].Objective()
    objective.set_data(**plugins["simulated"].Dataset(n=50, m=3).get_data())
    scores = objective.evaluate_result(**objective.get_one_result())
    assert scores["value"] == math.inf
    assert math.isnan(scores["gap"])
    assert scores["optimal"] == 0.0
