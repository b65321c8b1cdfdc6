r"""Significance tests for comparing algorithms over data sets (Demšar 2006), with SciPy.

* :func:`wilcoxon_signed_rank`: paired Wilcoxon signed-rank test of two methods (SciPy: exact
  p-value for small samples without ties or zeros, else the normal approximation).
* :func:`friedman_iman_davenport`: Friedman's test with the Iman-Davenport correction,
  :math:`F = (N-1)\chi^2 / (N(k-1) - \chi^2)` on :math:`(k-1, (k-1)(N-1))` degrees of freedom.

Frandi et al. (notes/frank_wolfe.md section 5.3) report W = 17 / 20 / 159 and F = 14.858 from the
training times of their Table 3; ``tests/bench/test_stats.py`` reproduces them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats


@dataclass(frozen=True)
class TestResult:
    """A statistic and its p-value."""

    statistic: float
    pvalue: float


def wilcoxon_signed_rank(
    x: ArrayLike, y: ArrayLike, alternative: str = "two-sided", zero_method: str = "pratt"
) -> TestResult:
    """Paired signed-rank test of ``x`` against ``y`` over data sets.

    Parameters
    ----------
    x, y : arrays of shape (N,)
        One figure per data set for each method.
    alternative : {"two-sided", "less", "greater"}
        ``"less"``: H1 says ``x`` tends to be smaller than ``y``.
    zero_method : {"pratt", "wilcox", "zsplit"}
        Zero differences: Pratt's method (the paper's) ranks them and drops their ranks.

    Returns
    -------
    TestResult
        ``statistic``: one-sided, V+ = the sum of the ranks of the positive differences ``x - y``
        (R's ``V``); two-sided, min(V+, V-), the figure Frandi et al. report (their W = 159
        for FW vs MFW is min(192, 159)).
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D of the same length; got {x.shape} and {y.shape}")
    result = stats.wilcoxon(x - y, alternative=alternative, zero_method=zero_method)
    return TestResult(statistic=float(result.statistic), pvalue=float(result.pvalue))


def friedman_iman_davenport(*samples: ArrayLike) -> tuple[float, TestResult]:
    """Friedman's chi-square over ``k`` methods and ``N`` data sets, and Iman-Davenport's F.

    Returns
    -------
    (chi2, TestResult)
        The Friedman statistic, and F with its p-value from F(k-1, (k-1)(N-1)).
    """
    arrays = [np.asarray(s, dtype=np.float64) for s in samples]
    k, n = len(arrays), arrays[0].size
    if k < 3:
        raise ValueError("Friedman's test needs at least three methods")
    chi2 = float(stats.friedmanchisquare(*arrays).statistic)
    F = (n - 1) * chi2 / (n * (k - 1) - chi2)
    p = float(stats.f.sf(F, k - 1, (k - 1) * (n - 1)))
    return chi2, TestResult(statistic=float(F), pvalue=p)
