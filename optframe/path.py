r"""Regularization paths: :func:`solve_path`, with optional safe sample screening.

Along increasing values :math:`C_1 < \dots < C_K` of a model's loss parameter, a screening rule
(:mod:`optframe.screening`) proves from the solution at :math:`C_k` which samples sit strictly on
one side of their loss kink at :math:`C_{k+1}`. The reduced problem keeps them as fixed terms
(never drops them), the inner driver solves the rest warm-started from the previous solution, and
the solution is lifted back to the full model and certified there by its duality gap.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from optframe.backend import SolveOptions
from optframe.capabilities import LinearBoxDual
from optframe.certificate import certify
from optframe.drivers.base import Driver, RunContext, driver_result
from optframe.errors import ModelError
from optframe.model import Model
from optframe.result import Result, Status, Timings
from optframe.screening.base import ScreeningRule, ScreeningStep
from optframe.threads import thread_limits

# Default relative duality gap certified at every value (the inner solves aim 10 times lower).
DEFAULT_TOL = 1e-6


@dataclass(frozen=True)
class PathTimings:
    """Wall seconds of a path: initial full solves, screening, the other solves, and in total."""

    init: float = 0.0
    screening: float = 0.0
    solve: float = 0.0
    total: float = 0.0


@dataclass(frozen=True, eq=False)
class PathResult:
    r"""The outcome of :func:`solve_path`.

    Attributes
    ----------
    param : str
        The parameter that varies.
    values : ndarray (K,)
        Its values, in the order solved.
    results : tuple of Result
        One result per value, on the full model (objective, bound and status of the lifted
        solution; ``stats`` holds the reduced solve's figures).
    R, L : tuple of int arrays
        Per value, the samples the rule fixed at the lower bound (R: :math:`\alpha_i = l_i`) and
        at the upper bound (L); empty without screening and at the first value.
    rejection : ndarray (K,)
        :math:`(|R| + |L|) / n` per value; NaN where no rule ran (the first value, or no rule).
    screening_seconds, solve_seconds : ndarray (K,)
        Per value: the rule's time, and the solve's (initial solves included at their values).
    timings : PathTimings
        Totals; ``timings.init`` is the paper's "Init." (the full solve at the first value, and
        for SSNSV/ESSNSV also at the last).
    rule, driver : str
        The screening rule (``"none"``) and the inner driver.
    fallbacks : int
        Values where the lifted solution failed its full-model certificate and the full problem
        was solved again (0 when the rule was safe and the inner solves accurate).
    n_samples : int
        Number of samples of the model.
    """

    param: str
    values: NDArray[np.float64]
    results: tuple[Result, ...]
    R: tuple[NDArray[np.int64], ...]
    L: tuple[NDArray[np.int64], ...]
    rejection: NDArray[np.float64]
    screening_seconds: NDArray[np.float64]
    solve_seconds: NDArray[np.float64]
    timings: PathTimings
    rule: str = "none"
    driver: str = ""
    fallbacks: int = 0
    n_samples: int = 0

    @property
    def objectives(self) -> NDArray[np.float64]:
        """The full model's objective at each value."""
        return np.array([r.objective for r in self.results])

    @property
    def rejection_R(self) -> NDArray[np.float64]:
        """:math:`|R|/n` per value (NaN where no rule ran)."""
        share = np.array([r.size for r in self.R], dtype=np.float64) / max(self.n_samples, 1)
        return np.where(np.isnan(self.rejection), np.nan, share)

    @property
    def rejection_L(self) -> NDArray[np.float64]:
        """:math:`|L|/n` per value (NaN where no rule ran)."""
        share = np.array([s.size for s in self.L], dtype=np.float64) / max(self.n_samples, 1)
        return np.where(np.isnan(self.rejection), np.nan, share)


def _parameters(model: Model) -> list[str]:
    return [f.name for f in dataclasses.fields(model) if f.init and not f.name.startswith("_")]


def _check_values(values: ArrayLike, param: str, screening: ScreeningRule | None) -> NDArray:
    try:
        array = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"solve_path: values of {param!r} must be numbers: {values!r}") from None
    if array.size == 0 or not np.all(np.isfinite(array)):
        raise ModelError(f"solve_path: values of {param!r} must be finite and non-empty")
    if screening is not None:
        if np.any(array <= 0):
            k = int(np.flatnonzero(array <= 0)[0])
            raise ModelError(
                f"solve_path: screening needs positive values of {param!r}; values[{k}] = "
                f"{array[k]:g}"
            )
        steps = np.diff(array)
        if np.any(steps <= 0):
            k = int(np.flatnonzero(steps <= 0)[0]) + 1
            raise ModelError(
                f"solve_path: screening rule {screening.name!r} is proved for increasing values "
                f"(C_k+1 > C_k), but values[{k}] = {array[k]:g} <= values[{k - 1}] = "
                f"{array[k - 1]:g}; sort the values ascending and drop duplicates"
            )
    return array


