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


def test_plot_of_a_one_step_result_labels_its_point_and_says_it_has_no_history():
    ax = result(history=()).plot()
    try:
        assert "no history" in ax.get_title()
        (note,) = ax.texts
        assert "objective 7" in note.get_text()
        assert "bound 7" in note.get_text()
        assert "gap 0.00e+00" in note.get_text()
        ax.figure.canvas.draw()
        assert ax.yaxis.get_offset_text().get_text() == ""  # ticks in full around one value
    finally:
        plt.close(ax.figure)


def test_the_offset_text_above_the_axis_does_not_cover_the_title():
    close = tuple(
        IterationRecord(k, 1000.0 + 0.001 * k, 1e6 + 1e-3 * (4 - k), 1e6 - 1e-3 * (4 - k))
        for k in range(4)
    )
    long = Result(Status.OPTIMAL, 1e6, 1e6, {"x": np.ones(1)}, iterations=4, history=close,
                  model="a model with a long name" * 3, driver="d")  # fmt: skip
    ax = long.plot()
    try:
        ax.figure.canvas.draw()
        renderer = ax.figure.canvas.get_renderer()
        offset = ax.yaxis.get_offset_text()
        assert offset.get_text()  # matplotlib does write one for these values
        title = ax.title.get_window_extent(renderer)
        assert not offset.get_window_extent(renderer).overlaps(title)
    finally:
        plt.close(ax.figure)


def test_one_legend_below_the_axes_and_the_right_label_inside_the_figure():
    ax = result().plot()
    try:
        fig = ax.figure
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        assert ax.right_ax.get_legend() is None  # not on the gap curve
        legend = ax.get_legend()
        assert [t.get_text() for t in legend.get_texts()] == ["objective", "bound", "gap"]
        axes = ax.get_window_extent(renderer)
        assert legend.get_window_extent(renderer).y1 <= axes.y0  # below the plot, on no curve
        label = ax.right_ax.yaxis.label.get_window_extent(renderer)
        assert label.x1 <= fig.bbox.x1  # the right axis's label is not clipped
    finally:
        plt.close(ax.figure)


def test_a_one_step_objective_and_bound_that_agree_are_one_point():
    value = 33541.344528142
    tiny = Result(Status.OPTIMAL, value, value - 5e-11, {"x": np.ones(1)}, iterations=1,
                  history=(), timings=Timings(total=0.5), model="m", driver="direct")  # fmt: skip
    ax = tiny.plot()
    try:
        (point,) = ax.get_lines()
        assert point.get_label() == "objective = bound"
        low, high = ax.get_ylim()
        assert high - low > 1.0  # not an axis scaled to the 5e-11 between them
    finally:
        plt.close(ax.figure)
