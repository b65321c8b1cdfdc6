"""What each ``optframe`` sub-command does; imported only when the command line runs."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from optframe import registry
from optframe.compare import Comparison, compare
from optframe.data import Dataset, load_dataset
from optframe.drivers import Direct, Driver
from optframe.errors import ModelError, OptframeError
from optframe.model import Model
from optframe.result import Result
from optframe.solve import solve

# Tables stay readable when the output is a file or a pipe (rich would assume 80 columns).
console = Console(width=None if Console().is_terminal else 160)
DEMO_TIME_LIMIT = 20.0


def _parse_value(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _parse_params(pairs: list[str]) -> dict[str, Any]:
    params = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise ModelError(f"--param takes NAME=VALUE; got {pair!r}")
        params[name.strip()] = _parse_value(value.strip())
    return params


def _make_model(name: str, data: Dataset, params: dict[str, Any]) -> Model:
    known = registry.models()
    if name not in known:
        raise ModelError(f"unknown model {name!r}; known models: {sorted(known)}")
    try:
        return known[name](data, **params)
    except TypeError as exc:
        raise ModelError(f"bad parameters for {name}: {exc}") from None


def _problem(args: argparse.Namespace) -> Model:
    data = load_dataset(args.data, split=args.split)
    if args.rows is not None:
        data = data.subset(np.arange(min(args.rows, data.n_samples)))
    return _make_model(args.model, data, _parse_params(args.param))


def _row(run: Comparison, reference: Result) -> list[str]:
    result = run.result
    assert result is not None
    difference = run.difference(reference)
    objective = f"{result.objective:.8g}" if result.has_solution else "—"
    bound = "—" if result.bound is None else f"{result.bound:.8g}"
    gap = f"{result.gap:.1e}" if math.isfinite(result.gap) else "—"
    return [
        run.pair.label,
        result.backend,
        result.status.value,
        objective,
        bound,
        gap,
        f"{difference:.1e}" if math.isfinite(difference) else "—",
        f"{result.timings.build:.3f}",
        f"{result.timings.solve:.3f}",
        f"{result.timings.total:.3f}",
    ]


def _comparison_table(title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("driver", "back-end", "status", "objective", "bound", "gap"):
        table.add_column(column, justify="left" if column in ("driver", "back-end") else "right")
    for column in ("vs ref", "build s", "solve s", "total s"):
        table.add_column(column, justify="right")
    return table


def compare_model(model: Model, title: str, **options: Any) -> Table:
    """Solve ``model`` with every applicable pair and return the comparison table.

    The reference is Direct on the default back-end of the model's problem class; "vs ref" is
    ``|objective - reference| / max(1, |reference|)``.
    """
    reference, runs = compare(model, **options)
    table = _comparison_table(f"{title} — reference: {reference.backend}, {reference.status.value}")
    for run in runs:
        if run.result is None:
            table.add_row(run.pair.label, run.pair.backend, f"refused: {run.refusal}", *[""] * 7)
        else:
            table.add_row(*_row(run, reference))
    return table


def solve_one(args: argparse.Namespace) -> int:
    """``optframe solve``: one model, one driver, one back-end."""
    model = _problem(args)
    driver: Driver | str = Direct(form=args.form) if args.driver == "direct" else args.driver
    result = solve(
        model, driver=driver, backend=args.backend, time_limit=args.time_limit, tol=args.tol
    )
    console.print(result.summary())
    for name, value in result.solution.items():
        shown = np.array2string(np.asarray(value)[:8], precision=5, separator=", ")
        more = f" ... ({len(value)} values)" if np.size(value) > 8 else ""
        console.print(f"  {name} = {shown}{more}")
    return 0 if result.status.is_success else 1


def compare_command(args: argparse.Namespace) -> int:
    """``optframe compare``: every applicable driver x back-end pair on one model."""
    model = _problem(args)
    title = f"{model.name} on {args.data} (n={model.data.n_samples}, m={model.data.n_features})"
    console.print(compare_model(model, title, time_limit=args.time_limit, tol=args.tol))
    return 0


def datasets(args: argparse.Namespace) -> int:
    """``optframe datasets``: the named data sets and where each was found."""
    from optframe.data import list_datasets

    table = Table(title="data sets (OPTFRAME_DATA, then the cache)", title_justify="left")
    for column in ("name", "also called", "task", "splits", "n", "m", "found"):
        table.add_column(column)
    for info in list_datasets():
        table.add_row(
            info.name,
            ", ".join(info.aliases),
            info.task,
            ", ".join(info.splits),
            str(info.n),
            str(info.m),
            str(info.location),
        )
    console.print(table)
    return 0


def demo(args: argparse.Namespace) -> int:
    """``optframe demo``: Direct on every back-end, for LAD and weighted SVM, on bundled data."""
    from optframe.cli.demo_problems import demo_problems

    start = time.perf_counter()
    console.print(
        f"Direct on every back-end, each solve limited to {DEMO_TIME_LIMIT:g} s; 'vs ref' is the "
        "relative difference from the reference objective."
    )
    for title, model in demo_problems(quick=args.quick):
        console.print(compare_model(model, title, time_limit=DEMO_TIME_LIMIT))
    console.print(f"demo finished in {time.perf_counter() - start:.1f} s")
    return 0


def _summary_text(suite_name: str, suite: Any, records: list[dict[str, Any]]) -> str:
    from optframe.bench.suite import markdown_table

    parts = [f"# optframe bench {suite_name}", "", suite.DESCRIPTION, ""]
    parts.append(markdown_table(records, ["repeat", *suite.COLUMNS]))
    if hasattr(suite, "summarize"):
        parts += ["", suite.summarize(records)]
    if getattr(suite, "PAPER", None):
        parts += ["", "Paper's figures:", "", suite.PAPER]
    return "\n".join(parts) + "\n"


def _write_report(suite_name: str, records: list[dict[str, Any]], out: str) -> None:
    from pathlib import Path

    from optframe.bench.report import write_report

    path = write_report(suite_name, records, Path(out))
    console.print(f"report: {path}", highlight=False)


def bench(args: argparse.Namespace) -> int:
    """``optframe bench SUITE``: run a suite's pending cells, store them, print the table."""
    from optframe.bench.runner import run_bench
    from optframe.bench.store import ResultStore
    from optframe.bench.suite import (
        complete,
        load_suite,
        parse_filters,
        read_records,
        suite_names,
    )

    if args.list or not args.suite:
        for name in suite_names():
            console.print(f"{name}: {load_suite(name).DESCRIPTION}")
        return 0
    suite = load_suite(args.suite)
    if args.records:
        records = read_records(args.records)
    else:
        select = parse_filters(args.filter) if args.filter else None
        with ResultStore(args.db) as store, _Progress(args.jsonl) as progress:
            records = run_bench(
                args.suite,
                store,
                quick=args.quick,
                select=select,
                repeat=args.repeat,
                time_limit=args.time_limit,
                scheduler=args.scheduler,
                workers=args.workers,
                serial=args.serial,
                retry_failed=args.retry_failed,
                threads=args.threads or None,
                argv=sys.argv,
                on_start=progress.start,
                on_record=progress.update,
            )
    complete(suite, records)
    console.print(_summary_text(args.suite, suite, records), markup=False, highlight=False)
    if args.report:
        _write_report(args.suite, records, args.report)
    failed = [r for r in records if r.get("status") == "failed"]
    return 1 if failed else 0


