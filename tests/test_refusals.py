"""One rule for numbers; refusals that give the real reason and what to do (issue 26, item 3)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import optframe as of
from optframe.data import Dataset
from optframe.drivers import DCD, SMO, AggregateDisaggregate, Direct
from optframe.errors import DataError, IncompatibleBackend, IncompatibleDriver, ModelError
from optframe.kernels import RBF
from optframe.losses import Huber, Pinball, PLQLoss
from optframe.models import L2SVM, EmpiricalRisk, LADRegression, WeightedSVM
from optframe.penalties import L1, L2, ElasticNet
from optframe.validation import check_number


def _regression(n: int = 30) -> Dataset:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    return Dataset(X=X, y=X @ [1.0, 2.0, 3.0] + rng.normal(size=n))


def _labels(n: int = 30) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, 2))
    return X, np.where(X[:, 0] + 0.1 * rng.normal(size=n) > 0, 1.0, -1.0)


# ------------------------------------------------------------------- one rule for numbers
@pytest.mark.parametrize("gap_tol", [[], -1, -1e-9, math.nan, math.inf, "1e-6", True, 1j])
def test_gap_tol_is_checked_like_tol(gap_tol):
    model = LADRegression(_regression())
    with pytest.raises(ModelError, match=r"solve\(\): gap_tol must be a finite number >= 0"):
        of.solve(model, gap_tol=gap_tol)


def test_gap_tol_zero_and_numpy_are_taken():
    model = LADRegression(_regression())
    result = of.solve(model, gap_tol=np.float32(1e-6))
    assert result.stats["gap_tol"] == pytest.approx(1e-6)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: of.solve(LADRegression(_regression()), tol="1e-6"), "solve(): tol"),
        (lambda: of.solve(LADRegression(_regression()), gap_tol="1e-6"), "solve(): gap_tol"),
        (lambda: WeightedSVM(Dataset(*_labels()), C="1.0"), "WeightedSVM: C"),
        (lambda: Pinball("0.9"), "Pinball: tau"),
        (lambda: Huber("1"), "Huber: delta"),
        (lambda: ElasticNet("0.5"), "ElasticNet: l1_ratio"),
        (lambda: RBF(gamma="1"), "RBF: gamma"),
        (lambda: AggregateDisaggregate(tol="1e-6"), "AggregateDisaggregate: tol"),
    ],
)
def test_a_string_is_refused_everywhere_with_one_message(make, message):
    with pytest.raises(ModelError) as caught:
        make()
    text = str(caught.value)
    assert text.startswith(message + " must be a finite number"), text
    assert "a string is not converted" in text


def test_plq_pieces_do_not_convert_strings():
    from optframe.losses import PLQLoss

    with pytest.raises(ModelError, match="tuples of 2 numbers"):
        PLQLoss(relu=[("1", "0")])


@pytest.mark.parametrize("tau", [0.0, 1.0, 1.5, -0.2, math.nan])
def test_pinball_states_one_rule(tau):
    with pytest.raises(ModelError, match=r"^Pinball: tau must be a finite number in \(0, 1\); got"):
        Pinball(tau)


def test_check_number_ranges():
    assert check_number(np.int64(2), "x", "f", low=0.0, low_open=True) == 2.0
    assert check_number(None, "x", "f", allow_none=True) is None
    assert check_number(math.inf, "x", "f", low=0.0, allow_inf=True) == math.inf
    with pytest.raises(ModelError, match=r"in \[0, 1\]"):
        check_number(1.01, "x", "f", low=0.0, high=1.0)
    with pytest.raises(ModelError, match="> 0"):
        check_number(0, "x", "f", low=0.0, low_open=True)


# ------------------------------------------------------------------------------ data
def test_complex_X_is_refused():
    X, y = _labels()
    with pytest.raises(DataError, match=r"complex numbers.*X\.real"):
        Dataset(X=X + 1j, y=y)
    with pytest.raises(DataError, match="complex"):
        Dataset(X=sp.csr_array(X.astype(np.complex128)), y=y)
    with pytest.raises(DataError, match="y holds complex"):
        Dataset(X=X, y=y + 0j)


def test_complex_X_is_refused_at_prediction():
    X, y = _labels()
    result = of.solve(WeightedSVM(Dataset(X=X, y=y)))
    with pytest.raises(DataError, match="complex"):
        result.predict(X + 1j)


@pytest.mark.parametrize("size", [0, -3, 2.5, "100", True])
def test_aid_sample_size_must_be_a_count(size):
    with pytest.raises(ModelError, match="AggregateDisaggregate: sample_size must be an integer"):
        AggregateDisaggregate(sample_size=size)


def test_aid_sample_size_none_is_the_default():
    assert AggregateDisaggregate(sample_size=None).sample_size is None
    assert AggregateDisaggregate(sample_size=np.int64(50)).sample_size == 50


# ------------------------------------------------------------------------ the real reason
def test_direct_dual_with_l1_says_why():
    model = EmpiricalRisk(_regression(), Huber(), penalty=L1())
    with pytest.raises(IncompatibleBackend) as caught:
        of.solve(model, Direct(form="dual"))
    text = str(caught.value)
    assert "the dual form is for the ridge penalty or none" in text
    assert "only declared in []" not in text


def test_box_drivers_give_their_own_reason_for_quadratic_pieces():
    # SMO refuses with its own reason (quadratic pieces need one curvature per side of the
    # loss's minimum); DCD takes them through the loss's pieces
    inf = math.inf
    loss = PLQLoss(rehu=[(1.0, 0.0, inf), (1.0, -1.0, inf), (-1.0, 0.0, inf)])
    model = EmpiricalRisk(_regression(), loss, penalty=L2(), fit_intercept=False)
    with pytest.raises(IncompatibleDriver) as caught:
        of.solve(model, SMO())
    text = str(caught.value)
    assert "more than one curvature on one side" in text
    assert "AID" not in text
    assert "Drivers that apply to this model: 'direct', 'cd', 'dcd', 'newton'" in text
    assert DCD().accepts(model)


def test_incompatible_driver_names_the_drivers_that_apply():
    with pytest.raises(
        IncompatibleDriver, match=r"Drivers that apply to this model: 'direct', 'aid'"
    ):
        of.solve(LADRegression(_regression()), SMO())


def test_aid_keeps_its_own_reason():
    model = EmpiricalRisk(_regression(), Huber(), penalty=L2())
    with pytest.raises(IncompatibleDriver, match="AID's aggregation is exact only"):
        of.solve(model, AggregateDisaggregate())


# ------------------------------------------------------------------------------- hints
@pytest.mark.parametrize("make", [WeightedSVM, L2SVM])
def test_label_hint_fits_the_labels(make):
    X, y = _labels()
    with pytest.raises(DataError) as caught:
        make(Dataset(X=X, y=np.where(y > 0, 2.0, 1.0)))
    text = str(caught.value)
    assert "0/1" not in text
    assert "np.where(y == 2, 1, -1)" in text
    with pytest.raises(DataError, match=r"Map 0/1 labels with y = 2 \* y - 1"):
        make(Dataset(X=X, y=np.where(y > 0, 1.0, 0.0)))
    with pytest.raises(DataError, match=r"3 classes.*OneVsOne"):
        make(Dataset(X=X, y=np.arange(X.shape[0]) % 3))


@pytest.mark.parametrize(
    ("loss", "hint"),
    [
        ("logistic", "write Logistic()"),
        ("squared_error", "not piecewise linear-quadratic"),
        ("hinge", "write Hinge()"),
        (Pinball, "write Pinball()"),
    ],
)
def test_empirical_risk_says_what_a_loss_must_be(loss, hint):
    with pytest.raises(ModelError) as caught:
        EmpiricalRisk(_regression(), loss)
    text = str(caught.value)
    assert "convex piecewise linear-quadratic loss" in text
    assert hint in text


def test_cli_suggests_weighted_svm_for_svm(capsys):
    from optframe.cli.main import main

    assert main(["solve", "svm", "--data", "a1a"]) != 0
    assert "Did you mean 'WeightedSVM'" in capsys.readouterr().err


def test_frank_wolfe_options_follow_the_one_rule():
    from optframe.drivers import FW, FrankWolfe

    with pytest.raises(ModelError, match=r"FrankWolfe: eps must be a finite number in \(0, 1\)"):
        FW(eps="0.1")
    limit = r"FrankWolfe: active_limit must be a finite number in \(0, 1\]"
    with pytest.raises(ModelError, match=limit):
        FrankWolfe(shrinking=True, active_limit=1.5)
