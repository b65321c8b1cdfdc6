"""Declare your own model: quantile regression, solved by Direct and by AID with no driver change.

The model below (the code of docs/tutorial-own-model.md) declares the quantile-regression LP once,
as canonical sparse matrices, plus the sample structure that AggregateDisaggregate asks for. It is
then solved directly on two back-ends (HiGHS and Clarabel) and by AID, and checked against
scikit-learn's QuantileRegressor (alpha=0, HiGHS): all four objectives must agree.

    python examples/own_model_quantile.py            # cpusmall, 8,192 x 12, tau = 0.9
    python examples/own_model_quantile.py --smoke    # the first 1,000 rows
"""

import argparse
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

import optframe as of
from optframe.data import Dataset, load_dataset
from optframe.drivers import AggregateDisaggregate
from optframe.errors import DataError
from optframe.registry import register_model


# --8<-- [start:model]
@register_model
@dataclass(frozen=True, eq=False)
class QuantileRegression(of.Model):
    r"""Quantile regression: min over (beta, b) of sum_i w_i max(tau r_i, (tau - 1) r_i)."""

    problem_class: ClassVar = of.ProblemClass.LP
    layers: ClassVar = ("matrix",)
    convex_sample_loss: ClassVar = True  # AID: aggregated optima are lower bounds
    sample_duals: ClassVar = ()  # AID: no per-sample duals to lift
    data: Dataset
    tau: float = 0.5

    def __post_init__(self):
        if not 0 < self.tau < 1:
            raise of.ModelError(f"QuantileRegression: tau must be in (0, 1); got {self.tau}")

    def _build_matrix(self, form):  # x = [beta, b, u, v], rows X beta + b + u - v = y
        X, y, w, tau = sp.csc_array(self.data.X), self.data.y, self.weights, self.tau
        (n, m), eye = X.shape, sp.eye_array(X.shape[0], format="csc")
        problem = of.MatrixProblem(
            c=np.concatenate([np.zeros(m + 1), tau * w, (1 - tau) * w]),
            A=sp.hstack([X, sp.csc_array(np.ones((n, 1))), eye, -eye], format="csc"),
            row_lower=y,
            row_upper=y,
            lower=np.r_[np.full(m + 1, -np.inf), np.zeros(2 * n)],
            upper=np.full(m + 1 + 2 * n, np.inf),
        )
        variables = {"beta": slice(0, m), "intercept": slice(m, m + 1)}
        return of.Formulation("matrix", problem, of.ProblemClass.LP, variables)

    def objective(self, solution):
        r = self.loss_argument(solution)
        return float(self.weights @ np.maximum(self.tau * r, (self.tau - 1) * r))

    def decision_function(self, solution, X):
        return X @ solution["beta"] + solution["intercept"][0]

    # What AggregateDisaggregate asks for (optframe.capabilities.SampleSeparableModel)
    @property
    def weights(self):
        return self.data.weights

    def with_data(self, data):
        return QuantileRegression(data, self.tau)

    def sample_groups(self):  # one group: any samples may share a centroid
        return np.zeros(self.data.n_samples, dtype=np.int64)

    def loss_argument(self, solution):  # the residual r_i
        return self.data.y - self.decision_function(solution, self.data.X)

    def loss_pieces(self, solution):  # which linear piece of rho_tau each sample is on
        return (self.loss_argument(solution) > 0).astype(np.int64)

    def sample_embedding(self, solution):  # where the initial clusters are formed
        return np.column_stack([self.loss_argument(solution), self.data.y])

    def complete_solution(self, solution):
        return {"beta": solution["beta"], "intercept": solution["intercept"]}


# --8<-- [end:model]


def main(smoke: bool, tau: float) -> None:
    from sklearn.linear_model import QuantileRegressor

    data = load_dataset("cpusmall")
    if smoke:
        data = data.subset(range(1000))
    model = QuantileRegression(data, tau=tau)
    runs = {
        "Direct, HiGHS": of.solve(model, backend="highs"),
        "Direct, Clarabel": of.solve(model, backend="clarabel"),
        "AggregateDisaggregate": of.solve(model, AggregateDisaggregate()),
    }
    sk = QuantileRegressor(quantile=tau, alpha=0.0, solver="highs").fit(data.X, data.y)
    sk_objective = model.objective({"beta": sk.coef_, "intercept": [sk.intercept_]})
    print(
        f"Quantile regression (tau={tau}) on {data.name}: n={data.n_samples}, m={data.n_features}"
    )
    for label, result in runs.items():
        print(
            f"  {label:22s} {result.status.value:9s} objective {result.objective:.10g}  "
            f"gap {result.gap:.1e}  {result.iterations:3d} iterations  {result.timings.total:.2f} s"
        )
    print(f"  {'scikit-learn (HiGHS)':22s} {'':9s} objective {sk_objective:.10g}")
    aid = runs["AggregateDisaggregate"]
    print("  AID trace: iteration, clusters, E_t (original objective), bound F_t, gap")
    for record in aid.history:
        print(
            f"    {record.iteration:3d} {record.extras['clusters']:6d} "
            f"{record.extras['objective_t']:14.6f} {record.bound:14.6f} {record.extras['gap']:9.2e}"
        )
    objectives = [r.objective for r in runs.values()] + [sk_objective]
    spread = (max(objectives) - min(objectives)) / abs(min(objectives))
    print(f"  relative difference of the objectives: {spread:.1e}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a small subset, for the tests")
    parser.add_argument("--tau", type=float, default=0.9, help="the quantile level")
    arguments = parser.parse_args()
    try:
        main(arguments.smoke, arguments.tau)
    except DataError as error:  # no data here: one line with the fix, not a traceback
        raise SystemExit(error.summary) from None
