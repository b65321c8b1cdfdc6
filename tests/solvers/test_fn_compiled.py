"""fn's compiled column work (``solvers/_fn_vectors.py``) against its numpy iteration.

Large problems (from ``COMPILED_FROM`` columns) run the iteration's column work as compiled
loops; small ones as numpy array operations. Both must be the same algorithm: the kernels are
checked phase by phase against the numpy formulas at a random interior state, and whole runs
on LPs, separable QPs with every kind of column and a ridge dual against each other (same
stop, iterations, objective, bound and point). A kernel with a wrong sign or a missing mask
fails the phase test, and drifts the runs apart.
"""

from __future__ import annotations

import numpy as np
import pytest
from fn_problems import box_lp, separable_qp

from optframe.backend import SolveOptions
from optframe.data import Dataset
from optframe.losses import Hinge
from optframe.model import Formulation
from optframe.models import EmpiricalRisk
from optframe.penalties import L2
from optframe.solvers import _fn_core
from optframe.solvers._fn_vectors import ColumnWork
from optframe.solvers.fn import FnMatrixBackend, _box_lp


def ridge_dual(seed: int) -> Formulation:
    """The ridge dual of the hinge loss with an intercept (fn's route for it)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((300, 5))
    y = np.where(X @ rng.standard_normal(5) + 0.5 * rng.standard_normal(300) > 0, 1.0, -1.0)
    model = EmpiricalRisk(Dataset(X=X, y=y), Hinge(), penalty=L2(), C=1.0, fit_intercept=True)
    return model.build("matrix", form="dual")


def lp_of(formulation: Formulation) -> _fn_core.BoxLP:
    problem = formulation.problem
    free = np.flatnonzero(problem.upper > problem.lower)
    h = problem.P.diagonal() if problem.P is not None else None
    return _box_lp(problem, free, "auto", h)[0]


@pytest.mark.parametrize("seed", range(4))
def test_each_phase_matches_the_numpy_formulas(seed):
    lp = lp_of(separable_qp(seed))
    barriers = _fn_core._Barriers.of(lp)
    rng = np.random.default_rng(seed)
    n = lp.c.size
    low = np.ones(n) if barriers.lower is None else barriers.lower
    up = np.ones(n) if barriers.upper is None else barriers.upper
    finite_u = np.where(up > 0, lp.u, 1.0)
    inside = rng.uniform(0.5, 2.0, n)  # the distance to a one-sided bound
    x = np.select(
        [(low > 0) & (up > 0), low > 0, up > 0],
        [rng.uniform(0.1, 0.9, n) * finite_u, inside, finite_u - inside],
        rng.standard_normal(n),
    )
    z, w = rng.uniform(0.1, 2.0, n) * low, rng.uniform(0.1, 2.0, n) * up
    y = rng.standard_normal(lp.b.size)
    aty = lp.transpose_times(y)
    work = ColumnWork(lp.c, lp.h, lp.u, barriers.lower, barriers.upper)

    objective, box_min, complementarity = work.measure(x, aty, z, w)
    xl, s = barriers.gaps(lp, x)
    h = np.zeros(n) if lp.h is None else lp.h
    theta = 1.0 / (h + z / xl + w / s)
    np.testing.assert_allclose(work.xl, xl)
    np.testing.assert_allclose(work.s, s)
    np.testing.assert_allclose(work.rd, lp.c - aty - z + w + h * x)
    np.testing.assert_allclose(work.theta, theta)
    assert objective == pytest.approx(lp.objective(x), rel=1e-12)
    assert float(lp.b @ y) + box_min == pytest.approx(lp.bound(y, aty), rel=1e-12)
    assert complementarity == pytest.approx(float(xl @ z + s @ w), rel=1e-12)

    # the predictor, then the corrector, against _direction's formulas
    dy = rng.standard_normal(lp.b.size)
    atdy = lp.transpose_times(dy)
    for corrector, target in ((False, 0.0), (True, 0.3)):
        dx_pred, dz_pred, dw_pred = work.dx.copy(), work.dz.copy(), work.dw.copy()
        work.rhs(corrector, target, z, w)
        rxz, rsw = -xl * z, -s * w
        if corrector:
            rxz = rxz + target - dx_pred * dz_pred
            rsw = rsw + target + dx_pred * dw_pred
        rxz, rsw = barriers.keep_lower(rxz), barriers.keep_upper(rsw)
        q = work.rd - rxz / xl + rsw / s
        np.testing.assert_allclose(work.q, q, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(work.tq, theta * q, rtol=1e-12, atol=1e-12)
        primal, dual = work.direction(atdy, z, w)
        dx = theta * (atdy - q)
        dz, dw = (rxz - z * dx) / xl, (rsw + w * dx) / s
        np.testing.assert_allclose(work.dx, dx, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(work.dz, dz, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(work.dw, dw, rtol=1e-12, atol=1e-12)
        dxl, dxu = barriers.keep_lower(dx), barriers.keep_upper(dx)
        expected = min(_fn_core._step(xl, dxl), _fn_core._step(s, -dxu))
        assert primal == pytest.approx(expected, rel=1e-12)
        assert dual == pytest.approx(barriers.dual_step(z, dz, w, dw), rel=1e-12)
        gap = float((xl + primal * dxl) @ (z + dual * dz) + (s - primal * dxu) @ (w + dual * dw))
        assert work.affine_gap(z, w, primal, dual) == pytest.approx(gap, rel=1e-12, abs=1e-12)

    x2, z2, w2 = x.copy(), z.copy(), w.copy()
    work.advance(x2, z2, w2, 0.5, 0.25)
    np.testing.assert_allclose(x2, x + 0.5 * work.dx)
    np.testing.assert_allclose(z2, z + 0.25 * work.dz)
    np.testing.assert_allclose(w2, w + 0.25 * work.dw)


def _run(formulation: Formulation, compiled: bool, monkeypatch) -> object:
    monkeypatch.setattr(_fn_core, "COMPILED_FROM", 0 if compiled else 10**12)
    return _fn_core.frisch_newton(lp_of(formulation), tol=1e-9, max_iter=200, deadline=None,
                                  backoff=0.99995)  # fmt: skip


CASES = [("lp", box_lp, s) for s in range(3)] + [("qp", separable_qp, s) for s in range(6)]
CASES += [("ridge", ridge_dual, 0)]


@pytest.mark.parametrize(("kind", "make", "seed"), CASES)
def test_compiled_and_numpy_runs_agree(kind, make, seed, monkeypatch):
    formulation = make(seed)
    plain = _run(formulation, False, monkeypatch)
    fused = _run(formulation, True, monkeypatch)
    assert plain.stop == fused.stop == "optimal"
    assert abs(plain.iterations - fused.iterations) <= 1
    scale = 1.0 + abs(plain.objective)
    assert abs(plain.objective - fused.objective) <= 1e-8 * scale
    assert abs(plain.bound - fused.bound) <= 1e-8 * scale
    np.testing.assert_allclose(fused.x, plain.x, atol=1e-5 * (1.0 + np.abs(plain.x).max()))


def test_the_back_end_reports_the_same_solution_either_way(monkeypatch):
    formulation = separable_qp(11, rows=4, cols=40)
    backend = FnMatrixBackend()
    results = []
    for threshold in (10**12, 0):
        monkeypatch.setattr(_fn_core, "COMPILED_FROM", threshold)
        monkeypatch.setattr("optframe.solvers.fn.COMPILED_FROM", threshold)
        assert backend.prepare(formulation) >= 0.0
        results.append(backend.solve(formulation, SolveOptions(tol=1e-9)))
    plain, fused = results
    assert plain.status == fused.status
    assert fused.objective == pytest.approx(plain.objective, rel=1e-9, abs=1e-9)
    np.testing.assert_allclose(fused.values.dual["rows"], plain.values.dual["rows"], atol=1e-6)
