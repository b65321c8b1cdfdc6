r"""An :class:`~optframe.models.EmpiricalRisk` whose samples live in row chunks on a Dask cluster.

``EmpiricalRisk(dask_data, loss, penalty=...)`` with a :class:`~optframe.data.dask.DaskDataset`
returns a :class:`ChunkedEmpiricalRisk`: the same problem,

.. math::

    \min_{w, b} \; P(w) + C \sum_{i=1}^n s_i\, \ell(a_i),

for any piecewise-linear loss (ReLU pieces only, no affine part: ``Absolute()``,
``Pinball(tau)``, ``Hinge()``, ``EpsilonInsensitive(epsilon)``, ``DoubleHinge()``, a
``PLQLoss(relu=...)`` of one's own) and any penalty (``L2()``, ``L1()``, ``ElasticNet``,
``None``), never built whole. It is solved by
:class:`~optframe.drivers.AggregateDisaggregate`, whose aggregated problems (cluster centroids,
small) are the in-memory model, built by :meth:`ChunkedEmpiricalRisk.with_data` and solved on the
client. Everything that touches the samples is a map over the chunks and a reduction
(:mod:`optframe.models._risk_chunks`): the objective, the loss's pieces and embedding, and the
certificate's bound, the Fenchel dual of :mod:`optframe.models._risk_dual` at a repaired
multiplier:

* with a penalty: :math:`\theta` clipped into :math:`c_i\operatorname{dom}\ell^*`, the larger side
  of :math:`v` scaled down so that :math:`\mathbf 1^\top v = 0` (with an intercept), the lasso's
  ball by a scaling of :math:`X^\top v`; two to three passes over the chunks;
* without one: :math:`v` projected onto :math:`\{[X, \mathbf 1]^\top v = 0\}` by two
  least-squares passes (the :math:`(m+1) \times (m+1)` normal equations summed over the chunks),
  divided back into its box, its rows checked to rounding (a row left above it after up to two
  more least-squares steps gives no bound); three passes over the chunks when the first check
  holds. Multipliers at a box end of 0 (the hinge's) are held there, within each tolerance of
  ``ZERO_ENDS`` in turn, as in memory. No pass copies a chunk's ``X``.

The candidates are the in-memory model's (:meth:`ChunkedEmpiricalRisk.dual_bound`): the
solution's own multipliers (``alpha``, lifted by AID), and the loss's subgradient at
:math:`(w, b)` with the samples near a kink filled by least squares; the bound is the in-memory
one to rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from optframe.capabilities import PiecewiseLinearSampleLoss, Structure
from optframe.certificate import enough_gap
from optframe.data import Dataset
from optframe.data.dask import DaskDataset, rows_text
from optframe.duality import solve_normal
from optframe.errors import DataError, IncompatibleDriver, ModelError
from optframe.kernels import Linear, as_kernel
from optframe.losses import PLQLoss
from optframe.model import Formulation, Model, ProblemClass, Solution
from optframe.penalties import L2, Penalty, as_penalty

from . import _risk_chunks as rc
from ._common import check_features, check_flag, check_positive
from ._risk_dual import ZERO_ENDS
from ._risk_losses import loss_kind
from .empirical_risk import CLOSED, KINK_TOLERANCES

# The weighted median of y (the objective floor's center) is found by histograms of this many
# bins, until the samples left in the median's bin are few enough to gather.
MEDIAN_BINS = 4096
MEDIAN_GATHER = 200_000
#: Least-squares passes of the projection without a penalty before its rows are checked, and the
#: passes added when the check finds a row above its rounding (each from the check's own sums):
#: as many as optframe.duality.project_null's when needed, one pass fewer when not.
REFINEMENTS = 2
EXTRA_REFINEMENTS = 2


def refusal(name: str) -> str:
    """What a driver other than AggregateDisaggregate is told about a chunked model."""
    return (
        f"{name} keeps its samples in row chunks on a Dask cluster and offers only "
        "PiecewiseLinearSampleLoss, solved chunk by chunk by driver=AggregateDisaggregate() "
        "(or driver='auto'); for another driver gather the data first, "
        "EmpiricalRisk(data.to_dataset(), ...), if they fit in memory"
    )


@dataclass(frozen=True, eq=False)
class ChunkedEmpiricalRisk(Model):
    r"""A piecewise-linear loss plus a penalty on data in row chunks on a Dask cluster.

    .. math::

        \min_{w, b} \; P(w) + C \sum_{i=1}^n s_i\, \ell(a_i)

    :class:`~optframe.models.EmpiricalRisk`'s problem (same parameters, same solution names),
    which ``EmpiricalRisk(data, ...)`` returns when ``data`` is a
    :class:`~optframe.data.dask.DaskDataset`. Solve it with
    :class:`~optframe.drivers.AggregateDisaggregate` (``driver="auto"`` picks it); every other
    driver refuses it by name (it is never built whole).

    Parameters
    ----------
    data : DaskDataset
        Features (dense or sparse chunks), targets (labels in {-1, +1} for a margin loss) and,
        optionally, the weights :math:`s`.
    loss : PLQLoss
        A loss with ReLU pieces only and no affine part.
    penalty : Penalty or None
        The penalty :math:`P` (default ``L2()``).
    C : float
        The loss weight :math:`C > 0`.
    fit_intercept : bool
        Whether to fit the unpenalized intercept :math:`b`.
    kernel, sample_weight, free_margin, penalize_intercept
        Not taken on chunks: their defaults only (``None``, ``None``, ``False``, ``False``);
        the weights are the DaskDataset's ``sample_weight``.

    Raises
    ------
    DataError
        If ``data`` is not a DaskDataset or has no ``y``; for a margin loss, if a chunk holds a
        label other than -1 and +1 (the message names the chunk and its rows), or a class is
        missing or has zero weight.
    ModelError
        If the loss has a quadratic piece or an affine part, is a mapping per label, the penalty
        or ``C`` is invalid, or an option not taken on chunks is set.

    Notes
    -----
    Solution: the coefficients (``"w"``) and ``"intercept"`` as NumPy arrays; from AID, the
    lifted dual point (``"alpha"``) as a lazy dask array with the data's row chunks.
    """

    problem_class: ClassVar[ProblemClass] = ProblemClass.QP  # per instance: LP or QP
    layers: ClassVar[tuple[str, ...]] = ()
    convex_sample_loss: ClassVar[bool] = True
    #: The solution's names of the coefficients, the per-sample dual, and the per-sample values.
    coef_key: ClassVar[str] = "w"
    dual_key: ClassVar[str] = "alpha"
    values_key: ClassVar[str | None] = None

    data: DaskDataset
    loss: PLQLoss | Any
    penalty: Penalty | None = field(default_factory=L2)
    C: float = 1.0
    fit_intercept: bool = True
    kernel: Any = None
    sample_weight: ArrayLike | None = None
    free_margin: bool = False
    penalize_intercept: bool = False
    _penalty: Penalty = field(init=False, repr=False)
    _cache: dict[str, Any] = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        name = self.name
        if not isinstance(self.data, DaskDataset):
            raise DataError(
                f"{name} takes an optframe.data.DaskDataset; got {type(self.data).__name__}. "
                "Wrap dask arrays with DaskDataset(X=X, y=y), or use the in-memory model on a "
                "Dataset."
            )
        if self.data.y is None:
            raise DataError(f"{name} needs targets, but data.y is None.")
        loss_kind(self.loss, name)
        self._check_loss()
        object.__setattr__(self, "_penalty", as_penalty(self.penalty, name))
        object.__setattr__(self, "C", check_positive(self.C, "C", name))
        object.__setattr__(
            self, "fit_intercept", check_flag(self.fit_intercept, "fit_intercept", name)
        )
        self._check_options()
        object.__setattr__(self, "_cache", {"objective": {}})
        kind = ProblemClass.QP if self._penalty.is_quadratic else ProblemClass.LP
        object.__setattr__(self, "problem_class", kind)
        if self.is_classifier:
            self._check_labels()

    def _check_loss(self) -> None:
        loss = self.loss
        if not isinstance(loss, PLQLoss):
            raise ModelError(
                f"{self.name} on chunks takes one PLQLoss with ReLU pieces (a loss per label is "
                f"stated in memory only: EmpiricalRisk on a Dataset); got {loss!r}"
            )
        if not loss.is_piecewise_linear:
            raise ModelError(
                f"{self.name} on chunks needs a piecewise-linear loss (ReLU pieces only): AID, "
                "the driver that runs on chunks, is exact only when each cluster sits on one "
                f"linear piece; {loss!r} has quadratic pieces. Gather the data "
                "(data.to_dataset()) for the in-memory drivers."
            )
        if loss.affine_slope != 0.0:
            raise ModelError(
                f"{self.name} on chunks takes a loss without an affine part; {loss!r} has "
                f"linear={loss.affine_slope!r}. Use the in-memory EmpiricalRisk."
            )

    def _check_options(self) -> None:
        given = {
            "kernel": self.kernel is not None and not isinstance(as_kernel(self.kernel), Linear),
            "sample_weight": self.sample_weight is not None,
            "free_margin": self.free_margin is not False,
            "penalize_intercept": self.penalize_intercept is not False,
        }
        hints = {
            "kernel": "the linear model only (kernel=None); a kernel's aggregated problems need "
            "kernel rows against every sample",
            "sample_weight": "give the weights in DaskDataset(sample_weight=...)",
            "free_margin": "stated in memory only",
            "penalize_intercept": "append a constant feature and use fit_intercept=False",
        }
        for option, set_ in given.items():
            if set_:
                raise ModelError(
                    f"{self.name} on chunks does not take {option}={getattr(self, option)!r}: "
                    f"{hints[option]}."
                )

    def _check_labels(self) -> None:
        checks = self.data.map_chunks(rc.label_check)
        for index, ((lo, hi), (first, bad, _, _)) in enumerate(
            zip(self.data.row_ranges, checks, strict=True)
        ):
            if first >= 0:
                shown = ", ".join(f"{v:g}" for v in bad[:6]) + (", ..." if bad.size > 6 else "")
                raise DataError(
                    f"{self.name} with the classification loss {self.loss!r} needs labels in "
                    f"{{-1, +1}}; y also holds {shown} (first at row {first}, in "
                    f"{rows_text(lo, hi, index)}). Map 0/1 labels with y = 2 * y - 1."
                )
        members = sum(c[2] for c in checks)
        positive = sum(c[3] for c in checks)
        for code, label in ((1, 1.0), (0, -1.0)):
            if members[code] == 0:
                raise DataError(
                    f"{self.name} needs both classes; class {label:+g} is missing from y "
                    f"(all {self.data.n_samples} labels are {-label:+g})."
                )
            if positive[code] == 0:
                raise DataError(
                    f"{self.name}: class {label:+g} has zero total sample weight; "
                    "each class needs a sample with positive weight."
                )

    # --------------------------------------------------------------------------- declaration
    @property
    def is_classifier(self) -> bool:  # type: ignore[override]
        """Whether the loss is a margin (classification) loss."""
        return bool(self.loss.is_classification)

    @property
    def penalty_term(self) -> Penalty:
        """The penalty as a :class:`~optframe.penalties.Penalty` (``None`` is ``NoPenalty()``)."""
        return self._penalty

    @property
    def chunk_loss(self) -> rc.PLQChunkLoss:
        """The per-chunk kernels (:class:`~optframe.models._risk_chunks.PLQChunkLoss`)."""
        return rc.PLQChunkLoss(
            self.loss, self._penalty, self.C, self.fit_intercept,
            self.coef_key, self.dual_key, self.values_key, self.name,
        )  # fmt: skip

    @property
    def sample_duals(self) -> tuple[str, ...]:
        """The per-sample dual variable's name (lifted by weight share in AID)."""
        return (self.dual_key,)

    def with_data(self, data: Dataset) -> Model:
        """The in-memory model (every parameter) on ``data``: AID's aggregated problems."""
        from .empirical_risk import EmpiricalRisk

        return EmpiricalRisk(
            data, self.loss, penalty=self.penalty, C=self.C, fit_intercept=self.fit_intercept
        )

    # ----------------------------------------------------------------------------- refusals
    def structure_refusal(self, kind: type[Structure]) -> str | None:
        """Only :class:`~optframe.capabilities.PiecewiseLinearSampleLoss`, by its members."""
        if kind is PiecewiseLinearSampleLoss:
            return super().structure_refusal(kind)
        return refusal(self.name)

    def check_form(self, form: str | None) -> str:
        """Refuse: a driver that builds the whole problem (Direct) cannot take this model."""
        raise IncompatibleDriver(
            f"{refusal(self.name)}. Direct builds the whole problem, which this model never is."
        )

    def build(self, layer: str, form: str | None = None) -> Formulation:
        """Not built whole: solve with AggregateDisaggregate (see the module's docstring)."""
        raise ModelError(f"{refusal(self.name)}; it is never built whole.")

    def offers(self, layer: str, form: str | None = None) -> bool:
        """Never: no layer builds the whole problem."""
        return False

    # ---------------------------------------------------------------------------- structure
    @property
    def weights(self) -> Any:
        """The sample weights as a dask array (ones when the data have none)."""
        return self.data.weights

    @property
    def group_counts(self) -> NDArray[np.int64]:
        """Positive-weight samples per chunk and group, shape (chunks, groups)."""
        if "groups" not in self._cache:
            counts = self.data.map_chunks(rc.group_counts, self.chunk_loss)
            self._cache["groups"] = np.array(counts, dtype=np.int64)
        return self._cache["groups"]

    def _rowwise(self, function: Any, *args: Any, dtype: Any, tail: tuple = ()) -> Any:
        import dask.array as da

        blocks = [
            da.from_delayed(task, shape=(hi - lo, *tail), dtype=dtype)
            for task, (lo, hi) in zip(
                self.data.chunk_tasks(function, *args), self.data.row_ranges, strict=True
            )
        ]
        return da.concatenate(blocks)

    def sample_groups(self) -> Any:
        """The group of each sample, a lazy dask array (samples of a group share centroids)."""
        return self._rowwise(rc.groups, self.chunk_loss, dtype=np.int64)

    def loss_argument(self, solution: Solution) -> Any:
        """The loss argument (margin or residual) of each sample, a lazy dask array."""
        loss = self.chunk_loss
        return self._rowwise(rc.arguments, loss, loss.params(solution), dtype=np.float64)

    def loss_pieces(self, solution: Solution) -> Any:
        """The linear piece of the loss each sample sits on, a lazy dask array."""
        loss = self.chunk_loss
        return self._rowwise(rc.pieces, loss, loss.params(solution), dtype=np.int64)

    def sample_embedding(self, solution: Solution) -> Any:
        """The clustering embedding of each sample, a lazy dask array (rows, d)."""
        loss = self.chunk_loss
        d = 1 if loss.classification else 2
        return self._rowwise(rc.embedding, loss, loss.params(solution), dtype=np.float64, tail=(d,))

    def complete_solution(self, solution: Solution) -> dict[str, Any]:
        """The parameters of ``solution`` and the lazy per-sample values on this model's data."""
        loss = self.chunk_loss
        params = loss.params(solution)
        out: dict[str, Any] = dict(params)
        if self.values_key is not None:
            out[self.values_key] = self._rowwise(rc.values, loss, params, dtype=np.float64)
        return out

    # ---------------------------------------------------------------------------- evaluation
    def _key(self, params: dict[str, NDArray]) -> bytes:
        return b"".join(np.ascontiguousarray(params[k]).tobytes() for k in sorted(params))

    def objective(self, solution: Solution) -> float:
        r""":math:`P(w) + C\sum_i s_i\ell(a_i)` at ``solution``, summed chunk by chunk."""
        loss = self.chunk_loss
        params = loss.params(solution)
        key = self._key(params)
        cached = self._cache["objective"]
        if key not in cached:
            parts = self.data.map_chunks(rc.loss_sum, loss, params)
            if len(cached) > 64:
                cached.clear()
            cached[key] = loss.regularizer(params) + float(sum(parts))
        return cached[key]

    def remember_objective(self, solution: Solution, value: float) -> None:
        """Record the objective at ``solution`` computed by a driver's own chunk pass."""
        self._cache["objective"][self._key(self.chunk_loss.params(solution))] = float(value)

    def decision_function(self, solution: Solution, X: ArrayLike) -> Any:
        r""":math:`x^\top w + b` at ``X`` (NumPy or sparse; a dask array gives a lazy one)."""
        import dask.array as da

        params = self.chunk_loss.params(solution)
        coef, b = params[self.coef_key], float(params["intercept"][0])
        if isinstance(X, da.Array):
            return X.map_blocks(rc.predict_block, coef, b, drop_axis=1, dtype=np.float64)
        X = check_features(X, self.data.n_features, self.name)
        return rc.predict_block(X, coef, b)

    # --------------------------------------------------------------------------- certificate
    def dual_bound(self, solution: Solution) -> float:
        r"""A proven lower bound: the Fenchel dual at a repaired multiplier, chunk by chunk.

        .. math::

            D(\theta) = \sum_i \bigl(\theta_i p_i - c_i\,\ell^*(\theta_i / c_i)\bigr)
            - P^*(X^\top v), \qquad v_i = -q_i\theta_i.

        The candidates of :meth:`EmpiricalRisk.dual_bound`: :math:`\theta` from the solution's
        dual variable (a dask or NumPy array of length n) when present, and the loss's
        subgradient at :math:`(w, b)` with the samples near a kink filled by least squares
        (:class:`~optframe.models._risk_chunks.KinkFill`), at the tightest kink tolerance of
        ``KINK_TOLERANCES`` when the solution has its dual variable, else at each in turn; the
        largest value, the search stopping at one within ``CLOSED`` of the objective (a tenth of
        the proving gap inside :func:`optframe.solve`, :func:`optframe.certificate.enough_gap`).
        Each is made feasible as the module's docstring says, so weak duality makes the value a
        bound whatever produced it.
        """
        loss = self.chunk_loss
        params = loss.params(solution)
        objective = self.objective(solution)
        enough = objective - enough_gap(CLOSED) * self.gap_scale(objective, None)
        key, chunks = self.dual_key, self.data.n_chunks
        candidates = []
        if key in solution:
            candidates.append(lambda: _chunk_of(solution[key], self.data, key))
        tolerances = KINK_TOLERANCES[:1] if key in solution else KINK_TOLERANCES
        for tol in tolerances:
            candidates.append(lambda tol=tol: [self._kink_fill(loss, params, tol)] * chunks)
        unpenalized = self._penalty.l1 == 0 and self._penalty.l2 == 0
        best = -math.inf
        for candidate in candidates:
            items = [candidate()]
            if unpenalized:
                value = self._unpenalized_bound(loss, params, items, enough)
            else:
                value = self._penalized_bound(loss, params, items)
            best = max(best, value)
            if best >= enough:
                break
        return best

    def _kink_fill(self, loss: rc.PLQChunkLoss, params: dict, tol: float) -> rc.KinkFill:
        """The subgradient candidate at kink tolerance ``tol`` (two passes over the chunks)."""
        pen, coef = self._penalty, params[self.coef_key]
        target, fixed = pen.subgradient(
            coef, tol * max(1.0, float(np.max(np.abs(coef), initial=0)))
        )
        equations = int(fixed.sum()) + int(self.fit_intercept)
        if equations == 0:
            return rc.KinkFill(0.0, (), fixed)
        count = 0 if pen.is_quadratic else equations  # an LP: at least as many as the rows
        nearest: tuple[int, ...] = ()
        if count:
            found = self.data.map_chunks(rc.kink_nearest, loss, params, count)
            distance = np.concatenate([f[0] for f in found])
            rows = np.concatenate([f[1] for f in found])
            nearest = tuple(int(r) for r in rows[np.lexsort((rows, distance))[:count]])
        fill = rc.KinkFill(tol * self._offset_scale(), nearest, fixed)
        system = self.data.map_chunks(rc.fill_system, loss, params, fill)
        if sum(s[2] for s in system) == 0:
            return rc.KinkFill(0.0, (), fixed)
        goal = target[fixed]
        if self.fit_intercept:
            goal = np.append(goal, 0.0)
        correction = solve_normal(sum(s[0] for s in system), goal - sum(s[1] for s in system))
        return rc.KinkFill(fill.tol, nearest, fixed, correction)

    def _offset_scale(self) -> float:
        r""":math:`\max(1, \max_i \lvert p_i\rvert)`: 1 for a margin, from :math:`y` else."""
        if self.is_classifier:
            return 1.0
        if "offset" not in self._cache:
            self._cache["offset"] = max(1.0, max(self.data.map_chunks(rc.largest_target)))
        return self._cache["offset"]

    def _penalized_bound(self, loss: rc.PLQChunkLoss, params: dict, items: list) -> float:
        data, per_chunk = self.data, items
        scale = [1.0, 1.0, 1.0]
        if self.fit_intercept:  # 1'v = 0: the larger side scaled down (the box holds 0)
            positive, negative = sum(data.map_chunks(rc.sides, loss, params, per_chunk=per_chunk))
            if positive > negative:
                scale[0] = negative / positive
            elif negative > positive:
                scale[1] = positive / negative
        parts = data.map_chunks(rc.penalized_dual, loss, params, tuple(scale), per_chunk=per_chunk)
        z = sum(p[2] for p in parts)
        t = self._penalty.dual_scale(z)
        if t is not None and t != 1.0:  # into the lasso's ball: the conjugate terms again
            scale[2] = t
            parts = data.map_chunks(
                rc.penalized_dual, loss, params, tuple(scale), per_chunk=per_chunk
            )
            z = z * t
        terms = float(sum(p[0] + p[1] for p in parts))
        return terms - self._penalty.conjugate(z)

    def _unpenalized_bound(
        self, loss: rc.PLQChunkLoss, params: dict, items: list, enough: float
    ) -> float:
        r"""Without a penalty: the best projection over the pinning tolerances ``ZERO_ENDS``.

        As in memory, multipliers within a tolerance (relative to :math:`\max_i\lvert
        v_i\rvert`) of a box end at 0 are held there while :math:`v` is projected; a loss whose
        boxes have no end at 0 (LAD, pinball) gives one point whatever the tolerance. The search
        stops at a value of at least ``enough``.
        """
        low, high = self.loss.conjugate_domain
        tolerances = ZERO_ENDS if low == 0.0 or high == 0.0 else ZERO_ENDS[:1]
        best, size = -math.inf, None
        for tol in tolerances:
            pin = 0.0
            if tol > 0.0:
                if size is None:
                    size = max(
                        self.data.map_chunks(rc.multiplier_size, loss, params, per_chunk=items)
                    )
                pin = tol * max(size, 1e-300)
            best = max(best, self._projected_bound(loss, params, items, pin))
            if best >= enough:
                break
        return best

    def _projected_bound(
        self, loss: rc.PLQChunkLoss, params: dict, items: list, pin: float
    ) -> float:
        data, per_chunk = self.data, items
        correction: NDArray | None = None  # the sum of the passes' least-squares solutions
        # the free rows depend on the multiplier when a box has an end at 0 (pinned rows): the
        # Gram is kept only when every positive-weight row is free, as with LAD's boxes
        low, high = self.loss.conjugate_domain
        keep = low < 0.0 < high
        gram = self._cache.get("gram") if keep else None
        for _ in range(REFINEMENTS):
            need = gram is None
            step = data.map_chunks(
                rc.projection_step, loss, params, pin, correction, need, per_chunk=per_chunk
            )
            if need:
                gram = sum(g for _, g in step)
            step_size = solve_normal(gram, sum(r for r, _ in step))
            correction = step_size if correction is None else correction + step_size
        if keep:
            self._cache["gram"] = gram
        for extra in range(EXTRA_REFINEMENTS + 1):
            final = data.map_chunks(
                rc.projection_check, loss, params, pin, correction, per_chunk=per_chunk
            )
            signed = sum(f[1] for f in final)
            residual = np.abs(signed)
            allowed = data.n_samples * np.finfo(np.float64).eps * sum(f[2] for f in final)
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = float(np.max(np.where(residual > 0, residual / allowed, 0.0), initial=0))
            if ratio <= 1.0 or extra == EXTRA_REFINEMENTS:
                break
            correction = correction + solve_normal(gram, signed)  # the check's A'v: one more
        if ratio > 1.0:  # a row the projection could not meet: no bound
            return -math.inf
        excess = max(f[0] for f in final)
        if excess <= 1.0:  # in its box: the terms at the point checked are the bound
            return float(sum(f[3][0] + f[3][1] for f in final))
        if loss.homogeneous:  # the terms at v / excess are those at v over excess
            return float(sum(f[3][0] + f[3][1] for f in final)) / excess
        parts = data.map_chunks(
            rc.projection_value, loss, params, pin, correction, excess, per_chunk=per_chunk
        )
        return float(sum(p[0] + p[1] for p in parts))

    # ------------------------------------------------------------------------------ the floor
    def objective_floor(self) -> float:
        r"""A thousandth of a trivial model's loss where the optimum can be 0, else 0.

        As :meth:`EmpiricalRisk.objective_floor`: :math:`10^{-3} C\sum_i s_i
        \max(\ell(r_i), \lvert r_i\rvert)` with :math:`r_i = y_i - m` (:math:`m` the weighted
        median of :math:`y`, by histograms over the chunks, with an intercept; else 0) for a
        residual loss, :math:`10^{-3} C\sum_i s_i\max(\ell(0), 1)` for a margin loss; 0 when a
        penalty keeps the optimum above 0.
        """
        if "floor" in self._cache:
            return self._cache["floor"]
        pen = self._penalty
        if (pen.l1 > 0 or pen.l2 > 0) and not self._can_vanish():
            floor = 0.0
        elif self.is_classifier:
            total = float(sum(r[2] for r in self.data.map_chunks(_all_weights)))
            floor = 1e-3 * self.C * total * max(float(self.loss.value(0.0)[0]), 1.0)
        else:
            center = weighted_median(self.data) if self.fit_intercept else 0.0
            floor = 1e-3 * float(sum(self.data.map_chunks(rc.floor_sum, self.chunk_loss, center)))
        self._cache["floor"] = floor
        return floor

    def _can_vanish(self) -> bool:
        """Whether some constant model (w = 0) has zero loss on every counted sample."""
        zero = self.loss.zero_set()
        if zero is None:
            return False
        low, high = zero
        if self.is_classifier:
            if not self.fit_intercept:
                return low <= 0.0 <= high
            return max(low, -high) <= min(high, -low)
        ranges = self.data.map_chunks(rc.value_range)
        y_min, y_max = min(r[0] for r in ranges), max(r[1] for r in ranges)
        if not self.fit_intercept:
            return bool(y_min >= low and y_max <= high)
        return y_max - y_min <= high - low


