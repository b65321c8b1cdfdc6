"""``driver="auto"``: a driver chosen from the model's structures and size, by measured rules.

The rules read only what a model declares: the structures it offers
(:mod:`optframe.capabilities`), whether it is linear in the features, and its number of samples.
Each threshold is a crossover measured by ``docs/results/auto_rules.py`` (the table and the
figures are in ``docs/results/auto_rules.md``); below it Direct, one solver call, is as fast.

In order, the first rule that applies:

1. samples in chunks on a Dask cluster: :class:`~optframe.drivers.AggregateDisaggregate` (the
   only driver that takes them);
2. a back-end named by the caller (``backend != "auto"``): :class:`~optframe.drivers.Direct` on
   it, as asked;
3. a kernel model (not linear) offering ``BoxQPDual`` with at least :data:`SMO_MIN_SAMPLES`
   samples: :class:`~optframe.drivers.SMO` (Direct's dual forms the n x n Gram matrix); a
   ``SimplexQP`` (the L2-SVM) offers its ``BoxQPDual`` too, and SMO certifies it where MFW
   stops at its radius rule (a9a, w8a, ijcnn1: ``docs/results/peers.md``). Without an
   intercept the box QP has no equality row and SMO steps one variable at a time: on a9a's
   first 1,000 rows (RBF) 16x faster than Direct for the squared hinge, 19x for the hinge (36x
   faster than AID), more with the size (``docs/results/smo_single.md``);
4. a kernel model offering ``SimplexQP`` (with a scale that rules out its box QP) with at least
   :data:`FW_MIN_SAMPLES` samples: :class:`~optframe.drivers.MFW`;
5. a linear LP offering ``PiecewiseLinearSampleLoss`` with a convex loss (LAD, quantile
   regression without a penalty), solved in its dual form (the default), with at least
   :data:`FN_MIN_SAMPLES` samples and fewer features than the ``fn`` back-end's row limit, when
   the caller passes no ``solver_options`` (they would be HiGHS's): the ``matrix:fn`` back-end
   (:mod:`optframe.solvers.fn`; ``Choice.backend``) under :class:`Direct`;
6. a linear model offering ``LinearBoxDual`` with :data:`DCD_MIN_SAMPLES` to
   :data:`DCD_MAX_SAMPLES` samples: :class:`~optframe.drivers.DCD`;
7. a linear model offering ``ElasticNetSmoothLoss`` (a differentiable loss: least squares,
   Huber, expectile, the squared or smoothed hinge, logistic) with an L1 part (the lasso or the
   elastic net), any size: :class:`~optframe.drivers.CoordinateDescent` (2x to 48x faster than
   Direct on Clarabel from 100 to 10,000 rows of a9a); with the ridge alone:
   :class:`~optframe.drivers.PrimalNewton` (1.5x to 100x faster than Direct from 1,000
   rows; below, at most 1.6x slower, by milliseconds; ``docs/results/newton.md``), unless the
   next rule takes it first (a margin loss with quadratic pieces without intercept below
   :data:`NEWTON_MIN_SAMPLES` rows, or with more features than rows: DCD's steps are cheaper
   there; the logistic loss stays with Newton at every size); when Newton stops without a
   proof, Direct runs after it (``Choice.unproven``);
8. a linear model offering ``PiecewiseBoxDual`` but no ``LinearBoxDual`` (a margin loss with
   quadratic pieces: the squared or smoothed hinge, no intercept) with at least
   :data:`DCD_PIECES_MIN_SAMPLES` samples: :class:`~optframe.drivers.DCD`;
9. a linear model offering ``EntropyBoxDual`` (L2-regularized logistic regression without
   intercept, or with the intercept as a constant feature) but not taken by rule 7, with at
   least :data:`DCD_MIN_SAMPLES` samples: :class:`~optframe.drivers.DCD` (Yu, Huang and Lin's
   Newton steps);
10. a linear model with a convex piecewise-linear loss and the ridge (a QP) whose dual form is
   the ``fn`` back-end's shape (a separable QP: boxed multipliers and the free columns
   z = X'v; checked on a few rows), with at least :data:`FN_MIN_SAMPLES`
   samples, fewer features than ``fn``'s row limit and, on sparse points, at most
   :data:`FN_SPARSE_MAX_FEATURES` features, no ``solver_options``: :class:`Direct` on the dual
   form on ``matrix:fn`` (the hinge, the absolute, pinball and epsilon-insensitive losses,
   with or without intercept, past the DCD rule);
11. a linear model with a margin loss offering ``BoxQPDual`` with its equality row but no
   ``LinearBoxDual`` (a free intercept: the hinge), sparse points and at least
   :data:`SMO_LINEAR_MIN_SAMPLES` samples: :class:`~optframe.drivers.SMO` through w;
12. a linear model offering ``PiecewiseLinearSampleLoss`` with a convex loss and at least
   :data:`AID_MIN_SAMPLES` samples (an LP; :data:`AID_MIN_SAMPLES_QP` for a QP):
   :class:`~optframe.drivers.AggregateDisaggregate`;
13. otherwise Direct.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from optframe.capabilities import (
    BoxQPDual,
    ChunkedSamples,
    ElasticNetSmoothLoss,
    EntropyBoxDual,
    LinearBoxDual,
    PiecewiseBoxDual,
    PiecewiseLinearSampleLoss,
    SimplexQP,
)
from optframe.drivers.aid import AggregateDisaggregate
from optframe.drivers.base import Driver
from optframe.drivers.cd import CoordinateDescent
from optframe.drivers.dcd import DCD
from optframe.drivers.direct import Direct
from optframe.drivers.frank_wolfe import MFW
from optframe.drivers.newton import PrimalNewton
from optframe.drivers.smo import SMO
from optframe.kernel_sums import stays_sparse
from optframe.model import Model, ProblemClass
from optframe.registry import backends

#: Samples from which SMO beats Direct's kernel dual (1,000 RBF rows of a9a: 17x).
SMO_MIN_SAMPLES = 1_000
#: Samples from which MFW beats Direct's kernel dual of the L2-SVM (1,000 rows: 15x).
FW_MIN_SAMPLES = 1_000
#: The range where DCD beats Direct and AID on a linear box dual (generated, 20 features: DCD
#: fastest at 2,000 to 50,000 rows, level with AID at 100,000, 3.5x slower at 200,000; on
#: ijcnn1's 91,701 rows DCD is 3x faster than AID).
DCD_MIN_SAMPLES, DCD_MAX_SAMPLES = 2_000, 100_000
#: Samples from which DCD takes a margin loss with quadratic pieces (squared hinge on a9a with a
#: constant feature: DCD 4x to 25x faster than Direct on Clarabel from 100 to 3,000 rows). For
#: residual losses (Huber, expectile) DCD was 5x to 10x faster on 564_fried at every size but
#: 0.2x to 0.4x Direct on houses and cpusmall at 8,000 rows (standardized), so no rule for them.
DCD_PIECES_MIN_SAMPLES = 300
#: Rows from which PrimalNewton takes a margin loss with quadratic pieces without intercept
#: before DCD (a9a, its bias as a feature: at 10,000 rows Newton 0.37x DCD's time on the
#: squared hinge, 1.0x on the smoothed hinge; at 32,561 rows 0.19x and 0.30x; w8a's 49,749
#: rows 0.25x). The logistic loss goes to Newton at every size (:func:`_dcd_first`).
NEWTON_MIN_SAMPLES = 10_000
#: Samples from which Direct on ``fn`` takes the dual LP of a piecewise-linear loss: on LAD the
#: fastest path measured from 1,000 rows, up to 1,000,000 x 10 and 50,000 x 50 (10x Direct on
#: HiGHS and 3x AID on fn at 2,000 x 50, 1.8x AID on fn at 50,000 x 50, 2.4x at 1,000,000 x
#: 10); below 1,000 rows not measured, Direct on HiGHS as before. AID on fn is never picked:
#: on a quiet machine Direct on fn was faster at every size (200,000 x 50: 1.54 s against
#: 1.63 s, 200,000 x 100: 3.32 against 3.77, 1,000,000 x 50: 7.6 against 12.2); under a load
#: of 2 to 4 AID on fn came out ahead by 1.1x to 1.3x at 200,000 x 50 and 100.
FN_MIN_SAMPLES = 1_000
#: Sparse points with more features than this keep SMO through w or AID rather than Direct on
#: ``fn`` for the ridge dual of a piecewise-linear loss: measured up to w8a's 300 (the hinge
#: with a free intercept: fn 1.72 s against SMO's 2.51 s; a9a's 123: 0.43 s against 2.47 s,
#: ``docs/results/fn_ridge.md``); beyond, not measured, and each interior-point iteration
#: factors a ``features x features`` matrix.
FN_SPARSE_MAX_FEATURES = 300
#: Samples from which AggregateDisaggregate beats Direct on a piecewise-linear loss (LAD:
#: even at 10,000 x 10, 1.7x at 10,000 x 50, 5x at 50,000, 34x at 200,000 x 10).
AID_MIN_SAMPLES = 10_000
#: Samples from which SMO through w beats Direct on a linear margin loss with a free intercept
#: and sparse points (the hinge on a9a's rows: 0.58-0.66 s against 0.89-0.94 s at 10,000, 1.0
#: s against 2.1-2.4 s at 20,000 (AID 3.0-3.3 s); w8a 2.4 s against AID's 19-24 s). On dense
#: ijcnn1 SMO and AID tie (1.05-1.28 s against 0.92-1.18 s), so dense points keep AID's rule.
SMO_LINEAR_MIN_SAMPLES = 10_000
#: The same for a QP (a ridge penalty): at 10,000 rows Direct is as fast or faster (linear SVM
#: 0.77 s against 0.97 s, SVR 0.30 against 0.36), at 50,000 AID is 1.9x to 2.6x faster.
AID_MIN_SAMPLES_QP = 20_000


@dataclass(frozen=True)
class Choice:
    """The driver ``auto`` picked, the rule that picked it, and its back-end if it names one.

    ``backend`` is ``None`` when the rule leaves the back-end to the caller (``"auto"``: the
    reference solver of the problem class). A back-end a rule prefers falls back to the
    caller's when it refuses the formulation built for it (:class:`~optframe.drivers.base.
    RunContext`'s ``fallback``): the rule reads the model's shape, the back-end the built LP.

    ``unproven`` is the driver to run when the chosen one stops ``converged``, without a proof
    (:func:`optframe.solve` runs it on the time left): PrimalNewton's certificate cannot close on
    badly scaled columns (raw cpusmall, features up to 2e6: the objective settles to 16 digits
    with the gap at 1e-4 of it), where Direct's interior point certifies.
    """

    driver: Driver
    rule: str
    backend: str | None = None
    unproven: Driver | None = None


def _fn_candidate(model: Model, n: int, problem_class: ProblemClass) -> Any:
    """The samples of a linear convex piecewise-linear ``problem_class`` model fn may take.

    ``None`` unless ``fn`` is registered, ``n`` reaches :data:`FN_MIN_SAMPLES`, the model is
    linear with a matrix dual form of fewer rows than fn's limit, and its sample loss is convex.
    """
    fn: Any = backends().get("fn")
    data = getattr(model, "data", None)
    if not fn or data is None or n < FN_MIN_SAMPLES:
        return None
    if not (
        model.is_linear
        and model.problem_class is problem_class
        and model.offers("matrix", "dual")
        and int(data.n_features) + 1 <= fn[0].max_rows
        and model.offers_structure(PiecewiseLinearSampleLoss)
    ):
        return None
    samples = model.structure(PiecewiseLinearSampleLoss).model
    return samples if samples.convex_sample_loss else None


def _fn_takes_dual(model: Model, n: int) -> bool:
    """Whether ``model``'s default form is the dual LP of a piecewise-linear loss fn takes."""
    return model.default_form == "dual" and _fn_candidate(model, n, ProblemClass.LP) is not None


def _fn_takes_ridge_dual(model: Model, n: int) -> bool:
    """Whether ``model`` is a ridge QP of a piecewise-linear loss whose dual form fn takes.

    The shape of the dual (a diagonal ``P``, a curvature on every unbounded column) is asked of
    fn on the model built on a few rows of each of its sample groups (every class of a
    classifier, whatever the order of the rows): it does not depend on the number of samples.
    """
    samples = _fn_candidate(model, n, ProblemClass.QP)
    if samples is None:
        return False
    data = model.data
    if stays_sparse(data.X) and int(data.n_features) > FN_SPARSE_MAX_FEATURES:
        return False
    groups = np.asarray(samples.sample_groups())
    _, first = np.unique(groups, return_index=True)
    rows = np.unique(np.concatenate([np.arange(min(n, 32)), first]))
    probe = samples.with_data(data.subset(rows))
    return backends()["fn"][0].refusal(probe.build("matrix", form="dual")) is None


def _dcd_first(model: Model, n: int) -> bool:
    """Whether DCD's rules take a ridge model with a smooth loss before PrimalNewton.

    A margin loss with quadratic pieces without intercept (its box dual over the pieces) below
    :data:`NEWTON_MIN_SAMPLES` rows, or with more features than rows (news20's 15,935 x
    62,061, squared hinge: DCD 6.6 s, Newton 11.3 s). Not the logistic loss: since Newton's
    conjugate residuals it is faster than DCD on the entropy dual at every size measured
    (a9a's and ijcnn1's first 1,000 to 30,000 rows, no intercept: 0.39x to 0.96x DCD's time).
    """
    pieces = model.offers_structure(PiecewiseBoxDual) and getattr(
        getattr(model, "loss", None), "is_classification", False
    )
    if pieces and n >= DCD_PIECES_MIN_SAMPLES:
        data = getattr(model, "data", None)
        wide = data is not None and int(data.n_features) > n
        return n < NEWTON_MIN_SAMPLES or wide
    return False


def _linear_choice(model: Model, n: int, solver_options: bool) -> Choice | None:
    """Rules 6 to 12 (a linear model), or ``None`` for Direct."""
    if DCD_MIN_SAMPLES <= n < DCD_MAX_SAMPLES and model.offers_structure(LinearBoxDual):
        return Choice(DCD(), f"a linear box dual with n = {n}")
    if model.offers_structure(ElasticNetSmoothLoss):
        if not PrimalNewton().accepts(model):  # an L1 part
            rule = f"the lasso or elastic net with a differentiable loss, n = {n}: CD"
            return Choice(CoordinateDescent(), rule)
        if not _dcd_first(model, n):
            rule = f"the ridge with a differentiable loss, n = {n}: primal Newton"
            return Choice(PrimalNewton(), rule, unproven=Direct())
    if (
        n >= DCD_PIECES_MIN_SAMPLES
        and not model.offers_structure(LinearBoxDual)
        and model.offers_structure(PiecewiseBoxDual)
        and getattr(getattr(model, "loss", None), "is_classification", False)
    ):
        return Choice(DCD(), f"a margin loss with quadratic pieces, n = {n}: DCD on its pieces")
    if n >= DCD_MIN_SAMPLES and model.offers_structure(EntropyBoxDual):
        return Choice(DCD(), f"the logistic loss's entropy dual with n = {n} >= {DCD_MIN_SAMPLES}")
    if not solver_options and _fn_takes_ridge_dual(model, n):
        rule = f"the ridge dual of a piecewise-linear loss with n = {n} >= {FN_MIN_SAMPLES}: fn"
        return Choice(Direct(form="dual"), rule, backend="matrix:fn")
    if (
        n >= SMO_LINEAR_MIN_SAMPLES
        and not model.offers_structure(LinearBoxDual)
        and model.offers_structure(BoxQPDual)
        and getattr(getattr(model, "loss", None), "is_classification", False)
        and model.structure(BoxQPDual).rhs is not None  # measured with the free intercept
        and stays_sparse(model.structure(BoxQPDual).X)
    ):
        rule = f"a margin loss with a free intercept on sparse points, n = {n}: SMO through w"
        return Choice(SMO(), rule)
    if (
        n >= (AID_MIN_SAMPLES if model.problem_class is ProblemClass.LP else AID_MIN_SAMPLES_QP)
        and model.offers_structure(PiecewiseLinearSampleLoss)
        and model.structure(PiecewiseLinearSampleLoss).model.convex_sample_loss
    ):
        return Choice(AggregateDisaggregate(), f"a piecewise-linear loss with n = {n}")
    return None


def choose(model: Model, backend: str = "auto", solver_options: bool = False) -> Choice:
    """The driver for ``model`` by the rules of this module.

    ``solver_options``: whether the caller passes solver options (then no rule picks a
    back-end: they are meant for the default one).
    """
    if isinstance(model, ChunkedSamples):
        return Choice(AggregateDisaggregate(), "samples in chunks on Dask")
    if backend != "auto":
        return Choice(Direct(), f"the back-end {backend!r} was named")
    n = model.n_samples
    if not solver_options and _fn_takes_dual(model, n):
        rule = f"the dual LP of a piecewise-linear loss with n = {n} >= {FN_MIN_SAMPLES}: fn"
        return Choice(Direct(), rule, backend="matrix:fn")
    if not model.is_linear:
        if n >= SMO_MIN_SAMPLES and model.offers_structure(BoxQPDual):
            row = "" if model.structure(BoxQPDual).rhs is not None else ", no equality row"
            return Choice(SMO(), f"a kernel box QP{row} with n = {n} >= {SMO_MIN_SAMPLES}")
        if n >= FW_MIN_SAMPLES and model.offers_structure(SimplexQP):
            return Choice(MFW(), f"a kernel simplex QP with n = {n} >= {FW_MIN_SAMPLES}")
    else:
        choice = _linear_choice(model, n, solver_options)
        if choice is not None:
            return choice
    return Choice(Direct(), f"n = {n}: one solver call")


__all__ = [
    "AID_MIN_SAMPLES",
    "AID_MIN_SAMPLES_QP",
    "DCD_MAX_SAMPLES",
    "DCD_MIN_SAMPLES",
    "DCD_PIECES_MIN_SAMPLES",
    "FN_MIN_SAMPLES",
    "FN_SPARSE_MAX_FEATURES",
    "FW_MIN_SAMPLES",
    "NEWTON_MIN_SAMPLES",
    "SMO_LINEAR_MIN_SAMPLES",
    "SMO_MIN_SAMPLES",
    "Choice",
    "choose",
]
