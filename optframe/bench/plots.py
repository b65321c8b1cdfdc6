"""PNG plots of benchmark records (matplotlib's Agg canvas, no pyplot state).

Each function writes its figures into a directory and returns ``(caption, file name)`` pairs; a
figure is drawn only when the records hold the data for it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from optframe.bench.aggregate import (
    Ratio,
    ReportSpec,
    Spread,
    by_method,
    is_number,
    label,
    problems,
)

DPI = 100
MAX_PROBLEMS_PER_FIGURE = 25
MAX_CONVERGENCE = 12
Figure = tuple[str, str]


def _figure(width: float, height: float, panels: int = 1) -> tuple[Any, list[Any]]:
    """A figure on the Agg canvas and its axes (one row of ``panels``)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(width, height))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, panels, squeeze=False)[0]
    return fig, list(axes)


def _save(fig: Any, directory: Path, name: str) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(directory / name, dpi=DPI)
    return name


class FileNames:
    """File names from labels, unique within one report."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def __call__(self, prefix: str, text: str) -> str:
        """``prefix_text.png`` with unsafe characters replaced, numbered if already used."""
        stem = f"{prefix}_{re.sub(r'[^A-Za-z0-9.=-]+', '_', text).strip('_')}"[:90]
        name, k = f"{stem}.png", 1
        while name in self.used:
            k += 1
            name = f"{stem}_{k}.png"
        self.used.add(name)
        return name


def _first(records: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The record of the lowest repeat (a representative run)."""
    return min(records, key=lambda r: r.get("repeat", 0))


# -------------------------------------------------------------------------------- speed-up
def _speedup_parts(ratios: Sequence[Ratio], spec: ReportSpec) -> list[tuple[str, list[tuple]]]:
    """Problems split by the first problem key (when there are several keys), then in chunks."""
    order: dict[tuple, None] = dict.fromkeys(row.problem for row in ratios)
    parts: dict[str, list[tuple]] = {}
    for key in order:
        first = str(key[0]) if len(spec.problem) > 1 and key[0] is not None else ""
        parts.setdefault(first, []).append(key)
    out = []
    for first, keys in parts.items():
        for begin in range(0, len(keys), MAX_PROBLEMS_PER_FIGURE):
            chunk = keys[begin : begin + MAX_PROBLEMS_PER_FIGURE]
            number = f" {begin // MAX_PROBLEMS_PER_FIGURE + 1}" if len(chunk) < len(keys) else ""
            out.append(((first + number).strip(), chunk))
    return out


