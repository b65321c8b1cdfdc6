import math

import numpy as np
import pytest

from optframe import Result, Status
from optframe.result import Timings, relative_gap


def test_gap_is_relative_to_objective_and_infinite_without_bound():
    assert relative_gap(10.0, 9.0) == pytest.approx(0.1)
    assert relative_gap(0.5, 0.25) == pytest.approx(0.25)  # max(1, |f|) guards small objectives
    assert relative_gap(1.0, None) == math.inf
    result = Result(status=Status.OPTIMAL, objective=4.0, bound=3.0, solution={"x": np.ones(1)})
    assert result.gap == pytest.approx(0.25)


def test_result_without_solution_refuses_to_predict():
    result = Result(status=Status.INFEASIBLE, objective=math.nan, bound=None, solution={})
    assert not result.has_solution
    with pytest.raises(ValueError, match="no solution"):
        result.predict(np.zeros((1, 1)))


def test_status_groups():
    assert Status.OPTIMAL.is_success
    assert Status.CONVERGED.is_success
    assert Status.TIME_LIMIT.is_limit
    assert Status.ITERATION_LIMIT.is_limit
    assert not Status.ERROR.is_success


def test_repr_is_one_short_line_without_arrays():
    result = Result(status=Status.OPTIMAL, objective=1633.1871, bound=1633.1870,
                    solution={"beta": np.arange(100_000.0)}, iterations=14,
                    timings=Timings(build=0.1, solve=0.2, total=0.3), driver="direct",
                    backend="matrix:highs")  # fmt: skip
    text = repr(result)
    assert text.startswith("Result(optimal, objective=1633.1871, bound=1633.187, gap=")
    assert "iterations=14" in text
    assert "seconds=0.3" in text
    assert "\n" not in text
    assert "array" not in text
    assert len(text) < 200
