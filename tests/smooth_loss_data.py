"""Data and the Direct reference shared by the tests of the smooth-loss drivers (CD, Newton).

Rows of a1a (sparse binary features, labels in {-1, +1}) for margin losses and of abalone
(standardized, the target centered) for residual losses; the reference is Direct on Clarabel at
tight tolerances (through cvxpy for the logistic loss's exponential cone).
"""

import numpy as np
import scipy.sparse as sp

import optframe as of
from optframe.data import load_dataset
from optframe.drivers import Direct

TIGHT = {"tol_gap_rel": 1e-11, "tol_gap_abs": 1e-11, "tol_feas": 1e-11}


def a1a_rows(n):
    """The first ``n`` rows of a1a: ``(CSR X, y)``."""
    data = load_dataset("a1a")
    return sp.csr_array(data.X)[:n], np.where(np.asarray(data.y)[:n] > 0, 1.0, -1.0)


def abalone_rows(n):
    """The first ``n`` rows of abalone, standardized, the target centered: ``(dense X, y)``."""
    data = load_dataset("abalone")
    X = data.X.toarray()[:n]
    X = (X - X.mean(axis=0)) / np.maximum(X.std(axis=0), 1e-12)
    y = np.asarray(data.y, dtype=np.float64)[:n]
    return X, y - np.median(y)


def data_for(kind, sparse, a1a, abalone):
    """Classification rows from ``a1a``, regression rows from ``abalone``; dense or CSR."""
    X, y = a1a if kind == "classification" else abalone
    X = sp.csr_array(X) if sparse else (X.toarray() if sp.issparse(X) else X)
    return X, y


def reference(model):
    """Direct on Clarabel, tight: the exponential cone through cvxpy, else the primal QP."""
    if getattr(model.loss, "is_smooth", False):
        return of.solve(model, Direct(), backend="cvxpy:clarabel", solver_options=TIGHT)
    return of.solve(model, Direct(form="primal"), backend="clarabel", solver_options=TIGHT)
