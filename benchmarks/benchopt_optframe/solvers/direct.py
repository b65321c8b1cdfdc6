"""optframe's Direct driver on one back-end: the whole model handed to one solver."""

from benchopt import BaseSolver

import optframe as of
from optframe.compare import applicable_pairs


class Solver(BaseSolver):
    name = "optframe-direct"
    requirements = ["optframe"]
    sampling_strategy = "run_once"
    parameters = {"backend": ["matrix:highs", "matrix:clarabel", "cvxpy:clarabel", "pyomo:highs"]}

    def skip(self, model):
        if not any(
            p.driver.name == "direct" and p.backend == self.backend for p in applicable_pairs(model)
        ):
            return True, f"{self.backend} does not take {model.name}'s problem class"
        return False, None

    def set_objective(self, model):
        self.model = model

    def run(self, _):
        self.result = of.solve(self.model, driver="direct", backend=self.backend)

    def get_result(self):
        r = self.result
        solution = dict(r.solution) if r.has_solution else None
        return {"solution": solution, "bound": r.bound, "status": r.status.value}
