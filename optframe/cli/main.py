"""``optframe``: the command line.

``optframe demo``              every back-end on LAD and weighted SVM, one table
``optframe solve MODEL``       one model, one driver, one back-end
``optframe compare MODEL``     every applicable driver x back-end pair on one model, one table
``optframe datasets``          the named data sets, and where each was found
``optframe bench SUITE``       run a benchmark suite and print its table
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from optframe.errors import OptframeError


def _add_problem_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="model class, e.g. LADRegression or WeightedSVM")
    parser.add_argument("--data", required=True, help="data set name (see `optframe datasets`)")
    parser.add_argument("--split", default="train", help="data split (default: train)")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="model parameter, e.g. --param C=0.5 (repeatable)",
    )
    parser.add_argument("--rows", type=int, help="use only the first ROWS samples")
    parser.add_argument("--time-limit", type=float, help="seconds per solve")
    parser.add_argument("--tol", type=float, help="optimality tolerance")


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``optframe`` command."""
    parser = argparse.ArgumentParser(
        prog="optframe",
        description="Declare ML training problems once; solve them with open solvers and drivers.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="compare every back-end on LAD and weighted SVM")
    demo.add_argument("--quick", action="store_true", help="smaller data (a few seconds)")

    solve = commands.add_parser("solve", help="solve one model with one driver and back-end")
    _add_problem_arguments(solve)
    solve.add_argument("--driver", default="direct", help="driver name (default: direct)")
    solve.add_argument("--backend", default="auto", help="back-end, e.g. highs, pyomo:highs")
    solve.add_argument("--form", help="formulation for Direct, e.g. primal or dual")

    compare = commands.add_parser("compare", help="every driver x back-end pair on one model")
    _add_problem_arguments(compare)

    commands.add_parser("datasets", help="list the named data sets and where they were found")

    bench = commands.add_parser("bench", help="run a benchmark suite")
    bench.add_argument("suite", help="suite name (optframe bench --list shows them)", nargs="?")
    bench.add_argument("--list", action="store_true", help="list the suites")
    bench.add_argument("--quick", action="store_true", help="the suite's small grid")
    bench.add_argument("--report", help="write the table as markdown to this file")
    bench.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="KEY=V1,V2",
        help="run only the cells whose KEY is one of the values (repeatable)",
    )
    bench.add_argument(
        "--jsonl", help="append each cell's record to this file as soon as it is measured"
    )
    bench.add_argument(
        "--records",
        action="append",
        default=[],
        metavar="FILE",
        help="report the records of these --jsonl files instead of running (repeatable)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    args = build_parser().parse_args(argv)
    from optframe.cli import commands

    handler = {
        "demo": commands.demo,
        "solve": commands.solve_one,
        "compare": commands.compare_command,
        "datasets": commands.datasets,
        "bench": commands.bench,
    }[args.command]
    try:
        return handler(args)
    except OptframeError as exc:
        print(f"optframe: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
