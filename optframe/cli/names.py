"""Names typed on the command line: matched case-insensitively, with "did you mean" suggestions."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Iterable
from typing import Any

from optframe import registry
from optframe.errors import DataError, ModelError, OptframeError, UnknownBackend, UnknownDriver

DATASETS_HINT = "Run `optframe datasets` to see every data set and where it was found."


#: What a user may type for a model, and the model it means (the first suggestion).
MODEL_ALIASES = {
    "svm": "WeightedSVM",
    "svc": "WeightedSVM",
    "lad": "LADRegression",
    "quantile": "EmpiricalRisk",
    "s3vm": "SemiSupervisedSVM",
    "pu": "PULearning",
}


def match(
    name: str,
    choices: Iterable[str],
    what: str,
    error: type[OptframeError],
    aliases: dict[str, str] | None = None,
) -> str:
    """The choice equal to ``name`` ignoring case (``-`` and ``_`` alike), else raise ``error``.

    The message names the closest choices: the one an alias means first, then the choices that
    contain ``name``, then difflib's; and lists them all.
    """
    known = sorted(choices)
    key = name.lower().replace("-", "_")
    found = [c for c in known if c.lower().replace("-", "_") == key]
    if len(found) == 1:
        return found[0]
    lowered = {c.lower(): c for c in known}
    close = [(aliases or {}).get(key.replace("_", ""), "")]
    close += [c for c in known if key and key in c.lower()]
    close += [lowered[c] for c in difflib.get_close_matches(key, list(lowered), n=3, cutoff=0.5)]
    close = [c for c in dict.fromkeys(close) if c in known][:3]
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise error(f"unknown {what} {name!r}.{hint} Known {what}s: {', '.join(known)}.")


def model_class(name: str) -> type:
    """The registered model class named ``name`` (case-insensitive)."""
    models = registry.models()
    return models[match(name, models, "model", ModelError, MODEL_ALIASES)]


def driver_class(name: str) -> type:
    """The registered driver class named ``name`` (case-insensitive)."""
    drivers = registry.drivers()
    return drivers[match(name, drivers, "driver", UnknownDriver)]


def backend_name(name: str) -> str:
    """``auto``, ``solver`` or ``layer:solver`` with known names, in the registry's spelling."""
    if name.lower() == "auto":
        return "auto"
    layer, sep, solver = name.rpartition(":")
    solvers = registry.backends()
    solver = match(solver, solvers, "solver", UnknownBackend)
    if not sep:
        return solver
    layers = [b.layer for b in solvers[solver]] + ["native"]
    found = [known for known in layers if known == layer.lower()]
    if not found:
        close = difflib.get_close_matches(layer.lower(), layers, n=1, cutoff=0.5)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise UnknownBackend(
            f"solver {solver!r} has no {layer!r} layer.{hint} It has: {', '.join(layers[:-1])} "
            "(write 'layer:solver', e.g. 'pyomo:highs')."
        )
    return f"{found[0]}:{solver}"


def model_parameters(cls: type) -> list[str]:
    """The keyword parameters of a model class, after its data.

    Read from ``__init__`` (after ``self`` and the data): a class whose ``__new__`` takes
    ``*args, **kwargs`` (``EmpiricalRisk``, which makes a chunked model on Dask data) would hide
    them from ``inspect.signature(cls)``.
    """
    parameters = list(inspect.signature(cls.__init__).parameters.values())[2:]
    return [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def check_parameters(cls: type, params: dict[str, Any]) -> None:
    """Raise :class:`ModelError` for a parameter the model does not take, listing the valid ones."""
    valid = model_parameters(cls)
    for name in params:
        if name in valid:
            continue
        close = [v for v in valid if v.lower() == name.lower()]
        close = close or difflib.get_close_matches(name, valid, n=2, cutoff=0.5)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise ModelError(
            f"{cls.__name__} has no parameter {name!r}.{hint} Its parameters: "
            f"{', '.join(valid)} (give them as --param NAME=VALUE)."
        )


def data_error(exc: DataError) -> DataError:
    """The error in one line, pointing a command-line user at ``optframe datasets``.

    The command line prints a message's first line (the problem and the fix); the hint is
    added to it as a sentence of its own.
    """
    return DataError(f"{exc.summary.rstrip('.')}. {DATASETS_HINT}")
