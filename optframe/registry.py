"""Name -> class lookup for back-ends, models and drivers.

The core never imports ``optframe.solvers`` or ``optframe.models`` when it is imported. Their
modules register themselves with the decorators below when they are imported, and
:func:`load_plugins` imports them (and any third-party package that declares an
``optframe.plugins`` entry point) the first time a lookup needs them.
"""

from __future__ import annotations

import difflib
import importlib
import threading
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, TypeVar

from optframe.errors import IncompatibleBackend, UnknownBackend

if TYPE_CHECKING:
    from optframe.backend import Backend
    from optframe.model import Model, ProblemClass

T = TypeVar("T", bound=type)

_BACKENDS: dict[str, list[type[Backend]]] = {}
_MODELS: dict[str, type] = {}
_DRIVERS: dict[str, type] = {}
_LOADED = False
_LOADING = False
# Re-entrant: a plugin's import may look something up while this thread is loading.
_LOAD_LOCK = threading.RLock()
_LAYER_ALIASES = {"native": "matrix"}


def register_backend(cls: T) -> T:
    """Register a back-end class; the first registered layer of a solver is its preferred one."""
    entries = _BACKENDS.setdefault(cls.solver, [])
    entries[:] = [b for b in entries if b.layer != cls.layer] + [cls]
    return cls


def register_model(cls: T) -> T:
    """Register a model class under its class name."""
    _MODELS[cls.__name__] = cls
    return cls


def register_driver(cls: T) -> T:
    """Register a driver class under its ``name`` (lower case)."""
    _DRIVERS[cls.name] = cls
    return cls


def load_plugins() -> None:
    """Import the bundled back-ends, models and drivers, and ``optframe.plugins`` entry points.

    Thread-safe and done once: the first caller imports under a lock while any other thread
    waits for it, so no thread ever sees a half-filled registry. A failed import leaves the
    registry unloaded, and the next lookup tries again (and raises the same error).
    """
    global _LOADED, _LOADING
    if _LOADED:
        return
    with _LOAD_LOCK:
        # _LOADING is only seen True here by the loading thread itself (the lock is
        # re-entrant): a lookup made while a plugin is being imported.
        if _LOADED or _LOADING:
            return
        _LOADING = True
        try:
            importlib.import_module("optframe.solvers")
            importlib.import_module("optframe.models")
            importlib.import_module("optframe.drivers")
            for entry in entry_points(group="optframe.plugins"):
                entry.load()
            _LOADED = True
        finally:
            _LOADING = False


def backends() -> dict[str, list[type[Backend]]]:
    """All registered back-ends, by solver name, in order of preference."""
    load_plugins()
    return {name: list(classes) for name, classes in _BACKENDS.items()}


def models() -> dict[str, type]:
    """All registered model classes, by name."""
    load_plugins()
    return dict(_MODELS)


def drivers() -> dict[str, type]:
    """All registered driver classes, by name."""
    load_plugins()
    return dict(_DRIVERS)


def default_solver(problem_class: ProblemClass) -> str:
    """The reference solver of a class: LP, MILP: HiGHS; QP, EXP, SOCP: Clarabel; MIQP: SCIP."""
    from optframe.model import ProblemClass

    return {
        ProblemClass.LP: "highs",
        ProblemClass.MILP: "highs",
        ProblemClass.QP: "clarabel",
        ProblemClass.MIQP: "scip",
        ProblemClass.EXP: "clarabel",
        ProblemClass.SOCP: "clarabel",
    }[problem_class]


def _split(name: str) -> tuple[str | None, str]:
    if ":" in name:
        layer, solver = name.split(":", 1)
        return _LAYER_ALIASES.get(layer, layer), solver
    return None, name


def resolve_backend(name: str, model: Model, form: str | None = None) -> Backend:
    """Return a back-end instance for ``name`` that can solve ``model``.

    ``name`` is ``"auto"``, a solver (``"highs"``: its preferred layer among those the model
    offers for ``form``) or ``"layer:solver"`` (``"pyomo:highs"``, ``"cvxpy:clarabel"``,
    ``"matrix:highs"``).

    Raises
    ------
    UnknownBackend
        If no solver is registered under that name.
    IncompatibleBackend
        If the solver cannot solve the model's problem class, or not through a layer it offers.
    """
    load_plugins()
    problem_class = model.problem_class
    if name == "auto":
        name = default_solver(problem_class)
    layer, solver = _split(name.lower())
    if solver not in _BACKENDS:
        close = difflib.get_close_matches(solver, list(_BACKENDS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownBackend(
            f"no back-end named {name!r}{hint} Known solvers: {sorted(_BACKENDS)}; "
            "write 'solver' or 'layer:solver' with layer in ('matrix', 'cvxpy', 'pyomo')"
        )
    candidates = _BACKENDS[solver]
    if layer is not None:
        candidates = [b for b in candidates if b.layer == layer]
        if not candidates:
            layers = [b.layer for b in _BACKENDS[solver]]
            raise UnknownBackend(f"solver {solver!r} has no {layer!r} layer; it has {layers}")
    for_class = [b for b in candidates if problem_class in b.supports]
    if not for_class:
        raise IncompatibleBackend(
            f"{name!r} cannot solve {model.name}, a {problem_class.value} problem; "
            f"it supports {sorted(c.value for c in candidates[0].supports)}. "
            f"The default for {problem_class.value} is {default_solver(problem_class)!r}"
        )
    usable = [b for b in for_class if model.offers(b.layer, form)]
    if not usable:
        offered = [layer for layer in model.layers if model.offers(layer, form)]
        stated = form or model.default_form
        refusal = getattr(model, "form_refusal", None)
        reasons = {
            reason
            for b in for_class
            if b.layer in model.layers
            and refusal is not None
            and (reason := refusal(b.layer, stated)) is not None
        }
        if not offered and reasons:  # the form itself is refused: say why, not where
            raise IncompatibleBackend(
                f"{model.name} has no {stated!r} form here: {'; '.join(sorted(reasons))}"
            )
        why = f" ({'; '.join(sorted(reasons))})" if reasons else ""
        raise IncompatibleBackend(
            f"{name!r} reaches its solver through {[b.layer for b in for_class]}, but "
            f"{model.name} (form {stated!r}) is only declared in {offered}{why}"
        )
    backend = usable[0]
    backend.check_available()
    return backend()
