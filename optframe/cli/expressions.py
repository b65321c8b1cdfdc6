"""What ``--loss``, ``--penalty`` and ``--model module:Class`` name on the command line.

A loss or penalty is written as a call of one of the public classes of :mod:`optframe.losses` or
:mod:`optframe.penalties`, such as ``Huber(1.0)``, ``Pinball(tau=0.9)`` or
``ElasticNet(l1_ratio=0.3)``. The text is parsed with :mod:`ast`, never evaluated: the called
name must be one of those classes and every argument a literal number, string, bool or ``None``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import sys
from types import ModuleType
from typing import Any

from optframe.errors import ModelError, OptframeError


class ExpressionError(ModelError):
    """A ``--loss`` or ``--penalty`` that is not a call of a known class with literal arguments."""


class UserModelError(ModelError):
    """A ``--model module:Class`` that cannot be imported or is not a model class."""


def concrete_classes(module: ModuleType) -> dict[str, type]:
    """The public classes of ``module`` (its ``__all__``) that no other one of them derives from.

    The bases (``PLQLoss``, ``Penalty``) are left out: their arguments are tables, not literals.
    """
    public = {name: getattr(module, name) for name in getattr(module, "__all__", ())}
    classes = {name: obj for name, obj in public.items() if isinstance(obj, type)}
    bases = {b for cls in classes.values() for b in cls.__mro__[1:]}
    return {name: cls for name, cls in classes.items() if cls not in bases}


_PLURAL = {"loss": "losses", "penalty": "penalties"}


def _literal(node: ast.expr, text: str) -> Any:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _literal(node.operand, text)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ExpressionError(f"{text}: a sign goes before a number only")
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Constant) and (
        node.value is None or isinstance(node.value, bool | int | float | str)
    ):
        return node.value
    shown = ast.unparse(node)
    raise ExpressionError(
        f"{text}: argument {shown!r} is not a literal; write numbers, quoted strings, "
        "True/False or None"
    )


def _signature(cls: type) -> str:
    """``Name(a=1.0, b='x')``: the parameters and their defaults, without annotations."""
    try:
        parameters = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - every optframe class has one
        return f"{cls.__name__}(...)"
    shown = [p.name if p.default is p.empty else f"{p.name}={p.default!r}" for p in parameters]
    return f"{cls.__name__}({', '.join(shown)})"


def parse_call(text: str, classes: dict[str, type], what: str) -> Any:
    """The instance ``text`` writes, a call of one of ``classes`` with literal arguments.

    A bare name (``Huber``) is the call without arguments; ``None`` is ``None``.

    Raises
    ------
    ExpressionError
        ``text`` is not such a call, names another class, or the class refuses the arguments;
        the message lists the known names (or the class's signature).
    """
    known = ", ".join(_signature(c) for c in classes.values())
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise ExpressionError(
            f"--{what} {text!r} is not a call such as Name(1.0). Known {_PLURAL[what]}: {known}."
        ) from None
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    call = node if isinstance(node, ast.Call) else ast.Call(func=node, args=[], keywords=[])
    if not isinstance(call.func, ast.Name):
        raise ExpressionError(f"--{what} {text!r}: write a class name and its arguments only")
    name = call.func.id
    if name not in classes:
        by_case = [n for n in classes if n.lower() == name.lower()]
        hint = f" Did you mean {by_case[0]!r}?" if by_case else ""
        raise ExpressionError(
            f"--{what}: unknown {what} {name!r}.{hint} Known {_PLURAL[what]}: {known}."
        )
    where = f"--{what} {text!r}"
    args = [_literal(arg, where) for arg in call.args]
    kwargs = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            raise ExpressionError(f"--{what} {text!r}: ** arguments are not allowed")
        kwargs[keyword.arg] = _literal(keyword.value, where)
    cls = classes[name]
    try:
        return cls(*args, **kwargs)
    except TypeError as exc:
        raise ExpressionError(
            f"--{what} {text!r}: {exc}. Its signature: {_signature(cls)}"
        ) from None


def loss(text: str) -> Any:
    """The loss ``text`` writes, e.g. ``Huber(1.0)`` (:func:`parse_call` on optframe.losses)."""
    from optframe import losses

    return parse_call(text, concrete_classes(losses), "loss")


def penalty(text: str) -> Any:
    """The penalty ``text`` writes, e.g. ``L1()`` or ``None`` (on optframe.penalties)."""
    from optframe import penalties

    return parse_call(text, concrete_classes(penalties), "penalty")


def user_model_class(spec: str) -> type:
    """The class ``package.module:Class`` names, imported from ``sys.path`` and the working folder.

    Raises
    ------
    UserModelError
        The text is not ``module:Class``, the module does not import, it has no such attribute,
        or the attribute is not a subclass of :class:`optframe.model.Model`.
    """
    from optframe.model import Model

    module_name, sep, class_name = spec.partition(":")
    if not sep or not module_name or not class_name.isidentifier():
        raise UserModelError(f"--model takes package.module:Class; got {spec!r}")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` does: a module in the working folder
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserModelError(
            f"--model {spec}: cannot import {module_name!r} ({exc}). Put the folder that holds "
            "it on PYTHONPATH or run optframe from that folder."
        ) from None
    except OptframeError:
        raise
    except Exception as exc:
        raise UserModelError(
            f"--model {spec}: importing {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    cls = getattr(module, class_name, None)
    if cls is None:
        public = sorted(
            n
            for n, v in vars(module).items()
            if isinstance(v, type) and issubclass(v, Model) and v is not Model
        )
        listed = ", ".join(public) or "none"
        raise UserModelError(
            f"--model {spec}: module {module_name!r} has no {class_name!r}. "
            f"Its model classes: {listed}."
        )
    if not (isinstance(cls, type) and issubclass(cls, Model)):
        raise UserModelError(
            f"--model {spec}: {class_name} is not a subclass of optframe.model.Model"
        )
    return cls
