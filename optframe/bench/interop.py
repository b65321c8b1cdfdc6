"""``optframe bench export``: the stored records as a table in benchopt's result columns.

One row per stored cell (and repeat), with the column names of benchopt's result files where
benchopt has one:

``objective_name``
    The model (the record's ``model``, else its ``problem``, else the suite's name).
``dataset_name``
    The data set (``dataset`` or ``data``) with the suite's problem parameters in benchopt's
    bracket style, e.g. ``cpusmall[n=2000,m=12]``.
``solver_name``
    The method the suite compares (its ``REPORT["method"]`` key), else ``driver backend``.
``idx_rep``
    The repetition (``optframe bench --repeat``), from 0.
``time``
    Seconds: the suite's timing column (``REPORT["metric"]``, default ``seconds``).
``stop_val``
    The iterations, when the record has them.
``objective_value``, ``objective_dual_bound``, ``objective_gap``
    The objective, the proven bound and the relative gap (benchopt names a value ``v`` of its
    ``Objective.evaluate_result`` ``objective_v``).
``status``, ``p_solver_driver``, ``p_solver_backend``, ``suite``
    How the run ended, the driver and back-end (benchopt's prefix of a solver's parameters),
    and the optframe suite. A string column does not start with ``objective_``: benchopt plots
    every such column as a curve.

CSV is written with the standard library; Parquet through pandas and pyarrow.
"""

from __future__ import annotations

import csv
import importlib.util
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from optframe.errors import OptframeError

COLUMNS = (
    "objective_name",
    "dataset_name",
    "solver_name",
    "idx_rep",
    "time",
    "stop_val",
    "objective_value",
    "objective_dual_bound",
    "objective_gap",
    "status",
    "p_solver_driver",
    "p_solver_backend",
    "suite",
)
NUMBER_COLUMNS = frozenset(
    ("time", "stop_val", "objective_value", "objective_dual_bound", "objective_gap")
)
FORMATS = ("csv", "parquet")
_NAME_KEYS = ("dataset", "data")


class ExportError(OptframeError):
    """A results table that cannot be written or read: unknown format, missing library, bad file."""


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def benchopt_rows(
    suite: str, records: Iterable[Mapping[str, Any]], spec: Any = None
) -> list[dict[str, Any]]:
    """The records of ``suite`` as rows with the keys :data:`COLUMNS`.

    ``spec`` is the suite's :class:`~optframe.bench.aggregate.ReportSpec` (default: read from
    the suite module when it loads, else none).
    """
    from optframe.bench.aggregate import ReportSpec

    if spec is None:
        try:
            from optframe.bench.suite import load_suite

            spec = ReportSpec.of(load_suite(suite))
        except OptframeError:
            spec = ReportSpec()
    keys = [k for k in (*spec.problem, *spec.replicates) if k not in ("model", "problem")]
    rows = []
    for record in records:
        name = next((record[k] for k in _NAME_KEYS if record.get(k) is not None), None)
        params = [f"{k}={record[k]}" for k in keys if k not in _NAME_KEYS and k in record]
        dataset = str(name if name is not None else suite)
        if params:
            dataset += f"[{','.join(params)}]"
        driver, backend = _text(record.get("driver")), _text(record.get("backend"))
        method = _text(record.get(spec.method)) if spec.method else None
        solver = method or " ".join(x for x in (driver, backend) if x) or "unknown"
        rows.append(
            {
                "objective_name": str(record.get("model") or record.get("problem") or suite),
                "dataset_name": dataset,
                "solver_name": solver,
                "idx_rep": int(record.get("repeat") or 0),
                "time": _number(record.get(spec.metric)),
                "stop_val": _number(record.get("iterations")),
                "objective_value": _number(record.get("objective")),
                "objective_dual_bound": _number(record.get("bound")),
                "objective_gap": _number(record.get("gap")),
                "status": str(record.get("status", "unknown")),
                "p_solver_driver": driver,
                "p_solver_backend": backend,
                "suite": suite,
            }
        )
    return rows


def table_format(path: str | Path, fmt: str | None = None) -> str:
    """``fmt``, or the format the file's suffix names (``.csv``, ``.parquet``/``.pq``)."""
    if fmt is None:
        suffix = Path(path).suffix.lower()
        fmt = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}.get(suffix)
        if fmt is None:
            raise ExportError(
                f"cannot tell the format of {path} from its suffix; give --format csv or parquet"
            )
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    return fmt


def _pandas_with_pyarrow() -> Any:
    missing = [m for m in ("pandas", "pyarrow") if importlib.util.find_spec(m) is None]
    if missing:
        raise ExportError(
            f"Parquet needs {' and '.join(missing)}: pip install {' '.join(missing)} "
            "(or use --format csv)"
        )
    import pandas

    return pandas


def write_table(
    rows: Sequence[Mapping[str, Any]], path: str | Path, fmt: str | None = None
) -> Path:
    """Write ``rows`` (keys :data:`COLUMNS`) to ``path`` as CSV or Parquet; return the path."""
    path = Path(path)
    fmt = table_format(path, fmt)
    if not path.parent.is_dir():
        raise ExportError(f"cannot write {path}: its folder does not exist")
    if fmt == "parquet":
        pandas = _pandas_with_pyarrow()
        frame = pandas.DataFrame([{c: row.get(c) for c in COLUMNS} for row in rows])
        frame = frame.reindex(columns=list(COLUMNS))
        frame.to_parquet(path, index=False, engine="pyarrow")
        return path
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(COLUMNS), extrasaction="ignore")
        writer.writeheader()
        for row in rows:  # repr of a float reads back exactly; NaN and None as an empty field
            writer.writerow({c: _cell(row.get(c)) for c in COLUMNS})
    return path


def _cell(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return repr(value) if isinstance(value, float) else value


def read_table(path: str | Path, fmt: str | None = None) -> list[dict[str, Any]]:
    """The rows of a table written by :func:`write_table`, or of benchopt's result file.

    Only the :data:`COLUMNS` are read: numbers as floats (missing: NaN), text (missing: None).
    A benchopt file has no ``status``: its runs are judged by their ``objective_gap``.
    """
    path = Path(path)
    fmt = table_format(path, fmt)
    if not path.is_file():
        raise ExportError(f"no file {path}")
    if fmt == "parquet":
        pandas = _pandas_with_pyarrow()
        records = pandas.read_parquet(path).to_dict("records")
    else:
        with open(path, newline="") as handle:
            records = list(csv.DictReader(handle))
    required = ("objective_name", "dataset_name", "solver_name", "time")
    missing = [c for c in required if records and c not in records[0]]
    if missing:
        raise ExportError(
            f"{path} lacks the columns {missing} of optframe bench export and benchopt's results"
        )
    rows = []
    for record in records:  # a column a benchopt file lacks (status, ...) is missing in the row
        row: dict[str, Any] = {}
        for column in COLUMNS:
            value = record.get(column)
            if column in NUMBER_COLUMNS:
                row[column] = _number(value)
            elif column == "idx_rep":
                row[column] = 0 if value in ("", None) or _is_nan(value) else int(float(value))
            else:
                row[column] = None if _is_nan(value) else _text(value)
        rows.append(row)
    return rows


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)
