"""Every registered model, every applicable (driver, back-end, layer, form), against Direct.

The list comes from the registry: a model class registered tomorrow is covered by its
``examples()``, and one without examples fails here. A package's own model is covered by the
same function (``assert_conforms``), shown by a plugin registered through an entry point.
"""

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from typing import ClassVar

import pytest

import optframe as of
from optframe import registry
from optframe.compare import Pair
from optframe.conformance import assert_conforms, check_conformance
from optframe.drivers.base import Driver
from optframe.models import LADRegression
from optframe.result import Result, Status

EXAMPLES = [
    (name, index, model)
    for name, cls in sorted(registry.models().items())
    for index, model in enumerate(cls.examples())
]


def test_every_registered_model_has_examples():
    missing = [name for name, cls in registry.models().items() if not cls.examples()]
    assert not missing, f"registered models without examples(): {missing}"


@pytest.mark.parametrize(
    "model", [m for _, _, m in EXAMPLES], ids=[f"{n}[{i}]" for n, i, _ in EXAMPLES]
)
def test_every_pair_conforms(model):
    checks = assert_conforms(model)
    assert checks[0].label == "reference"
    assert checks[0].status == "optimal"
    assert len(checks) > 1


def test_the_drivers_each_model_gets():
    """Which drivers reach each example (beyond Direct): the table of docs/concepts.md."""
    reached = {}
    for name, index, model in EXAMPLES:
        _, checks = check_conformance(model, pairs=_driver_pairs(model))
        reached[f"{name}[{index}]"] = {c.label.split()[0] for c in checks[1:] if c.conforms}
    assert reached["EmpiricalRisk[0]"] == {"aid", "smo"}  # hinge, L2, intercept
    assert reached["EmpiricalRisk[1]"] == {"aid"}  # hinge, L1
    # squared hinge, L2, intercept: quadratic pieces (SMO with its diagonal, Newton, CD)
    assert reached["EmpiricalRisk[2]"] == {"smo", "newton", "cd"}
    assert reached["EmpiricalRisk[3]"] == {"aid", "smo"}  # double hinge: a kink in the box QP
    # pinball, no intercept: SMO by single-variable steps (no equality row)
    assert reached["EmpiricalRisk[5]"] == {"aid", "dcd", "smo"}
    assert reached["EmpiricalRisk[7]"] == {"aid", "smo"}  # epsilon-insensitive
    assert reached["EmpiricalRisk[9]"] == {"aid", "smo"}  # the kernel SVR (AID in feature space)
    assert reached["WeightedSVM[1]"] == {"aid", "dcd", "smo"}
    assert reached["L2SVM[0]"] >= {"mfw", "pfw", "cvm"}


def _driver_pairs(model):
    from optframe.compare import applicable_pairs

    return [pair for pair in applicable_pairs(model) if pair.driver.name != "direct"]


# ------------------------------------------------------------------ the checks can fail
@dataclass(frozen=True, eq=False)
class BoastfulLAD(LADRegression):
    """A LAD whose bound is whatever solution it is shown: every answer looks optimal."""

    def dual_bound(self, solution):
        return self.objective(solution)


@dataclass(frozen=True)
class Perturbed(Driver):
    """A driver that solves with Direct, moves the answer away and calls it optimal."""

    name: ClassVar[str] = "perturbed"
    shift: float = 0.5

    def run(self, model, context):
        result = of.drivers.Direct().run(model, context)
        solution = dict(result.solution)
        solution["beta"] = solution["beta"] + self.shift
        return Result(
            status=Status.OPTIMAL,
            objective=model.objective(solution),
            bound=model.objective(solution),
            solution=solution,
            driver=self.name,
        )


def test_a_wrong_answer_called_optimal_by_a_lying_bound_is_caught():
    model = BoastfulLAD(LADRegression.examples()[0].data)
    with pytest.raises(AssertionError, match="optimal, but"):
        assert_conforms(model, pairs=[Pair(Perturbed(), "auto")])
    _, checks = check_conformance(model, pairs=[Pair(Perturbed(shift=0.1), "auto")])
    assert any("above the reference objective" in p for p in checks[1].problems)


def test_a_wrong_answer_is_caught_by_its_objective():
    model = LADRegression.examples()[0]
    _, checks = check_conformance(model, pairs=[Pair(Perturbed(), "auto")])
    assert checks[1].status == "converged"  # the certificate did not believe the driver
    assert "from the reference" in checks[1].problems[0]
    _, checks = check_conformance(model, pairs=[Pair(Perturbed(shift=1e-12), "auto")])
    assert checks[1].conforms


@dataclass(frozen=True, eq=False)
class Overclaiming(LADRegression):
    """A LAD whose bound exceeds the objective of any solution it is shown."""

    def dual_bound(self, solution):
        return self.objective(solution) * (1.0 + 1e-3)


def test_a_bound_above_the_optimum_is_caught():
    model = Overclaiming(LADRegression.examples()[0].data)
    _, checks = check_conformance(model, pairs=[Pair(Perturbed(shift=0.1), "auto")])
    # the bound is above the solution's own objective: certify withholds it and says why
    assert any("above its objective" in p for p in checks[1].problems)
    assert checks[1].status != "optimal"


# ------------------------------------------------------------------ a package's own model
PLUGIN = '''
from dataclasses import dataclass
import numpy as np
from optframe.data import make_lad_set_a
from optframe.losses import Pinball
from optframe.models import EmpiricalRisk
from optframe.registry import register_model


@register_model
@dataclass(frozen=True, eq=False)
class Median(EmpiricalRisk):
    """A package's model: the pinball loss at tau = 0.5 without penalty."""

    @classmethod
    def examples(cls):
        return (cls(make_lad_set_a(30, 2, random_state=1), Pinball(0.5), penalty=None),)
'''

RUN = """
from optframe import registry
from optframe.conformance import assert_conforms
models = registry.models()
assert "Median" in models, sorted(models)
for model in models["Median"].examples():
    checks = assert_conforms(model)
    print(sorted({c.label.split()[0] for c in checks}))
"""


def test_a_plugin_model_is_covered_by_the_same_function(tmp_path):
    package = tmp_path / "median_plugin"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    info = tmp_path / "median_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: median-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[optframe.plugins]\nmedian = median_plugin\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", RUN], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "'aid'" in done.stdout
    assert "'reference'" in done.stdout
    assert done.stderr.strip() == ""
