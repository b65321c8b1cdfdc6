"""What each ``optframe`` sub-command does; imported only when the command line runs."""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
from rich.console import Console, RenderableType
from rich.table import Table

from optframe.cli import expressions, names
from optframe.cli.output import figures, json_line, result_record
from optframe.cli.progress import DelayedProgress
from optframe.cli.tables import comparison_table, row_of, solver_words
from optframe.compare import compare
from optframe.data import Dataset, load_dataset
from optframe.drivers import Direct, Driver
from optframe.errors import DataError, ModelError, OptframeError
from optframe.model import Model
from optframe.solve import solve

# Tables stay readable when the output is a file or a pipe (rich would assume 80 columns).
FILE_WIDTH = 160
console = Console(width=None if Console().is_terminal else FILE_WIDTH)
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


def _make_model(name: str | type, data: Dataset, params: dict[str, Any]) -> Model:
    cls = names.model_class(name) if isinstance(name, str) else name
    names.check_parameters(cls, params)
    try:
        return cls(data, **params)
    except TypeError as exc:
        hint = ""
        if "loss" in str(exc) and "loss" in names.model_parameters(cls):
            hint = " (give the loss with --loss, e.g. --loss 'Huber(1.0)')"
        raise ModelError(f"bad parameters for {cls.__name__}: {exc}{hint}") from None


def _model_class(args: argparse.Namespace) -> type:
    """The model the command names: a registered one, ``module:Class``, or EmpiricalRisk."""
    given = [m for m in (args.model, getattr(args, "model_option", None)) if m]
    if len(given) > 1:
        raise ModelError("name the model once: as MODEL or as --model, not both")
    if not given:
        if getattr(args, "loss", None) is None:
            raise ModelError(
                "name a model (e.g. LADRegression), give --model package.module:Class, or give "
                "--loss to build an EmpiricalRisk"
            )
        return names.model_class("EmpiricalRisk")
    if ":" in given[0]:
        return expressions.user_model_class(given[0])
    try:
        return names.model_class(given[0])
    except ModelError as exc:
        hint = "A model of your own: --model package.module:Class."
        raise ModelError(f"{exc.summary} {hint}") from None


def _model_params(args: argparse.Namespace, cls: type) -> dict[str, Any]:
    """The model's parameters: ``--param`` pairs, and the ``--loss`` and ``--penalty`` objects."""
    params = _parse_params(args.param)
    accepted = names.model_parameters(cls)
    for option, build in (("loss", expressions.loss), ("penalty", expressions.penalty)):
        text = getattr(args, option, None)
        if text is None:
            continue
        if option not in accepted:
            raise ModelError(
                f"{cls.__name__} takes no {option}; --{option} builds an EmpiricalRisk (name "
                "EmpiricalRisk or no model) or a model whose constructor has a "
                f"{option!r} parameter"
            )
        if option in params:
            raise ModelError(f"give the {option} once: --{option} or --param {option}=, not both")
        params[option] = build(text)
    names.check_parameters(cls, params)
    return params


def _problem(args: argparse.Namespace) -> Model:
    cls = _model_class(args)  # a misspelt model or loss fails before the data is read
    params = _model_params(args, cls)
    try:
        data = load_dataset(args.data, split=args.split)
    except DataError as exc:
        raise names.data_error(exc) from None
    if args.rows is not None:
        data = data.subset(np.arange(min(args.rows, data.n_samples)))
    return _make_model(cls, data, params)


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[Console]:
    """The console to print to: the terminal, or the file ``--out`` names."""
    if path is None:
        yield console
        return
    try:
        handle = open(path, "w")  # noqa: SIM115 (closed below, after the yield)
    except OSError as exc:
        raise OptframeError(f"cannot write --out {path}: {exc.strerror or exc}") from exc
    with handle:
        yield Console(file=handle, width=FILE_WIDTH, color_system=None)


def _emit(out: Console, text: str) -> None:
    out.print(text, markup=False, highlight=False, soft_wrap=True)


