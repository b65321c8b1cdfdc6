"""LAD regression on a real data set, solved directly by two back-ends.

The model is declared once; HiGHS solves its primal LP through the native matrix layer and its dual
LP through Pyomo. Both results are evaluated on the same original objective, so they must agree.

    python examples/lad_direct.py            # cpusmall, 8,192 x 12
    python examples/lad_direct.py --smoke    # the first 500 rows
"""

import argparse

import optframe as of
from optframe.data import load_dataset
from optframe.drivers import Direct
from optframe.errors import DataError
from optframe.models import LADRegression


def main(smoke: bool) -> None:
    data = load_dataset("cpusmall")
    if smoke:
        data = data.subset(range(500))
    model = LADRegression(data)
    runs = {
        "primal LP, native HiGHS": of.solve(model, Direct(form="primal"), backend="matrix:highs"),
        "dual LP, HiGHS via Pyomo": of.solve(model, Direct(form="dual"), backend="pyomo:highs"),
    }
    print(f"LAD regression on {data.name}: n={data.n_samples}, m={data.n_features}")
    for label, result in runs.items():
        print(
            f"  {label:26s} {result.status.value:9s} objective {result.objective:.8g}  "
            f"gap {result.gap:.1e}  {result.timings.total:.2f} s"
        )
    first, second = (r.objective for r in runs.values())
    print(f"  relative difference of the objectives: {abs(first - second) / abs(first):.1e}")
    print(f"  first coefficients: {runs['primal LP, native HiGHS'].solution['beta'][:4]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a small subset, for the tests")
    try:
        main(parser.parse_args().smoke)
    except DataError as error:  # no data here: one line with the fix, not a traceback
        raise SystemExit(error.summary) from None
