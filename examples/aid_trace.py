"""AggregateDisaggregate (AID) on LAD regression: the per-iteration trace and a plot.

AID solves the model on weighted cluster centroids, evaluates the original objective E_t at that
solution, and splits the clusters whose samples sit on both sides of the regression hyperplane.
For a convex per-sample loss the aggregated optimum F_t is a lower bound on the optimum, so every
iteration has a certified gap (E_best - F_t) / max(1, |E_best|); AID stops when no cluster needs
splitting or the gap is below its tolerance. The result is compared with the dual LP solved
directly by HiGHS.

    python examples/aid_trace.py                  # cpusmall, 8,192 x 12
    python examples/aid_trace.py --smoke          # its first 2,000 rows
    python examples/aid_trace.py --out aid.png    # where the plot goes (default examples/out/)
"""

import argparse
from pathlib import Path

import optframe as of
from optframe.data import load_dataset
from optframe.drivers import AggregateDisaggregate
from optframe.errors import DataError
from optframe.models import LADRegression

DEFAULT_OUT = Path(__file__).resolve().parent / "out" / "aid_trace.png"


def print_trace(result: of.Result) -> None:
    print("  iter  seconds  clusters    rate   E_t (original)     best E    bound F_t       gap")
    for record in result.history:
        extras = record.extras
        print(
            f"  {record.iteration:4d} {record.seconds:8.3f} {extras['clusters']:9d} "
            f"{extras['rate']:7.4f} {extras['objective_t']:16.6f} {record.objective:10.4f} "
            f"{record.bound:12.6f} {extras['gap']:9.2e}"
        )


def save_plot(result: of.Result, reference: float, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    history = result.history
    iterations = [r.iteration for r in history]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(iterations, [r.extras["objective_t"] for r in history], "o-", label="E_t")
    left.plot(iterations, [r.objective for r in history], "s-", label="best E")
    left.plot(iterations, [r.bound for r in history], "^-", label="bound F_t")
    left.axhline(reference, color="grey", linestyle="--", label="Direct optimum")
    left.set_yscale("log")
    left.set_xlabel("iteration")
    left.set_ylabel("objective")
    left.legend()
    right.semilogy(iterations, [max(r.extras["gap"], 1e-16) for r in history], "o-")
    right.set_xlabel("iteration")
    right.set_ylabel("relative gap")
    fig.suptitle(f"AID on {result.model}: {result.status.value} in {result.iterations} iterations")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main(smoke: bool, out: Path) -> None:
    data = load_dataset("cpusmall")
    if smoke:
        data = data.subset(range(2000))
    model = LADRegression(data)
    reference = of.solve(model, backend="highs")  # Direct: the dual LP, the reference
    aid = of.solve(model, AggregateDisaggregate(tol=1e-6), backend="highs")
    print(f"AID on LAD regression, {data.name}: n={data.n_samples}, m={data.n_features}")
    print_trace(aid)
    print(f"  AID:    {aid.summary()}")
    print(f"  Direct: {reference.summary()}")
    difference = abs(aid.objective - reference.objective) / abs(reference.objective)
    print(f"  relative difference of the objectives: {difference:.1e}")
    save_plot(aid, reference.objective, out)
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
