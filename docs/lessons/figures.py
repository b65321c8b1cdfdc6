"""Draw the lessons' figures from real runs on small real data sets.

Each figure comes from solves that the lessons describe, on data from ``OPTFRAME_DATA``:

* ``lad_duality.png``: LAD on 500 abalone rows; the primal objective and the certificate's dual
  bound at points moved away from the optimum along a fixed direction, and their gap;
* ``svm_smo.png``: a linear SVM on 300 svmguide1 rows (two standardized features); the first
  pairs chosen by a maximal-violating-pair SMO written in numpy, the support vectors and the
  separating line, and the SMO driver's violation and gap read through its ``callback``;
* ``aid_clusters.png``: AID on LAD over all of abalone; clusters per iteration and the gap
  between the best objective and the aggregated problem's bound, read through ``callback``.

Run ``python docs/lessons/figures.py`` to redraw the committed figures (next to this file), or
``python docs/lessons/figures.py --out DIR [NAME ...]`` to draw some of them elsewhere; the tests
draw all three in a temporary folder.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from numpy.typing import NDArray

import optframe as of
from optframe.data import Dataset, load_dataset
from optframe.drivers import SMO, AggregateDisaggregate, Direct
from optframe.models import LADRegression, WeightedSVM
from optframe.result import IterationRecord

HERE = Path(__file__).resolve().parent
#: Small figures: a few tens of kilobytes each.
DPI = 80
SIZE = (7.5, 3.0)


def _save(fig: plt.Figure, path: Path) -> Path:
    fig.savefig(path, dpi=DPI, pil_kwargs={"optimize": True})
    plt.close(fig)
    return path


# --------------------------------------------------------------------------- lesson 1: LAD dual
def lad_data(rows: int = 500) -> Dataset:
    """The first ``rows`` abalone samples (8 features, ring counts as targets)."""
    data = load_dataset("abalone")
    X = data.X.toarray() if hasattr(data.X, "toarray") else np.asarray(data.X)
    return Dataset(X=X[:rows], y=np.asarray(data.y)[:rows], name="abalone")


def lad_perturbation(
    model: LADRegression, steps: NDArray[np.float64], seed: int = 0
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """The optimum, and the objective and the certificate's bound at ``beta* + t d``."""
    best = of.solve(model, Direct(), backend="highs")
    beta, b = best.solution["beta"], float(best.solution["intercept"][0])
    direction = np.random.default_rng(seed).normal(size=beta.size + 1)
    direction /= np.linalg.norm(direction)
    objective, bound = [], []
    for t in steps:
        moved = {"beta": beta + t * direction[:-1], "intercept": [b + t * direction[-1]]}
        objective.append(model.objective(moved))
        bound.append(model.dual_certificate(moved).value)
    return best.objective, np.array(objective), np.array(bound)


def lad_figure(out: Path) -> Path:
    """``lad_duality.png``: weak duality at work on LAD."""
    model = LADRegression(lad_data())
    steps = np.linspace(-0.3, 0.3, 31)
    optimum, objective, bound = lad_perturbation(model, steps)
    small = np.logspace(-6, 0, 19)
    _, above, below = lad_perturbation(model, small)
    fig, (left, right) = plt.subplots(1, 2, figsize=SIZE, layout="constrained")
    left.plot(steps, objective, ".-", label="objective at the point")
    left.plot(steps, bound, ".--", label="bound from its certificate")
    left.axhline(optimum, color="0.5", lw=0.8, label="optimum")
    left.set_xlabel("t (the point is the optimum + t d)")
    left.set_ylabel("sum of absolute residuals")
    left.legend(fontsize=7)
    left.set_title("objective >= optimum >= bound", fontsize=9)
    right.loglog(small, (above - optimum) / optimum, ".-", label="(objective - optimum) / optimum")
    right.loglog(small, (optimum - below) / optimum, ".--", label="(optimum - bound) / optimum")
    right.set_xlabel("t")
    right.set_title("both sides close as t goes to 0", fontsize=9)
    right.legend(fontsize=7)
    return _save(fig, out / "lad_duality.png")


