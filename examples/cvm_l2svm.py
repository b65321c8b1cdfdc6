"""The Core Vector Machine (Badoiu-Clarkson) on an RBF L2-SVM: the trace and a plot.

CVM grows a coreset one point at a time: it searches for a point outside the current ball
enlarged by (1 + eps) (up to 7 draws of 59 non-coreset points, as LibCVM), adds it, and re-solves
the enclosing-ball QP on the coreset by SMO. It never removes a point. With verify=True an exact
search over all points confirms the stop, so the status can be OPTIMAL. It is compared with MFW
(one kernel column per step instead of a QP per point) and with Direct.

    python examples/cvm_l2svm.py                  # a1a, 1,605 x 123 (sparse), C = 4
    python examples/cvm_l2svm.py --smoke          # 400 random rows
    python examples/cvm_l2svm.py --out cvm.png    # where the plot goes
"""

import argparse
from pathlib import Path

import numpy as np

import optframe as of
from optframe.data import load_dataset
from optframe.drivers import MFW, CoreVectorMachine
from optframe.errors import DataError
from optframe.kernels import RBF, mean_squared_distance
from optframe.models import L2SVM

DEFAULT_OUT = Path(__file__).resolve().parent / "out" / "cvm_l2svm.png"
EPS = 1e-6


def print_trace(result: of.Result, rows: int = 15) -> None:
    print("  CVM: outer iteration, seconds, dual bound, delta_+, coreset, kernel values")
    history = result.history  # one record every `check_every` coreset additions
    step = max(1, len(history) // rows)
    for k in sorted({*range(0, len(history), step), len(history) - 1}):
        record, extras = history[k], history[k].extras
        print(
            f"    {record.iteration:6d} {record.seconds:7.3f} {record.bound:14.6e} "
            f"{extras['delta_plus']:9.2e} {extras['coreset']:6d} {extras['kernel_evals']:10d}"
        )


def save_plot(runs: dict[str, of.Result], reference: float, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for label, result in runs.items():
        coreset = [r.extras["coreset"] for r in result.history]
        left.plot(coreset, [r.bound for r in result.history], label=label)
        right.loglog(
            [r.extras["kernel_evals"] for r in result.history],
            [max(r.extras["delta_plus"], 1e-12) for r in result.history],
            label=label,
        )
    left.axhline(reference, color="grey", linestyle="--", label="Direct optimum")
    left.set_xlabel("coreset size")
    left.set_ylabel("proven lower bound")
    left.legend()
    right.axhline((1 + EPS) ** 2 - 1, color="grey", linestyle="--", label="threshold")
    right.set_xlabel("kernel values computed")
    right.set_ylabel("delta_+")
    right.legend()
    fig.suptitle("CVM and MFW on the L2-SVM (RBF)")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main(smoke: bool, out: Path) -> None:
    data = load_dataset("a1a")
    if smoke:
        data = data.subset(np.random.default_rng(0).permutation(data.n_samples)[:400])
    model = L2SVM(data, C=4.0, kernel=RBF(gamma=1.0 / (2.0 * mean_squared_distance(data.X))))
    runs = {
        "CVM": of.solve(model, CoreVectorMachine(eps=EPS, check_every=5)),
        "MFW": of.solve(model, MFW(eps=EPS, check_every=20 if smoke else 100)),
    }
    reference = of.solve(model, backend="clarabel")
    cvm = runs["CVM"]
    print(f"CVM on the L2-SVM, {data.name}: n={data.n_samples}, m={data.n_features}, C=4")
    print_trace(cvm)
    for label, result in runs.items():
        print(
            f"  {label}: {result.summary()}\n"
            f"       true delta_+ {result.stats['delta_plus']:.1e}, coreset "
            f"{result.stats['coreset']}, kernel values {result.stats['kernel_evals']}"
        )
    print(f"  Direct: {reference.summary()}")
    difference = abs(cvm.objective - reference.objective) / abs(reference.objective)
    print(f"  relative difference of the objectives: {difference:.1e}")
    save_plot(runs, reference.objective, out)
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
