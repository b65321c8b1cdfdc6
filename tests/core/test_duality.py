"""The operations that make any point dual-feasible (optframe.duality): exact, box-keeping."""

import numpy as np
import scipy.sparse as sp

from optframe.duality import balance, fill_subgradient, kink_set, match_sum, project_null


def test_balance_makes_the_row_exact_and_keeps_the_box():
    rng = np.random.default_rng(0)
    sign = np.where(rng.random(50) < 0.3, 1.0, -1.0)
    values = rng.uniform(0, 2, 50)
    fixed = balance(values, sign)
    assert abs(fixed @ sign) <= 1e-12 * values.sum()
    assert np.all(fixed >= 0)
    assert np.all(fixed <= values + 1e-15)  # every entry moved towards 0


def test_project_null_lands_in_the_null_space_and_the_box():
    rng = np.random.default_rng(1)
    for sparse in (False, True):
        A = rng.normal(size=(200, 6))
        A[:, 2] = A[:, 0] + A[:, 1]  # rank deficient
        upper, lower = rng.uniform(0.5, 2, 200), -rng.uniform(0.1, 1, 200)
        upper[:5] = lower[:5] = 0.0  # fixed at 0
        theta = rng.normal(size=200)
        out = project_null(sp.csr_array(A) if sparse else A, theta, upper, lower)
        assert np.abs(A.T @ out).max() <= 1e-10 * np.abs(theta).sum()
        assert np.all(out <= upper + 1e-15)
        assert np.all(out >= lower - 1e-15)
        assert np.all(out[:5] == 0.0)


def test_match_sum_hits_the_total_inside_the_box():
    rng = np.random.default_rng(2)
    lower, upper = np.zeros(30), np.full(30, 2.0)
    for total in (5.0, 50.0):
        out = match_sum(rng.uniform(0, 3, 30), total, lower, upper)
        assert abs(out.sum() - total) <= 1e-12 * total
        assert np.all((out >= 0) & (out <= 2.0))


def test_fill_subgradient_solves_the_stationarity_rows_for_the_kink():
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(40, 3))
    truth = rng.uniform(0.2, 0.8, 40)
    target = Z.T @ truth
    distance = np.r_[np.zeros(5), rng.uniform(1, 2, 35)]  # five samples on the kink
    start = np.where(distance == 0, 0.5, truth)
    kink = kink_set(distance, 3, 1e-12)
    assert kink.sum() == 5
    out = fill_subgradient(Z, target, start, kink, np.zeros(40), np.ones(40))
    assert np.abs(Z.T @ out - target).max() <= 1e-10
    assert np.all(out[~kink] == truth[~kink])