# ------------------------------------------------------------------------- lesson 2: SVM and SMO
def svm_data(rows: int = 300, seed: int = 0) -> Dataset:
    """``rows`` svmguide1 samples, features 2 and 4, standardized: a plane one can draw."""
    data = load_dataset("svmguide1")
    pick = np.random.default_rng(seed).choice(data.n_samples, rows, replace=False)
    X = np.asarray(data.X)[pick][:, [1, 3]]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return Dataset(X=X, y=np.asarray(data.y)[pick], name="svmguide1")


def smo_pairs(
    X: NDArray[np.float64], y: NDArray[np.float64], C: float, tol: float = 1e-3, steps: int = 5000
) -> tuple[NDArray[np.float64], float, list[tuple[int, int, float]]]:
    r"""SMO with maximal violating pairs on the linear SVM's dual, in numpy (for teaching).

    Minimizes :math:`f(\alpha) = \tfrac12\alpha^\top Q\alpha - \mathbf 1^\top\alpha`,
    :math:`Q_{ij} = y_i y_j x_i^\top x_j`, over :math:`y^\top\alpha = 0`,
    :math:`0 \le \alpha \le C`. Returns :math:`\alpha`, the intercept and the pairs
    ``(i, j, violation)`` in the order they were chosen.
    """
    Z = y[:, None] * X
    Q = Z @ Z.T
    alpha = np.zeros(y.size)
    gradient = -np.ones(y.size)  # Q alpha - 1
    pairs: list[tuple[int, int, float]] = []
    b = 0.0
    for _ in range(steps):
        up = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))  # alpha_i + y_i t may grow
        low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))  # alpha_j - y_j t may shrink
        score = -y * gradient
        i = int(np.flatnonzero(up)[np.argmax(score[up])])
        j = int(np.flatnonzero(low)[np.argmin(score[low])])
        violation = float(score[i] - score[j])
        b = 0.5 * float(score[i] + score[j])
        if violation <= tol:
            break
        curvature = Q[i, i] + Q[j, j] - 2.0 * y[i] * y[j] * Q[i, j]
        t = violation / max(curvature, 1e-12)  # the exact minimizer along the pair
        t = min(t, C - alpha[i] if y[i] > 0 else alpha[i], alpha[j] if y[j] > 0 else C - alpha[j])
        alpha[i] += y[i] * t
        alpha[j] -= y[j] * t
        gradient += t * (y[i] * Q[:, i] - y[j] * Q[:, j])
        pairs.append((i, j, violation))
    return alpha, b, pairs


def smo_records(model: WeightedSVM) -> tuple[of.Result, list[IterationRecord]]:
    """The SMO driver's result and its records, read through ``callback`` every 10 steps."""
    records: list[IterationRecord] = []

    def watch(record: IterationRecord) -> bool:
        records.append(record)
        return False  # True would stop the driver

    result = of.solve(model, driver=SMO(check_every=10), callback=watch)
    return result, records


