"""One rule for numbers given to optframe: options, model parameters and losses.

A number is a Python or numpy real (``1``, ``0.5``, ``np.float32(2)``, ``np.int64(3)``). A string,
a bool, a complex number, ``None`` (unless the option allows it), NaN and infinities are refused,
never converted, with a :class:`~optframe.errors.ModelError` that names the owner, the parameter,
the range and the value given, so ``C="1.0"``, ``tol="1e-6"``, ``gap_tol="1e-6"`` and
``Pinball("0.9")`` all meet the same message.
"""

from __future__ import annotations

import math
import numbers
import os
from typing import Any

import numpy as np

from optframe.errors import ModelError, OptframeError


def describe_range(low: float, high: float, *, low_open: bool, high_open: bool) -> str:
    """The range a number must lie in, as a message states it: ``> 0``, ``in (0, 1)``, ...

    Examples
    --------
    >>> describe_range(0.0, math.inf, low_open=True, high_open=True)
    '> 0'
    >>> describe_range(0.0, 1.0, low_open=True, high_open=True)
    'in (0, 1)'
    """
    bounded_low, bounded_high = math.isfinite(low), math.isfinite(high)
    if bounded_low and bounded_high:
        left, right = "(" if low_open else "[", ")" if high_open else "]"
        return f"in {left}{low:g}, {high:g}{right}"
    if bounded_low:
        return f"{'>' if low_open else '>='} {low:g}"
    if bounded_high:
        return f"{'<' if high_open else '<='} {high:g}"
    return "(any finite value)"


def check_number(
    value: Any,
    name: str,
    owner: str,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
    allow_none: bool = False,
    allow_inf: bool = False,
) -> float | None:
    """Return ``value`` as a finite ``float`` in the range, else raise ModelError.

    Parameters
    ----------
    value : Any
        The number given.
    name, owner : str
        The parameter's name and who takes it (``"solve()"``, ``"WeightedSVM"``, ``"Pinball"``),
        as the message states them.
    low, high : float
        The range's ends (infinite for none).
    low_open, high_open : bool
        Whether an end is excluded (``low=0, low_open=True`` is ``> 0``).
    allow_none : bool
        Whether ``None`` is accepted (returned as ``None``).
    allow_inf : bool
        Whether an infinite end of the range is accepted (a time limit of ``inf``: none).

    Returns
    -------
    float or None
        The number as a Python float (``None`` only when ``allow_none``).

    Raises
    ------
    ModelError
        For anything that is not a finite real number in the range; a string is not converted.

    Examples
    --------
    >>> check_number(0.9, "tau", "Pinball", low=0.0, high=1.0, low_open=True, high_open=True)
    0.9
    >>> check_number(1.5, "tau", "Pinball", low=0.0, high=1.0, low_open=True, high_open=True)
    Traceback (most recent call last):
    ...
    optframe.errors.ModelError: Pinball: tau must be a finite number in (0, 1); got 1.5
    """
    if value is None and allow_none:
        return None
    kind = "a number" if allow_inf else "a finite number"
    need = f"{kind} {describe_range(low, high, low_open=low_open, high_open=high_open)}"
    if allow_none:
        need += " or None"
    message = f"{owner}: {name} must be {need}; got {value!r}"
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        if isinstance(value, str):
            message += f" (a string is not converted: write {value.strip()})"
        raise ModelError(message)
    number = float(value)
    inside = (
        (math.isfinite(number) or (allow_inf and not math.isnan(number)))
        and (number > low if low_open else number >= low)
        and (number < high if high_open else number <= high)
    )
    if not inside:
        raise ModelError(message)
    return number


def check_integer(
    value: Any, name: str, owner: str, *, low: int = 1, allow_none: bool = False
) -> int | None:
    """Return ``value`` as an ``int >= low``, else raise ModelError (bools and floats refused).

    Examples
    --------
    >>> check_integer(5, "max_iter", "solve()")
    5
    >>> check_integer(0, "sample_size", "AggregateDisaggregate")
    Traceback (most recent call last):
    ...
    optframe.errors.ModelError: AggregateDisaggregate: sample_size must be an integer >= 1; got 0
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral) or value < low:
        need = f"an integer >= {low}" + (" or None" if allow_none else "")
        message = f"{owner}: {name} must be {need}; got {value!r}"
        if isinstance(value, str):
            message += f" (a string is not converted: write {value.strip()})"
        raise ModelError(message)
    return int(value)


__all__ = ["check_integer", "check_number", "describe_range"]


def count_from_environment(name: str) -> int | None:
    """The environment variable ``name`` as a positive int, or None when it is unset or empty.

    Raises
    ------
    OptframeError
        If it is set to anything but a positive integer, naming the variable.
    """
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise OptframeError(f"{name} must be a positive integer; got {text!r}")
    return count
