"""Random problems for the fn back-end's tests (its LP, QP and compiled-path tests)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from optframe.model import Formulation, MatrixProblem, ProblemClass

INF = np.inf


def separable_qp(seed: int, rows: int = 5, cols: int = 60, density: float = 1.0) -> Formulation:
    """A random feasible separable QP: boxed (flat and curved), one-sided, free, fixed columns."""
    rng = np.random.default_rng(seed)
    A = sp.csc_array(
        sp.random(rows, cols, density=density, random_state=seed, data_rvs=rng.standard_normal)
    )
    lower = rng.uniform(-2.0, 1.0, cols)
    upper = lower + rng.uniform(0.5, 3.0, cols)
    h = np.where(rng.uniform(size=cols) < 0.5, 0.0, rng.uniform(0.1, 3.0, cols))
    kind = rng.integers(0, 4, cols)  # 0 boxed, 1 bounded below, 2 bounded above, 3 free
    curved = h > 0.0
    lower[curved & (kind >= 2)] = -INF
    upper[curved & ((kind == 1) | (kind == 3))] = INF
    lower[:2] = upper[:2] = rng.uniform(-1.0, 1.0, 2)  # fixed columns
    has_low, has_up = np.isfinite(lower), np.isfinite(upper)
    inside = np.zeros(cols)  # free columns
    both = has_low & has_up
    inside[both] = lower[both] + 0.3 * (upper[both] - lower[both])
    inside[has_low & ~has_up] = lower[has_low & ~has_up] + 0.3
    inside[~has_low & has_up] = upper[~has_low & has_up] - 0.3
    b = np.asarray(A @ inside)
    problem = MatrixProblem(
        c=rng.standard_normal(cols),
        A=A,
        row_lower=b,
        row_upper=b.copy(),
        lower=lower,
        upper=upper,
        P=sp.diags(h),
        offset=-0.7,
    )
    return _named(problem, ProblemClass.QP)


def box_lp(seed: int, rows: int = 6, cols: int = 80, density: float = 1.0) -> Formulation:
    """A random feasible LP with equality rows, boxes (some negative, some fixed columns)."""
    rng = np.random.default_rng(seed)
    A = sp.random(rows, cols, density=density, random_state=seed, data_rvs=rng.standard_normal)
    A = sp.csc_array(A)
    lower = rng.uniform(-2.0, 0.0, cols)
    upper = lower + rng.uniform(0.5, 3.0, cols)
    upper[:3] = lower[:3]  # fixed columns
    inside = lower + rng.uniform(0.2, 0.8, cols) * (upper - lower)
    b = np.asarray(A @ inside)
    problem = MatrixProblem(
        c=rng.standard_normal(cols),
        A=A,
        row_lower=b,
        row_upper=b.copy(),
        lower=lower,
        upper=upper,
        offset=1.5,
    )
    return _named(problem, ProblemClass.LP)


def _named(problem: MatrixProblem, problem_class: ProblemClass) -> Formulation:
    """The problem with its columns as the variable ``x`` and its rows as ``rows``."""
    rows, cols = problem.A.shape
    return Formulation("matrix", problem, problem_class, variables={"x": slice(0, cols)},
                       constraints={"rows": slice(0, rows)})  # fmt: skip
