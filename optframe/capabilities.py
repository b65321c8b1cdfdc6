r"""Mathematical structure that models offer and drivers ask for.

Each structure is one mathematical shape, named for its mathematics, never for a driver: a frozen
dataclass that a model builds from its own data, holding the problem a driver works on and the way
back to the model's solution. A model lists the structures its class offers in
:attr:`Model.structures <optframe.model.Model.structures>` and builds one in ``_structure(kind)``;
an instance whose parameters rule one out says why in
:meth:`~optframe.model.Model.structure_refusal`. A driver lists the types it needs in
:attr:`Driver.needs <optframe.drivers.base.Driver.needs>`; :meth:`Model.structure(kind)
<optframe.model.Model.structure>` returns the object, or raises
:class:`~optframe.errors.IncompatibleDriver` naming the structure and the model's reason.

* :class:`BoxQPDual`: a kernel QP over a box, at most one equality row and a kink per
  variable (SMO);
* :class:`SimplexQP`: a kernel quadratic on the unit simplex (FrankWolfe, CoreVectorMachine);
* :class:`LinearBoxDual`: a linear model's dual over a box, without equality row (DCD, the
  screening rules of :mod:`optframe.screening`);
* :class:`EntropyBoxDual`: the logistic loss's dual over a box, with binary-entropy terms (DCD);
* :class:`PiecewiseLinearSampleLoss`: a sum of piecewise-linear per-sample losses
  (AggregateDisaggregate);
* :class:`ElasticNetSmoothLoss`: a smooth loss plus the elastic net or the ridge (CD, Newton);
* :class:`ElasticNetKnowledge`: the elastic-net hinge loss with knowledge penalties, split into
  proximal pieces (ADMM, ADMMThenIPM).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from optframe.errors import ModelError

if TYPE_CHECKING:
    from optframe.data import Dataset
    from optframe.kernels import Kernel
    from optframe.model import Model, Solution

Recovered = dict[str, NDArray[np.float64]]


class Structure:
    """Base of the structures a model offers to drivers.

    A structure is offered by a model that lists it in ``Model.structures`` and builds it in
    ``Model._structure``. A structure that is a set of the model's own methods (only
    :class:`PiecewiseLinearSampleLoss`) is also offered by any model that has those methods:
    :meth:`refusal_by_members` and :meth:`from_members` say so.
    """

    @classmethod
    def refusal_by_members(cls, model: Model) -> str | None:
        """Why ``model``, which does not list this structure, does not offer it (always, here)."""
        offered = ", ".join(kind.__name__ for kind in model.structures)
        return f"{model.name} offers {offered}" if offered else f"{model.name} offers none"

    @classmethod
    def from_members(cls, model: Model) -> Structure:
        """The structure of a model that offers it by its members alone."""
        raise NotImplementedError(f"{cls.__name__} is offered by models that build it")


# --- a kernel QP over a box, with at most one equality row and one kink per variable (SMO) -----
@dataclass(frozen=True, eq=False)
class BoxQPDual(Structure):
    r"""A kernel quadratic over a box, at most one equality row and one kink per variable.

    .. math::

        \min_x \; \Phi(x) = \tfrac12 x^\top Q x + c^\top x + \sum_i h_i(x_i)
        \quad\text{s.t.}\quad a^\top x = b, \quad 0 \le x_i \le u_i,

    or the same without the row :math:`a^\top x = b` (``rhs`` is ``None``: a model without a
    free intercept),

    with :math:`a_i = \pm 1`,

    .. math::

        Q_{ij} = a_i a_j r_i r_j \bigl(k(z_i, z_j) + \text{kernel\_shift}\bigr)
        + \delta_{ij}\, (\text{ridge} + D_i),

    :math:`r_i = \pm 1` (``row_sign``, default 1) and
    :math:`h_i(s) = s^-_i \min(s, \kappa_i) + s^+_i \max(s - \kappa_i, 0)` (convex:
    :math:`s^-_i \le s^+_i`; no kink when they are equal). The model's optimum is
    :math:`-\text{bound\_scale} \cdot \min \Phi + \text{bound\_offset}`, so
    :math:`-\text{bound\_scale} \cdot \Phi(x) + \text{bound\_offset}` is a lower bound for every
    feasible :math:`x`. The WeightedSVM dual has no kinks and :math:`Q_{ij} = y_i y_j k_{ij}`;
    the PULearning reduced dual has a kink at :math:`c_2/2`; a :class:`SimplexQP` is one with
    :math:`a = 1`, :math:`r = y`, shift 1 and its ridge (:meth:`SimplexQP.box_qp`).

    Parameters
    ----------
    X : array (n, d) or sparse
        The points :math:`z_i` defining :math:`Q` (sparse rows stay sparse).
    kernel : Kernel
        :class:`~optframe.kernels.Linear`, :class:`~optframe.kernels.RBF` or
        :class:`~optframe.kernels.Polynomial`.
    sign, linear, upper : arrays (n,)
        :math:`a`, :math:`c`, :math:`u`.
    rhs : float or None
        :math:`b`; ``None`` when there is no equality row (the dual of a model without a free
        intercept: a box QP, which SMO solves by single-variable steps).
    kink, slope_below, slope_above : arrays (n,)
        :math:`\kappa`, :math:`s^-`, :math:`s^+`.
    recover : callable ``(x, gradient) -> solution``
        The model's solution at a feasible :math:`x`, given :math:`\nabla = Qx + c` there.
    bound_offset : float
        See above.
    start : array (n,), optional
        A feasible starting point.
    objective : callable ``(x, gradient) -> float``, optional
        The model's objective at ``recover(x, gradient)``, cheaply from the gradient (the SVM's
        in O(n log n)); without it a driver evaluates the model's objective at the solution.
    row_sign : array (n,), optional
        :math:`r` (default: ones).
    kernel_shift, ridge : float
        The constant added to the kernel and the diagonal term of :math:`Q` (default 0).
    bound_scale : float
        See above (> 0; default 1).
    diagonal : array (n,), optional
        A diagonal :math:`D \ge 0` added to :math:`Q` variable by variable (the quadratic
        pieces of a loss: the L2-loss SVM's :math:`1/(2C)`); with it an upper bound
        :math:`u_i` may be ``inf`` where :math:`D_i > 0` (the objective is then coercive in
        :math:`x_i`). Default none.
    """

    X: Any
    kernel: Kernel
    sign: NDArray[np.float64]
    linear: NDArray[np.float64]
    upper: NDArray[np.float64]
    rhs: float | None
    kink: NDArray[np.float64]
    slope_below: NDArray[np.float64]
    slope_above: NDArray[np.float64]
    recover: Callable[[NDArray[np.float64], NDArray[np.float64]], Recovered] = field(repr=False)
    bound_offset: float = 0.0
    start: NDArray[np.float64] | None = None
    objective: Callable[[NDArray[np.float64], NDArray[np.float64]], float] | None = field(
        default=None, repr=False
    )
    row_sign: NDArray[np.float64] | None = None
    kernel_shift: float = 0.0
    ridge: float = 0.0
    bound_scale: float = 1.0
    diagonal: NDArray[np.float64] | None = None

    @property
    def n(self) -> int:
        """Number of variables."""
        return int(self.sign.shape[0])

    @property
    def plain(self) -> bool:
        """Whether :math:`Q_{ij} = a_i a_j k(z_i, z_j)` (no row sign, shift, ridge, diagonal)."""
        return (
            (self.row_sign is None or bool(np.all(self.row_sign == 1.0)))
            and self.kernel_shift == 0.0
            and self.ridge == 0.0
            and self.diagonal is None
        )

    @classmethod
    def refusal_by_members(cls, model: Model) -> str | None:
        """``None`` when ``model`` offers a :class:`SimplexQP` with a negative scale."""
        if model.offers_structure(SimplexQP):
            scale = model.structure(SimplexQP).scale
            if scale < 0.0:
                return None
            return f"its SimplexQP has scale {scale:g} >= 0 (a minimization: no lower bound)"
        return super().refusal_by_members(model)

    @classmethod
    def from_members(cls, model: Model) -> BoxQPDual:
        """The box QP of the model's :class:`SimplexQP` (:meth:`SimplexQP.box_qp`)."""
        return model.structure(SimplexQP).box_qp()


# --- a kernel quadratic on the unit simplex (FW, MFW, PFW, CVM) ---------------------------------
@dataclass(frozen=True, eq=False)
class SimplexQP(Structure):
    r"""A quadratic on the unit simplex given by kernel columns.

    .. math::

        R^\star = \min_\alpha \; \alpha^\top \tilde K \alpha
        \quad\text{s.t.}\quad \textstyle\sum_i \alpha_i = 1, \ \alpha \ge 0, \qquad
        \tilde K_{ij} = a_i a_j \bigl(k(x_i, x_j) + 1\bigr) + \delta_{ij}\, \text{ridge},

    and the model's optimal value is ``scale * R* + offset``. With a constant kernel diagonal it
    is a minimal-enclosing-ball problem (the L2-SVM of CVM: :math:`a = y`, ridge :math:`= 1/C`,
    scale :math:`-1/2`).

    Parameters
    ----------
    X : array (m, n) or sparse
        The points :math:`x_i` (kept sparse: the drivers work on CSR rows).
    sign : array (m,)
        :math:`a_i = \pm 1`.
    kernel : Kernel
        :class:`~optframe.kernels.Linear`, :class:`~optframe.kernels.RBF` or
        :class:`~optframe.kernels.Polynomial`.
    ridge : float
        The diagonal term (:math:`1/C` for the L2SVM), > 0 so that :math:`\tilde K` is definite.
    recover : callable ``alpha -> solution``
        The model's solution at a point of the simplex.
    scale, offset : float
        The map from :math:`R^\star` to the model's optimal value.
    objective : callable ``(alpha, s) -> float``, optional
        The model's objective at ``recover(alpha)`` from :math:`s = \tilde K\alpha`, without a
        kernel pass (drivers use it for their own stopping decisions; the certificate
        evaluates the model itself).
    """

    X: Any
    sign: NDArray[np.float64]
    kernel: Kernel
    ridge: float
    recover: Callable[[NDArray[np.float64]], Recovered] = field(repr=False)
    scale: float = 1.0
    offset: float = 0.0
    objective: Callable[[NDArray[np.float64], NDArray[np.float64]], float] | None = field(
        default=None, repr=False
    )

    @property
    def n(self) -> int:
        """Number of points m."""
        return int(np.asarray(self.sign).shape[0])

    def box_qp(self) -> BoxQPDual:
        r"""The same problem as a :class:`BoxQPDual` (pair steps on the simplex).

        :math:`\Phi(\alpha) = \tfrac12 \alpha^\top \tilde K \alpha = R(\alpha)/2` with the
        equality row :math:`1^\top \alpha = 1` and the box :math:`0 \le \alpha \le 1`; the
        model's value ``scale * R + offset`` is :math:`-\text{bound\_scale}\cdot\Phi +
        \text{offset}` with bound_scale :math:`= -2\,\text{scale}`, a lower bound at every
        feasible point when the scale is negative (a maximized dual, as the L2-SVM's). The start
        puts weight 1/2 on the first point of each sign (1 on the first point when all signs
        agree), so the first gradient costs two kernel columns.
        """
        if not self.scale < 0.0:
            raise ModelError(
                f"a SimplexQP with scale {self.scale:g} >= 0 is a minimization: its values "
                "are upper bounds, not the lower bounds a BoxQPDual gives"
            )
        sign = np.asarray(self.sign, dtype=np.float64).reshape(-1)
        n = sign.shape[0]
        start = np.zeros(n)
        firsts = [int(np.argmax(sign == value)) for value in (1.0, -1.0) if np.any(sign == value)]
        start[firsts] = 1.0 / len(firsts)
        recover, objective = self.recover, self.objective
        return BoxQPDual(
            X=self.X,
            kernel=self.kernel,
            sign=np.ones(n),
            linear=np.zeros(n),
            upper=np.ones(n),
            rhs=1.0,
            kink=np.zeros(n),
            slope_below=np.zeros(n),
            slope_above=np.zeros(n),
            recover=lambda x, gradient: recover(x),
            bound_offset=float(self.offset),
            start=start,
            objective=objective,  # (alpha, s = K~ alpha): the box QP's (x, gradient)
            row_sign=sign.copy(),
            kernel_shift=1.0,
            ridge=float(self.ridge),
            bound_scale=-2.0 * float(self.scale),
        )


# --- a linear model's dual over a box, without equality row (DCD, DVI/SSNSV/ESSNSV screening) ---
@dataclass(frozen=True, eq=False)
class LinearBoxDual(Structure):
    r"""A linear model's dual over a box, with no equality row (no intercept).

    The primal and its dual (the unified form of DVI, notes/dvi.md section 1, in the
    :math:`\alpha = C\theta` scale) are

    .. math::

        P(w) = \tfrac12 \lVert w \rVert^2 + \sum_i \max(l_i t_i, u_i t_i),
        \qquad t_i = \bar y_i - \langle w, z_i \rangle,

        D(\alpha) = \bar y^\top \alpha - \tfrac12 \lVert Z^\top \alpha \rVert^2,
        \qquad l \le \alpha \le u, \qquad w = Z^\top \alpha,

    so :math:`D(\alpha) \le P(w)` for every :math:`\alpha` in the box and every :math:`w`
    (weak duality), and :math:`P` is 1-strongly convex: :math:`\lVert w - w^\star\rVert \le
    \sqrt{2 (P(w) - D(\alpha))}`. Samples marked ``fixed`` keep :math:`\alpha_i` at
    ``fixed_values[i]``: their term in :math:`P` is the linear piece :math:`\alpha_i t_i`.
    The SVM (hinge) has :math:`z_i = y_i x_i`, :math:`\bar y_i = 1`, box :math:`[0, C s_i]`; the
    regularized LAD has :math:`z_i = x_i`, :math:`\bar y_i = y_i`, box :math:`[-C s_i, C s_i]`.

    Screening reads the KKT conditions: :math:`\langle w^\star, z_i\rangle > \bar y_i` implies
    :math:`\alpha_i = l_i` (the set R), :math:`\langle w^\star, z_i\rangle < \bar y_i` implies
    :math:`\alpha_i = u_i` (the set L).

    Parameters
    ----------
    Z : array (n, m) or sparse
        The rows :math:`z_i`.
    target : array (n,)
        :math:`\bar y`.
    lower, upper : arrays (n,)
        The box :math:`l \le u`; both scale linearly with the model's loss parameter.
    recover : callable ``alpha -> solution``
        The model's solution at a dual point (with :math:`w = Z^\top\alpha`).
    fixed : bool array (n,), optional
        Samples whose :math:`\alpha_i` is fixed.
    fixed_values : array (n,), optional
        Their values (read where ``fixed``), inside the box.
    primal_key, dual_key : str
        Where the model's solution keeps :math:`w` and :math:`\alpha`.
    parameter : str
        The model's parameter :math:`C` that multiplies the box (the box is :math:`C` times a box
        that does not depend on :math:`C`); a screened path runs over it.
    reduced : callable ``LinearBoxDual -> Model``, optional
        The model of a dual with fixed samples (:meth:`with_fixed`); the models of
        :mod:`optframe.models` give one that offers this structure and the ``"matrix"`` layer.
    """

    Z: Any
    target: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    recover: Callable[[NDArray[np.float64]], Recovered] = field(repr=False)
    fixed: NDArray[np.bool_] | None = None
    fixed_values: NDArray[np.float64] | None = None
    primal_key: str = "w"
    dual_key: str = "alpha"
    parameter: str = "C"
    reduced: Callable[[LinearBoxDual], Model] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, offered: LinearBoxDual | Mapping[str, Any]) -> LinearBoxDual:
        """The dataclass itself, or one built from the mapping of its fields."""
        return offered if isinstance(offered, LinearBoxDual) else cls(**offered)

    @property
    def n(self) -> int:
        """Number of samples."""
        return int(self.target.shape[0])

    def start_point(self, alpha: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        """``alpha`` (default 0) clipped to the box, with the fixed entries set."""
        x = np.zeros(self.n) if alpha is None else np.array(alpha, dtype=np.float64).reshape(-1)
        x = np.clip(x, self.lower, self.upper)
        if self.fixed is not None and self.fixed_values is not None:
            x[self.fixed] = self.fixed_values[self.fixed]
        return x

    def dual_value(self, alpha: NDArray[np.float64]) -> float:
        r""":math:`D(\alpha)` (``alpha`` must lie in the box for it to be a bound)."""
        w = np.asarray(self.Z.T @ alpha, dtype=np.float64).reshape(-1)
        return float(self.target @ alpha) - 0.5 * float(w @ w)

    def primal_value(self, w: NDArray[np.float64]) -> float:
        r""":math:`P(w)`, fixed samples on their linear piece."""
        t = self.target - np.asarray(self.Z @ w, dtype=np.float64).reshape(-1)
        loss = np.maximum(self.lower * t, self.upper * t)
        if self.fixed is not None and self.fixed_values is not None:
            loss = np.where(self.fixed, self.fixed_values * t, loss)
        return 0.5 * float(w @ w) + float(loss.sum())

    def fixing(self, fixed: NDArray[np.bool_], values: NDArray[np.float64]) -> LinearBoxDual:
        """The dual with ``alpha[fixed] = values[fixed]`` too (samples already fixed stay so).

        Raises
        ------
        ModelError
            If the shapes differ from ``(n,)`` or a fixed value lies outside the box.
        """
        fixed = np.asarray(fixed, dtype=bool).reshape(-1)
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if fixed.shape != (self.n,) or values.shape != (self.n,):
            raise ModelError(
                f"with_fixed: fixed and values must have shape ({self.n},); got {fixed.shape} "
                f"and {values.shape}"
            )
        if self.fixed is not None and self.fixed_values is not None:
            values = np.where(self.fixed, self.fixed_values, values)
            fixed = fixed | self.fixed
        slack = 1e-12 * np.maximum(1.0, np.abs(self.upper) + np.abs(self.lower))
        outside = fixed & ((values < self.lower - slack) | (values > self.upper + slack))
        if outside.any():
            raise ModelError(
                f"with_fixed: {int(outside.sum())} fixed values lie outside the dual box"
            )
        values = np.where(fixed, np.clip(values, self.lower, self.upper), 0.0)
        return dataclasses.replace(self, fixed=fixed, fixed_values=values)

    def with_fixed(self, fixed: NDArray[np.bool_], values: NDArray[np.float64]) -> Model:
        r"""The reduced model: ``alpha[fixed] = values[fixed]`` kept as constant terms (DVI eq. 15).

        Its solution holds the full-length :math:`\alpha` under ``dual_key``; it offers this
        structure itself (with the fixed samples) and the ``"matrix"`` layer.
        """
        if self.reduced is None:
            raise ModelError("this LinearBoxDual gives no reduced model (its reduced is None)")
        return self.reduced(self.fixing(fixed, values))


# --- a linear model's dual with one box variable per loss piece (ReHLine) ----------------------
@dataclass(frozen=True, eq=False)
class PiecewiseBoxDual(Structure):
    r"""A linear model's dual with one variable per ReLU or ReHU piece of every sample's loss.

    The primal (ReHLine's form, Dai and Qiu 2023, with each sample's weight folded in) is

    .. math::

        P(w) = \tfrac12\lVert w\rVert^2 + \sum_r \max_{0 \le \alpha_r \le U_r}
        \bigl(\alpha_r (b_r - \langle w, z_r\rangle) - \tfrac{d_r}2 \alpha_r^2\bigr),
        \qquad z_r = g_r x_{i_r},

    one term :math:`r` per piece of sample :math:`i_r`'s loss: a ReLU piece
    :math:`c\operatorname{relu}(\cdot) = \max_{0\le\alpha\le c}\alpha\,\cdot` has
    :math:`d_r = 0, U_r = c`; a ReHU piece :math:`c\operatorname{rehu}_\tau(\cdot) =
    \max_{0\le\alpha\le c\tau}(\alpha\,\cdot - \alpha^2/(2c))` has :math:`d_r = 1/c,
    U_r = c\tau` (:math:`\infty` for a one-sided square). Its dual

    .. math::

        D(\alpha) = b^\top\alpha - \tfrac12\lVert Z^\top\alpha\rVert^2
        - \tfrac12\textstyle\sum_r d_r\alpha_r^2,
        \qquad 0 \le \alpha \le U, \qquad w = Z^\top\alpha,

    is a lower bound of :math:`P` at every :math:`\alpha` in the box (weak duality), and each
    coordinate's exact minimization is closed-form (notes: losses-and-bounds, section 1.3).
    :math:`Z` is never formed: the rows of ``X`` are read through ``sample`` and scaled by ``coef``.

    Parameters
    ----------
    X : array (n, m) or sparse
        The samples' features (a column of ones appended for a penalized intercept).
    sample : int array (R,)
        :math:`i_r`, the sample of each piece, non-decreasing (a sample's pieces side by side).
    coef : array (R,)
        :math:`g_r`.
    target : array (R,)
        :math:`b_r`.
    upper : array (R,)
        :math:`U_r > 0` (``inf`` allowed).
    diagonal : array (R,)
        :math:`d_r \ge 0`.
    primal_value : callable ``w -> float``
        :math:`P(w)`, the model's objective at :math:`w`.
    recover : callable ``alpha -> solution``
        The model's solution at a dual point.
    """

    X: Any
    sample: NDArray[np.int64]
    coef: NDArray[np.float64]
    target: NDArray[np.float64]
    upper: NDArray[np.float64]
    diagonal: NDArray[np.float64]
    primal_value: Callable[[NDArray[np.float64]], float] = field(repr=False)
    recover: Callable[[NDArray[np.float64]], Recovered] = field(repr=False)

    @property
    def size(self) -> int:
        """Number of dual variables (pieces over all samples)."""
        return int(self.target.shape[0])

    def weights(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`w = Z^\top\alpha = X^\top v` with :math:`v_i = \sum_{r: i_r = i} g_r\alpha_r`."""
        v = np.bincount(self.sample, weights=self.coef * alpha, minlength=self.X.shape[0])
        return np.asarray(self.X.T @ v, dtype=np.float64).reshape(-1)

    def dual_value(self, alpha: NDArray[np.float64], w: NDArray[np.float64] | None = None) -> float:
        r""":math:`D(\alpha)` (``alpha`` must lie in the box for it to be a bound)."""
        w = self.weights(alpha) if w is None else w
        return (
            float(self.target @ alpha)
            - 0.5 * float(w @ w)
            - 0.5 * float(self.diagonal @ (alpha * alpha))
        )


# --- the logistic loss's dual: one variable per sample, binary-entropy terms (Yu et al.) -------
@dataclass(frozen=True, eq=False)
class EntropyBoxDual(Structure):
    r"""A linear model's dual whose per-sample conjugate is the binary entropy (the logistic).

    The primal (L2-regularized logistic regression without intercept, each sample's weight in
    :math:`U_i`) and its dual (Yu, Huang and Lin 2011; LIBLINEAR ``-s 7``) are

    .. math::

        P(w) = \tfrac12\lVert w\rVert^2 + \sum_i U_i \log\bigl(1 + e^{-\langle w, z_i\rangle}
        \bigr), \qquad z_i = g_i x_i,

        D(\alpha) = -\tfrac12\lVert Z^\top\alpha\rVert^2 - \sum_i \bigl(\alpha_i\log\alpha_i
        + (U_i - \alpha_i)\log(U_i - \alpha_i) - U_i\log U_i\bigr),
        \qquad 0 \le \alpha \le U, \qquad w = Z^\top\alpha,

    with :math:`0\log 0 = 0`, so :math:`D(\alpha) \le P(w)` for every :math:`\alpha` in the box
    and every :math:`w` (weak duality: Fenchel-Young's inequality for the entropy, the
    logistic's conjugate), with equality at the optimum, where
    :math:`\alpha_i = U_i\sigma(-\langle w, z_i\rangle)` lies strictly inside the box. Samples
    with :math:`U_i = 0` keep :math:`\alpha_i = 0`.

    Parameters
    ----------
    X : array (n, m) or sparse
        The samples' features (a column of the intercept's value appended when the intercept is
        a penalized feature).
    coef : array (n,)
        :math:`g_i` (the labels in {-1, +1}).
    upper : array (n,)
        :math:`U_i \ge 0` (the model's :math:`C s_i`).
    primal_value : callable ``w -> float``
        :math:`P(w)`, the model's objective at :math:`w`.
    recover : callable ``alpha -> solution``
        The model's solution at a dual point.
    """

    X: Any
    coef: NDArray[np.float64]
    upper: NDArray[np.float64]
    primal_value: Callable[[NDArray[np.float64]], float] = field(repr=False)
    recover: Callable[[NDArray[np.float64]], Recovered] = field(repr=False)

    @property
    def size(self) -> int:
        """Number of dual variables (one per sample)."""
        return int(self.upper.shape[0])

    def weights(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`w = Z^\top\alpha = X^\top (g \odot \alpha)`."""
        return np.asarray(self.X.T @ (self.coef * alpha), dtype=np.float64).reshape(-1)

    def entropy(
        self, alpha: NDArray[np.float64], complement: NDArray[np.float64] | None = None
    ) -> float:
        r"""The entropy terms of :math:`-D`, with :math:`0\log 0 = 0`.

        :math:`\sum_i \alpha_i\log\alpha_i + (U_i - \alpha_i)\log(U_i - \alpha_i) -
        U_i\log U_i`; ``complement`` is :math:`U - \alpha` kept apart (exact near :math:`U`).
        """
        from scipy.special import xlogy

        alpha = np.clip(alpha, 0.0, self.upper)
        rest = self.upper - alpha if complement is None else np.clip(complement, 0.0, self.upper)
        return float(
            np.sum(xlogy(alpha, alpha) + xlogy(rest, rest) - xlogy(self.upper, self.upper))
        )

    def dual_value(
        self,
        alpha: NDArray[np.float64],
        w: NDArray[np.float64] | None = None,
        complement: NDArray[np.float64] | None = None,
    ) -> float:
        r""":math:`D(\alpha)` (``alpha`` is clipped into the box: the value is a bound)."""
        alpha = np.clip(alpha, 0.0, self.upper)
        w = self.weights(alpha) if w is None else w
        return -0.5 * float(w @ w) - self.entropy(alpha, complement)


# --- a sum of piecewise-linear per-sample losses (AID) ------------------------------------------
@runtime_checkable
class SampleSeparableModel(Protocol):
    r"""The members of a model whose per-sample loss is piecewise linear (what AID reads).

    The objective is :math:`R(\theta) + \sum_i w_i\, \ell_i(a_i(\theta))`, where :math:`R` does not
    depend on the samples, :math:`a_i` is affine in the parameters :math:`\theta` (the *loss
    argument*: the residual for LAD, the hinge argument :math:`1 - y_i f(x_i)` for SVMs) and each
    :math:`\ell_i` is piecewise linear in :math:`a_i`.

    Attributes
    ----------
    data : Dataset
        The samples.
    weights : ndarray of shape (n,)
        The effective sample weights :math:`w_i`.
    convex_sample_loss : bool
        Whether every :math:`\ell_i` is convex (so aggregation gives lower bounds).
    sample_duals : tuple of str
        Names of the solution's per-sample dual variables (lifted by weight share).
    """

    convex_sample_loss: bool
    sample_duals: tuple[str, ...]

    @property
    def data(self) -> Dataset:
        """The samples."""
        ...

    @property
    def weights(self) -> NDArray[np.float64]:
        """The effective sample weights."""
        ...

    def with_data(self, data: Dataset) -> Model:
        """Return the same model (same parameters) on other samples, weighted by ``data``."""
        ...

    def sample_groups(self) -> NDArray[np.int64]:
        """Return a group code per sample: only samples of one group may share a centroid."""
        ...

    def loss_pieces(self, solution: Solution) -> NDArray[np.int64]:
        r"""Return the index of the linear piece of :math:`\ell_i` each sample sits on."""
        ...

    def sample_embedding(self, solution: Solution | None) -> NDArray[np.float64]:
        """Return a cheap low-dimensional description of each sample, shape (n, k)."""
        ...

    def complete_solution(self, solution: Solution) -> Recovered:
        """Return the full solution on this model's samples from a solution's parameters.

        ``solution`` holds the parameters found on other samples (centroids, a subset) and this
        model's per-sample duals, already lifted to its samples.
        """
        ...


_SAMPLE_MEMBERS = (
    "data",
    "weights",
    "convex_sample_loss",
    "sample_duals",
    "with_data",
    "sample_groups",
    "loss_pieces",
    "sample_embedding",
    "complete_solution",
)


@dataclass(frozen=True, eq=False)
class PiecewiseLinearSampleLoss(Structure):
    r"""A sample-separable model whose per-sample loss is piecewise linear.

    Replacing a group of samples of ``model`` (a :class:`SampleSeparableModel`) by their
    weighted centroid with the summed weight gives the same kind of model on fewer samples; if
    every :math:`\ell_i` is convex, that aggregated model's optimum is a lower bound on the
    original one (Jensen's inequality), with equality when every group sits on one linear piece.

    A model that has the members of :class:`SampleSeparableModel` offers this structure with the
    defaults below without listing it; a model that needs other values lists it and builds it.

    Parameters
    ----------
    model : SampleSeparableModel
        The model itself.
    singleton_groups : tuple of int
        Groups (codes of ``sample_groups``) whose samples are cheap to keep unaggregated, one
        cluster each (S3VM's labeled rows, which carry no binary variable). Default none.
    embedding_uses_solution : bool
        Whether ``sample_embedding`` needs a solution (default); ``False``: it is called with
        ``None`` and no pilot solve is run (S3VM clusters in input space).
    aggregate : callable ``(labels, k) -> Model``, optional
        The model on the weighted means of the clusters ``labels`` (ids ``0..k-1``). Default:
        ``with_data`` on the input-space centroids. A kernel model needs its own: its means live
        in feature space (:class:`~optframe.kernels.ClusterMeanKernel`).
    """

    model: SampleSeparableModel
    singleton_groups: tuple[int, ...] = ()
    embedding_uses_solution: bool = True
    aggregate: Callable[[NDArray[np.int64], int], Model] | None = field(default=None, repr=False)

    def aggregated(self, labels: NDArray[np.int64], k: int) -> Model:
        """The model on the weighted means of the clusters ``labels`` (ids ``0..k-1``)."""
        if self.aggregate is not None:
            return self.aggregate(labels, k)
        from optframe.data.aggregate import aggregate_samples

        m = self.model
        return m.with_data(aggregate_samples(m.data, m.weights, labels, k))

    @classmethod
    def refusal_by_members(cls, model: Model) -> str | None:
        """``None`` for a model with every member of :class:`SampleSeparableModel`."""
        if isinstance(model, SampleSeparableModel):
            return None
        lacking = [name for name in _SAMPLE_MEMBERS if not hasattr(model, name)]
        return f"{model.name} lacks {', '.join(lacking)} (the members of SampleSeparableModel)"

    @classmethod
    def from_members(cls, model: Model) -> PiecewiseLinearSampleLoss:
        """The structure with the defaults, for a model that has the members."""
        return cls(model)  # type: ignore[arg-type]


@runtime_checkable
class ChunkedSamples(Protocol):
    """A sample-separable model whose samples live in row chunks on a Dask cluster.

    ``chunk_loss`` holds the per-chunk loss kernels (see :mod:`optframe.drivers.aid_dask`); AID
    then runs every pass over the samples as a map over the chunks.
    """

    @property
    def chunk_loss(self) -> Any:
        """The per-chunk loss kernels."""
        ...


# --- a smooth sample loss plus the elastic net, by columns (primal coordinate descent) ----------
@dataclass(frozen=True, eq=False)
class ElasticNetSmoothLoss(Structure):
    r"""A linear model's smooth per-sample loss plus an elastic-net penalty, read by columns.

    .. math::

        \min_{w \in \mathbb R^m,\, b} \; \sum_i c_i\,\ell(a_i)
        + \lambda_1\lVert w\rVert_1 + \tfrac{\lambda_2}{2}\lVert w\rVert^2,
        \qquad a_i = p_i + q_i (x_i^\top w + b), \quad q_i^2 = 1,

    with :math:`b = 0` unless ``fit_intercept`` (then unpenalized), :math:`\ell` convex and
    differentiable with :math:`0 \le \ell'' \le L` (``curvature``),
    :math:`\lambda_1, \lambda_2 \ge 0` and :math:`\lambda_1 + \lambda_2 > 0` (the lasso, the
    elastic net or the ridge). The
    loss is one of two kinds the compiled steps evaluate: ``"rehu"``, a sum of ReHU pieces
    :math:`\sum_h \operatorname{rehu}_{\tau_h}(s_h a + t_h)` (rows :math:`(s_h, t_h, \tau_h)`
    of ``pieces``: least squares, squared hinge, Huber, expectile), or ``"logistic"``,
    :math:`\log(1 + e^{-a})`.

    Its Fenchel dual, over :math:`v_i = -q_i\theta_i` with :math:`\theta_i/c_i \in
    \operatorname{dom}\ell^*` and :math:`\mathbf 1^\top v = 0` with an intercept, is

    .. math::

        D(\theta) = \sum_i \bigl(\theta_i p_i - c_i\,\ell^*(\theta_i/c_i)\bigr)
        - \sum_j \frac{(\lvert x_j^\top v\rvert - \lambda_1)_+^2}{2\lambda_2}

    (for :math:`\lambda_2 = 0` the last term is the indicator of
    :math:`\lVert X^\top v\rVert_\infty \le \lambda_1`), a lower bound of the primal at every
    feasible :math:`\theta`. :math:`D` is strongly concave in the norm
    :math:`\sum_i \Delta v_i^2 / (c_i L)`, so with :math:`G` the gap at a feasible point
    :math:`\hat v`, :math:`\lvert x_j^\top v^\star\rvert \le \lvert x_j^\top\hat v\rvert +
    \sqrt{2 G L\sum_i c_i x_{ij}^2}` (Gap Safe screening, Ndiaye et al. 2017): a right side
    below :math:`\lambda_1` proves :math:`w^\star_j = 0`.

    Parameters
    ----------
    X : array (n, m) or sparse
        The features.
    offset, slope, costs : arrays (n,)
        :math:`p`, :math:`q` (entries :math:`\pm 1`), :math:`c \ge 0`.
    loss : {"rehu", "logistic"}
        The loss's kind (see above).
    pieces : array (H, 3)
        The ReHU rows :math:`(s_h, t_h, \tau_h)` (``"rehu"``; empty for ``"logistic"``).
    curvature : float
        :math:`L > 0`, a bound on :math:`\ell''` (the ReHU pieces' largest summed
        :math:`s_h^2`, 1/4 for the logistic).
    conjugate : callable ``beta -> array``
        :math:`\ell^*`, elementwise (``inf`` off its domain).
    domain : (float, float)
        The closed interval where :math:`\ell^*` is finite.
    lam1, lam2 : float
        :math:`\lambda_1, \lambda_2 \ge 0`, not both 0.
    fit_intercept : bool
        Whether :math:`b` is a variable.
    recover : callable ``(w, b) -> solution``
        The model's solution.
    gap_scale : callable ``objective -> float``
        The magnitude the model's certificate divides the gap by.
    """

    X: Any
    offset: NDArray[np.float64]
    slope: NDArray[np.float64]
    costs: NDArray[np.float64]
    loss: str
    pieces: NDArray[np.float64]
    curvature: float
    conjugate: Callable[[NDArray[np.float64]], NDArray[np.float64]] = field(repr=False)
    domain: tuple[float, float]
    lam1: float
    lam2: float
    fit_intercept: bool
    recover: Callable[[NDArray[np.float64], float], Recovered] = field(repr=False)
    gap_scale: Callable[[float], float] = field(repr=False)

    @property
    def n(self) -> int:
        """Number of samples."""
        return int(self.costs.shape[0])

    @property
    def m(self) -> int:
        """Number of features."""
        return int(self.X.shape[1])

    @staticmethod
    def balance_factors(v: NDArray[np.float64]) -> tuple[float, float]:
        r"""The factors of ``v``'s positive and negative entries that make it sum to 0.

        ``(keep_up, keep_down)``: the larger side is scaled toward 0, as
        :func:`optframe.duality.balance` does, so each multiplier stays in its conjugate's domain.
        """
        up, down = float(v[v > 0].sum()), -float(v[v < 0].sum())
        return (down / up if up > down else 1.0), (up / down if down > up else 1.0)

    def dual_value(self, theta: NDArray[np.float64], z: NDArray[np.float64]) -> float:
        r""":math:`D(\theta)` at :math:`z = X^\top v`, :math:`v = -q\odot\theta` (see above).

        ``theta`` must already be dual-feasible: :math:`\mathbf 1^\top v = 0` with an intercept,
        and for :math:`\lambda_2 = 0` scaled into :math:`\lVert z\rVert_\infty \le
        \lambda_1`; :math:`\theta_i / c_i` is clipped into the conjugate's domain.
        """
        c = self.costs
        counted = c > 0
        lo, hi = self.domain
        beta = np.clip(theta[counted] / c[counted], lo, hi)
        conjugate = np.asarray(self.conjugate(beta), dtype=np.float64)
        excess = 0.0
        if self.lam2 > 0:
            spill = np.maximum(np.abs(z) - self.lam1, 0.0)
            excess = float(spill @ spill) / (2.0 * self.lam2)
        return float(theta @ self.offset) - float(c[counted] @ conjugate) - excess


# --- the elastic-net hinge loss with knowledge penalties, split for ADMM (ADMM, HIPAD) ----------
@dataclass(frozen=True, eq=False)
class ElasticNetKnowledge(Structure):
    r"""An elastic-net hinge-loss classifier with penalized polyhedral knowledge, in split pieces.

    .. math::

        \min_{w, b, u_k \ge 0} \sum_i c_i (1 - y_i(x_i^\top w + b))_+ + \lambda_1\lVert w\rVert_1
        + \tfrac{\lambda_2}{2}\lVert w\rVert^2 + \sum_k \tfrac{\rho}{2}\bigl(\lVert B_k^\top u_k
        + \ell_k w\rVert^2 + \lVert F_k^\top u_k\rVert^2\bigr)
        + \rho_h (d_k^\top u_k - \ell_k b + 1)_+

    Every term is either smooth and quadratic (the :math:`(w, b)` and :math:`u_k` systems) or has
    a closed-form proximal map (hinge, :math:`\ell_1`, nonnegativity): the split ADMM works on.
    Solutions hold ``w``, ``intercept``, ``u``, ``alpha`` (margin multipliers) and ``beta``.

    Parameters
    ----------
    data : Dataset
        ``X`` (N, m) and ``y`` in {-1, +1}.
    hinge_costs : ndarray (N,)
        :math:`c_i > 0`.
    lam1, lam2, rho, rho_hinge : float
        :math:`\lambda_1 \ge 0`, :math:`\lambda_2 > 0`, :math:`\rho, \rho_h \ge 0`.
    knowledge : sequence
        Objects with ``B`` (k, m), ``B_fixed`` :math:`F` (k, r), ``d`` (k,), ``label``
        :math:`\ell \in \{\pm 1\}`.
    restrict_features : callable ``(support, l1) -> Model``
        The model with the weights outside ``support`` fixed at 0 (without the :math:`\ell_1` term
        when ``l1`` is False), solvable by Direct.
    pad_solution : callable ``(solution, support) -> solution``
        A restricted model's solution on all m features.
    kkt_residuals : callable ``solution -> dict``
        Optimality residuals (``"max"`` is the largest).
    smooth_gradient_w : callable ``solution -> ndarray (m,)``
        The gradient in :math:`w` of the Lagrangian without the :math:`\ell_1` term.
    """

    data: Dataset
    hinge_costs: NDArray[np.float64]
    lam1: float
    lam2: float
    rho: float
    rho_hinge: float
    knowledge: Sequence[Any]
    restrict_features: Callable[[NDArray[np.intp], bool], Model] = field(repr=False)
    pad_solution: Callable[[Solution, NDArray[np.intp]], Recovered] = field(repr=False)
    kkt_residuals: Callable[[Solution], dict[str, float]] = field(repr=False)
    smooth_gradient_w: Callable[[Solution], NDArray[np.float64]] = field(repr=False)


# --- the certificate --------------------------------------------------------------------------
@runtime_checkable
class CertifiedBound(Protocol):
    r"""A lower bound the model proves from any solution: the certificate of every result.

    :meth:`dual_bound` builds a point of the model's dual feasible set from ``solution`` (the
    solver's dual variables when the solution has them, else the loss's subgradient at the
    primal point), repairs it into the dual's constraints exactly (a projection onto equality
    rows, a scaling into a box, a clip), and returns the dual objective there. Weak duality makes
    the value a lower bound on the optimum whatever produced the solution, exact or not: a
    solver's error can loosen the bound, never invalidate it. :meth:`objective_floor` is the
    magnitude below which optimal values count as zero (0 when the optimum is never 0).
    :func:`optframe.certificate.certify` reads both; every model in :mod:`optframe.models` but
    the mixed-integer S3VM (which keeps its solver's branch-and-bound bound) offers them.
    """

    def dual_bound(self, solution: Solution) -> float | None:
        """A proven lower bound on the optimal value, from ``solution``."""
        ...

    def objective_floor(self) -> float:
        """The magnitude floor of the gap's scale."""
        ...


STRUCTURES: tuple[type[Structure], ...] = (
    BoxQPDual,
    SimplexQP,
    LinearBoxDual,
    PiecewiseLinearSampleLoss,
    ElasticNetKnowledge,
    ElasticNetSmoothLoss,
)
"""Every structure of this module, in the order of the table above."""

__all__ = [
    "STRUCTURES",
    "BoxQPDual",
    "CertifiedBound",
    "ChunkedSamples",
    "ElasticNetKnowledge",
    "ElasticNetSmoothLoss",
    "EntropyBoxDual",
    "LinearBoxDual",
    "PiecewiseLinearSampleLoss",
    "SampleSeparableModel",
    "SimplexQP",
    "Structure",
]
