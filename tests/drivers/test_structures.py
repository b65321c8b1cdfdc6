"""Typed structures: what each model offers, how drivers refuse, a user's model solved as is."""

from dataclasses import dataclass
from typing import ClassVar

import cvxpy as cp
import numpy as np
import pytest

import optframe as of
from optframe import registry
from optframe.capabilities import (
    STRUCTURES,
    BoxQPDual,
    ElasticNetKnowledge,
    ElasticNetSmoothLoss,
    LinearBoxDual,
    PiecewiseLinearSampleLoss,
    SimplexQP,
)
from optframe.compare import applicable_pairs
from optframe.data import Dataset, make_classification_svm, make_lad_set_a
from optframe.drivers import FW, MFW, PFW, AggregateDisaggregate, CoreVectorMachine, Direct
from optframe.kernels import RBF
from optframe.losses import Hinge, SquaredHinge
from optframe.model import Model, ProblemClass
from optframe.models import (
    L2SVM,
    EmpiricalRisk,
    KnowledgeBasedSVM,
    LADRegression,
    PULearning,
    RegularizedLAD,
    SemiSupervisedSVM,
    WeightedSVM,
)
from optframe.penalties import L1
from optframe.screening import DVI, ESSNSV, SSNSV

SVM_DATA = make_classification_svm(60, 3, random_state=0)
LAD_DATA = make_lad_set_a(60, 3, random_state=0)
S3VM = SemiSupervisedSVM(Dataset(X=SVM_DATA.X, y=SVM_DATA.y * (np.arange(60) < 20)))


@dataclass(frozen=True, eq=False)
class Bare(Model):
    """A user's model with an objective and nothing a decomposition driver can use."""

    data: Dataset
    problem_class: ClassVar[ProblemClass] = ProblemClass.QP
    layers: ClassVar[tuple[str, ...]] = ()

    def objective(self, solution):
        return 0.0


def _decomposition_drivers():
    registry.load_plugins()
    return {name: cls for name, cls in registry.drivers().items() if cls.needs}


def test_only_direct_needs_nothing():
    registry.load_plugins()
    assert Direct.needs == ()
    needed = {kind for cls in _decomposition_drivers().values() for kind in cls.needs}
    assert needed == set(STRUCTURES)  # every structure has a driver, every driver a structure
    assert {kind for cls in (DVI, SSNSV, ESSNSV) for kind in cls.needs} == {LinearBoxDual}


@pytest.mark.parametrize("name", sorted(_decomposition_drivers()))
def test_a_model_without_the_structure_is_refused_by_name(name):
    driver = registry.drivers()[name]()
    model = Bare(SVM_DATA)
    assert not driver.accepts(model)
    for kind in driver.needs:
        assert driver.missing(model)[0].startswith(kind.__name__)
        with pytest.raises(of.IncompatibleDriver, match=kind.__name__):
            of.solve(model, driver=driver)


@pytest.mark.parametrize("rule", [DVI(), SSNSV(), ESSNSV()], ids=lambda r: r.name)
def test_a_model_without_the_box_dual_is_refused_by_every_rule(rule):
    with pytest.raises(of.IncompatibleDriver, match="LinearBoxDual"):
        rule.check(Bare(SVM_DATA))


def test_the_message_names_the_structure_and_the_models_reason():
    model = EmpiricalRisk(SVM_DATA, Hinge(), penalty=L1())
    with pytest.raises(of.IncompatibleDriver, match=r"BoxQPDual \(BoxQPDual is the dual under"):
        of.solve(model, driver="smo")
    with pytest.raises(of.IncompatibleDriver, match="EmpiricalRisk does not offer BoxQPDual"):
        model.structure(BoxQPDual)
    # a structure the class never offers: the message lists what it does offer
    with pytest.raises(of.IncompatibleDriver, match="LADRegression offers PiecewiseLinear"):
        LADRegression(LAD_DATA).structure(SimplexQP)
    # AID's structure, by members: the message lists the members the model lacks
    with pytest.raises(of.IncompatibleDriver, match="Bare lacks weights, convex_sample_loss"):
        Bare(SVM_DATA).structure(PiecewiseLinearSampleLoss)


# What each model of optframe.models offers (the table of docs/concepts.md).
OFFERS = [
    (WeightedSVM(SVM_DATA), {PiecewiseLinearSampleLoss, BoxQPDual}),
    (
        WeightedSVM(SVM_DATA, fit_intercept=False),
        {PiecewiseLinearSampleLoss, LinearBoxDual, BoxQPDual},  # a box QP without equality row
    ),
    (WeightedSVM(SVM_DATA, kernel=RBF(gamma=1.0)), {PiecewiseLinearSampleLoss, BoxQPDual}),
    (PULearning(Dataset(X=SVM_DATA.X, y=SVM_DATA.y > 0), prior=0.5, lam=0.1), {BoxQPDual}),
    (L2SVM(SVM_DATA), {SimplexQP, BoxQPDual}),  # the box QP derived from the simplex QP
    (RegularizedLAD(LAD_DATA), {PiecewiseLinearSampleLoss, BoxQPDual}),
    (
        RegularizedLAD(LAD_DATA, fit_intercept=False),
        {PiecewiseLinearSampleLoss, LinearBoxDual, BoxQPDual},
    ),
    (LADRegression(LAD_DATA), {PiecewiseLinearSampleLoss}),
    (S3VM, {PiecewiseLinearSampleLoss}),
    (KnowledgeBasedSVM(SVM_DATA), {ElasticNetKnowledge}),
    (EmpiricalRisk(SVM_DATA, Hinge()), {PiecewiseLinearSampleLoss, BoxQPDual}),
    (
        EmpiricalRisk(SVM_DATA, Hinge(), fit_intercept=False),
        {PiecewiseLinearSampleLoss, LinearBoxDual, BoxQPDual},
    ),
    # the L2-loss SVM's standard dual (SMO); the ridge with a differentiable loss (CD, Newton)
    (EmpiricalRisk(SVM_DATA, SquaredHinge()), {BoxQPDual, ElasticNetSmoothLoss}),
]


