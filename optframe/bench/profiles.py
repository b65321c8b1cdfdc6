r"""``optframe bench report``: Dolan-Moré performance profiles, shifted geometric means, success.

The rows are those of :mod:`optframe.bench.interop` (benchopt's columns). A *problem* is one
(``objective_name``, ``dataset_name``, ``idx_rep``): each repetition counts as a problem of its
own, so the solvers measured in the same repetition are compared. A run is a **success** when its
status is ``optimal`` (any case) or its ``objective_gap`` is finite and at most the tolerance.

*Performance profile* (Dolan and Moré, 2002). With :math:`t_{p,s}` the time of solver :math:`s`
on problem :math:`p` (:math:`\infty` if it failed or did not run), the ratio is
:math:`r_{p,s} = t_{p,s} / \min_{s'} t_{p,s'}` and the profile is the fraction of problems solved
within a factor :math:`\tau` of the best, :math:`\rho_s(\tau) = |\{p : r_{p,s} \le \tau\}| / |P|`.

*Shifted geometric mean* (as qpbenchmark reports it, shift :math:`\sigma = 10` s):
:math:`\exp\bigl(\tfrac{1}{|P|}\sum_p \log(t_{p,s} + \sigma)\bigr) - \sigma` over every problem,
a failed or missing run counting the time limit; divided by the smallest over the solvers it is a
slow-down factor (1 for the fastest).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from optframe.errors import OptframeError

SHIFT = 10.0
GAP_TOL = 1e-6


def is_success(row: Mapping[str, Any], tol: float = GAP_TOL) -> bool:
    """Whether the run's status is ``optimal`` or its finite gap is at most ``tol``."""
    if str(row.get("status") or "").lower() == "optimal":
        return True
    gap = row.get("objective_gap")
    try:
        gap = float(gap)
    except (TypeError, ValueError):
        return False
    return math.isfinite(gap) and gap <= tol


def shifted_geometric_mean(values: Iterable[float], shift: float = SHIFT) -> float:
    r""":math:`\exp(\operatorname{mean}\log(v + \sigma)) - \sigma` of nonnegative ``values``."""
    v = np.asarray(list(values), dtype=np.float64)
    if v.size == 0 or np.any(v < 0) or not np.all(np.isfinite(v)):
        raise OptframeError("the shifted geometric mean takes finite nonnegative values")
    return float(np.exp(np.mean(np.log(v + shift))) - shift)


