"""Clarabel's failures carry Clarabel's own status (issue 15).

On the LAD dual LP of ``cpusmall`` Clarabel stops with ``InsufficientProgress``. The matrix layer
reported it; the cvxpy layer reported only cvxpy's generic "Solver 'CLARABEL' failed".
"""

import pytest

import optframe as of
from optframe.data import load_dataset
from optframe.models import LADRegression
from optframe.solvers.clarabel import CLARABEL_STATUS


@pytest.fixture(scope="module")
def cpusmall_lad():
    return LADRegression(load_dataset("cpusmall"))


@pytest.mark.parametrize("backend", ["matrix:clarabel", "cvxpy:clarabel"])
def test_the_result_names_clarabels_status(cpusmall_lad, backend):
    result = of.solve(cpusmall_lad, backend=backend)
    text = result.stats["solver_status"]
    said = [status for status in CLARABEL_STATUS if f": {status}" in text]
    assert said, text
    if result.status is of.Status.ERROR:  # what Clarabel 0.11 does on this set
        assert said == ["InsufficientProgress"], text
