"""``optframe bench`` and ``optframe report``: run a suite into the results database, report it.

``optframe bench export`` and ``optframe bench report`` read the database for other tools:
benchopt's columns (:mod:`optframe.bench.interop`) and performance profiles
(:mod:`optframe.bench.profiles`).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import ProgressColumn
from rich.text import Text

from optframe.bench.estimate import RemainingTime, duration_text
from optframe.errors import OptframeError

INTERRUPTED = 130  # the shell's code for a command stopped by SIGINT


def _console() -> Console:
    from optframe.cli.commands import console

    return console


def resume_command(argv: list[str]) -> str:
    """The command line that runs ``argv`` again, as a user would type it."""
    return shlex.join(["optframe", *argv])


def suite_listing(workers: int | None = None) -> list[str]:
    """One line per bundled suite: description, cells and expected time of both grids."""
    from optframe.bench.suite import expected_seconds, load_suite, suite_names

    workers = workers or os.cpu_count() or 1
    lines = []
    for name in suite_names():
        suite = load_suite(name)
        parts = []
        for quick, grid in ((True, "--quick"), (False, "full")):
            cells = suite.cells(quick)
            seconds = [expected_seconds(suite, cell, quick) for cell in cells]
            if any(s is None for s in seconds):
                expected = "time not declared"
            else:
                total = sum(s for s in seconds if s is not None)
                wall = max(total / workers, max(seconds, default=0.0) or 0.0)
                expected = (
                    f"~{duration_text(total)} of cell time, ~{duration_text(wall)} on "
                    f"{workers} worker{'s' * (workers != 1)}"
                )
            parts.append(f"{grid}: {len(cells)} cells, {expected}")
        lines.append(f"{name}: {suite.DESCRIPTION}")
        lines.append(f"    {'; '.join(parts)}")
    return lines


def _summary_text(suite_name: str, suite: Any, records: list[dict[str, Any]]) -> str:
    from optframe.bench.aggregate import distinguishing_columns
    from optframe.bench.suite import markdown_table

    parts = [f"# optframe bench {suite_name}", "", suite.DESCRIPTION, ""]
    columns = distinguishing_columns(records, list(suite.COLUMNS))
    parts.append(markdown_table(records, ["repeat", *columns]))
    if hasattr(suite, "summarize"):
        parts += ["", suite.summarize(records)]
    if getattr(suite, "PAPER", None):
        parts += ["", "Paper's figures:", "", suite.PAPER]
    return "\n".join(parts) + "\n"


def _write_report(suite_name: str, records: list[dict[str, Any]], out: str) -> None:
    from optframe.bench.report import write_report

    path = write_report(suite_name, records, Path(out))
    _console().print(f"report: {path}", highlight=False)


def bench(args: argparse.Namespace) -> int:
    """``optframe bench SUITE``: run a suite's pending cells, store them, print the table.

    Ctrl-C stops the run with one line naming the command that resumes it (exit code 130).
    """
    argv = list(getattr(args, "argv", None) or sys.argv[1:])
    try:
        return _bench(args, argv)
    except KeyboardInterrupt:
        print(
            f"optframe bench: interrupted; the finished cells are stored in {args.db}. "
            f"Resume with: {resume_command(argv)}",
            file=sys.stderr,
        )
        return INTERRUPTED


def _bench(args: argparse.Namespace, argv: list[str]) -> int:
    from optframe.bench.runner import run_bench
    from optframe.bench.store import ResultStore
    from optframe.bench.suite import complete, load_suite, parse_filters, read_records

    console = _console()
    if args.list or not args.suite:
        for line in suite_listing(args.workers):
            console.print(line, markup=False, highlight=False)
        return 0
    suite = load_suite(args.suite)
    if args.records:
        records = read_records(args.records)
    else:
        select = parse_filters(args.filter) if args.filter else None
        progress = _Progress(suite, args.quick, args.time_limit, args.jsonl)
        with ResultStore(args.db) as store, progress:
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
                argv=["optframe", *argv],
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


def _rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The records of ``--suite`` (default: every suite) in ``--db``, as benchopt rows."""
    from optframe.bench.interop import benchopt_rows
    from optframe.bench.store import ResultStore

    if not Path(args.db).is_file():
        raise OptframeError(f"no results database {args.db}; give --db PATH")
    with ResultStore(args.db) as store:
        suites = args.suite or store.suites()
        rows = [row for suite in suites for row in benchopt_rows(suite, store.records(suite))]
    if not rows:
        which = ", ".join(args.suite) if args.suite else "any suite"
        raise OptframeError(f"no records of {which} in {args.db}")
    return rows