def _resolve_driver(driver: Driver | str) -> Driver:
    from optframe.solve import _driver

    return _driver(driver)


def _started(driver: Driver, alpha: NDArray[np.float64] | None) -> Driver:
    names = {f.name for f in dataclasses.fields(driver)} if dataclasses.is_dataclass(driver) else {}
    if alpha is None or "warm_start" not in names:
        return driver
    return dataclasses.replace(driver, warm_start=alpha)  # type: ignore[type-var]


def _dual_point(result: Result, key: str) -> NDArray[np.float64] | None:
    if key not in result.solution:
        return None
    return np.asarray(result.solution[key], dtype=np.float64).reshape(-1)


def _dual_value(dual: LinearBoxDual, alpha: NDArray, solution: Mapping) -> float:
    r""":math:`D(\alpha)` from the solution's :math:`w = Z^\top\alpha` (no second pass over Z)."""
    w = np.asarray(solution[dual.primal_key], dtype=np.float64).reshape(-1)
    return float(dual.target @ alpha) - 0.5 * float(w @ w)


def _row_norms(Z: Any) -> NDArray[np.float64]:
    if sp.issparse(Z):
        squares = np.asarray(Z.multiply(Z).sum(axis=1), dtype=np.float64).reshape(-1)
    else:
        Z = np.asarray(Z, dtype=np.float64)
        squares = np.einsum("ij,ij->i", Z, Z)
    return np.sqrt(squares)


@dataclass
class _State:
    """The certified solution at the last value: w, alpha, and the distance bound delta."""

    w: NDArray[np.float64]
    alpha: NDArray[np.float64] | None
    delta: float


def _certify(dual: LinearBoxDual, objective: float, solution: Mapping, alpha: Any) -> tuple:
    """``(gap, delta)``: the full-model gap P - D(alpha) and the bound on ||w - w*||."""
    if alpha is None or not math.isfinite(objective):
        return math.inf, math.inf
    gap = objective - dual.dual_value(alpha)
    # Round-off in P and D is far below this slack; it keeps delta > 0 at an exact solution.
    slack = 1e-12 * max(1.0, abs(objective))
    return gap, math.sqrt(2.0 * (max(gap, 0.0) + slack))


