"""EmpiricalRisk on a DaskDataset: the chunked AID solve is the in-memory one, loss by loss.

Dask's synchronous scheduler (no cluster) runs every chunk pass in this process; the cluster
path is tested in test_aid_dask.py.
"""

import dataclasses

import dask
import dask.array as da
import numpy as np
import pytest
import scipy.sparse as sp
from certificate_check import certified_status

import optframe as of
from optframe import registry
from optframe.certificate import certify
from optframe.data import DaskDataset, make_classification_svm, make_lad_set_a
from optframe.drivers import AggregateDisaggregate
from optframe.errors import IncompatibleDriver, ModelError
from optframe.losses import (
    Absolute,
    DoubleHinge,
    EpsilonInsensitive,
    Hinge,
    Huber,
    Logistic,
    Pinball,
    PLQLoss,
    SquaredHinge,
)
from optframe.models import (
    DaskLADRegression,
    DaskQuantileRegression,
    DaskWeightedSVM,
    EmpiricalRisk,
    LADRegression,
    WeightedSVM,
)
from optframe.models.chunked_risk import ChunkedEmpiricalRisk
from optframe.penalties import L1, L2, ElasticNet

ROWS, CHUNK = 2_000, 450  # five chunks, the last one short


@pytest.fixture(autouse=True, scope="module")
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def _weights(n, seed):
    weights = np.random.default_rng(seed).uniform(0.2, 3.0, n)
    weights[::9] = 0.0  # zero-weight samples count for nothing and are in no cluster
    return weights


LAD = make_lad_set_a(ROWS, 5, random_state=3).with_weights(_weights(ROWS, 3))
SVM = make_classification_svm(ROWS, 5, separation=1.0, random_state=3).with_weights(
    _weights(ROWS, 4)
)
# a loss of one's own with ReLU pieces only: 0 on [-2, 1], slopes -0.5 and 1 outside
OWN = PLQLoss(relu=[(1.0, -1.0), (-0.5, -1.0)])

# (data, loss, penalty, C): LAD, quantile, weighted hinge, and the other piecewise-linear cases
CASES = {
    "lad": (LAD, Absolute(), None, 1.0),
    "quantile": (LAD, Pinball(0.8), None, 1.0),
    "weighted hinge": (SVM, Hinge(), L2(), 1.0),
    "epsilon-insensitive, ridge": (LAD, EpsilonInsensitive(0.5), L2(), 0.5),
    "quantile, lasso": (LAD, Pinball(0.3), L1(), 1.0),
    "hinge, elastic net": (SVM, Hinge(), ElasticNet(0.5), 2.0),
    "own loss, ridge": (LAD, OWN, L2(), 1.0),
    "double hinge, ridge": (SVM, DoubleHinge(), L2(), 1.0),  # its conjugate is not homogeneous
    "hinge, no penalty": (SVM, Hinge(), None, 1.0),  # multipliers held at a box end of 0
}


def _mismatches(result, reference, tol=1e-9):
    """What differs between a chunked and an in-memory result (empty: the same answer)."""
    found = []
    scale = max(1.0, abs(reference.objective))
    if result.status is not reference.status:
        found.append(f"status {result.status} != {reference.status}")
    if abs(result.objective - reference.objective) > 1e-9 * scale:
        found.append(f"objective {result.objective!r} != {reference.objective!r}")
    if result.bound is None or abs(result.bound - reference.bound) > tol * scale:
        found.append(f"bound {result.bound!r} != {reference.bound!r}")
    if result.iterations != reference.iterations:
        found.append(f"iterations {result.iterations} != {reference.iterations}")
    return found


def _chunked(data):
    return DaskDataset.from_dataset(data, CHUNK)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("case", list(CASES))
