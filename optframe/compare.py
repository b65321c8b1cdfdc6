"""Run one model through every applicable (driver, back-end) pair against the Direct reference."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from optframe import registry
from optframe.backend import Backend
from optframe.drivers.base import Driver
from optframe.drivers.direct import Direct
from optframe.errors import OptframeError
from optframe.model import Model
from optframe.result import Result
from optframe.solve import solve


@dataclass(frozen=True)
class Pair:
    """A (driver, back-end) pair."""

    driver: Driver
    backend: str

    @property
    def label(self) -> str:
        """The driver's name, with the formulation for Direct."""
        form = getattr(self.driver, "form", None)
        return self.driver.name + (f":{form}" if form else "")


@dataclass(frozen=True)
class Comparison:
    """The outcome of one pair: its result, or why it was refused."""

    pair: Pair
    result: Result | None
    refusal: str = ""

    def difference(self, reference: Result) -> float:
        """Return ``|objective - reference| / max(1, |reference|)`` (nan without a solution)."""
        if self.result is None or not self.result.has_solution:
            return float("nan")
        return abs(self.result.objective - reference.objective) / max(1.0, abs(reference.objective))


def applicable_pairs(model: Model) -> Iterator[Pair]:
    """Yield every (driver, back-end) pair that can solve ``model``.

    Direct is paired with every registered back-end (every solver, through every layer the model
    offers, for every formulation of the model); the other drivers, with the default back-end for
    their sub-problems. A narrow back-end (``Backend.narrow``, such as ``fn``, which takes only
    LPs of one shape) is paired with the formulations it does not refuse (the model is built to
    ask it).
    """
    for solver, classes in registry.backends().items():
        for backend in classes:
            if model.problem_class not in backend.supports:
                continue
            for form in model.forms:
                if model.offers(backend.layer, form) and _takes(backend, model, form):
                    yield Pair(Direct(form=form), f"{backend.layer}:{solver}")
    for name, driver_class in registry.drivers().items():
        if name != Direct.name:
            driver = driver_class()
            if driver.accepts(model):
                yield Pair(driver, "auto")


def _takes(backend: type[Backend], model: Model, form: str) -> bool:
    """Whether ``backend`` takes ``model``'s ``form`` (always, unless it is narrow)."""
    if not backend.narrow:
        return True
    try:
        formulation = model.build(backend.layer, form=form)
    except OptframeError:
        return False
    return backend.refusal(formulation) is None


Progress = Callable[[int, int, str], None]


def compare(
    model: Model, *, progress: Progress | None = None, **options: Any
) -> tuple[Result, list[Comparison]]:
    """Solve ``model`` with the reference (Direct, default back-end) and with every pair.

    ``options`` go to :func:`optframe.solve` for every run. A pair whose model/back-end combination
    is refused (for example a formulation too large to build) is reported with the reason.
    ``progress(done, total, label)`` counts the pairs, the rows of the comparison (``total`` is
    their number): it is called before each solve, the reference first (``done == 0``, label
    ``"reference"``), then each pair (``"driver back-end"``, ``done`` the pairs finished), and
    once at the end with ``done == total``.
    """
    pairs = list(applicable_pairs(model))
    total = len(pairs)
    if progress is not None:
        progress(0, total, "reference")
    reference = solve(model, **options)
    runs = []
    for index, pair in enumerate(pairs):
        if progress is not None:
            progress(index, total, f"{pair.label} {pair.backend}")
        try:
            result = solve(model, driver=pair.driver, backend=pair.backend, **options)
        except OptframeError as exc:
            runs.append(Comparison(pair, None, f"{type(exc).__name__}: {exc}"))
            continue
        runs.append(Comparison(pair, result))
    if progress is not None:
        progress(total, total, "done")
    return reference, runs