def svm_figure(out: Path) -> Path:
    """``svm_smo.png``: SMO's pairs on the plane, and the driver's convergence."""
    data = svm_data()
    X, y, C = np.asarray(data.X), np.asarray(data.y), 1.0
    alpha, b, pairs = smo_pairs(X, y, C)
    w = X.T @ (y * alpha)
    result, records = smo_records(WeightedSVM(data, C=C))
    fig, (left, right) = plt.subplots(1, 2, figsize=SIZE, layout="constrained")
    for label, marker in ((1.0, "o"), (-1.0, "s")):
        mine = y == label
        left.scatter(X[mine, 0], X[mine, 1], s=6, marker=marker, alpha=0.5,
                     label=f"class {label:+.0f}")  # fmt: skip
    support = alpha > 1e-9
    left.scatter(X[support, 0], X[support, 1], s=30, facecolors="none", edgecolors="k", lw=0.6,
                 label="support vectors")  # fmt: skip
    for k, (i, j, _) in enumerate(pairs[:12]):
        left.plot(X[[i, j], 0], X[[i, j], 1], "-", color=plt.cm.viridis(k / 12), lw=1.0)
    low, high = np.percentile(X, 1, axis=0) - 0.3, np.percentile(X, 99, axis=0) + 0.3
    xs = np.linspace(low[0], high[0], 2)
    left.plot(xs, -(w[0] * xs + b) / w[1], "k-", lw=1.2)
    left.set_xlim(low[0], high[0])
    left.set_ylim(low[1], high[1])
    left.set_title(f"the first 12 of {len(pairs)} pairs, and w'x + b = 0", fontsize=9)
    left.legend(fontsize=6, loc="lower right")
    steps = np.array([r.iteration for r in records])
    violation = np.array([r.extras["violation"] for r in records])
    gap = np.array([(r.objective - r.bound) / abs(r.objective) for r in records])
    right.semilogy(steps, violation, ".-", label="largest pair violation")
    right.semilogy(steps, gap, ".--", label="relative gap (objective - dual)")
    right.set_xlabel("SMO steps (one pair each)")
    right.set_title(f"the SMO driver: {result.status.name}", fontsize=9)
    right.legend(fontsize=7)
    return _save(fig, out / "svm_smo.png")


# ----------------------------------------------------------------------- lesson 3: AID's clusters
def aid_records(model: LADRegression) -> tuple[of.Result, list[IterationRecord]]:
    """AID's result on ``model`` and one record per aggregated problem, through ``callback``."""
    records: list[IterationRecord] = []
    result = of.solve(model, driver=AggregateDisaggregate(), backend="highs",
                      callback=records.append)  # fmt: skip
    return result, records


def aid_figure(out: Path) -> Path:
    """``aid_clusters.png``: clusters and gap per AID iteration on LAD over abalone."""
    model = LADRegression(lad_data(rows=4177))
    result, records = aid_records(model)
    iterations = np.array([r.iteration for r in records])
    clusters = np.array([r.extras["clusters"] for r in records])
    split = np.array([r.extras["split"] for r in records])
    gap = np.array([r.extras["gap"] for r in records])
    fig, (left, right) = plt.subplots(1, 2, figsize=SIZE, layout="constrained")
    left.bar(iterations, clusters, color="0.7", label="clusters solved")
    left.bar(iterations, split, bottom=clusters, color="tab:orange", label="new after the split")
    left.set_xlabel("iteration")
    left.set_ylabel(f"clusters (of {model.n_samples} samples)")
    left.set_title("clusters split where members disagree", fontsize=9)
    left.legend(fontsize=7)
    shown = gap > 0
    right.semilogy(iterations[shown], gap[shown], ".-", label="(E - F) / E")
    right.set_xlabel("iteration")
    right.set_title(f"{result.status.name}: the last split is empty, F = E", fontsize=9)
    right.legend(fontsize=7)
    return _save(fig, out / "aid_clusters.png")


FIGURES: dict[str, Callable[[Path], Path]] = {
    "lad_duality": lad_figure,
    "svm_smo": svm_figure,
    "aid_clusters": aid_figure,
}


def main(argv: list[str] | None = None) -> list[Path]:
    """Draw the figures named in ``argv`` (all by default) into ``--out`` (this folder)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", choices=[[], *FIGURES], default=[])
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    drawn = [FIGURES[name](args.out) for name in (args.names or FIGURES)]
    for path in drawn:
        print(f"{path.name}: {path.stat().st_size / 1024:.0f} KB")
    return drawn


if __name__ == "__main__":
    main(sys.argv[1:])
