"""Synthetic data generators: shapes, determinism, and the documented distributions."""

import numpy as np
import pytest
import scipy.sparse as sp

from optframe.data import (
    make_classification_svm,
    make_knowledge_data,
    make_lad_set_a,
    make_regression_lad,
    make_svm_aid,
    make_toy,
    make_two_gaussians,
)
from optframe.errors import DataError


def _dense(X):
    return X.toarray() if sp.issparse(X) else X


CASES = {
    "lad_set_a": (lambda s: make_lad_set_a(300, 7, random_state=s), (300, 7)),
    "svm_aid": (lambda s: make_svm_aid(400, 10, random_state=s), (400, 10)),
    "toy1": (lambda s: make_toy(1, random_state=s), (2000, 2)),
    "toy3": (lambda s: make_toy(3, random_state=s, n_per_class=50), (100, 2)),
    "two_gaussians": (lambda s: make_two_gaussians(random_state=s), (1500, 241)),
    "regression_lad": (lambda s: make_regression_lad(50, 3, "cauchy", random_state=s), (50, 3)),
    "classification": (lambda s: make_classification_svm(60, 4, 3.0, random_state=s), (60, 4)),
    "knowledge_train": (lambda s: make_knowledge_data(20, 30, 1000, random_state=s)[0], (20, 1000)),
    "knowledge_test": (lambda s: make_knowledge_data(20, 30, 1000, random_state=s)[1], (30, 1000)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_shapes_and_determinism(case):
    make, shape = CASES[case]
    a, b, c = make(7), make(7), make(8)
    assert (a.n_samples, a.n_features) == shape
    np.testing.assert_array_equal(_dense(a.X), _dense(b.X))
    np.testing.assert_array_equal(a.y, b.y)
    assert not np.array_equal(_dense(a.X), _dense(c.X))
    assert a.meta["task"] in ("binary", "regression")
    if a.meta["task"] == "binary":
        assert set(np.unique(a.y)) == {-1.0, 1.0}
    gen = np.random.default_rng(3)
    assert make(gen).n_samples == shape[0]  # a Generator is accepted too


def test_lad_set_a_follows_the_documented_model():
    ds = make_lad_set_a(20000, 5, random_state=0)
    resid = ds.y - ds.X @ ds.meta["coef"] - ds.meta["intercept"]
    assert abs(np.median(resid)) < 0.05
    assert abs(np.mean(np.abs(resid)) - 1.0) < 0.05  # standard Laplace: E|e| = 1
    assert not np.allclose(ds.X[:, 0], 1.0)  # no column of ones
    assert ds.meta["reference"].startswith("aid.md")


def test_regression_noise_options():
    g = make_regression_lad(5000, 2, "gaussian", random_state=1, noise_scale=2.0, intercept=False)
    assert g.meta["intercept"] == 0.0
    resid = g.y - g.X @ g.meta["coef"]
    assert abs(resid.std() - 2.0) < 0.1
    with pytest.raises(DataError, match="noise"):
        make_regression_lad(10, 2, "uniform")


def test_svm_aid_label_noise():
    ds = make_svm_aid(20000, 10, random_state=0)
    clean = np.where(ds.X @ ds.meta["coef"] >= 0, 1.0, -1.0)
    disagree = np.mean(clean != ds.y)
    assert 0.12 < disagree < 0.18  # arctan(0.5) / pi = 0.148
    sep = make_svm_aid(500, 3, random_state=0, noise=0.0)
    np.testing.assert_array_equal(np.where(sep.X @ sep.meta["coef"] >= 0, 1.0, -1.0), sep.y)


@pytest.mark.parametrize(("which", "mu"), [(1, 1.5), (2, 0.75), (3, 0.5)])
def test_toy_sets_match_dvi(which, mu):
    ds = make_toy(which, random_state=0)
    assert ds.meta["mu"] == mu
    for label in (1.0, -1.0):
        pts = ds.X[ds.y == label]
        assert pts.shape == (1000, 2)
        np.testing.assert_allclose(pts.mean(axis=0), [label * mu] * 2, atol=0.1)
        np.testing.assert_allclose(pts.std(axis=0), [0.75, 0.75], atol=0.05)
    with pytest.raises(DataError, match="1, 2 or 3"):
        make_toy(4)


def test_two_gaussians_distance():
    ds = make_two_gaussians(random_state=0)
    assert int((ds.y == 1).sum()) == 750
    u = ds.meta["direction"]
    gap = (ds.X[ds.y == 1].mean(axis=0) - ds.X[ds.y == -1].mean(axis=0)) @ u
    assert abs(gap - 2.5) < 0.15
    assert abs(np.linalg.norm(u) - 1) < 1e-12
    assert abs(ds.X.std() - 1.0) < 0.05  # unit variance (the mean shift adds little)


def test_classification_svm_flips():
    ds = make_classification_svm(100, 3, 4.0, random_state=0, flip=0.1)
    assert ds.meta["flipped"].size == 10
    with pytest.raises(DataError):
        make_classification_svm(10, 2, 1.0, flip=1.5)


def test_knowledge_data_follows_hipad():
    train, test = make_knowledge_data(400, 600, 2000, random_state=0)
    assert train.is_sparse
    assert test.is_sparse
    blocks = train.meta["blocks"]
    assert blocks == [(900, 950), (950, 1000), (1000, 1050), (1050, 1100)]
    Xtr, Xte = train.X.toarray(), test.X.toarray()
    # training rows carry K2, K3 only; K1 and K4 are exactly zero (interpretation A)
    for j in (0, 3):
        assert not Xtr[:, slice(*blocks[j])].any()
    for j in range(4):
        assert np.all(Xte[:, slice(*blocks[j])] != 0)
    mu_pos, mu_neg = (2, 0.5, -0.2, -1), (-2, -0.5, 0.2, 1)
    for j in range(4):
        block = Xte[:, slice(*blocks[j])]
        for label, mu in ((1.0, mu_pos[j]), (-1.0, mu_neg[j])):
            rows = block[test.y == label]
            # block mean of 50 equicorrelated columns: sd ~ sqrt(0.8 + 0.2/50) / sqrt(n)
            assert abs(rows.mean() - mu) < 4 * np.sqrt(0.804 / rows.shape[0])
        corr = np.corrcoef(block[test.y == 1].T)
        off = corr[~np.eye(50, dtype=bool)]
        assert abs(off.mean() - 0.8) < 0.05
    # sparse noise: a fraction in [5 %, 10 %] of the remaining columns of every row
    frac = train.meta["noise_fraction"]
    assert 0.05 <= frac <= 0.10
    remaining = 2000 - 200
    nnz_noise = (Xtr != 0).sum(axis=1) - 100
    np.testing.assert_array_equal(nnz_noise, round(frac * remaining))
    assert train.meta["knowledge"] is test.meta["knowledge"]


def test_knowledge_sets_encode_the_rules():
    train, _ = make_knowledge_data(10, 10, 400, random_state=1)
    pos, neg = train.meta["knowledge"]
    assert pos["label"] == 1.0
    assert neg["label"] == -1.0
    assert pos["B"].shape == (1, 400)
    assert pos["d"].tolist() == [-4.0]
    assert neg["d"].tolist() == [-3.0]
    k1, k4 = slice(*train.meta["blocks"][0]), slice(*train.meta["blocks"][3])
    rng = np.random.default_rng(0)
    for _ in range(200):
        x = rng.normal(3.5, 1.5, 400)
        assert (pos["B"] @ x <= pos["d"]).item() == (x[k1].mean() >= 4)
        assert (neg["B"] @ x <= neg["d"]).item() == (x[k4].mean() >= 3)


def test_knowledge_interpretation_b_puts_noise_in_k1_k4():
    train, _ = make_knowledge_data(
        50, 10, 1000, random_state=2, interpretation="B", noise_fraction=0.5
    )
    k1 = slice(*train.meta["blocks"][0])
    assert train.X.toarray()[:, k1].any()
    with pytest.raises(DataError, match="smaller than the 4 blocks"):
        make_knowledge_data(m=100)


def test_invalid_arguments():
    with pytest.raises(DataError, match="positive integer"):
        make_svm_aid(0, 3)
    with pytest.raises(DataError, match="random_state"):
        make_toy(1, random_state="seed")
