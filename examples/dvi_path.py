"""A regularization path with DVI safe screening (regularized LAD): the trace and a plot.

solve_path solves the model at C_1 < C_2 < ... < C_K. With screening=DVI(), the solution at C_k
proves, before solving at C_k+1, which samples have their dual variable at a bound there (R: the
fit is above the target, theta = -C; L: below it, theta = +C). The reduced problem keeps those
samples as fixed terms and DCD solves the rest, warm-started; each lifted solution is certified on
the full model by its duality gap, and a value whose certificate fails is solved again in full.
The grid is the paper's: 100 values of C from 0.01 to 10, equally spaced on a log scale. The
screened path is compared with the unscreened one, value by value.

    python examples/dvi_path.py                  # computer (cpusmall), 8,192 x 12, 100 values
    python examples/dvi_path.py --smoke          # 1,000 random rows, 20 values
    python examples/dvi_path.py --out dvi.png    # where the plot goes
"""

import argparse
from pathlib import Path

import numpy as np

import optframe as of
from optframe.data import Dataset, load_dataset
from optframe.errors import DataError
from optframe.models import RegularizedLAD
from optframe.screening import DVI

DEFAULT_OUT = Path(__file__).resolve().parent / "out" / "dvi_path.png"


def computer(n: int | None) -> Dataset:
    """cpusmall with z-scored features and a centered target (docs/results/dvi.md, Data)."""
    data = load_dataset("cpusmall")
    if n is not None:
        data = data.subset(np.random.default_rng(0).permutation(data.n_samples)[:n])
    X = np.asarray(data.X)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return Dataset(X=X, y=data.y - data.y.mean(), name="computer")


def print_trace(path: of.PathResult) -> None:
    print("  C, |R|, |L|, free, status, objective, certified relative gap, seconds (rule + solve)")
    for k, (C, result) in enumerate(zip(path.values, path.results, strict=True)):
        free = result.stats.get("free", path.n_samples)
        seconds = path.screening_seconds[k] + path.solve_seconds[k]
        print(
            f"    {C:8.4f} {path.R[k].size:5d} {path.L[k].size:5d} {free:5d} "
            f"{result.status.value:8s} {result.objective:14.6f} {result.gap:9.2e} {seconds:8.4f}"
        )


def save_plot(screened: of.PathResult, full: of.PathResult, name: str, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    C = screened.values
    R, L = np.nan_to_num(screened.rejection_R), np.nan_to_num(screened.rejection_L)
    left.stackplot(C, R, L, labels=["|R| / n (theta = -C)", "|L| / n (theta = +C)"])
    left.set_xscale("log")
    left.set_ylim(0, 1)
    left.set_xlabel("C")
    left.set_ylabel("rejection ratio")
    left.legend(loc="upper left")
    for label, path in (("no screening", full), ("DVI", screened)):
        seconds = np.cumsum(path.screening_seconds + path.solve_seconds)
        right.semilogx(C, seconds, "o-", markersize=3, label=label)
    right.set_xlabel("C")
    right.set_ylabel("seconds so far (rule + solves)")
    right.legend()
    fig.suptitle(f"DVI screening along a path of C: regularized LAD on {name}")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main(smoke: bool, out: Path) -> None:
    data = computer(1000 if smoke else None)
    model = RegularizedLAD(data, C=0.01, fit_intercept=False)  # DVI needs no intercept
    grid = np.geomspace(0.01, 10.0, 20 if smoke else 100)
    full = of.solve_path(model, "C", grid)  # DCD at every value, warm-started
    screened = of.solve_path(model, "C", grid, screening=DVI())
    print(f"Regularized LAD path on {data.name}: n={data.n_samples}, m={data.n_features}")
    print_trace(screened)
    middle = screened.results[len(grid) // 2]
    print(f"  the reduced DCD solve at C = {grid[len(grid) // 2]:.4f}: its history at gap checks")
    for record in middle.history:
        if np.isfinite(record.extras["gap"]):
            print(
                f"    epoch {record.iteration:5d}: dual bound {record.bound:.6f}, absolute gap "
                f"{record.extras['gap']:.2e}, projected-gradient range "
                f"{record.extras['pg_range']:.1e}"
            )
    for label, path in (("no screening", full), ("DVI", screened)):
        print(
            f"  {label:12s} {path.timings.total:6.2f} s in all (init {path.timings.init:.3f} s, "
            f"rule {path.timings.screening:.3f} s), fallbacks {path.fallbacks}"
        )
    print(f"  mean rejection ratio of DVI: {np.nanmean(screened.rejection):.3f}")
    differences = np.abs(screened.objectives - full.objectives) / np.abs(full.objectives)
    print(f"  relative difference of the objectives: {differences.max():.1e}")
    save_plot(screened, full, data.name, out)
    print(f"  plot saved to {out}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a small subset, for the tests")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the PNG to write")
    arguments = parser.parse_args()
    try:
        main(arguments.smoke, arguments.out)
    except DataError as error:  # no data here: one line with the fix, not a traceback
        raise SystemExit(error.summary) from None