def solve_path(
    model: Model,
    param: str,
    values: ArrayLike | Sequence[float],
    screening: ScreeningRule | None = None,
    driver: Driver | str = "dcd",
    backend: str = "auto",
    *,
    warm_start: bool = True,
    tol: float | None = None,
    max_iter: int | None = None,
    time_limit: float | None = None,
    threads: int | None = None,
    verbose: bool = False,
    solver_options: Mapping[str, Any] | None = None,
) -> PathResult:
    r"""Solve ``model`` at every value of ``param``, optionally with safe sample screening.

    Parameters
    ----------
    model : Model
        The model; its other parameters stay as they are.
    param : str
        The parameter to vary (for screening: the model's loss parameter, ``"C"``).
    values : array-like
        The values, solved in the given order (increasing and positive with a rule).
    screening : ScreeningRule, optional
        ``DVI()``, ``SSNSV()`` or ``ESSNSV()`` (:mod:`optframe.screening`); ``None`` solves the
        full problem at every value.
    driver : Driver or str
        The inner driver (default ``"dcd"``; ``"direct"`` solves the reduced QP with
        ``backend``). The same driver, options and warm starts serve the screened and the
        unscreened path.
    backend : str
        The back-end of a Direct inner driver.
    warm_start : bool
        Start each solve from the previous dual point scaled by :math:`C_{k+1}/C_k` (clipped to
        the box), for drivers that take ``warm_start`` (DCD).
    tol : float, optional
        Relative duality gap certified on the full model at each value (default 1e-6); the inner
        solves are asked for ``tol / 10``.
    max_iter, time_limit, threads, verbose, solver_options
        Passed to every inner solve.

    Returns
    -------
    PathResult
        One full-model :class:`~optframe.result.Result` per value, the screened sets, the
        rejection ratios and the timings.

    Raises
    ------
    ModelError
        If ``param`` is not a parameter of the model, the values are not finite, or (with a rule)
        not positive and strictly increasing, or ``param`` is not the loss parameter the rule
        screens along.
    IncompatibleDriver
        If the rule needs structure the model does not offer (a kernel, or an intercept: the
        rules are proved for the no-intercept dual, whose feasible set is a box), or the inner
        driver cannot solve the model.

    Notes
    -----
    At each value after the first, the rule uses the certified solution at the previous one:
    its distance to the exact solution is bounded by :math:`\sqrt{2\,\mathrm{gap}}` and the rule's
    tests are widened by it, so screening is safe at any tolerance. A lifted solution whose
    full-model gap exceeds ``tol`` is re-solved on the full problem (``PathResult.fallbacks``).
    """
    start = time.perf_counter()
    if not isinstance(model, Model):
        raise ModelError(f"solve_path() takes an optframe model; got {type(model).__name__}")
    if not isinstance(param, str) or param not in _parameters(model):
        raise ModelError(
            f"{model.name} has no parameter {param!r}; its parameters are {_parameters(model)}"
        )
    grid = _check_values(values, param, screening)
    if screening is not None:
        screening.check(model)
        loss_parameter = model.structure(LinearBoxDual).parameter
        if param != loss_parameter:
            raise ModelError(
                f"screening rule {screening.name!r} screens along {model.name}'s loss parameter "
                f"{loss_parameter!r}, not {param!r}"
            )
    inner = _resolve_driver(driver)
    certify_tol = DEFAULT_TOL if tol is None else float(tol)
    options = SolveOptions(
        tol=certify_tol / 10.0,
        time_limit=time_limit,
        threads=threads,
        max_iter=max_iter,
        verbose=verbose,
        solver_options=dict(solver_options or {}),
    )
    context = RunContext(backend=backend, options=options)
    with thread_limits(options.threads):  # every inner solve and the certificates
        # The box at the first value: the rest of the path scales it by grid[k] / grid[0].
        first = dataclasses.replace(model, **{param: float(grid[0])})  # type: ignore[type-var]
        dual = first.structure(LinearBoxDual) if first.offers_structure(LinearBoxDual) else None
        K = grid.size
        n = model.data.n_samples  # type: ignore[attr-defined]
        empty = np.zeros(0, dtype=np.int64)
        R: list[NDArray[np.int64]] = [empty] * K
        L: list[NDArray[np.int64]] = [empty] * K
        rejection = np.full(K, np.nan)
        screen_s = np.zeros(K)
        solve_s = np.zeros(K)
        results: list[Result | None] = [None] * K
        init = 0.0
        fallbacks = 0

        def at(k: int) -> Model:
            return dataclasses.replace(model, **{param: float(grid[k])})  # type: ignore[type-var]

        def scaled(alpha: NDArray | None, k: int) -> NDArray | None:
            if not warm_start or alpha is None or k == 0:
                return None
            return alpha * (grid[k] / grid[k - 1])

        def full_solve(k: int, alpha: NDArray | None) -> Result:
            m_k = at(k)
            chosen = _started(inner, alpha)
            chosen.check(m_k)
            tick = time.perf_counter()
            result = chosen.run(m_k, context)
            solve_s[k] += time.perf_counter() - tick
            return result

        if screening is None or dual is None:
            alpha: NDArray | None = None
            for k in range(K):
                results[k] = result = full_solve(k, scaled(alpha, k))
                alpha = _dual_point(result, dual.dual_key) if dual is not None else None
            solve_total = float(solve_s.sum())
        else:
            screening.check_dual(dual.lower, dual.upper)
            row_norms = _row_norms(dual.Z)
            results[0] = first = full_solve(0, None)
            init += solve_s[0]
            reference = z_reference = None
            if screening.needs_reference and K > 1:
                results[K - 1] = last = full_solve(K - 1, None)
                init += solve_s[K - 1]
                reference = np.asarray(last.solution[dual.primal_key], dtype=np.float64)
                z_reference = np.asarray(dual.Z @ reference, dtype=np.float64).reshape(-1)
            alpha = _dual_point(first, dual.dual_key)
            _, delta = _certify(dual, first.objective, first.solution, alpha)
            state = _State(
                np.asarray(first.solution[dual.primal_key], dtype=np.float64), alpha, delta
            )
            for k in range(1, K):
                tick = time.perf_counter()
                step = ScreeningStep(
                    Z=dual.Z,
                    target=dual.target,
                    row_norms=row_norms,
                    w=state.w,
                    delta=state.delta,
                    c_prev=float(grid[k - 1]),
                    c_next=float(grid[k]),
                    reference=reference,
                    Z_reference=z_reference,
                )
                at_lower, at_upper = screening.screen(step)
                screen_s[k] = time.perf_counter() - tick
                R[k], L[k] = np.flatnonzero(at_lower), np.flatnonzero(at_upper)
                rejection[k] = (R[k].size + L[k].size) / max(n, 1)
                if results[k] is None:
                    results[k] = _reduced_solve(
                        at(k), dual, grid, k, at_lower, at_upper, inner, context,
                        scaled(state.alpha, k), certify_tol, solve_s, screening.name,
                    )  # fmt: skip
                    if results[k].stats.get("fallback"):
                        fallbacks += 1
                result = results[k]
                assert result is not None
                alpha = _dual_point(result, dual.dual_key)
                known = result.stats.get("gap") if "rule" in result.stats else None
                if known is not None and math.isfinite(known):
                    slack = 1e-12 * max(1.0, abs(result.objective))
                    delta = math.sqrt(2.0 * (max(known, 0.0) + slack))
                else:
                    _, delta = _certify(dual, result.objective, result.solution, alpha)
                state = _State(
                    np.asarray(result.solution[dual.primal_key], dtype=np.float64), alpha, delta
                )
            solve_total = float(solve_s.sum()) - init
        end = time.perf_counter()
        return PathResult(
            param=param,
            values=grid,
            results=tuple(certify(r.source, r, certify_tol) for r in results if r is not None),
            R=tuple(R),
            L=tuple(L),
            rejection=rejection,
            screening_seconds=screen_s,
            solve_seconds=solve_s,
            timings=PathTimings(
                init=init, screening=float(screen_s.sum()), solve=solve_total, total=end - start
            ),
            rule="none" if screening is None else screening.name,
            driver=inner.name,
            fallbacks=fallbacks,
            n_samples=n,
        )


