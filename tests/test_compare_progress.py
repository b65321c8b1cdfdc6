"""compare's progress counts the comparison's rows (the pairs), not the reference with them."""

import numpy as np

from optframe.compare import compare
from optframe.data import Dataset
from optframe.models import LADRegression


def test_progress_total_is_the_number_of_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    model = LADRegression(Dataset(X=X, y=X @ [1.0, -2.0, 0.5] + rng.laplace(size=40)))
    calls = []
    _, runs = compare(model, progress=lambda done, total, label: calls.append((done, total, label)))
    assert {total for _, total, _ in calls} == {len(runs)}
    assert calls[0] == (0, len(runs), "reference")
    assert calls[-1] == (len(runs), len(runs), "done")
    assert [done for done, _, _ in calls[1:-1]] == list(range(len(runs)))
