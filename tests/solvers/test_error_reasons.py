"""An ERROR says why, in ``solve``'s result and on the command line (issue 26, item 2).

HiGHS's active-set QP solver ends the linear SVM's dual of 150 raw breast-cancer rows at C = 1e-3
with "Solve error": it claims optimality with primal infeasibilities of 5e-5 (the features
range from 7e-4 to 3e3). Through Pyomo the result used to say only "Pyomo HiGHS: error" (Pyomo
maps every HiGHS error status to ``error`` and keeps the log to itself); the reason is in
HiGHS's log, which both layers now read.
"""

from types import SimpleNamespace

import numpy as np
import pytest

import optframe as of
from optframe.cli.tables import solver_words
from optframe.data import Dataset
from optframe.drivers import Direct
from optframe.models import WeightedSVM
from optframe.result import Status

REASON = "QP solver claims optimality, but with"


@pytest.fixture(scope="module")
def model():
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer()
    rows = np.random.default_rng(0).choice(bunch.target.size, 150, replace=False)
    data = Dataset(X=bunch.data[rows], y=np.where(bunch.target[rows] == 1, 1.0, -1.0))
    return WeightedSVM(data, C=1e-3, kernel="linear")


@pytest.mark.parametrize("backend", ["matrix:highs", "pyomo:highs"])
def test_a_highs_error_carries_its_log(model, backend):
    result = of.solve(model, driver=Direct(form="dual"), backend=backend)
    assert result.status is Status.ERROR
    assert REASON in result.stats["solver_status"]
    assert REASON in solver_words(result)  # the command line's tables show it


def test_the_cli_drops_only_cvxpys_advice():
    advice = " (cvxpy: SolverError: Solver 'CLARABEL' failed. Try another solver.)"
    killed = (
        "OSQP: did not stop at the time limit of 1 s; stopped by optframe after 1.3 s (no point)"
    )
    for text, shown in (
        ("cvxpy CLARABEL: InsufficientProgress" + advice, "cvxpy CLARABEL: InsufficientProgress"),
        (killed, killed),
        (f"HiGHS: Solve error ({REASON} ...)", f"HiGHS: Solve error ({REASON} ...)"),
    ):
        result = SimpleNamespace(status=Status.ERROR, stats={"solver_status": text})
        assert solver_words(result) == shown
