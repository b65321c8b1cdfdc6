"""FW and MFW record the model's objective in their history, so a gap can be drawn."""

import math

import numpy as np
import pytest

import optframe as of
from optframe.data import Dataset
from optframe.drivers import FW, MFW
from optframe.kernels import RBF
from optframe.models import L2SVM


def _model():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=300) > 0, 1.0, -1.0)
    return L2SVM(Dataset(X=X, y=y), C=1.0, kernel=RBF(gamma=0.5))


@pytest.mark.parametrize("driver", [FW(check_every=50), MFW(check_every=20)])
def test_history_has_the_objective_and_a_gap(driver):
    result = of.solve(_model(), driver, max_iter=2000)
    assert result.history
    objectives = [r.objective for r in result.history]
    assert all(math.isfinite(value) for value in objectives)
    for record in result.history:  # weak duality at every recorded iterate
        assert record.bound is not None
        assert record.bound <= record.objective + 1e-12
    last = result.history[-1].objective
    assert last == pytest.approx(result.objective, rel=1e-9, abs=1e-12)
