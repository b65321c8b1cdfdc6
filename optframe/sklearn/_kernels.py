"""scikit-learn's kernel parameters (``kernel``, ``gamma``, ``degree``, ``coef0``) as a Kernel."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp

from optframe.errors import ModelError
from optframe.kernels import RBF, Kernel, Linear, Polynomial

from ._base import check_number

KERNELS = ("linear", "rbf", "poly")


def _scale_gamma(X: Any) -> float:
    """``1 / (n_features * X.var())`` as scikit-learn's ``gamma="scale"`` (1 when X is constant)."""
    if sp.issparse(X):
        mean = float(X.mean())
        variance = float(X.multiply(X).mean()) - mean * mean
    else:
        variance = float(np.var(X))
    return 1.0 / (X.shape[1] * variance) if variance > 0 else 1.0


def make_kernel(
    kernel: Kernel | str, gamma: float | str, degree: int, coef0: float, X: Any, owner: str
) -> Kernel:
    r"""The kernel an estimator's parameters name, checked, for training data ``X``.

    ``"linear"``: :math:`x^\top z`; ``"rbf"``: :math:`\exp(-\gamma\lVert x - z\rVert^2)`;
    ``"poly"``: :math:`(\gamma x^\top z + c_0)^d`. ``gamma="scale"`` is
    :math:`1 / (m \operatorname{Var}(X))`, ``"auto"`` is :math:`1/m`, as in scikit-learn's SVC. A
    :class:`~optframe.kernels.Kernel` instance is used as it is.
    """
    if isinstance(kernel, Kernel):
        return kernel
    if kernel not in KERNELS:
        raise ModelError(
            f"{owner}: kernel must be one of {KERNELS} or an optframe.kernels.Kernel; got "
            f"{kernel!r}"
        )
    if kernel == "linear":
        return Linear()
    if gamma == "scale":
        value = _scale_gamma(X)
    elif gamma == "auto":
        value = 1.0 / X.shape[1]
    elif isinstance(gamma, str):
        raise ModelError(f"{owner}: gamma must be 'scale', 'auto' or a number > 0; got {gamma!r}")
    else:
        value = check_number(gamma, "gamma", owner, low=0.0, strict=True)
    if kernel == "rbf":
        return RBF(gamma=value)
    if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 1:
        raise ModelError(f"{owner}: degree must be an integer >= 1; got {degree!r}")
    c0 = check_number(coef0, "coef0", owner, low=0.0)
    return Polynomial(degree=int(degree), gamma=value, coef0=c0)
