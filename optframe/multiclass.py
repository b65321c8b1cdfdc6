"""One-vs-one multi-class classification from any binary trainer.

For ``K`` classes, ``K (K - 1) / 2`` binary problems are trained, class ``a`` (the smaller code)
as +1 against class ``b`` as -1, on the rows of those two classes only. Prediction is LIBSVM's
voting rule: each pair votes for ``a`` when its decision value is ``>= 0`` (a zero goes to the
smaller class index) and for ``b`` otherwise; the class with the most votes wins, and a tie goes
to the smallest class index (notes/frank_wolfe.md A9).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from optframe.data import Dataset
from optframe.errors import DataError


@dataclass
class OneVsOne:
    """Pairwise binary predictors and the voting rule (see the module docstring).

    Attributes
    ----------
    classes : ndarray
        The class codes, sorted.
    pairs : list of (int, int)
        Indices ``(a, b)`` into ``classes``, ``a < b``.
    predictors : list
        One fitted object per pair with ``decision_function(X)`` (a ``Result`` qualifies).
    seconds : list of float
        Training seconds per pair.
    """

    classes: NDArray[np.float64]
    pairs: list[tuple[int, int]] = field(default_factory=list)
    predictors: list[Any] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    def votes(self, X: ArrayLike) -> NDArray[np.int64]:
        """Vote counts, shape (n, K)."""
        n = X.shape[0]  # type: ignore[union-attr]
        counts = np.zeros((n, self.classes.size), dtype=np.int64)
        rows = np.arange(n)
        for (a, b), predictor in zip(self.pairs, self.predictors, strict=True):
            h = np.asarray(predictor.decision_function(X), dtype=np.float64).reshape(-1)
            counts[rows, np.where(h >= 0, a, b)] += 1
        return counts

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """The winning class code per row (ties: the smallest class index)."""
        return self.classes[np.argmax(self.votes(X), axis=1)]


def one_vs_one(data: Dataset, fit: Callable[[Dataset], Any]) -> OneVsOne:
    """Train ``fit`` on every pair of classes of ``data`` (labels: any codes, >= 2 classes)."""
    if data.y is None:
        raise DataError("one_vs_one needs targets; data.y is None")
    classes = np.unique(data.y)
    if classes.size < 2:
        raise DataError(f"one_vs_one needs at least two classes; y holds only {classes}")
    model = OneVsOne(classes=classes)
    for a in range(classes.size):
        for b in range(a + 1, classes.size):
            rows = np.flatnonzero((data.y == classes[a]) | (data.y == classes[b]))
            y = np.where(data.y[rows] == classes[a], 1.0, -1.0)
            start = time.perf_counter()
            model.predictors.append(fit(Dataset(X=data.X[rows], y=y)))
            model.seconds.append(time.perf_counter() - start)
            model.pairs.append((a, b))
    return model
