"""A weighted SVM on a real data set, solved directly by two back-ends.

Clarabel (interior point) solves the primal QP through its native matrix interface; OSQP
(first-order ADMM) solves the same model through CVXPY. Both results are evaluated on the original
objective: the interior-point solve is the reference, OSQP reaches it to its looser tolerance.

    python examples/svm_direct.py            # a1a: 1,605 x 123 (sparse), class-balanced weights
    python examples/svm_direct.py --smoke    # the first 300 rows
"""

import argparse

import numpy as np

import optframe as of
from optframe.data import load_dataset
from optframe.errors import DataError
from optframe.models import WeightedSVM


def main(smoke: bool) -> None:
    data = load_dataset("a1a")
    if smoke:
        data = data.subset(range(300))
    y = data.y
    balanced = np.where(y > 0, len(y) / (2 * np.sum(y > 0)), len(y) / (2 * np.sum(y < 0)))
    model = WeightedSVM(data.with_weights(balanced), C=1.0)
    runs = {
        "Clarabel, native": of.solve(model, backend="matrix:clarabel"),
        "OSQP via CVXPY": of.solve(model, backend="cvxpy:osqp", tol=1e-7),
    }
    print(f"Weighted linear SVM on {data.name}: n={data.n_samples}, m={data.n_features}, C=1")
    for label, result in runs.items():
        accuracy = np.mean(result.predict(data.X) == y)
        print(
            f"  {label:18s} {result.status.value:9s} objective {result.objective:.8g}  "
            f"gap {result.gap:.1e}  training accuracy {accuracy:.3f}  "
            f"{result.timings.total:.2f} s"
        )
    first, second = (r.objective for r in runs.values())
    print(f"  relative difference of the objectives: {abs(first - second) / abs(first):.1e}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a small subset, for the tests")
    try:
        main(parser.parse_args().smoke)
    except DataError as error:  # no data here: one line with the fix, not a traceback
        raise SystemExit(error.summary) from None
