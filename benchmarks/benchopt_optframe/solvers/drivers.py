"""optframe's decomposition drivers, each with its default back-end for its sub-problems."""

from benchopt import BaseSolver

import optframe as of
from optframe import registry


class Solver(BaseSolver):
    name = "optframe-driver"
    requirements = ["optframe"]
    sampling_strategy = "run_once"
    parameters = {"driver": ["aid", "smo", "dcd", "admm_then_ipm"]}

    def skip(self, model):
        driver = registry.drivers()[self.driver]()
        if not driver.accepts(model):
            return True, f"{self.driver} does not accept {model.name}"
        return False, None

    def set_objective(self, model):
        self.model = model

    def run(self, _):
        self.result = of.solve(self.model, driver=self.driver)

    def get_result(self):
        r = self.result
        solution = dict(r.solution) if r.has_solution else None
        return {"solution": solution, "bound": r.bound, "status": r.status.value}
