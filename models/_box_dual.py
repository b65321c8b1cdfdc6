r"""The reduced problem of a linear box dual with some samples fixed (safe screening)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import partial
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.capabilities import LinearBoxDual, Structure
from optframe.certificate import Certificate, RepairStep
from optframe.duality import fill_subgradient
from optframe.model import Formulation, MatrixProblem, Model, ProblemClass, RawSolution, Solution

from ._common import eye, vector


@dataclass(frozen=True, eq=False)
class FixedSampleDual(Model):
    r"""A linear box dual with the samples in ``fixed`` held at given values (DVI eq. 15).

    With the notation of :class:`~optframe.capabilities.LinearBoxDual`, :math:`F` the free and
    :math:`S` the fixed samples:

    .. math::

        \min_w \; \tfrac12 \lVert w\rVert^2 + \sum_{i \in F} \max(l_i t_i, u_i t_i)
        + \sum_{j \in S} a_j t_j, \qquad t_i = \bar y_i - \langle w, z_i\rangle,

    whose dual is :math:`\max_{l_F \le \alpha_F \le u_F} \bar y^\top\alpha -
    \tfrac12 \lVert Z^\top\alpha\rVert^2` with :math:`\alpha_S = a_S`. When every fixed sample sits
    on the side of its kink that screening proved, this problem has the original model's optimum.

    The ``"matrix"`` layer builds the dual QP over :math:`x = [\alpha_F, w]` with rows
    :math:`Z_F^\top \alpha_F - w = -Z_S^\top a_S`; the solution holds the full-length
    :math:`\alpha` (under ``dual.dual_key``) and :math:`w = Z^\top\alpha` (under
    ``dual.primal_key``).

    Parameters
    ----------
    dual : LinearBoxDual
        The full dual with ``fixed`` and ``fixed_values`` set.
    source : str
        The name of the model it was reduced from.
    """

    problem_class: ClassVar[ProblemClass] = ProblemClass.QP
    layers: ClassVar[tuple[str, ...]] = ("matrix",)
    forms: ClassVar[tuple[str, ...]] = ("dual",)
    structures: ClassVar[tuple[type[Structure], ...]] = (LinearBoxDual,)

    dual: LinearBoxDual
    source: str = ""

    @property
    def free(self) -> NDArray[np.bool_]:
        """The samples solved for."""
        fixed = self.dual.fixed
        return np.ones(self.dual.n, dtype=bool) if fixed is None else ~fixed

    @classmethod
    def reducing(cls, source: str) -> partial[FixedSampleDual]:
        """The ``reduced`` of a model's :class:`LinearBoxDual`: ``dual -> FixedSampleDual``."""
        return partial(cls, source=source)

    def _structure(self, kind: type[Structure]) -> LinearBoxDual:
        """The reduced dual itself (fixing more samples keeps those already fixed)."""
        return dataclasses.replace(self.dual, recover=self._solution)

    def _solution(self, alpha: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        r"""``{dual_key: alpha, primal_key: Z' alpha}`` with the fixed entries enforced."""
        alpha = self.dual.start_point(alpha)
        w = np.asarray(self.dual.Z.T @ alpha, dtype=np.float64).reshape(-1)
        return {self.dual.primal_key: w, self.dual.dual_key: alpha}

    # ------------------------------------------------------------------------------ layers
    def _build_matrix(self, form: str) -> Formulation:
        d = self.dual
        free = np.flatnonzero(self.free)
        Zf = sp.csr_array(d.Z)[free] if sp.issparse(d.Z) else sp.csr_array(np.asarray(d.Z)[free])
        m = Zf.shape[1]
        k = free.size
        a = d.start_point()
        fixed_part = a - np.where(self.free, a, 0.0)
        w_fixed = np.asarray(d.Z.T @ fixed_part, dtype=np.float64).reshape(-1)
        problem = MatrixProblem(
            c=np.concatenate([-d.target[free], np.zeros(m)]),
            A=sp.hstack([sp.csc_array(Zf.T), -eye(m)], format="csc"),
            row_lower=-w_fixed,
            row_upper=-w_fixed,
            lower=np.concatenate([d.lower[free], np.full(m, -np.inf)]),
            upper=np.concatenate([d.upper[free], np.full(m, np.inf)]),
            P=sp.diags_array(np.r_[np.zeros(k), np.ones(m)], format="csc"),
        )
        offset = float(d.target @ fixed_part)

        def recover(raw: RawSolution) -> dict[str, NDArray[np.float64]]:
            alpha = a.copy()
            alpha[free] = np.asarray(raw.primal["alpha"], dtype=np.float64).reshape(-1)
            return self._solution(alpha)

        return Formulation(
            layer="matrix",
            problem=problem,
            problem_class=ProblemClass.QP,
            variables={"alpha": slice(0, k), "w": slice(k, k + m)},
            constraints={"link": slice(0, m)},
            recover=recover,
            objective_scale=-1.0,
            objective_offset=offset,
            form=form,
        )

    # --------------------------------------------------------------------------- evaluation
    def objective(self, solution: Solution) -> float:
        """The reduced primal :math:`P` above at ``solution[primal_key]``."""
        return self.dual.primal_value(vector(solution, self.dual.primal_key, self.name))

    def dual_bound(self, solution: Solution) -> float:
        r"""A proven lower bound: :math:`D(\alpha)` at a point of the box, fixed entries set.

        :math:`\alpha` is ``solution[dual_key]`` when present, else the loss's subgradient at
        :math:`t = \bar y - Zw` (:math:`u_i` where :math:`t_i > 0`, :math:`l_i` where
        :math:`t_i < 0`, least squares on the kink so that :math:`w = Z^\top\alpha`); it is
        clipped to the box with the fixed samples at their values. The value of
        :meth:`dual_certificate`.
        """
        return self.dual_certificate(solution).value

    def dual_certificate(self, solution: Solution) -> Certificate:
        r"""The certificate behind :meth:`dual_bound`: :math:`\alpha`, its clip, and the terms.

        :math:`D(\alpha) = \bar y^\top\alpha - \tfrac12\lVert Z^\top\alpha\rVert^2` over the
        box :math:`l \le \alpha \le u` (the fixed samples at their values).

        Examples
        --------
        >>> import numpy as np
        >>> from optframe.capabilities import LinearBoxDual
        >>> dual = LinearBoxDual(Z=np.eye(2), target=np.ones(2), lower=np.zeros(2),
        ...                      upper=np.ones(2), recover=lambda a: {"alpha": a})
        >>> model = FixedSampleDual(dual.fixing(np.array([True, False]), np.array([0.5, 0.0])))
        >>> certificate = model.dual_certificate({"alpha": np.array([2.0, 1.0])})
        >>> certificate.value, certificate.steps[0].kind
        (0.875, 'clip')
        """
        d = self.dual
        steps: list[RepairStep] = []
        if d.dual_key in solution:
            alpha = vector(solution, d.dual_key, self.name)
            origin = f"the solution's own {d.dual_key}"
        else:
            w = vector(solution, d.primal_key, self.name)
            t = d.target - np.asarray(d.Z @ w, dtype=np.float64).reshape(-1)
            alpha = np.where(t > 0, d.upper, d.lower)
            kink = (np.abs(t) <= 1e-9 * max(1.0, float(np.max(np.abs(d.target))))) & self.free
            alpha = fill_subgradient(d.Z, w, alpha, kink, d.lower, d.upper)
            origin = f"the loss's subgradient at {d.primal_key}"
            steps.append(RepairStep("fill", f"{int(kink.sum())} samples on their kink: "
                                    f"least squares so that {d.primal_key} = Z'alpha"))  # fmt: skip
        point = d.start_point(alpha)
        moved = float(np.max(np.abs(point - alpha), initial=0.0))
        if moved > 0:
            steps.append(RepairStep("clip", "clipped into the box l <= alpha <= u, the fixed "
                                    "samples at their values", moved, 0.0,
                                    "largest change"))  # fmt: skip
        w = np.asarray(d.Z.T @ point, dtype=np.float64).reshape(-1)
        linear, quadratic = float(d.target @ point), 0.5 * float(w @ w)
        return Certificate(
            linear - quadratic,
            {d.dual_key: point},
            tuple(steps),
            {"target'alpha": linear, "-|Z'alpha|^2 / 2": -quadratic},
            dual="max_alpha target'alpha - |Z'alpha|^2 / 2  s.t.  l <= alpha <= u, fixed "
            "samples at their values",
            origin=origin,
        )

    def violation(self, solution: Solution) -> float:
        """How far ``solution[dual_key]`` (when present) leaves the box or its fixed values."""
        if self.dual.dual_key not in solution:
            return 0.0
        alpha = vector(solution, self.dual.dual_key, self.name)
        return float(np.max(np.abs(alpha - self.dual.start_point(alpha)), initial=0.0))