def export(args: argparse.Namespace) -> int:
    """``optframe bench export PATH``: the stored records in benchopt's columns, CSV or Parquet."""
    from optframe.bench.interop import write_table

    rows = _rows(args)
    path = write_table(rows, args.path, args.format)
    _console().print(f"{len(rows)} rows: {path}", highlight=False)
    return 0


def profiles_report(args: argparse.Namespace) -> int:
    """``optframe bench report``: performance profiles (PNG) and the per-solver markdown table."""
    from optframe.bench.interop import read_table
    from optframe.bench.profiles import Runs, markdown, plot_profiles

    if args.tables:
        rows = [row for path in args.tables for row in read_table(path)]
        if args.suite:
            rows = [row for row in rows if row.get("suite") in args.suite]
    else:
        rows = _rows(args)
    out = Path(args.out)
    if not out.is_dir():
        raise OptframeError(f"--out {out} is not a folder")
    runs = Runs.of(rows, args.tol)
    text = markdown(runs, args.tol, args.shift, args.time_limit)
    png = plot_profiles(runs, out / "profiles.png")
    document = f"# Performance profiles\n\n![performance profiles]({png.name})\n\n{text}\n"
    (out / "profiles.md").write_text(document)
    _console().print(text, markup=False, highlight=False, soft_wrap=True)
    _console().print(f"report: {out / 'profiles.md'}, {png}", highlight=False)
    return 0


class _TimeLeft(ProgressColumn):
    """``left ~3 min``: the per-kind estimate of :class:`RemainingTime`."""

    def __init__(self, progress: _Progress) -> None:
        super().__init__()
        self.progress = progress

    def render(self, task: Any) -> Text:
        estimate = self.progress.estimate
        seconds = None if estimate is None else estimate.seconds_left()
        return Text(f"left ~{duration_text(seconds)}", style="progress.remaining")


class _Progress:
    """Cells done, failed and remaining, with the time left estimated per kind of cell (rich)."""

    def __init__(
        self, suite: Any, quick: bool, time_limit: float | None, jsonl: str | None = None
    ) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.suite, self.quick, self.time_limit = suite, quick, time_limit
        self.estimate: RemainingTime | None = None
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("failed {task.fields[failed]}"),
            TimeElapsedColumn(),
            _TimeLeft(self),
            console=_console(),
        )
        self.task: Any = None
        self.jsonl = jsonl

    def __enter__(self) -> _Progress:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(*exc)

    def start(self, jobs: list[Any], done: int, workers: int) -> None:
        """Called once the pending jobs and the number of cells run at once are known."""
        from optframe.bench.suite import cell_kind, expected_seconds

        if done:
            _console().print(f"{done} cells already in the database: skipped", highlight=False)
        pending = [
            (
                (job.cell.key, job.repeat),
                cell_kind(self.suite, job.cell),
                expected_seconds(self.suite, job.cell, self.quick, self.time_limit),
            )
            for job in jobs
        ]
        self.estimate = RemainingTime(pending, workers=workers)
        self.task = self.bar.add_task("cells", total=len(jobs), failed=0)

    def update(self, job: Any, record: dict[str, Any], done: int, failed: int, total: int) -> None:
        """Called after each stored cell."""
        if self.jsonl:  # as soon as the cell is stored, so a killed run keeps it here too
            line = record | {"cell_key": job.cell.key, "repeat": job.repeat}
            with open(self.jsonl, "a") as handle:
                handle.write(json.dumps(line, default=str) + "\n")
        if self.estimate is not None:
            self.estimate.finished((job.cell.key, job.repeat), record.get("cell_seconds"))
        status = record.get("status")
        _console().print(f"[{done}/{total}] {job.label}: {status}", markup=False, highlight=False)
        self.bar.update(self.task, completed=done, failed=failed)
