"""What ``optframe solve`` and ``compare`` print: JSON records and the figures a person wants."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from optframe.model import Model
from optframe.result import Result

# Coefficients below this share of the largest one count as zero.
ZERO = 1e-8
DUAL_NAMES = ("alpha", "sigma")  # dual coefficients whose non-zeros are support vectors
WEIGHT_NAMES = ("w", "beta")


def json_safe(value: Any) -> Any:
    """``value`` with numpy types as Python ones and non-finite floats as ``None``."""
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def result_record(result: Result, **extra: Any) -> dict[str, Any]:
    """The fields of ``result`` without its arrays, JSON-safe, then ``extra``."""
    record = {
        "status": result.status.value,
        "objective": result.objective,
        "bound": result.bound,
        "gap": result.gap,
        "iterations": result.iterations,
        "timings": dataclasses.asdict(result.timings),
        "stats": dict(result.stats),
        "model": result.model,
        "driver": result.driver,
        "backend": result.backend,
    }
    return json_safe(record | extra)


def json_line(record: Mapping[str, Any]) -> str:
    """One line of strict JSON (no NaN)."""
    return json.dumps(json_safe(record), allow_nan=False, sort_keys=False)


def _nonzeros(values: Any) -> tuple[int, int]:
    a = np.abs(np.asarray(values, dtype=np.float64).ravel())
    if a.size == 0:
        return 0, 0
    scale = float(a.max())
    return int(np.count_nonzero(a > ZERO * max(scale, 1e-300))) if scale > 0 else 0, a.size


def figures(model: Model, result: Result) -> list[str]:
    """Lines with the figures of a solution a person looks at first.

    Training accuracy of a classifier (over the rows with a label, ``y`` in {-1, +1}), the
    residual norm and mean absolute residual of a regression, the support vectors (non-zero
    dual coefficients) and the non-zeros of ``w`` or ``beta``.
    """
    if not result.has_solution:
        return []
    lines = []
    data = model.data
    if data.y is not None and result.source is not None:
        try:
            predicted = result.predict(data.X)
        except (ValueError, TypeError, NotImplementedError):
            predicted = None
        if predicted is not None and model.is_classifier:
            labeled = data.y != 0
            if labeled.any():
                accuracy = float(np.mean(predicted[labeled] == data.y[labeled]))
                lines.append(
                    f"training accuracy {100 * accuracy:.2f}% ({int(labeled.sum())} labeled rows)"
                )
        elif predicted is not None:
            residual = data.y - predicted
            lines.append(
                f"residual norm {np.linalg.norm(residual):.6g}, mean absolute residual "
                f"{np.mean(np.abs(residual)):.6g} ({residual.size} rows)"
            )
    for name in DUAL_NAMES:
        if name in result.solution:
            count, size = _nonzeros(result.solution[name])
            lines.append(f"support vectors {count} of {size} ({name} non-zero)")
            break
    for name in WEIGHT_NAMES:
        if name in result.solution:
            count, size = _nonzeros(result.solution[name])
            lines.append(f"non-zeros of {name}: {count} of {size}")
    return lines
