"""The row-block products equal NumPy's, whatever the thread count, and the certificates that
use them prove the same bounds."""

import numba
import numpy as np
import pytest
import scipy.sparse as sp

import optframe as of
from optframe import row_blocks
from optframe.data import make_regression_lad
from optframe.duality import equality_residuals, project_null
from optframe.models import LADRegression
from optframe.row_blocks import WithOnes
from optframe.threads import numba_threads

N = 2 * row_blocks.BLOCK_ROWS + 1234  # three blocks, the last one short


@pytest.fixture
def blocked(monkeypatch):
    """Every dense product of at least two blocks goes to the compiled blocks."""
    monkeypatch.setattr(row_blocks, "PARALLEL_FROM", 0)


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(N, 6))
    return X, rng.normal(size=N), rng.random(N) > 0.3


@pytest.mark.usefixtures("blocked")
@pytest.mark.parametrize("ones", [False, True])
def test_the_blocks_give_numpys_products(data, ones):
    X, v, keep = data
    A = WithOnes(X) if ones else X
    dense = np.hstack([X, np.ones((N, 1))]) if ones else X
    assert row_blocks._blocked(A) is not None
    s = np.arange(dense.shape[1], dtype=float) - 2.5
    np.testing.assert_allclose(row_blocks.gram(A, keep), dense[keep].T @ dense[keep], rtol=1e-12)
    np.testing.assert_allclose(row_blocks.transposed_times(A, v), dense.T @ v, rtol=1e-11)
    np.testing.assert_allclose(
        row_blocks.abs_transposed_times(A, v), np.abs(dense).T @ np.abs(v), rtol=1e-12
    )
    np.testing.assert_allclose(row_blocks.times(A, s), dense @ s, rtol=1e-12, atol=1e-12)


@pytest.mark.usefixtures("blocked")
def test_the_blocks_do_not_depend_on_the_thread_count(data):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.fail("numba has one thread: run the tests with NUMBA_NUM_THREADS unset or >= 2")
    X, v, keep = data
    A = WithOnes(X)
    runs = []
    for threads in (1, 2):
        with numba_threads(threads):
            runs.append((row_blocks.gram(A, keep), row_blocks.transposed_times(A, v)))
    assert np.array_equal(runs[0][0], runs[1][0])
    assert np.array_equal(runs[0][1], runs[1][1])


@pytest.mark.usefixtures("blocked")
def test_the_projection_through_the_blocks_meets_the_rows(data):
    X, v, keep = data
    upper = np.where(keep, 1.0, 0.0)
    out = project_null(WithOnes(X), 0.1 * v, upper)
    stacked = np.hstack([X, np.ones((N, 1))])
    assert equality_residuals(stacked, out)[0] <= 1.0
    assert np.all(out[~keep] == 0.0)
    assert np.all(np.abs(out) <= upper + 1e-15)
    reference = project_null(stacked, 0.1 * v, upper)
    np.testing.assert_allclose(out, reference, rtol=1e-9, atol=1e-12)


def test_small_data_stays_on_numpy(data):
    X, _, _ = data
    assert row_blocks._blocked(X[:1000]) is None
    assert row_blocks.abs_transposed_times(X[:1000], np.ones(1000)) is None


def test_the_lad_certificate_is_the_same_through_the_blocks(monkeypatch):
    model = LADRegression(make_regression_lad(N, 8, random_state=5))
    result = of.solve(model, "direct", backend="fn", threads=1)
    monkeypatch.setattr(row_blocks, "PARALLEL_FROM", 0)
    blocked = of.certificate.certify(model, result, 1e-6)
    monkeypatch.setattr(row_blocks, "PARALLEL_FROM", 2**62)
    plain = of.certificate.certify(model, result, 1e-6)
    assert blocked.status is of.Status.OPTIMAL
    assert plain.status is of.Status.OPTIMAL
    assert blocked.bound == pytest.approx(plain.bound, rel=1e-12)


@pytest.mark.usefixtures("blocked")
def test_the_nearest_centers_are_numpys(data):
    X, _, _ = data
    centers = X[np.random.default_rng(4).choice(N, 50, replace=False)] + 0.01
    labels = row_blocks.nearest_centers(X, centers)
    distances = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(labels, np.argmin(distances, axis=1))


def test_the_centroids_are_the_averaging_products(data, monkeypatch):
    from optframe.data import Dataset
    from optframe.data.aggregate import aggregate_samples

    X, v, keep = data
    rng = np.random.default_rng(6)
    labels = np.where(keep, rng.integers(0, 300, size=N), -1)
    weights = rng.random(N) + 0.5
    plain = aggregate_samples(Dataset(X=X, y=v), weights, labels, 300)
    monkeypatch.setattr(row_blocks, "PARALLEL_FROM", 0)
    averaging = sp.csr_array((np.ones(N), (np.where(keep, labels, 0), np.arange(N))), (300, N))
    assert row_blocks.weighted_group_sums(X, averaging) is not None
    blocked = aggregate_samples(Dataset(X=X, y=v), weights, labels, 300)
    kept = np.flatnonzero(labels >= 0)
    totals = np.bincount(labels[kept], weights=weights[kept], minlength=300)
    share = weights[kept] / totals[labels[kept]]
    expected = np.zeros((300, X.shape[1]))
    np.add.at(expected, labels[kept], share[:, None] * X[kept])
    np.testing.assert_allclose(blocked.X, expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(blocked.X, plain.X, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(blocked.sample_weight, plain.sample_weight)
