"""Losses and penalties: values, derivatives, kinks and conjugates derived from their pieces."""

import doctest
import importlib
import math

import numpy as np
import pytest

from optframe.errors import ModelError
from optframe.losses import (
    Absolute,
    DoubleHinge,
    EpsilonInsensitive,
    Hinge,
    Huber,
    Pinball,
    PLQLoss,
    SquaredHinge,
)
from optframe.penalties import L1, L2, ElasticNet, NoPenalty, as_penalty

GRID = np.linspace(-4.0, 4.0, 161)
# loss, its value as written in the docs, its conjugate's closed form, its domain
CASES = {
    "hinge": (Hinge(), lambda a: np.maximum(0, 1 - a), lambda b: b, (-1.0, 0.0)),
    "squared_hinge": (
        SquaredHinge(),
        lambda a: np.maximum(0, 1 - a) ** 2,
        lambda b: b + b * b / 4,
        (-math.inf, 0.0),
    ),
    "double_hinge": (
        DoubleHinge(),
        lambda a: np.maximum.reduce([0 * a, -a, (1 - a) / 2]),
        lambda b: np.maximum(b, -1 - b),
        (-1.0, 0.0),
    ),
    "absolute": (Absolute(), np.abs, lambda b: 0 * b, (-1.0, 1.0)),
    "pinball": (
        Pinball(0.2),
        lambda a: np.maximum(0.2 * a, -0.8 * a),
        lambda b: 0 * b,
        (-0.8, 0.2),
    ),
    "epsilon": (
        EpsilonInsensitive(0.3),
        lambda a: np.maximum(0, np.abs(a) - 0.3),
        lambda b: 0.3 * np.abs(b),
        (-1.0, 1.0),
    ),
    "huber": (
        Huber(1.5),
        lambda a: np.where(np.abs(a) <= 1.5, a * a / 2, 1.5 * (np.abs(a) - 0.75)),
        lambda b: b * b / 2,
        (-1.5, 1.5),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_value_is_the_written_formula(name):
    loss, formula, _, _ = CASES[name]
    np.testing.assert_allclose(loss.value(GRID), formula(GRID), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", list(CASES))
def test_conjugate_is_the_closed_form_and_the_supremum(name):
    loss, _, closed, domain = CASES[name]
    assert loss.conjugate_domain == domain
    lo, hi = max(domain[0], -3.0), min(domain[1], 3.0)
    beta = np.linspace(lo, hi, 31)
    np.testing.assert_allclose(loss.conjugate(beta), closed(beta), atol=1e-12)
    fine = np.linspace(-60.0, 60.0, 240_001)
    numeric = np.array([np.max(b * fine - loss.value(fine)) for b in beta])
    np.testing.assert_allclose(loss.conjugate(beta), numeric, atol=1e-6)
    outside = [x for x in (domain[0] - 0.1, domain[1] + 0.1) if math.isfinite(x)]
    assert np.all(np.isinf(loss.conjugate(outside)))


@pytest.mark.parametrize("name", list(CASES))
def test_subdifferential_brackets_the_difference_quotients(name):
    loss = CASES[name][0]
    a = np.array([-2.0, -1.0, -0.3, 0.0, 0.3, 1.0, 1.5, 2.5])
    left, right = loss.subdifferential(a)
    h = 1e-7
    np.testing.assert_allclose((loss.value(a) - loss.value(a - h)) / h, left, atol=1e-5)
    np.testing.assert_allclose((loss.value(a + h) - loss.value(a)) / h, right, atol=1e-5)
    jumps = left != right
    assert np.array_equal(jumps, loss.kinks(a))
    derivative = loss.derivative(a)
    assert np.all((left <= derivative) & (derivative <= right))


def test_kinds_and_linearity():
    assert {CASES[k][0].kind for k in ("hinge", "squared_hinge", "double_hinge")} == {
        "classification"
    }
    assert {CASES[k][0].kind for k in ("absolute", "pinball", "epsilon", "huber")} == {"regression"}
    linear = {k for k, case in CASES.items() if case[0].is_piecewise_linear}
    assert linear == {"hinge", "double_hinge", "absolute", "pinball", "epsilon"}


def test_double_hinge_is_the_pu_loss_of_a_negative_label():
    from optframe.models.pu_learning import double_hinge_negative

    f = GRID
    np.testing.assert_allclose(DoubleHinge().value(-f), double_hinge_negative(f), atol=1e-15)


def test_a_declared_loss_equals_the_built_in():
    assert PLQLoss(relu=[(-1.0, 1.0)], kind="classification") == Hinge()
    assert PLQLoss(relu=[(0.2, 0.0), (-0.8, 0.0)]) == Pinball(0.2)
    assert PLQLoss(relu=[(0.2, 0.0), (-0.8, 0.0)]) != Pinball(0.3)
    general = PLQLoss(relu=[(2.0, -1.0), (-0.5, 0.25)], rehu=[(1.0, 0.5, 2.0), (-3.0, 1.0, np.inf)])
    beta = np.linspace(-3.0, 3.0, 25)
    fine = np.linspace(-60.0, 60.0, 240_001)
    numeric = np.array([np.max(b * fine - general.value(fine)) for b in beta])
    np.testing.assert_allclose(general.conjugate(beta), numeric, atol=1e-6)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Pinball(0.0), r"tau must be a finite number in \(0, 1\); got 0.0"),
        (lambda: Pinball(1.5), r"tau must be a finite number in \(0, 1\); got 1.5"),
        (lambda: Pinball("half"), "tau"),
        (lambda: EpsilonInsensitive(-0.1), "epsilon"),
        (lambda: Huber(0.0), "delta"),
        (lambda: Huber(math.inf), "delta"),
        (lambda: PLQLoss(), "at least one"),
        (lambda: PLQLoss(relu=[(1.0,)]), "tuples of 2"),
        (lambda: PLQLoss(relu=[(math.nan, 0.0)]), "finite"),
        (lambda: PLQLoss(rehu=[(1.0, 0.0, 0.0)]), "tau must be > 0"),
        (lambda: PLQLoss(relu=[(1.0, 0.0)], kind="ranking"), "kind"),
        (lambda: ElasticNet(1.2), "l1_ratio"),
        (lambda: ElasticNet(True), "l1_ratio"),
        (lambda: as_penalty("l1", "Model"), "penalty must be"),
        (lambda: as_penalty(L1, "Model"), r"L1\(\)"),
    ],
)
def test_bad_parameters_raise_model_error(make, match):
    with pytest.raises(ModelError, match=match):
        make()