def report(args: argparse.Namespace) -> int:
    """``optframe report SUITE``: the suite's report from the results database (or records)."""
    from optframe.bench.store import ResultStore
    from optframe.bench.suite import load_suite, read_records

    load_suite(args.suite)  # an unknown suite is an error before the database is opened
    if args.records:
        records = read_records(args.records)
    else:
        with ResultStore(args.db) as store:
            records = store.records(args.suite)
    if not records:
        raise OptframeError(f"no records of suite {args.suite!r} in {args.db}")
    _write_report(args.suite, records, args.out)
    return 0


class _Progress:
    """Cells done, failed and remaining, with an estimate of the time left (rich)."""

    def __init__(self, jsonl: str | None = None) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("failed {task.fields[failed]}"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=console,
        )
        self.task: Any = None
        self.jsonl = jsonl

    def __enter__(self) -> _Progress:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)

    def start(self, pending: int, done: int) -> None:
        if done:
            console.print(f"{done} cells already in the database: skipped", highlight=False)
        self.task = self.bar.add_task("cells", total=pending, failed=0)

    def update(self, job: Any, record: dict[str, Any], done: int, failed: int, total: int) -> None:
        if self.jsonl:  # as soon as the cell is stored, so a killed run keeps it here too
            with open(self.jsonl, "a") as handle:
                handle.write(json.dumps(record, default=str) + "\n")
        status = record.get("status")
        console.print(f"[{done}/{total}] {job.label}: {status}", markup=False, highlight=False)
        self.bar.update(self.task, completed=done, failed=failed)
