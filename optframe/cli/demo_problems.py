"""The problems ``optframe demo`` compares: data that ships with scikit-learn, no download."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes

from optframe import registry
from optframe.data import Dataset
from optframe.model import Model


def _standardized(X: np.ndarray) -> np.ndarray:
    return (X - X.mean(axis=0)) / X.std(axis=0)


def demo_problems(quick: bool = False) -> Iterator[tuple[str, Model]]:
    """Yield (title, model): LAD on diabetes_sklearn; weighted SVMs on breast cancer."""
    models = registry.models()
    diabetes = load_diabetes()
    lad_data = Dataset(X=diabetes.data, y=diabetes.target, name="diabetes_sklearn")
    yield "LADRegression on diabetes_sklearn (n=442, m=10)", models["LADRegression"](lad_data)

    cancer = load_breast_cancer()
    X = _standardized(cancer.data)
    y = np.where(cancer.target == 1, 1.0, -1.0)
    if quick:
        X, y = X[::3], y[::3]
    # weights that balance the two classes, as class_weight="balanced" would
    weights = np.where(y > 0, len(y) / (2 * np.sum(y > 0)), len(y) / (2 * np.sum(y < 0)))
    svm_data = Dataset(X=X, y=y, sample_weight=weights, name="breast_cancer")
    n, m = X.shape
    yield (
        f"WeightedSVM (linear, C=1, balanced weights) on breast cancer (n={n}, m={m})",
        models["WeightedSVM"](svm_data, C=1.0),
    )