# ----------------------------------------------------------------------------------- penalties
@pytest.mark.parametrize("penalty", [L2(), L1(), ElasticNet(0.3), NoPenalty()])
def test_penalty_conjugate_is_fenchel_tight(penalty):
    rng = np.random.default_rng(0)
    for _ in range(20):
        z = rng.normal(size=5) * (0.5 if penalty.l2 == 0 else 2.0)
        w = rng.normal(size=5) * 3
        assert penalty.value(w) + penalty.conjugate(z) >= z @ w - 1e-12
        if penalty.l2 > 0:  # the maximizer: soft thresholding
            best = np.sign(z) * np.maximum(np.abs(z) - penalty.l1, 0) / penalty.l2
            assert penalty.value(best) + penalty.conjugate(z) == pytest.approx(z @ best)
    assert penalty.is_quadratic == (penalty.l2 > 0)


def test_lasso_conjugate_is_the_ball_indicator_and_scaling_enters_it():
    z = np.array([0.5, -2.0, 1.0])
    assert L1().conjugate(z) == math.inf
    scale = L1().dual_scale(z)
    assert scale == 0.5
    assert L1().conjugate(scale * z) == 0.0
    assert L2().dual_scale(z) == 1.0
    assert NoPenalty().dual_scale(z) is None
    assert NoPenalty().conjugate(np.zeros(3)) == 0.0
    assert NoPenalty().conjugate(z) == math.inf
    assert ElasticNet(1.0) == L1()
    assert ElasticNet(0.0) == L2()


@pytest.mark.parametrize("name", ["optframe.losses", "optframe.models.empirical_risk"])
def test_docstring_examples(name):
    failures, tried = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failures == 0