def test_the_chunked_solve_is_the_in_memory_one(case, fit_intercept):
    data, loss, penalty, C = CASES[case]
    in_memory = EmpiricalRisk(data, loss, penalty=penalty, C=C, fit_intercept=fit_intercept)
    model = EmpiricalRisk(_chunked(data), loss, penalty=penalty, C=C, fit_intercept=fit_intercept)
    assert isinstance(model, ChunkedEmpiricalRisk)
    assert model.problem_class is in_memory.problem_class
    reference = of.solve(in_memory, AggregateDisaggregate())
    result = of.solve(model, AggregateDisaggregate())
    assert reference.status is of.Status.OPTIMAL
    assert _mismatches(result, reference) == []
    assert certified_status(result) is of.Status.OPTIMAL  # from the model's own oracles
    assert result.bound <= result.objective
    assert result.stats["chunks"] == 5
    np.testing.assert_allclose(result.solution["w"], reference.solution["w"], atol=1e-7)
    alpha = result.solution["alpha"]
    assert isinstance(alpha, da.Array)  # lazy, with the data's chunks
    np.testing.assert_allclose(alpha.compute(), reference.solution["alpha"], atol=1e-7)
    # at the same point the two models' oracles agree: objective, certificate, floor
    point = reference.solution
    objective = in_memory.objective(point)
    assert model.objective(point) == pytest.approx(objective, rel=1e-12)
    bound = model.dual_bound(point)
    assert bound <= objective * (1 + 1e-12) + 1e-12
    assert bound == pytest.approx(in_memory.dual_bound(point), rel=1e-9)
    assert model.objective_floor() == pytest.approx(in_memory.objective_floor(), rel=1e-9)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_the_declarations_are_their_in_memory_models(fit_intercept):
    cases = [
        (DaskLADRegression(_chunked(LAD), fit_intercept=fit_intercept),
         LADRegression(LAD, fit_intercept=fit_intercept), "beta", "theta", "residual"),
        (DaskQuantileRegression(_chunked(LAD), tau=0.25, fit_intercept=fit_intercept),
         EmpiricalRisk(LAD, Pinball(0.25), penalty=None, fit_intercept=fit_intercept),
         "w", "alpha", None),
        (DaskWeightedSVM(_chunked(SVM), C=0.5, fit_intercept=fit_intercept),
         WeightedSVM(SVM, C=0.5, fit_intercept=fit_intercept), "w", "alpha", "xi"),
    ]  # fmt: skip
    for model, in_memory, coef, dual, values in cases:
        reference = of.solve(in_memory, AggregateDisaggregate())
        result = of.solve(model, "auto")  # auto takes AID for chunks
        assert result.driver == "aid"
        assert _mismatches(result, reference) == []
        np.testing.assert_allclose(result.solution[coef], reference.solution[coef], atol=1e-7)
        np.testing.assert_allclose(
            result.solution[dual].compute(), reference.solution[dual], atol=1e-7
        )
        if values is not None:
            np.testing.assert_allclose(
                result.solution[values].compute(), reference.solution[values], atol=1e-7
            )


def test_a_perturbed_solution_is_not_certified():
    data, loss, penalty, C = CASES["weighted hinge"]
    model = EmpiricalRisk(_chunked(data), loss, penalty=penalty, C=C)
    result = of.solve(model, AggregateDisaggregate())
    optimum = result.objective
    w = result.solution["w"] + 0.05
    claimed = dataclasses.replace(result, solution={**result.solution, "w": w}, bound=optimum)
    checked = certify(model, claimed, 1e-6)
    assert checked.status is not of.Status.OPTIMAL
    assert checked.objective > optimum * (1 + 1e-4)
    assert checked.bound <= optimum * (1 + 1e-12)  # weak duality: still a bound on the optimum
    # multipliers that lie (scaled up, out of their box) are repaired into a valid bound
    lying = {**result.solution, "alpha": result.solution["alpha"] * 3.0}
    assert model.dual_bound(lying) <= optimum * (1 + 1e-12)


def test_a_chunk_with_other_rows_gives_another_answer():
    """The comparison can fail: one chunk's targets moved, the chunked answer moves too."""
    data, loss, penalty, C = CASES["quantile"]
    reference = of.solve(EmpiricalRisk(data, loss, penalty=penalty, C=C), AggregateDisaggregate())
    chunked = _chunked(data)
    y = chunked.y.compute()
    y[2 * CHUNK : 3 * CHUNK] += 1.0  # chunk 2's rows altered
    altered = DaskDataset(chunked.X, da.from_array(y, chunks=chunked.X.chunks[0]),
                          chunked.sample_weight)  # fmt: skip
    result = of.solve(EmpiricalRisk(altered, loss, penalty=penalty, C=C), AggregateDisaggregate())
    assert result.status is of.Status.OPTIMAL
    assert any(m.startswith("objective") for m in _mismatches(result, reference))
    same = of.solve(EmpiricalRisk(chunked, loss, penalty=penalty, C=C), AggregateDisaggregate())
    assert _mismatches(same, reference) == []


def test_drivers_that_need_the_whole_data_refuse_by_name():
    model = EmpiricalRisk(_chunked(SVM), Hinge(), fit_intercept=False)
    for name, driver in sorted(registry.drivers().items()):
        if name == "aid":
            continue
        # Direct: no layer to build the problem in; the others: the structure they need
        why = "lists none" if name == "direct" else r"chunks.*AggregateDisaggregate"
        with pytest.raises(IncompatibleDriver, match=rf"{why}.*apply to this model: 'aid'$"):
            of.solve(model, driver())
    assert model.describe().splitlines()[-1] == "drivers: aid"
    with pytest.raises(ModelError, match="AggregateDisaggregate"):
        model.build("matrix")


