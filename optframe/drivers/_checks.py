"""Checks of the drivers' options.

Numeric options take Python and numpy numbers, not strings or bools; options with a fixed set of
values are :class:`Choice` enums that also take their documented strings.
"""

from __future__ import annotations

import enum
import math
import numbers
from typing import Any, TypeVar

import numpy as np

from optframe.errors import ModelError
from optframe.validation import check_integer, check_number


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
    check_integer(value, name, owner, low=low)


def check_real(value: Any, name: str, owner: str, *, low: float = 0.0, strict: bool = True) -> None:
    """Raise ModelError unless ``value`` is a finite number ``> low`` (``>= low``: not strict)."""
    check_number(value, name, owner, low=low, low_open=strict)


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


class Choice(enum.StrEnum):
    """A driver option with a fixed set of values (a ``str`` enum).

    A member equals its string (``Variant.MFW == "mfw"``), so the documented strings keep
    working; :func:`set_choice` turns either into the member (any letter case) and names the
    valid values on a bad one. A member's ``repr`` is its string's, so a driver's ``repr``
    reads as it was written (``FrankWolfe(variant='mfw', ...)``).
    """

    @classmethod
    def _missing_(cls, value: object) -> Choice | None:
        if isinstance(value, str):
            for member in cls:
                if member.value == value.lower():
                    return member
        return None

    def __repr__(self) -> str:
        return repr(self.value)


C = TypeVar("C", bound=Choice)


def as_choice(value: Any, kind: type[C], name: str, owner: str) -> C:
    """``value`` as a member of ``kind``, else a ModelError listing the valid values."""
    try:
        return kind(value)
    except (ValueError, TypeError):
        valid = ", ".join(repr(member.value) for member in kind)
        raise ModelError(f"{owner}: {name} must be one of {valid}; got {value!r}") from None


def set_choice(driver: Any, name: str, kind: type[Choice], owner: str) -> None:
    """Check the field ``name`` of a frozen driver against ``kind`` and store the member."""
    object.__setattr__(driver, name, as_choice(getattr(driver, name), kind, name, owner))