def speedup_plots(ratios: Sequence[Ratio], spec: ReportSpec, directory: Path) -> list[Figure]:
    """Horizontal bars of baseline / method per problem (median, whiskers min-max), log scale.

    One figure per value of the first problem key (if the spec has several keys), at most
    ``MAX_PROBLEMS_PER_FIGURE`` problems each.
    """
    figures = []
    names = FileNames()
    for part, chunk in _speedup_parts(ratios, spec):
        rows = [row for row in ratios if row.problem in chunk]
        methods = list(dict.fromkeys(row.method for row in rows))
        baselines = " or ".join(dict.fromkeys(row.baseline for row in rows))
        fig, (ax,) = _figure(8.0, 1.5 + 0.12 * len(rows) + 0.25 * len(chunk))
        bars: dict[str, list[tuple[float, float, Spread]]] = {m: [] for m in methods}
        for i, key in enumerate(chunk):  # the problem's bars share its slot, top to bottom
            here = [r for r in rows if r.problem == key]
            height = 0.8 / len(here)
            for k, row in enumerate(here):
                y = len(chunk) - 1 - i + 0.4 - (k + 0.5) * height
                bars[row.method].append((y, height, row.ratio))
        for (method, mine), color in zip(bars.items(), _colors(len(methods)), strict=True):
            ys, heights, spreads = zip(*mine, strict=True)
            errors = [[s.median - s.low for s in spreads], [s.high - s.median for s in spreads]]
            spread = any(e > 0 for side in errors for e in side)
            ax.barh(ys, [s.median for s in spreads], height=heights, color=color, label=method,
                    xerr=errors if spread else None, ecolor="0.3", capsize=2)  # fmt: skip
        ax.axvline(1.0, color="k", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_yticks(range(len(chunk)))
        keys = spec.problem[1:] if part else spec.problem
        ticks = [label(keys, key[1:] if part else key) for key in reversed(chunk)]
        ax.set_yticklabels(ticks, fontsize=7)
        ax.set_ylim(-0.6, len(chunk) - 0.4)
        ax.set_xlabel(f"speed-up = {spec.metric} of {baselines} / {spec.metric} of the method")
        ax.legend(fontsize=7, loc="best")
        ax.grid(True, axis="x", which="both", alpha=0.3)
        if part:
            ax.set_title(part, fontsize=9)
        caption = f"Speed-up against {baselines}" + (f", {part}" if part else "")
        name = names("speedup", part) if part else "speedup.png"
        figures.append((caption, _save(fig, directory, name)))
    return figures


def _colors(count: int) -> list[Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if count <= 10 else "tab20"]
    return [cmap(k % cmap.N) for k in range(count)]


# --------------------------------------------------------------------------------- scaling
def scaling_plots(
    records: Sequence[Mapping[str, Any]], spec: ReportSpec, directory: Path, names: FileNames
) -> list[Figure]:
    """Metric and peak memory against the size (log-log), one line per method, per problem."""
    size = spec.scaling
    if size is None or spec.method is None:
        return []
    keys = tuple(k for k in spec.problem if k != size)
    series = ReportSpec(method=spec.method, problem=keys)
    figures = []
    for problem, group in problems([r for r in records if is_number(r.get(size))], series).items():
        lines = {}
        for method, rows in by_method(group, spec).items():
            points = {}
            for x in sorted({float(r[size]) for r in rows}):
                at = [r for r in rows if float(r[size]) == x]
                points[x] = (
                    Spread.of([r.get(spec.metric) for r in at]),
                    Spread.of([r.get(spec.memory) for r in at]) if spec.memory else None,
                )
            if sum(1 for s, _ in points.values() if s is not None and s.finite) >= 2:
                lines[method] = points
        if not lines:
            continue
        memory = any(m is not None and m.finite for pts in lines.values() for _, m in pts.values())
        fig, axes = _figure(10.0 if memory else 5.5, 3.8, 2 if memory else 1)
        colors = _colors(len(lines))
        panels = [(axes[0], 0, spec.metric)] + ([(axes[1], 1, spec.memory)] if memory else [])
        for ax, slot, name in panels:
            for color, (method, points) in zip(colors, lines.items(), strict=True):
                xs, ys, lo, hi = [], [], [], []
                for x, spreads in points.items():
                    s = spreads[slot]
                    if s is not None and s.finite and s.median > 0:
                        xs.append(x)
                        ys.append(s.median)
                        lo.append(s.median - s.low)
                        hi.append(s.high - s.median)
                if xs:
                    ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", color=color, label=method,
                                capsize=2, markersize=4)  # fmt: skip
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(size)
            ax.set_ylabel(name)
            ax.grid(True, which="both", alpha=0.3)
        axes[0].legend(fontsize=7)
        text = label(keys, problem)
        fig.suptitle(f"scaling: {text}", fontsize=9)
        figures.append((f"Scaling, {text}", _save(fig, directory, names("scaling", text))))
    return figures


# ----------------------------------------------------------------------------- convergence
def _series(history: Sequence[Mapping[str, Any]], key: str) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for row in history:
        x, y = row.get("seconds"), row.get(key)
        if key == "gap" and not is_number(y):
            objective, bound = row.get("objective"), row.get("bound")
            if is_number(objective) and is_number(bound):
                y = (objective - bound) / max(1.0, abs(objective))
        if is_number(x) and is_number(y) and math.isfinite(y):
            xs.append(float(x))
            ys.append(float(y))
    return np.asarray(xs), np.asarray(ys)


def history_problems(
    records: Sequence[Mapping[str, Any]], spec: ReportSpec
) -> dict[tuple, list[dict]]:
    """The records with a non-empty ``history``, by problem."""
    with_history = [r for r in records if isinstance(r.get("history"), list) and r["history"]]
    return problems(with_history, spec)


def _slowest(groups: dict[tuple, list[dict]], metric: str, limit: int) -> dict[tuple, list]:
    """The ``limit`` problems with the largest metric (in their order), or all."""
    if len(groups) <= limit:
        return groups

    def cost(rows: list[dict]) -> float:
        values = [r[metric] for r in rows if is_number(r.get(metric)) and math.isfinite(r[metric])]
        return max(values, default=-math.inf)

    kept = set(sorted(groups, key=lambda key: cost(groups[key]), reverse=True)[:limit])
    return {key: rows for key, rows in groups.items() if key in kept}