@pytest.mark.parametrize(("model", "offered"), OFFERS, ids=[m.name for m, _ in OFFERS])
def test_each_model_offers_its_structures(model, offered):
    assert {kind for kind in STRUCTURES if model.offers_structure(kind)} == offered
    for kind in offered:
        assert isinstance(model.structure(kind), kind)
    drivers = {pair.driver.name for pair in applicable_pairs(model)} - {"direct"}
    drivers_of = _decomposition_drivers().items()
    expected = {name for name, cls in drivers_of if set(cls.needs) <= offered}
    assert drivers == expected  # compare() offers exactly the drivers whose structures it has


def test_the_reduced_model_offers_the_box_dual_with_its_fixed_samples():
    model = WeightedSVM(SVM_DATA, C=0.5, fit_intercept=False)
    fixed = np.arange(60) < 10
    reduced = model.structure(LinearBoxDual).with_fixed(fixed, np.zeros(60))
    dual = reduced.structure(LinearBoxDual)
    np.testing.assert_array_equal(dual.fixed, fixed)
    twice = dual.with_fixed(np.arange(60) >= 50, np.full(60, 0.5)).structure(LinearBoxDual)
    np.testing.assert_array_equal(twice.fixed, (np.arange(60) < 10) | (np.arange(60) >= 50))
    np.testing.assert_array_equal(twice.fixed_values[:10], 0.0)  # the first fixing is kept


# ------------------------------------------------------ a model declared tomorrow, solved as is
@dataclass(frozen=True, eq=False)
class KernelBall(Model):
    r"""A user's simplex QP: :math:`\min \alpha^\top \tilde K \alpha` over the unit simplex.

    :math:`\tilde K_{ij} = a_i a_j (k(x_i, x_j) + 1) + \delta_{ij} r` with an RBF kernel. The model
    knows no driver: it offers :class:`SimplexQP` and proves a bound from any point of the
    simplex (the Frank-Wolfe gap).
    """

    data: Dataset
    ridge: float = 0.5
    problem_class: ClassVar[ProblemClass] = ProblemClass.QP
    layers: ClassVar[tuple[str, ...]] = ()
    structures: ClassVar[tuple[type, ...]] = (SimplexQP,)

    def gram(self):
        y = self.data.y
        K = (RBF(gamma=0.5).matrix(self.data.X) + 1.0) * np.outer(y, y)
        return K + self.ridge * np.eye(y.size)

    def _structure(self, kind):
        return SimplexQP(
            X=self.data.X, sign=self.data.y, kernel=RBF(gamma=0.5), ridge=self.ridge,
            recover=lambda alpha: {"alpha": np.maximum(alpha, 0.0) / np.maximum(alpha, 0.0).sum()},
        )  # fmt: skip

    def objective(self, solution):
        alpha = solution["alpha"]
        return float(alpha @ self.gram() @ alpha)

    def dual_bound(self, solution):
        alpha = solution["alpha"]
        g = self.gram() @ alpha
        return float(2.0 * g.min() - alpha @ g)  # f(a*) >= f(a) + grad'(a* - a), a* on a vertex


def test_a_users_simplex_qp_is_solved_by_every_simplex_driver():
    model = KernelBall(SVM_DATA)
    alpha = cp.Variable(60)
    reference = cp.Problem(
        cp.Minimize(cp.quad_form(alpha, cp.psd_wrap(model.gram()))),
        [alpha >= 0, cp.sum(alpha) == 1],
    )
    reference.solve(solver=cp.CLARABEL)
    # eps bounds the radius in units of max diag - R (2.5 here), R* is 0.017: a tight eps
    for driver in (MFW(eps=1e-9), PFW(eps=1e-9), CoreVectorMachine(eps=1e-9)):
        result = of.solve(model, driver=driver)
        assert result.status is of.Status.OPTIMAL, driver.name
        assert result.objective == pytest.approx(reference.value, rel=1e-6)
        assert result.bound <= result.objective
        assert result.solution["alpha"].sum() == pytest.approx(1.0)
    plain = of.solve(model, driver=FW())  # sublinear, its rule tightened while the gap is open
    slack = 1e-7 * abs(reference.value)  # Clarabel's default tolerances place the reference
    assert plain.bound <= reference.value + slack
    assert reference.value <= plain.objective + slack
    assert plain.objective == pytest.approx(reference.value, rel=1e-3)
    assert not AggregateDisaggregate().accepts(model)  # and it is refused where it offers nothing
