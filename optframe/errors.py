"""Exceptions and warnings raised by optframe.

Every error a user can trigger with bad input is a subclass of :class:`OptframeError`, so
``except optframe.errors.OptframeError`` catches all of them, and each message names the problem
and what to do about it. Solver failures and limits are not exceptions: they come back as a
:class:`~optframe.result.Result` with the matching :class:`~optframe.result.Status`.
"""

from __future__ import annotations


class OptframeError(Exception):
    """Base class of every error optframe raises on purpose.

    A message's first line says the problem and what to do; further lines, if any, give the
    details (where a data file was looked for, for example).

    Examples
    --------
    >>> error = DataError("No data: set OPTFRAME_DATA." + chr(10) + "Looked in: ...")
    >>> error.summary
    'No data: set OPTFRAME_DATA.'
    """

    @property
    def summary(self) -> str:
        """The message's first line: the problem and the fix, for a one-line report."""
        text = str(self).strip()
        return text.splitlines()[0] if text else type(self).__name__


class DataError(OptframeError, ValueError):
    """Invalid or missing data: NaN/inf, mismatched shapes, bad labels, an empty class, no file."""


class ModelError(OptframeError, ValueError):
    """Invalid model parameters (for example ``C <= 0``) or an unknown modeling layer."""


class LossContractError(ModelError):
    """A smooth loss that breaks its contract (value, derivative, conjugate and its domain).

    Raised by :func:`optframe.losses.check_smooth_loss` when a declared value, derivative or
    conjugate is not finite, not convex, or violates the Fenchel-Young inequality at a sample
    point: a conjugate that is too small would make the certificate's bound invalid.
    """


class IncompatibleDriver(OptframeError, TypeError):
    """The driver needs mathematical structure that the model does not offer."""


class IncompatibleBackend(OptframeError, TypeError):
    """The back-end cannot solve the model's problem class through any layer the model has."""


class UnknownBackend(OptframeError, ValueError):
    """No back-end is registered under the requested name."""


class UnknownDriver(OptframeError, ValueError):
    """No driver is registered under the requested name."""


class SolverUnavailable(OptframeError, ImportError):
    """The solver library behind a back-end cannot be imported."""


class SolverError(OptframeError, RuntimeError):
    """The solver raised an error that optframe could not map to a status."""


class OptframeWarning(UserWarning):
    """Base class of optframe's warnings."""


class ConvergenceWarning(OptframeWarning):
    """A driver stopped without proving optimality."""


class UnknownSuite(OptframeError, ValueError):
    """No benchmark suite has the requested name."""


class ResultStoreError(OptframeError, OSError):
    """The results database cannot be created, written, or read (corrupt, half-written, locked)."""


class SchedulerUnreachable(OptframeError, ConnectionError):
    """The Dask scheduler given to ``optframe bench --scheduler`` did not answer in time."""
