"""Checks of the drivers' numeric options: numpy scalars are taken, strings and bools are not."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from optframe.errors import ModelError


def is_count(value: Any, low: int = 1) -> bool:
    """Whether ``value`` is an integer ``>= low`` (a Python or numpy integer, not a bool)."""
    return (
        not isinstance(value, bool | np.bool_)
        and isinstance(value, numbers.Integral)
        and value >= low
    )


def is_real(value: Any) -> bool:
    """Whether ``value`` is a finite real number (Python or numpy, not a bool)."""
    return (
        not isinstance(value, bool | np.bool_)
        and isinstance(value, numbers.Real)
        and math.isfinite(float(value))
    )


def check_count(value: Any, name: str, owner: str, low: int = 1) -> None:
    """Raise ModelError unless ``value`` is an integer ``>= low``."""
    if not is_count(value, low):
        raise ModelError(f"{owner}: {name} must be an integer >= {low}; got {value!r}")


def check_real(value: Any, name: str, owner: str, *, low: float = 0.0, strict: bool = True) -> None:
    """Raise ModelError unless ``value`` is a finite number ``> low`` (``>= low``: not strict)."""
    if not (is_real(value) and (value > low if strict else value >= low)):
        need = f"{'>' if strict else '>='} {low:g}"
        raise ModelError(f"{owner}: {name} must be a finite number {need}; got {value!r}")


def set_count(driver: Any, name: str, owner: str, low: int = 1) -> None:
    """Check the field ``name`` of a frozen driver as a count and store it as an ``int``."""
    value = getattr(driver, name)
    check_count(value, name, owner, low)
    object.__setattr__(driver, name, int(value))


def set_real(driver: Any, name: str, owner: str, *, low: float = 0.0, strict: bool = True) -> None:
    """Check the field ``name`` of a frozen driver as a number and store it as a ``float``.

    A numpy ``float32`` would otherwise reach the compiled loops as another type.
    """
    value = getattr(driver, name)
    check_real(value, name, owner, low=low, strict=strict)
    object.__setattr__(driver, name, float(value))
