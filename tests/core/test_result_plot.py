"""``Result.plot``: objective and bound against time or iterations, the gap on a log axis."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from optframe.result import IterationRecord, Result, Status, Timings

HISTORY = tuple(
    IterationRecord(k, 0.5 * (k + 1), 10.0 - k, 6.0 + 0.5 * k if k else None) for k in range(4)
)


def result(history=HISTORY):
    return Result(Status.OPTIMAL, 7.0, 7.0, {"x": np.ones(1)}, iterations=4, history=history,
                  timings=Timings(total=2.5), model="m", driver="d")  # fmt: skip


def test_plot_draws_objective_bound_and_gap():
    fig, ax = plt.subplots()
    try:
        assert result().plot(ax) is ax
        objective, bound = ax.get_lines()
        np.testing.assert_allclose(objective.get_xdata(), [0.5, 1.0, 1.5, 2.0])
        np.testing.assert_allclose(objective.get_ydata(), [10, 9, 8, 7])
        np.testing.assert_allclose(bound.get_ydata(), [np.nan, 6.5, 7.0, 7.5])
        right = ax.right_ax
        assert right.get_yscale() == "log"
        (gap,) = right.get_lines()
        # the first row has no bound; gap = (f - b) / max(1, |f|)
        np.testing.assert_allclose(gap.get_ydata(), [2.5 / 9, 1.0 / 8])
        assert ax.get_xlabel() == "seconds"
    finally:
        plt.close(fig)


def test_plot_against_iterations_and_on_a_new_figure():
    ax = result().plot(x="iteration")
    try:
        np.testing.assert_allclose(ax.get_lines()[0].get_xdata(), [0, 1, 2, 3])
        assert ax.get_xlabel() == "iteration"
    finally:
        plt.close(ax.figure)
    with pytest.raises(ValueError, match="seconds"):
        result().plot(x="time")


def test_plot_without_history_draws_the_final_point_and_no_gap_axis():
    ax = result(history=()).plot()
    try:
        objective = ax.get_lines()[0]
        assert (list(objective.get_xdata()), list(objective.get_ydata())) == ([2.5], [7.0])
        assert not hasattr(ax, "right_ax")  # gap 0: nothing to draw on a log axis
    finally:
        plt.close(ax.figure)