@dataclass(frozen=True)
class Runs:
    """The times of every solver on every problem (``inf``: failed or not run)."""

    problems: list[tuple[str, str, int]]
    solvers: list[str]
    times: np.ndarray  # (problems, solvers): seconds of the successes, inf otherwise
    measured: np.ndarray  # (problems, solvers): seconds of every run that has a time, else nan

    @classmethod
    def of(cls, rows: Sequence[Mapping[str, Any]], tol: float = GAP_TOL) -> Runs:
        """Arrange ``rows``; of two rows of one problem and solver, the last one counts."""
        if not rows:
            raise OptframeError("no records to report")
        keys = [(str(r["objective_name"]), str(r["dataset_name"]), int(r["idx_rep"])) for r in rows]
        problems = list(dict.fromkeys(keys))
        solvers = sorted({str(r["solver_name"]) for r in rows})
        p_index = {p: i for i, p in enumerate(problems)}
        s_index = {s: j for j, s in enumerate(solvers)}
        times = np.full((len(problems), len(solvers)), np.inf)
        measured = np.full_like(times, np.nan)
        for key, row in zip(keys, rows, strict=True):
            i, j = p_index[key], s_index[str(row["solver_name"])]
            t = float(row.get("time", math.nan))
            measured[i, j] = t
            ok = is_success(row, tol) and math.isfinite(t) and t >= 0
            times[i, j] = t if ok else np.inf
        return cls(problems, solvers, times, measured)

    def ratios(self) -> np.ndarray:
        """:math:`r_{p,s}`: each time over the problem's best (inf where it failed)."""
        best = self.times.min(axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = self.times / best
        ratios[np.isinf(self.times)] = np.inf
        ratios[(self.times == 0) & (best == 0)] = 1.0
        return ratios

    def profile(self, taus: Sequence[float]) -> np.ndarray:
        r""":math:`\rho_s(\tau)` for each ``tau`` (rows) and solver (columns)."""
        ratios = self.ratios()
        return np.array([(ratios <= tau).mean(axis=0) for tau in taus])

    def default_time_limit(self) -> float:
        """The largest measured time: what a failure counts without a declared time limit."""
        finite = self.measured[np.isfinite(self.measured)]
        return float(finite.max()) if finite.size else 0.0

    def summary(
        self, shift: float = SHIFT, time_limit: float | None = None
    ) -> list[dict[str, Any]]:
        """Per solver: runs, successes, success rate and the shifted geometric mean of times."""
        limit = self.default_time_limit() if time_limit is None else float(time_limit)
        charged = np.where(np.isinf(self.times), limit, np.minimum(self.times, limit))
        means = [shifted_geometric_mean(charged[:, j], shift) for j in range(len(self.solvers))]
        best = min(means)
        rows = []
        for j, solver in enumerate(self.solvers):
            successes = int(np.isfinite(self.times[:, j]).sum())
            rows.append(
                {
                    "solver": solver,
                    "problems": len(self.problems),
                    "runs": int(np.isfinite(self.measured[:, j]).sum()),
                    "successes": successes,
                    "success_rate": successes / len(self.problems),
                    "shifted_gm": means[j],
                    "relative_gm": means[j] / best if best > 0 else math.nan,
                }
            )
        return rows


def plot_profiles(runs: Runs, path: str | Path, title: str = "") -> Path:
    """Draw the performance profiles (log2 axis of the ratio) as a PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratios = runs.ratios()
    finite = ratios[np.isfinite(ratios)]
    top = max(2.0, float(finite.max()) * 1.25) if finite.size else 2.0
    taus = np.unique(np.concatenate([[1.0], finite, [top]]))
    fractions = runs.profile(taus)
    fig, ax = plt.subplots(figsize=(9.0, 4.2))
    for j, solver in enumerate(runs.solvers):
        ax.step(taus, fractions[:, j], where="post", label=solver)
    ax.set_xscale("log", base=2)
    ax.set_xlim(1.0, top)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(r"within a factor $\tau$ of the best time")
    ax.set_ylabel("fraction of problems solved")
    ax.set_title(title or f"Performance profiles ({len(runs.problems)} problems)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def markdown(runs: Runs, tol: float, shift: float, time_limit: float | None) -> str:
    """The per-solver table with the rules it was computed by."""
    from optframe.bench.report import table

    limit = runs.default_time_limit() if time_limit is None else time_limit
    rows = [
        {
            "solver": r["solver"],
            "success rate": f"{100 * r['success_rate']:.1f} % ({r['successes']}/{r['problems']})",
            "runs": r["runs"],
            f"shifted geometric mean (s, shift {shift:g})": f"{r['shifted_gm']:.4g}",
            "relative": f"{r['relative_gm']:.3g}",
        }
        for r in runs.summary(shift, time_limit)
    ]
    rule = (
        f"{len(runs.problems)} problem{'s' * (len(runs.problems) != 1)} (a problem is one model, "
        "data set and repetition). A run "
        f"is a success when its status is optimal or its gap is at most {tol:g}. The shifted "
        f"geometric mean of the times counts a failed or missing run as the time limit, "
        f"{limit:.4g} s"
        + (" (the largest time measured)" if time_limit is None else "")
        + "; *relative* divides it by the smallest one (1: the fastest solver)."
    )
    return "\n".join([rule, "", table(rows, list(rows[0]))])
