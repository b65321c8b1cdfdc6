"""The :class:`ScreeningRule` interface and what a rule sees at one step of a path."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from optframe.capabilities import LinearBoxDual, Structure
from optframe.errors import IncompatibleDriver
from optframe.model import Model

Sets = tuple[NDArray[np.bool_], NDArray[np.bool_]]


@dataclass(frozen=True, eq=False)
class ScreeningStep:
    r"""The data of one screening step from :math:`C_k` to :math:`C_{k+1}`.

    Parameters
    ----------
    Z : array (n, m) or sparse
        The rows :math:`z_i` of the box dual.
    target : array (n,)
        :math:`\bar y`.
    row_norms : array (n,)
        :math:`\lVert z_i\rVert` (computed once per path).
    w : array (m,)
        The (approximate) solution :math:`w_k` at ``c_prev``.
    delta : float
        A proven bound on :math:`\lVert w_k - w^\star(C_k)\rVert`, from the duality gap:
        :math:`\sqrt{2 (P(w_k) - D(\alpha_k))}` (0 for an exact solution, ``inf`` if unknown).
    c_prev, c_next : float
        :math:`C_k < C_{k+1}`.
    reference : array (m,), optional
        For (E)SSNSV: a point :math:`\hat w` whose total loss is at most that of
        :math:`w^\star(C_{k+1})` (the solution at the largest C of the path).
    Zw : array (n,), optional
        :math:`Z w_k` if the caller already has it.
    Z_reference : array (n,), optional
        :math:`Z \hat w` (constant along a path).
    """

    Z: Any
    target: NDArray[np.float64]
    row_norms: NDArray[np.float64]
    w: NDArray[np.float64]
    delta: float
    c_prev: float
    c_next: float
    reference: NDArray[np.float64] | None = None
    Zw: NDArray[np.float64] | None = None
    Z_reference: NDArray[np.float64] | None = None

    def scores(self) -> NDArray[np.float64]:
        r""":math:`\langle w_k, z_i\rangle` for every sample: the one pass over the data."""
        if self.Zw is not None:
            return self.Zw
        return np.asarray(self.Z @ self.w, dtype=np.float64).reshape(-1)


class ScreeningRule(abc.ABC):
    """A safe rule: which samples are proven to sit at the lower (R) or upper (L) dual bound.

    Subclasses are frozen dataclasses; :meth:`screen` returns two boolean masks ``(R, L)``.
    ``needs_reference`` rules (SSNSV, ESSNSV) also need the solution at the largest C.
    """

    name: ClassVar[str]
    needs: ClassVar[tuple[type[Structure], ...]] = (LinearBoxDual,)
    needs_reference: ClassVar[bool] = False

    def check(self, model: Model) -> None:
        """Raise :class:`IncompatibleDriver` naming the structure ``model`` lacks, and why."""
        for kind in self.needs:
            reason = model.structure_refusal(kind)
            if reason is not None:
                raise IncompatibleDriver(
                    f"screening rule {self.name!r} needs {kind.__name__} from the model, which "
                    f"{model.name} does not offer ({reason}); it screens linear box duals: SVM "
                    "and regularized LAD without intercept"
                )

    def check_dual(self, lower: NDArray[np.float64], upper: NDArray[np.float64]) -> None:
        """Raise :class:`IncompatibleDriver` if the rule does not cover this loss (default: all)."""
        return None

    @abc.abstractmethod
    def screen(self, step: ScreeningStep) -> Sets:
        r"""Return the masks ``(R, L)``: proven :math:`\alpha_i = l_i`, proven :math:`= u_i`."""
