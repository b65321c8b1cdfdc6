"""``optframe``: the command line.

``optframe demo``              every back-end on LAD and weighted SVM, one table
``optframe solve MODEL``       one model, one driver, one back-end
``optframe compare MODEL``     every applicable driver x back-end pair on one model, one table
``optframe datasets``          the named data sets, and where each was found
``optframe bench SUITE``       run a benchmark suite on a Dask cluster, storing each cell in SQLite
``optframe report SUITE``      a suite's markdown report with plots, from the results database
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from optframe.errors import OptframeError

DEFAULT_DB = "optframe-results.sqlite"


def _add_problem_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", help="model class, e.g. LADRegression or WeightedSVM (any case)")
    parser.add_argument(
        "--data", required=True, help="data set name, any case (see `optframe datasets`)"
    )
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
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON record per result (status, objective, bound, gap, iterations, timings, "
        "stats, model, driver, backend) instead of the table",
    )
    parser.add_argument("--out", metavar="FILE", help="write the output to FILE")


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
    solve.add_argument(
        "--driver",
        default="auto",
        help="driver name (default: auto, chosen from the model's structures and size)",
    )
    solve.add_argument("--backend", default="auto", help="back-end, e.g. highs, pyomo:highs")
    solve.add_argument("--form", help="formulation for Direct, e.g. primal or dual")

    compare = commands.add_parser("compare", help="every driver x back-end pair on one model")
    _add_problem_arguments(compare)

    commands.add_parser("datasets", help="list the named data sets and where they were found")

    bench = commands.add_parser(
        "bench",
        help="run a benchmark suite on a Dask cluster, storing every cell in a SQLite database",
    )
    bench.add_argument("suite", help="suite name (optframe bench --list shows them)", nargs="?")
    bench.add_argument(
        "--list",
        action="store_true",
        help="list the suites with their cell counts and expected times (quick and full)",
    )
    bench.add_argument("--quick", action="store_true", help="the suite's small grid")
    bench.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="KEY=V1,V2",
        help="run only the cells whose KEY is one of the values (repeatable)",
    )
    bench.add_argument(
        "--repeat", type=int, default=1, metavar="K", help="repetitions per cell (default 1)"
    )
    bench.add_argument(
        "--db",
        default=DEFAULT_DB,
        metavar="PATH",
        help=f"results database; finished cells there are skipped (default {DEFAULT_DB})",
    )
    bench.add_argument(
        "--scheduler", metavar="ADDRESS", help="a running Dask scheduler, e.g. tcp://host:8786"
    )
    bench.add_argument(
        "--workers", type=int, metavar="N", help="local worker processes (default: one per core)"
    )
    bench.add_argument(
        "--serial", action="store_true", help="run the cells one by one in this process, no Dask"
    )
    bench.add_argument(
        "--time-limit",
        type=float,
        metavar="SECONDS",
        help="wall-clock limit per cell (default: the suite's own, if any)",
    )
    bench.add_argument(
        "--threads",
        type=int,
        default=1,
        metavar="N",
        help="threads of solvers, BLAS and numba in a cell (default 1; 0: the libraries' own)",
    )
    bench.add_argument(
        "--retry-failed", action="store_true", help="run again the cells stored as failed"
    )
    bench.add_argument(
        "--report", metavar="DIR", help="write the suite's report (markdown and plots) to DIR"
    )
    bench.add_argument("--jsonl", help="also append each new cell's record to this JSON-lines file")
    bench.add_argument(
        "--records",
        action="append",
        default=[],
        metavar="FILE",
        help="report the records of these --jsonl files instead of running (repeatable)",
    )

    report = commands.add_parser("report", help="write a suite's report from the results database")
    report.add_argument("suite", help="suite name")
    report.add_argument("--db", default=DEFAULT_DB, metavar="PATH", help="results database")
    report.add_argument(
        "--out", default=".", metavar="DIR", help="folder for SUITE.md and its plots"
    )
    report.add_argument(
        "--records",
        action="append",
        default=[],
        metavar="FILE",
        help="report the records of these --jsonl files instead of the database (repeatable)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    from optframe.cli import bench, commands
    from optframe.jit import announce

    announce()  # the one line the command line prints unasked: numba compiling its kernels

    handler = {
        "demo": commands.demo,
        "solve": commands.solve_one,
        "compare": commands.compare_command,
        "datasets": commands.datasets,
        "bench": bench.bench,
        "report": bench.report,
    }[args.command]
    try:
        return handler(args)
    except OptframeError as exc:
        # one line: the problem and the fix (a message's details, if any, follow its first line)
        print(f"optframe: {type(exc).__name__}: {exc.summary}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
