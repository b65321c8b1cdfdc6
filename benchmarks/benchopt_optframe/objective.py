"""The benchopt objective: an optframe model, scored by the model's own objective and certificate.

Each run reports, besides ``objective_value`` (the model's objective at the solver's solution),
``objective_dual_bound`` (the certificate's proven lower bound, NaN without one),
``objective_gap`` (the relative gap) and ``objective_optimal`` (1 when optframe's status is
``optimal``, else 0): the columns ``optframe bench export`` writes for its own records.
"""

import math

from benchopt import BaseObjective

import optframe  # noqa: F401  (registers the models)
from optframe import registry
from optframe.cli.names import model_parameters
from optframe.errors import OptframeError


class Objective(BaseObjective):
    name = "optframe model"
    requirements = ["optframe"]
    min_benchopt_version = "1.6"
    sampling_strategy = "run_once"  # a driver runs to its own stopping rule; one point per run

    # the registered models (optframe.registry.models()) and their loss weight C
    parameters = {"model": ["LADRegression", "WeightedSVM"], "C": [1.0]}

    def skip(self, data):
        try:
            self._build(data)
        except OptframeError as exc:
            return True, f"{self.model} refuses {data.name}: {exc.summary}"
        return False, None

    def _build(self, data):
        cls = registry.models()[self.model]
        params = {"C": self.C} if "C" in model_parameters(cls) else {}
        if self.model == "LADRegression" and set(data.y.tolist()) <= {-1.0, 1.0}:
            raise OptframeError("labels in {-1, +1}: a classification data set")
        return cls(data, **params)

    def set_data(self, data):
        self.data = data
        self.instance = self._build(data)

    def get_objective(self):
        return {"model": self.instance}

    def evaluate_result(self, solution, bound, status):
        value = float(self.instance.objective(solution)) if solution else math.inf
        bound = math.nan if bound is None else float(bound)
        gap = (value - bound) / max(1.0, abs(value)) if math.isfinite(bound) else math.nan
        return {
            "value": value,
            "dual_bound": bound,
            "gap": gap,
            "optimal": float(status == "optimal"),
        }

    def get_one_result(self):
        return {"solution": None, "bound": None, "status": "error"}
