"""The :class:`Driver` base class: an algorithm over models."""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from optframe.certificate import DEFAULT_GAP_TOL
from optframe.errors import IncompatibleDriver

if TYPE_CHECKING:
    from optframe.backend import SolveOptions
    from optframe.capabilities import Structure
    from optframe.model import Model
    from optframe.result import IterationRecord, Result

Callback = Callable[["IterationRecord"], "bool | None"]


@dataclass(frozen=True)
class RunContext:
    """What :func:`optframe.solve` hands a driver besides the model.

    Parameters
    ----------
    backend : str
        The back-end name the user asked for (``"auto"``, ``"highs"``, ``"pyomo:highs"``, ...); the
        driver resolves it for each sub-problem it solves.
    options : SolveOptions
        Common options and pass-through solver options.
    callback : callable, optional
        Called with each :class:`~optframe.result.IterationRecord`; returning ``True`` stops the
        driver.
    """

    backend: str
    options: SolveOptions
    callback: Callback | None = None


class Driver(abc.ABC):
    """An algorithm that solves models offering the structure it needs.

    Subclasses are frozen dataclasses whose fields are the algorithm's options. They list the
    types of :mod:`optframe.capabilities` they need from a model in ``needs`` (checked by
    :meth:`check`), get each with ``model.structure(kind)`` and implement :meth:`run`.
    """

    name: ClassVar[str]
    needs: ClassVar[tuple[type[Structure], ...]] = ()

    def missing(self, model: Model) -> list[str]:
        """The structures in ``needs`` that ``model`` does not offer, each with its reason."""
        return [
            f"{kind.__name__} ({reason})"
            for kind in self.needs
            if (reason := model.structure_refusal(kind)) is not None
        ]

    def accepts(self, model: Model) -> bool:
        """Whether ``model`` offers everything this driver needs."""
        return not self.missing(model)

    def check(self, model: Model) -> None:
        """Raise :class:`IncompatibleDriver` naming each structure ``model`` does not offer."""
        missing = self.missing(model)
        if missing:
            raise IncompatibleDriver(
                f"driver {self.name!r} needs {'; '.join(missing)} from the model, which "
                f"{model.name} does not offer"
            )

    def gap_tolerance(self, options: SolveOptions) -> float:
        """The relative gap that proves this driver's result optimal.

        :func:`optframe.solve` certifies every result with it. ``options.gap_tol`` when set;
        else ``options.tol``, at least 1e-9 (drivers whose ``tol`` is not a relative gap override
        this); else :data:`optframe.certificate.DEFAULT_GAP_TOL`.
        """
        if options.gap_tol is not None:
            return float(options.gap_tol)
        # a solver's tol below 1e-9 asks it for precision the certificate's own rounding
        # (a projection, sums over the data) cannot confirm: the gap test stops at 1e-9
        return DEFAULT_GAP_TOL if options.tol is None else max(float(options.tol), 1e-9)

    @abc.abstractmethod
    def run(self, model: Model, context: RunContext) -> Result:
        """Solve ``model`` and return a result evaluated on the original model."""