def compare_model(
    model: Model, title: str, out: Console | None = None, **options: Any
) -> RenderableType:
    """Solve ``model`` with every applicable pair and return the comparison table.

    The reference is Direct on the default back-end of the model's problem class; "vs ref" is
    ``|objective - reference| / max(1, |reference|)``. A run that is not optimal shows the
    solver's own words (``stats["solver_status"]``) in the last column.
    """
    out = out or console
    with DelayedProgress(f"compare {model.name}") as progress:
        reference, runs = compare(model, progress=progress, **options)
    status = reference.status.value
    words = solver_words(reference)
    heading = f"{title} — reference: {reference.backend}, {status}"
    heading += f" ({words})" if words else ""
    return comparison_table(heading, [row_of(run, reference) for run in runs], out)


def solve_one(args: argparse.Namespace) -> int:
    """``optframe solve``: one model, one driver, one back-end; a summary or a JSON record."""
    model = _problem(args)
    if args.driver.lower() == "auto" and args.form is None:
        driver: Driver | str = "auto"
    else:
        name = names.driver_class("direct" if args.driver.lower() == "auto" else args.driver).name
        driver = Direct(form=args.form) if name == Direct.name else name
    backend = names.backend_name(args.backend)
    result = solve(model, driver=driver, backend=backend, time_limit=args.time_limit, tol=args.tol)
    with _output(args.out) as out:
        if args.json:
            _emit(out, json_line(result_record(result)))
        else:
            _emit(out, result.summary())
            words = solver_words(result)
            if words:
                _emit(out, f"  solver says: {words}")
            for line in figures(model, result):
                _emit(out, f"  {line}")
    return 0 if result.status.is_success else 1


def compare_command(args: argparse.Namespace) -> int:
    """``optframe compare``: every applicable driver x back-end pair on one model."""
    model = _problem(args)
    options = {"time_limit": args.time_limit, "tol": args.tol}
    with _output(args.out) as out:
        if args.json:
            with DelayedProgress(f"compare {model.name}") as progress:
                reference, runs = compare(model, progress=progress, **options)
            _emit(out, json_line(result_record(reference, pair="reference")))
            for run in runs:
                extra = {"pair": f"{run.pair.label} {run.pair.backend}"}
                if run.result is None:
                    _emit(out, json_line(extra | {"status": "refused", "reason": run.refusal}))
                else:
                    extra["vs_ref"] = run.difference(reference)
                    _emit(out, json_line(result_record(run.result, **extra)))
        else:
            data = model.data
            title = f"{model.name} on {args.data} (n={data.n_samples}, m={data.n_features})"
            out.print(compare_model(model, title, out, **options))
    return 0


NO_DATA_HINT = (
    "No data file was found: set OPTFRAME_DATA to the benchmark data folder (for this "
    "repository's tests, ../shared/datasets), or run with network access and each set is "
    "downloaded into the cache on first use."
)


def datasets(args: argparse.Namespace) -> int:
    """``optframe datasets``: the named data sets and where each was found."""
    from optframe.data import list_datasets

    table = Table(title="data sets (OPTFRAME_DATA, then the cache)", title_justify="left")
    for column in ("name", "also called", "task", "splits", "n", "m", "found"):
        table.add_column(column)
    infos = list_datasets()
    for info in infos:
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
    files = [info for info in infos if not str(info.location).startswith("package:")]
    if files and all(info.location == "missing" for info in files):
        console.print(NO_DATA_HINT, markup=False, highlight=False, soft_wrap=True)
    return 0


def demo(args: argparse.Namespace) -> int:
    """``optframe demo``: Direct on every back-end, for LAD and weighted SVM, on bundled data."""
    from optframe.cli.demo_problems import demo_problems
    from optframe.compare import applicable_pairs
    from optframe.jit import compile_in_background, needs_of

    start = time.perf_counter()
    console.print(
        f"Direct on every back-end, each solve limited to {DEMO_TIME_LIMIT:g} s; 'vs ref' is the "
        "relative difference from the reference objective."
    )
    problems = list(demo_problems(quick=args.quick))
    # numba kernels compile once per install, for what these problems need: in another process
    # while the back-ends solve (each driver waits for it, outside its time limit)
    compile_in_background(
        (pair.driver, needs_of(model, pair.driver))
        for _, model in problems
        for pair in applicable_pairs(model)
    )
    for title, model in problems:
        console.print(compare_model(model, title, time_limit=DEMO_TIME_LIMIT))
    console.print(f"demo finished in {time.perf_counter() - start:.1f} s")
    return 0