@pytest.mark.parametrize(
    ("loss", "options", "match"),
    [
        (Huber(1.0), {}, "quadratic pieces"),
        (SquaredHinge(), {}, "quadratic pieces"),
        (Logistic(), {}, "PLQLoss with ReLU pieces"),
        ({1: Hinge(), -1: Hinge()}, {}, "loss per label"),
        (PLQLoss(relu=[(1.0, 0.0)], linear=-0.5), {}, "affine part"),
        (Absolute(), {"kernel": "rbf"}, "kernel"),
        (Absolute(), {"sample_weight": np.ones(ROWS)}, r"DaskDataset\(sample_weight"),
        (Absolute(), {"C": -1.0}, "C"),
    ],
)
def test_what_chunks_do_not_take_is_refused_by_name(loss, options, match):
    data = _chunked(SVM if isinstance(loss, dict) else LAD)
    with pytest.raises(ModelError, match=match):
        EmpiricalRisk(data, loss, **options)


@pytest.mark.parametrize("case", list(CASES))
def test_the_certificate_at_a_perturbed_point_is_the_in_memory_one(case):
    """Without duals, both try the filled subgradient at each kink tolerance: same bound.

    Far from the optimum the hinge without a penalty fills the m + 1 samples nearest its kink,
    and some are equally near (2 and 4 samples at the same distance here): a chunk's X w,
    rounded in another order, can break that tie for another sample. Both bounds are then
    valid, and close, not equal.
    """
    data, loss, penalty, C = CASES[case]
    in_memory = EmpiricalRisk(data, loss, penalty=penalty, C=C)
    model = EmpiricalRisk(_chunked(data), loss, penalty=penalty, C=C)
    solution = of.solve(in_memory, AggregateDisaggregate()).solution
    for shift in (0.0, 1e-6, 1e-3):
        point = {"w": solution["w"] * (1.0 + shift), "intercept": solution["intercept"] + shift}
        objective = in_memory.objective(point)
        assert model.objective(point) == pytest.approx(objective, rel=1e-12)
        bound = model.dual_bound(point)
        assert bound <= objective * (1 + 1e-12) + 1e-12
        tie = case == "hinge, no penalty" and shift == 1e-3
        assert bound == pytest.approx(in_memory.dual_bound(point), rel=1e-2 if tie else 1e-9)


def test_a_tiny_column_still_gets_a_bound():
    """A column scaled by 1e-9: the projection's rows hold to rounding, the bound is finite.

    The least squares of the kink fill are ill-conditioned here: the in-memory model's
    (``lstsq``) and the chunked one's (normal equations summed over the chunks) differ in the
    last digits, so both bounds are valid but equal only to 1e-6.
    """
    X = np.array(LAD.X, copy=True)
    X[:, 2] *= 1e-9
    data = of.data.Dataset(X=X, y=LAD.y, sample_weight=LAD.sample_weight)
    in_memory = EmpiricalRisk(data, Absolute(), penalty=None)
    model = EmpiricalRisk(_chunked(data), Absolute(), penalty=None)
    solution = of.solve(in_memory, AggregateDisaggregate()).solution
    for point in (solution, {"w": solution["w"] * 1.001, "intercept": solution["intercept"]}):
        bound = model.dual_bound(point)
        assert np.isfinite(bound)
        assert bound <= in_memory.objective(point)
        assert bound == pytest.approx(in_memory.dual_bound(point), rel=1e-6)


def test_an_in_memory_model_given_chunks_says_what_takes_them():
    with pytest.raises(of.DataError, match=r"DaskDataset.*EmpiricalRisk\(data, loss"):
        LADRegression(_chunked(LAD))
    with pytest.raises(of.DataError, match="DaskWeightedSVM"):
        WeightedSVM(_chunked(SVM))


@pytest.mark.parametrize("case", ["lad", "weighted hinge", "quantile, lasso"])
def test_sparse_chunks_give_the_in_memory_solve(case):
    data, loss, penalty, C = CASES[case]
    X = np.asarray(data.X).copy()
    X[np.abs(X) < 0.5] = 0.0
    sparse = of.data.Dataset(X=sp.csr_array(X), y=data.y, sample_weight=data.sample_weight)
    model = EmpiricalRisk(_chunked(sparse), loss, penalty=penalty, C=C)
    assert model.data.is_sparse
    reference = of.solve(EmpiricalRisk(sparse, loss, penalty=penalty, C=C), AggregateDisaggregate())
    assert _mismatches(of.solve(model, AggregateDisaggregate()), reference) == []