def _reduced_solve(
    m_k: Model,
    dual: LinearBoxDual,
    grid: NDArray,
    k: int,
    at_lower: NDArray[np.bool_],
    at_upper: NDArray[np.bool_],
    inner: Driver,
    context: RunContext,
    start_alpha: NDArray | None,
    certify_tol: float,
    solve_s: NDArray,
    rule: str,
) -> Result:
    """Solve the reduced problem at ``grid[k]``, lift it, certify it on the full model."""
    scale = grid[k] / grid[0]
    lower, upper = dual.lower * scale, dual.upper * scale
    fixed = at_lower | at_upper
    tick = time.perf_counter()
    dual_k = m_k.structure(LinearBoxDual)
    reduced = dual_k.with_fixed(fixed, np.where(at_lower, lower, upper))
    chosen = _started(inner, start_alpha)
    chosen.check(reduced)
    inner_result = chosen.run(reduced, context)
    alpha = _dual_point(inner_result, dual.dual_key)
    if alpha is None:
        raise ModelError(f"the reduced problem's solution has no {dual.dual_key!r} to lift back")
    solution = dual_k.recover(alpha)
    objective = m_k.objective(solution)
    gap = objective - _dual_value(dual, alpha, solution)
    certified = gap <= certify_tol * max(1.0, abs(objective))
    fallback = not certified and inner_result.status.is_success
    if fallback:
        full = _started(inner, alpha)
        full.check(m_k)
        redo = full.run(m_k, context)
        alpha = _dual_point(redo, dual.dual_key)
        solution = dict(redo.solution)
        objective = redo.objective
        gap = objective - dual.dual_value(alpha) if alpha is not None else math.inf
        certified = gap <= certify_tol * max(1.0, abs(objective))
    seconds = time.perf_counter() - tick
    solve_s[k] += seconds
    if certified:
        status = Status.OPTIMAL
    else:
        status = inner_result.status if not inner_result.status.is_success else Status.CONVERGED
    return driver_result(
        f"{inner_result.driver}+{rule}",
        m_k,
        status,
        solution,
        objective=objective,
        bound=objective - gap if math.isfinite(gap) else None,
        iterations=inner_result.iterations,
        history=inner_result.history,
        timings=Timings(solve=seconds, total=seconds),
        stats={
            "rule": rule,
            "fixed_lower": int(at_lower.sum()),
            "fixed_upper": int(at_upper.sum()),
            "free": int((~fixed).sum()),
            "reduced_status": inner_result.status.value,
            "reduced_objective": inner_result.objective,
            "gap": gap,
            "fallback": fallback,
        },
        backend=inner_result.backend,
    )
