"""What every solve returns: :class:`Result`, its :class:`Status`, iteration records and timings."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:
    from optframe.basis import Basis
    from optframe.certificate import Certificate
    from optframe.model import Model


class Status(enum.Enum):
    """How a solve ended.

    ``OPTIMAL`` means optimality was proven to the solver's or driver's tolerance (for a
    decomposition driver: a proven bound closed the gap). ``CONVERGED`` means an iterative driver
    met its stopping rule without a proof of optimality.
    """

    OPTIMAL = "optimal"
    CONVERGED = "converged"
    ITERATION_LIMIT = "iteration_limit"
    TIME_LIMIT = "time_limit"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    ERROR = "error"

    def __str__(self) -> str:
        """The status's name, as printed: ``print(result.status)`` shows ``OPTIMAL``.

        Examples
        --------
        >>> print(Status.OPTIMAL), repr(Status.OPTIMAL)
        OPTIMAL
        (None, "<Status.OPTIMAL: 'optimal'>")
        """
        return self.name

    @property
    def is_success(self) -> bool:
        """Whether the solve ended by its own criterion (``OPTIMAL`` or ``CONVERGED``)."""
        return self in (Status.OPTIMAL, Status.CONVERGED)

    @property
    def is_limit(self) -> bool:
        """Whether a time or iteration limit stopped the solve."""
        return self in (Status.ITERATION_LIMIT, Status.TIME_LIMIT)


@dataclass(frozen=True)
class IterationRecord:
    """One row of a driver's history.

    Parameters
    ----------
    iteration : int
        Zero-based iteration counter.
    seconds : float
        Wall seconds since the driver started.
    objective : float
        The original model's objective at the iterate (or the best so far, as the driver documents).
    bound : float or None
        A proven lower bound at this iteration, if the driver has one.
    extras : Mapping
        Driver-specific figures (cluster count, violation, rejection ratio, ...).
    """

    iteration: int
    seconds: float
    objective: float
    bound: float | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Timings:
    """Wall seconds spent building the formulation, solving it, and in total.

    ``compile`` is apart: the seconds a numba driver spent before its timer started, compiling
    its kernels or loading them from numba's cache (:func:`optframe.jit.compile_kernels`; 0.0
    when they were ready). It is in none of the other three, nor in the time limit.
    """

    build: float = 0.0
    solve: float = 0.0
    total: float = 0.0
    compile: float = 0.0


def relative_gap(objective: float, bound: float | None, scale: float | None = None) -> float:
    """Return ``max(0, objective - bound) / scale``, or ``inf`` without a bound.

    ``scale`` defaults to ``max(1, |objective|, |bound|)`` (history rows); a certified
    :class:`Result` uses its model's scale (:mod:`optframe.certificate`).
    """
    if bound is None or not math.isfinite(objective) or not math.isfinite(bound):
        return math.inf
    if scale is None or not math.isfinite(scale):
        scale = max(1.0, abs(objective), abs(bound))
    if not scale > 0:
        return 0.0 if objective <= bound else math.inf
    return max(0.0, objective - bound) / scale


# Points between the axes and the title: room for the offset text ("1e6", "+1.633e3") that
# matplotlib writes above a linear axis, so the two never overlap.
TITLE_PAD = 12.0


def _plot_final_point(ax: Any, x: float, objective: float, bound: float, gap: float) -> None:
    """Draw the single point of a result without history, with its values written beside it.

    An objective and a bound that agree to 1e-9 (relative) are one point: drawn apart, an axis
    scaled to their difference would put them at the bottom and the top of the plot.
    """
    same = np.isfinite(bound) and abs(objective - bound) <= 1e-9 * max(1.0, abs(objective))
    if same:
        ax.plot([x], [objective], "o", label="objective = bound")
    else:
        ax.plot([x], [objective], ".-", label="objective")
        if np.isfinite(bound):
            ax.plot([x], [bound], ".--", label="bound")
    text = f"objective {objective:.8g}"
    if np.isfinite(bound):
        text += f"\nbound {bound:.8g}\ngap {gap:.2e}"
    ax.annotate(text, (x, objective), xytext=(10, -6), textcoords="offset points", fontsize=8,
                va="top")  # fmt: skip
    low = objective if not np.isfinite(bound) else min(objective, bound)
    high = objective if not np.isfinite(bound) else max(objective, bound)
    if same or high - low <= 1e-9 * max(1.0, abs(high)):
        span = 0.05 * max(1.0, abs(objective))  # a fixed span around the point
        ax.set_ylim(objective - span, objective + span)
    else:
        ax.margins(y=0.5)
    ax.margins(x=0.5)
    # one value per axis: ticks in full (1633.1871), not as offsets from it (+1.63318e3)
    ax.ticklabel_format(axis="both", style="plain", useOffset=False)


@dataclass(frozen=True, eq=False)
class Result:
    """The outcome of :func:`optframe.solve`.

    Attributes
    ----------
    status : Status
        How the solve ended.
    objective : float
        The original model's objective evaluated by the model at ``solution`` (never an aggregated,
        reduced or solver-reported value); ``nan`` when there is no solution.
    bound : float or None
        A lower bound on the optimal value (minimization) that optframe proved itself from a
        dual-feasible point built from ``solution`` (:mod:`optframe.certificate`), never above
        ``objective``; for mixed-integer models, the solver's branch-and-bound bound; or ``None``.
    solution : Mapping[str, ndarray]
        The solution, named as in the model's docstring.
    iterations : int
        Iterations of the driver (or of the solver for ``Direct``, where it reports them).
    history : tuple of IterationRecord
        Per-iteration records.
    timings : Timings
        Build, solve and total wall seconds.
    stats : Mapping
        Driver- and solver-specific figures (solver status text, reported objective, ...).
    model, driver, backend : str
        Names of what produced the result.
    basis : Basis or None
        The final simplex basis, when the back-end reports one (LPs on ``matrix:highs``); a
        related solve can start from it (``SolveOptions.start``).
    scale : float
        The magnitude the gap is relative to (the model's :meth:`~optframe.model.Model.gap_scale`:
        the largest of ``|objective|``, ``|bound|`` and the objective at the zero solution);
        ``nan`` on results that were not certified.
    certificate : Certificate or None
        The proof of ``bound`` (:class:`~optframe.certificate.Certificate`): the dual-feasible
        point, the repairs that made it feasible, the dual objective's terms (summing to
        ``bound``) and :meth:`~optframe.certificate.Certificate.explain`; ``None`` without a
        bound.

    Examples
    --------
    >>> import optframe as of
    >>> from optframe.data import Dataset
    >>> from optframe.models import LADRegression
    >>> result = of.solve(LADRegression(Dataset(X=[[0.0], [1.0], [2.0]], y=[0.0, 1.0, 5.0])))
    >>> result.certificate.value == result.bound
    True
    >>> sorted(result.certificate.dual_point)
    ['theta']
    """

    status: Status
    objective: float
    bound: float | None
    solution: Mapping[str, NDArray[np.float64]]
    iterations: int = 0
    history: tuple[IterationRecord, ...] = ()
    timings: Timings = field(default_factory=Timings)
    stats: Mapping[str, Any] = field(default_factory=dict)
    model: str = ""
    driver: str = ""
    backend: str = ""
    source: Model | None = field(default=None, repr=False)
    basis: Basis | None = field(default=None, repr=False)
    scale: float = math.nan
    certificate: Certificate | None = field(default=None, repr=False)

    @property
    def gap(self) -> float:
        """Relative gap ``max(0, objective - bound) / scale``; ``inf`` without a bound."""
        return relative_gap(self.objective, self.bound, self.scale)

    @property
    def has_solution(self) -> bool:
        """Whether a solution (possibly not optimal) is available."""
        return bool(self.solution) and math.isfinite(self.objective)

    def _predictor(self) -> Model:
        if self.source is None or not self.has_solution:
            raise ValueError(f"this result ({self.status.value}) holds no solution to predict with")
        return self.source

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Evaluate the decision function (classifiers) or the prediction (regression) at ``X``."""
        return self._predictor().decision_function(self.solution, X)

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Predict labels (classifiers) or targets (regression) at ``X``."""
        return self._predictor().predict(self.solution, X)

    def plot(self, ax: Any = None, *, x: str = "seconds") -> Any:
        """Plot the history: objective and bound against ``x``, the relative gap on a log axis.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; a new figure's axes by default.
        x : {"seconds", "iteration"}
            The horizontal axis. Without a history, the final point is drawn.

        Returns
        -------
        matplotlib Axes
            ``ax``; the gap is on its twin axis (``ax.right_ax``), when a bound was recorded.

        Notes
        -----
        A one-step solve (``Direct``) has no history: its final objective and bound are drawn as
        points labelled with their values and the gap, with tick labels in full, and the title
        says so. The title stands high enough above the axes to clear matplotlib's offset text
        (``1e6``, ``+1.633e3``) of a history's axes.
        """
        if x not in ("seconds", "iteration"):
            raise ValueError(f"x must be 'seconds' or 'iteration'; got {x!r}")
        if ax is None:
            import matplotlib.pyplot as plt

            # constrained layout keeps the right axis's label and the legend below inside
            _, ax = plt.subplots(layout="constrained")
        rows = self.history or (
            IterationRecord(self.iterations, self.timings.total, self.objective, self.bound),
        )
        xs = np.array([getattr(r, x) for r in rows], dtype=np.float64)
        objective = np.array([r.objective for r in rows], dtype=np.float64)
        bound = np.array([np.nan if r.bound is None else r.bound for r in rows], dtype=np.float64)
        gap = np.array([relative_gap(r.objective, r.bound) for r in rows], dtype=np.float64)
        title = f"{self.model} | {self.driver}: {self.status.value}"
        if not self.history:
            _plot_final_point(ax, xs[0], objective[0], bound[0], gap[0])
            title += " (one step, no history)"
        else:
            ax.plot(xs, objective, ".-", label="objective")
            if np.isfinite(bound).any():
                ax.plot(xs, bound, ".--", label="bound")
        ax.set_xlabel(x)
        ax.set_ylabel("objective")
        ax.set_title(title, fontsize=9, pad=TITLE_PAD)
        handles, labels = ax.get_legend_handles_labels()
        shown = np.isfinite(gap) & (gap > 0) & bool(self.history)
        if shown.any():
            right = ax.twinx()
            right.semilogy(xs[shown], gap[shown], ":", color="0.4", marker=".", label="gap")
            right.set_ylabel("relative gap")
            more, names = right.get_legend_handles_labels()
            handles, labels = handles + more, labels + names
            ax.right_ax = right
        # one legend for both axes, below the plot: it never covers a curve
        ax.legend(
            handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=len(labels),
            fontsize=8, frameon=False,
        )  # fmt: skip
        return ax

    def __repr__(self) -> str:
        """``Result(optimal, objective=..., bound=..., gap=..., iterations=..., seconds=...)``."""
        bound = "None" if self.bound is None else f"{self.bound:.10g}"
        return (
            f"Result({self.status.value}, objective={self.objective:.10g}, bound={bound}, "
            f"gap={self.gap:.3g}, iterations={self.iterations}, "
            f"seconds={self.timings.total:.4g}, driver={self.driver!r}, backend={self.backend!r})"
        )

    def summary(self) -> str:
        """One line: status, objective, bound, gap and seconds."""
        bound = "—" if self.bound is None else f"{self.bound:.10g}"
        return (
            f"{self.model} | {self.driver} | {self.backend}: {self.status.value}, "
            f"objective {self.objective:.10g}, bound {bound}, gap {self.gap:.2e}, "
            f"{self.timings.total:.3f} s"
        )
