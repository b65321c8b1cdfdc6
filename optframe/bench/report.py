"""``optframe report SUITE``: a markdown report of a suite's records, with PNG plots.

The report holds the suite's table (one row per cell: the median over the repeats and, where the
repeats differ, ``[min, max]``), the paper's figures beside it, the ratios against the suite's
baseline measured in the same run, the plots the records have data for (speed-up bars, scaling
curves, convergence from ``history``, curves along a parameter path), the failures and the suite's
own ``summarize`` text. What the report knows of a suite comes from its optional ``REPORT``
mapping, read by :class:`optframe.bench.aggregate.ReportSpec`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from optframe.bench import plots
from optframe.bench.aggregate import (
    Ratios,
    ReportSpec,
    cell_rows,
    compute_ratios,
    group_cells,
    label,
    shown_columns,
    spread_text,
)
from optframe.bench.suite import load_suite

MAX_LISTED = 12


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """A markdown table of text rows."""
    lines = ["| " + " | ".join(_cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def _listed(items: Sequence[str]) -> str:
    shown = ", ".join(items[:MAX_LISTED])
    return shown + (f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else "")


def _ratio_section(ratios: Ratios, spec: ReportSpec, present: Sequence[str]) -> list[str]:
    lines = ["## Ratios against the baseline", ""]
    if not spec.method or not spec.baseline:
        return [*lines, "The suite declares no baseline (`REPORT`): no ratios.", ""]
    names = " or ".join(f"`{b}`" for b in spec.baseline)
    lines += [
        f"Speed-up = `{spec.metric}` of the baseline ({names}, the first measured in each problem)"
        f" / `{spec.metric}` of the method, over the pairs of records measured together (same "
        "repeat): median [min, max]. Above 1: faster than the baseline. *pairs* = 0: the records "
        "could not be paired and the entry is the ratio of the medians. A status other than "
        "optimal/converged may mean the time is a limit's.",
        "",
    ]
    keys = [k for k in spec.problem if k in present]
    rows = []
    for r in ratios.rows:
        row: dict[str, Any] = dict(zip(spec.problem, r.problem, strict=True))
        row |= {
            "method": r.method,
            spec.metric: spread_text(r.metric),
            "baseline": r.baseline,
            f"baseline {spec.metric}": spread_text(r.base_metric),
            "speed-up": spread_text(r.ratio),
            "pairs": r.pairs,
            "status (method / baseline)": f"{r.status} / {r.base_status}",
        }
        rows.append({k: "" if v is None else v for k, v in row.items()})
    if rows:
        columns = [*keys, "method", spec.metric, "baseline", f"baseline {spec.metric}"]
        columns += ["speed-up", "pairs", "status (method / baseline)"]
        lines += [table(rows, columns), ""]
    for reason, items in ratios.missing.items():
        text = {
            "no baseline": f"No baseline ({names}) was measured on {len(items)} problem(s), so "
            "they have no ratio",
            "baseline invalid": f"The baseline ({names}) has no valid `{spec.metric}` (failed or "
            f"skipped) on {len(items)} problem(s), so they have no ratio",
            "method invalid": f"{len(items)} method(s) have no valid `{spec.metric}` (failed or "
            "skipped), so no ratio",
        }[reason]
        lines += [f"{text}: {_listed(items)}.", ""]
    return lines


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' * (number != 1)}"


def _runs(counts: Sequence[int]) -> str:
    low, high = min(counts, default=0), max(counts, default=0)
    return _count(low, "run") if low == high else f"{low} to {high} runs"


def _figures(figures: list[plots.Figure], folder: str) -> list[str]:
    lines = []
    for caption, name in figures:
        lines += [f"![{caption}]({folder}/{name})", ""]
    return lines


def _failures(records: Sequence[Mapping[str, Any]], spec: ReportSpec) -> list[str]:
    failed = [r for r in records if r.get("error")]
    if not failed:
        return []
    keys = [*spec.problem, *([spec.method] if spec.method else [])]
    lines = ["## Failures", ""]
    for r in failed:
        where = label(keys, [r.get(k) for k in keys]) if keys else r.get("cell_key", "")
        lines.append(f"- {where} (repeat {r.get('repeat', 0)}): {r.get('status')}: {r['error']}")
    return [*lines, ""]


def _summary(suite: ModuleType, records: list[dict[str, Any]]) -> list[str]:
    summarize = getattr(suite, "summarize", None)
    if summarize is None:
        return []
    try:
        text = summarize(records)
    except Exception as exc:  # a report is still written; the error is shown in it
        text = f"summarize() failed: {type(exc).__name__}: {exc}"
    if not text:
        return []
    return ["## The suite's summary", "", "```text", text, "```", ""]


def render(
    suite: ModuleType,
    suite_name: str,
    records: list[dict[str, Any]],
    out_dir: Path,
    title: str | None = None,
) -> str:
    """The markdown text of the report; writes the PNGs into ``out_dir / suite_name``."""
    spec = ReportSpec.of(suite)
    folder = out_dir / suite_name
    records = [dict(r) for r in records]
    hook = getattr(suite, "complete", None)
    if hook is not None:  # the columns comparing cells of the same run
        hook(records)
    groups = group_cells(records, spec)
    columns = shown_columns(list(getattr(suite, "COLUMNS", [])), groups, spec)
    repeats = [len(g.records) for g in groups]
    pooled = ", ".join(f"`{k}`" for k in spec.replicates)
    pooled = f" (repeats and the values of {pooled})" if pooled else ""
    lines = [
        f"# {title or f'optframe bench {suite_name}'}",
        "",
        getattr(suite, "DESCRIPTION", ""),
        "",
        f"{_count(len(records), 'record')}, {_count(len(groups), 'cell')}, {_runs(repeats)} per "
        f"cell{pooled}. "
        "Numbers are the median over a cell's runs, followed by [min, max] where they differ; "
        "*runs* counts them.",
        "",
        "## Results",
        "",
        table(cell_rows(groups, columns), [*columns, "runs"]),
        "",
    ]
    paper = getattr(suite, "PAPER", None)
    if paper:
        lines += ["## The paper's figures", "", "```text", paper, "```", ""]
    ratios = compute_ratios(records, spec)
    present = [k for k in spec.problem if any(r.get(k) is not None for r in records)]
    lines += _ratio_section(ratios, spec, present)
    lines += _figures(plots.speedup_plots(ratios.rows, spec, folder), suite_name)
    names = plots.FileNames()
    with_history = len(plots.history_problems(records, spec))
    convergence = plots.convergence_plots(records, spec, folder, names)
    shown = (
        f" {len(convergence)} of the {with_history} problems with a history are shown, those "
        f"with the largest `{spec.metric}`."
        if len(convergence) < with_history
        else ""
    )
    note = {"Convergence": [f"From `history`: the lowest repeat of each method.{shown}", ""]}
    for heading, figures in (
        ("Scaling", plots.scaling_plots(records, spec, folder, names)),
        ("Convergence", convergence),
        ("Along the path", plots.path_plots(records, spec, folder, names)),
    ):
        if figures:
            lines += [f"## {heading}", "", *note.get(heading, []), *_figures(figures, suite_name)]
    lines += _failures(records, spec)
    lines += _summary(suite, records)
    return "\n".join(lines).rstrip() + "\n"


def write_report(
    suite_name: str,
    records: list[dict[str, Any]],
    out_dir: Path,
    *,
    title: str | None = None,
) -> Path:
    """Write ``out_dir / f"{suite_name}.md"`` and its PNGs in ``out_dir / suite_name``.

    Parameters
    ----------
    suite_name : str
        A bundled suite (:func:`optframe.bench.suite.suite_names`).
    records : list of dict
        The records: cell parameters, ``run_cell`` output, ``repeat`` and ``cell_key``; optionally
        ``history`` (rows of :func:`optframe.bench.history.history_rows`).
    out_dir : Path
        Where the report goes (created if needed).
    title : str, optional
        The report's heading; default ``optframe bench SUITE``.

    Returns
    -------
    Path
        The markdown file; its images are linked relative to it.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    text = render(load_suite(suite_name), suite_name, records, out_dir, title)
    path = out_dir / f"{suite_name}.md"
    path.write_text(text)
    return path
