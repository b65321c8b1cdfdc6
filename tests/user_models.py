"""Two users' models without a dual of their own (matrix layer only), for the safe-bound tests.

``UserLeastAbsolute``: LAD as an LP in :math:`(\beta, t)`; ``UserRidge``: ridge regression as a
QP with free residual variables. Neither writes ``dual_bound``: their certificate is the safe
bound optframe builds from a solver's duals.
"""

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from optframe.data import Dataset
from optframe.model import Formulation, MatrixProblem, Model, ProblemClass


@dataclass(frozen=True, eq=False)
class UserLeastAbsolute(Model):
    """min sum_i |y_i - x_i' beta| as an LP in (beta, t): a user's model, matrix layer only."""

    data: Dataset
    problem_class: ClassVar[ProblemClass] = ProblemClass.LP
    layers: ClassVar[tuple[str, ...]] = ("matrix",)

    def _build_matrix(self, form):
        X, y = np.asarray(self.data.X), np.asarray(self.data.y)
        n, m = X.shape
        eye = sp.eye_array(n, format="csc")
        A = sp.vstack(
            [sp.hstack([sp.csc_array(X), eye]), sp.hstack([sp.csc_array(-X), eye])], format="csc"
        )
        problem = MatrixProblem(
            c=np.concatenate([np.zeros(m), np.ones(n)]),
            A=A,
            row_lower=np.concatenate([y, -y]),
            row_upper=np.full(2 * n, np.inf),
            lower=np.concatenate([np.full(m, -np.inf), np.zeros(n)]),
            upper=np.full(m + n, np.inf),
        )
        return Formulation("matrix", problem, ProblemClass.LP, {"beta": slice(0, m)})

    def objective(self, solution):
        X, y = np.asarray(self.data.X), np.asarray(self.data.y)
        return float(np.abs(y - X @ solution["beta"]).sum())


@dataclass(frozen=True, eq=False)
class UserRidge(Model):
    """min 1/2 |beta|^2 + 1/2 |r|^2 s.t. r = y - X beta: a user's QP with free variables."""

    data: Dataset
    problem_class: ClassVar[ProblemClass] = ProblemClass.QP
    layers: ClassVar[tuple[str, ...]] = ("matrix",)

    def _build_matrix(self, form):
        X, y = np.asarray(self.data.X), np.asarray(self.data.y)
        n, m = X.shape
        A = sp.hstack([sp.csc_array(X), sp.eye_array(n, format="csc")], format="csc")
        problem = MatrixProblem(
            c=np.zeros(m + n),
            A=A,
            row_lower=y,
            row_upper=y,
            lower=np.full(m + n, -np.inf),
            upper=np.full(m + n, np.inf),
            P=sp.eye_array(m + n, format="csc"),
        )
        return Formulation("matrix", problem, ProblemClass.QP, {"beta": slice(0, m)})

    def objective(self, solution):
        X, y = np.asarray(self.data.X), np.asarray(self.data.y)
        beta = solution["beta"]
        return float(0.5 * beta @ beta + 0.5 * np.sum((y - X @ beta) ** 2))