def _all_weights(X: Any, y: NDArray, w: NDArray, lo: int) -> tuple[float, float, float]:
    return 0.0, 0.0, float(w.sum())


def _chunk_of(value: Any, data: DaskDataset, what: str) -> list[Any]:
    """A per-sample vector (dask or NumPy) as one item per chunk, aligned with ``data``."""
    import dask.array as da

    n = data.n_samples
    if isinstance(value, da.Array):
        if value.shape != (n,):
            raise ModelError(f"the solution's {what!r} has shape {value.shape}; expected ({n},)")
        if value.chunks[0] != data.X.chunks[0]:
            value = value.rechunk((data.X.chunks[0],))
        return list(value.to_delayed().ravel())
    array = np.asarray(value, dtype=np.float64).reshape(-1)
    if array.shape != (n,):
        raise ModelError(f"the solution's {what!r} has shape {array.shape}; expected ({n},)")
    return [array[lo:hi] for lo, hi in data.row_ranges]


def weighted_median(data: DaskDataset) -> float:
    """The weighted median of ``data.y`` (as ``weighted_median`` in memory), chunk by chunk."""
    ranges = data.map_chunks(rc.value_range)
    total = float(sum(r[2] for r in ranges))
    if total <= 0:
        return 0.0
    low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
    half, below, closed = 0.5 * total, 0.0, True
    for _ in range(8):
        if low == high:
            return float(low)
        edges = np.linspace(low, high, MEDIAN_BINS + 1)
        parts = data.map_chunks(rc.histogram, edges, closed)
        weights = sum(p[0] for p in parts)
        counts = sum(p[1] for p in parts)
        below = float(sum(p[2] for p in parts))
        if int(counts.sum()) <= MEDIAN_GATHER:
            break
        cumulative = below + np.cumsum(weights)
        j = min(int(np.searchsorted(cumulative, half)), MEDIAN_BINS - 1)
        low, high = float(edges[j]), float(edges[j + 1])
        closed = closed and j == MEDIAN_BINS - 1
    parts = data.map_chunks(rc.between, low, high, closed)
    values = np.concatenate([p[0] for p in parts])
    weights = np.concatenate([p[1] for p in parts])
    below = float(sum(p[2] for p in parts))
    order = np.argsort(values, kind="stable")
    cumulative = below + np.cumsum(weights[order])
    k = int(np.searchsorted(cumulative, half))
    return float(values[order][min(k, values.size - 1)])
