"""What each ``optframe`` sub-command does; imported only when the command line runs."""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from optframe import registry
from optframe.compare import Comparison, compare
from optframe.data import Dataset, load_dataset
from optframe.drivers import Direct, Driver
from optframe.errors import ModelError
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
    from optframe.compare import applicable_pairs
    from optframe.jit import compile_kernels

    start = time.perf_counter()
    console.print(
        f"Direct on every back-end, each solve limited to {DEMO_TIME_LIMIT:g} s; 'vs ref' is the "
        "relative difference from the reference objective."
    )
    problems = list(demo_problems(quick=args.quick))
    # numba kernels compile here, once per install, not inside a solve's time limit
    compile_kernels(pair.driver for _, model in problems for pair in applicable_pairs(model))
    for title, model in problems:
        console.print(compare_model(model, title, time_limit=DEMO_TIME_LIMIT))
    console.print(f"demo finished in {time.perf_counter() - start:.1f} s")
    return 0