def convergence_plots(
    records: Sequence[Mapping[str, Any]], spec: ReportSpec, directory: Path, names: FileNames
) -> list[Figure]:
    """Objective (bound dashed) and relative gap (log) against seconds, per problem.

    One line per method, from the method's record of the lowest repeat; at most
    ``MAX_CONVERGENCE`` problems, those with the largest metric. Without a bound in any history
    (S3VM: AID's aggregated MIQPs give none) the figure has the objective panel alone.
    """
    figures = []
    groups = _slowest(history_problems(records, spec), spec.metric, MAX_CONVERGENCE)
    for problem, group in groups.items():
        runs = {method: _first(rows)["history"] for method, rows in by_method(group, spec).items()}
        gaps = {method: _series(history, "gap") for method, history in runs.items()}
        gaps = {m: (xs[ys > 0], ys[ys > 0]) for m, (xs, ys) in gaps.items() if (ys > 0).any()}
        fig, axes = _figure(10.0 if gaps else 5.5, 3.8, 2 if gaps else 1)
        left, any_bound = axes[0], False
        for color, (method, history) in zip(_colors(len(runs)), runs.items(), strict=True):
            xs, ys = _series(history, "objective")
            if xs.size:
                left.plot(xs, ys, "-", marker=".", color=color, label=f"{method} objective")
            xs, ys = _series(history, "bound")
            if xs.size:
                any_bound = True
                left.plot(xs, ys, "--", color=color, label=f"{method} bound")
            if method in gaps:
                axes[1].plot(*gaps[method], "-", marker=".", color=color, label=method)
        left.set_xlabel("seconds")
        left.set_ylabel("objective / bound" if any_bound else "objective (no bound recorded)")
        left.legend(fontsize=7)
        if gaps:
            axes[1].set_xlabel("seconds")
            axes[1].set_ylabel("relative gap")
            axes[1].set_yscale("log")
            axes[1].legend(fontsize=7)
        text = label(spec.problem, problem)
        fig.suptitle(f"convergence: {text}", fontsize=9)
        figures.append((f"Convergence, {text}", _save(fig, directory, names("convergence", text))))
    return figures


# ------------------------------------------------------------------------------------ paths
def path_plots(
    records: Sequence[Mapping[str, Any]], spec: ReportSpec, directory: Path, names: FileNames
) -> list[Figure]:
    """Curves along the parameter path: their sum and each curve, one line per method."""
    path = spec.path
    if path is None:
        return []
    with_curves = [r for r in records if isinstance(r.get(path.x), list) and r[path.x]]
    grouping = ReportSpec(method=spec.method, problem=path.by)
    panels = (["total"] if len(path.y) > 1 else []) + list(path.y)
    figures = []
    for problem, group in problems(with_curves, grouping).items():
        runs = {method: _first(rows) for method, rows in by_method(group, spec).items()}
        fig, axes = _figure(3.6 * len(panels) + 0.6, 3.4, len(panels))
        for color, (method, record) in zip(_colors(len(runs)), runs.items(), strict=True):
            x = np.asarray(record[path.x], dtype=np.float64)
            curves = [np.asarray(record.get(y) or [np.nan] * x.size, dtype=np.float64)
                      for y in path.y]  # fmt: skip
            values = ([np.sum(curves, axis=0)] if len(path.y) > 1 else []) + curves
            for ax, y in zip(axes, values, strict=True):
                if y.shape == x.shape:
                    ax.plot(x, y, color=color, label=method)
        positive = x[x > 0]
        for ax, title in zip(axes, panels, strict=True):
            if positive.size and positive.max() / positive.min() > 100:
                ax.set_xscale("log")
            ax.set_xlabel(path.x)
            ax.set_ylabel(path.label)
            ax.set_title(title, fontsize=9)
            ax.grid(True, alpha=0.3)
        axes[0].legend(fontsize=7)
        text = label(path.by, problem)
        fig.suptitle(f"{path.label} along the path: {text}", fontsize=9)
        caption = f"{path.label.capitalize()} against {path.x}, {text}"
        figures.append((caption, _save(fig, directory, names("path", text))))
    return figures
