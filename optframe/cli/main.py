"""``optframe``: the command line.

``optframe demo``              every back-end on LAD and weighted SVM, one table
``optframe solve MODEL``       one model, one driver, one back-end (or ``--loss``/``--penalty``)
``optframe compare MODEL``     every applicable driver x back-end pair on one model, one table
``optframe datasets``          the named data sets, and where each was found
``optframe bench SUITE``       run a benchmark suite on a Dask cluster, storing each cell in SQLite
``optframe report SUITE``      a suite's markdown report with plots, from the results database
``optframe bench export PATH`` the stored records in benchopt's result columns, CSV or Parquet
``optframe bench report``      performance profiles, shifted geometric means, success rates
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from optframe.errors import OptframeError

DEFAULT_DB = "optframe-results.sqlite"


def _add_problem_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "model",
        nargs="?",
        help="model class, e.g. LADRegression or WeightedSVM (any case), or package.module:Class; "
        "without it, --loss builds an EmpiricalRisk",
    )
    parser.add_argument(
        "--model",
        dest="model_option",
        metavar="MODULE:CLASS",
        help="a model class of your own, e.g. mypackage.models:MyModel, imported from PYTHONPATH "
        "or the working folder and built like the registered models: Class(data, **params)",
    )
    parser.add_argument(
        "--loss",
        metavar="EXPR",
        help="the loss of an EmpiricalRisk, a call of a class of optframe.losses with literal "
        "arguments, e.g. 'Huber(1.0)', 'Pinball(tau=0.9)', 'Hinge()'",
    )
    parser.add_argument(
        "--penalty",
        metavar="EXPR",
        help="its penalty, a class of optframe.penalties: 'L2()' (default), 'L1()', "
        "'ElasticNet(l1_ratio=0.5)' or 'None'; the loss weight is --param C=VALUE",
    )
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
        epilog="optframe bench export PATH: the records in benchopt's columns, CSV or Parquet. "
        "optframe bench report: performance profiles, shifted geometric means and success rates "
        "per solver. See optframe bench export --help and optframe bench report --help.",
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


def build_bench_tools_parser() -> argparse.ArgumentParser:
    """The parser of ``optframe bench export`` and ``optframe bench report``."""
    parser = argparse.ArgumentParser(prog="optframe bench")
    tools = parser.add_subparsers(dest="tool", required=True)
    export = tools.add_parser(
        "export",
        help="the stored records as a table in benchopt's result columns (CSV or Parquet)",
        description="Write the stored records, one row per cell and repeat, in benchopt's result "
        "columns: objective_name (the model), dataset_name, solver_name, idx_rep, time, "
        "stop_val (iterations), objective_value, objective_dual_bound, objective_gap, then "
        "status, p_solver_driver, p_solver_backend and suite. Parquet needs pandas and pyarrow.",
    )
    export.add_argument("path", metavar="PATH", help="the file to write")
    export.add_argument(
        "--format", choices=("csv", "parquet"), help="default: from PATH's suffix (.csv, .parquet)"
    )
    report = tools.add_parser(
        "report",
        help="performance profiles, shifted geometric means and success rates per solver",
        description="Dolan-More performance profiles (PNG) and, per solver, the success rate and "
        "the shifted geometric mean of the times (qpbenchmark's, shift 10 s) as a markdown table. "
        "A problem is one (model, data set, repetition); a run is a success when its status is "
        "optimal or its gap is at most --tol; a failed or missing run counts the time limit in "
        "the mean.",
    )
    report.add_argument(
        "--from",
        dest="tables",
        action="append",
        default=[],
        metavar="FILE",
        help="read these exported tables (CSV or Parquet) instead of the database (repeatable)",
    )
    report.add_argument(
        "--out", default=".", metavar="DIR", help="folder for profiles.md and profiles.png"
    )
    report.add_argument(
        "--tol", type=float, default=1e-6, help="gap within which a run counts as a success"
    )
    report.add_argument(
        "--shift", type=float, default=10.0, help="shift of the geometric mean, seconds"
    )
    report.add_argument(
        "--time-limit",
        type=float,
        metavar="SECONDS",
        help="the time a failure counts (default: the largest time measured)",
    )
    for tool in (export, report):
        tool.add_argument("--db", default=DEFAULT_DB, metavar="PATH", help="results database")
        tool.add_argument(
            "--suite",
            action="append",
            default=[],
            help="only this suite's records (repeatable; default: every suite in the database)",
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"] and argv[1:2] in (["export"], ["report"]):
        args = build_bench_tools_parser().parse_args(argv[1:])
        args.command = f"bench {args.tool}"
    else:
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
        "bench export": bench.export,
        "bench report": bench.profiles_report,
    }[args.command]
    try:
        return handler(args)
    except OptframeError as exc:
        # one line: the problem and the fix (a message's details, if any, follow its first line)
        print(f"optframe: {type(exc).__name__}: {exc.summary}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
