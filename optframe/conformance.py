r"""Conformance: one model through every applicable (driver, back-end, layer, form), checked.

:func:`check_conformance` solves a model with the reference (:class:`~optframe.drivers.Direct`
on the default back-end), then with every pair of :func:`optframe.compare.applicable_pairs`:
Direct with every registered back-end, layer and form the model offers, and every other driver
whose structures (:mod:`optframe.capabilities`) the model offers. Each pair is judged against the
reference by its objective and its certificate; :func:`assert_conforms` raises with the table of
the pairs that failed.

The rules (``f`` a pair's objective, ``L`` its bound, :math:`f_\text{ref}` and
:math:`L_\text{ref}` the reference's, ``s`` the gap scale of the reference):

1. the reference is ``OPTIMAL`` (its own certificate closes);
2. no pair ends in ``ERROR``, ``INFEASIBLE`` or ``UNBOUNDED``, and none raises;
3. every bound is a bound: :math:`L \le f_\text{ref} + \text{slack}` (the optimum is at most
   :math:`f_\text{ref}`);
4. ``OPTIMAL`` is true: :math:`(f - L_\text{ref}) / s \le` the pair's ``gap_tol`` + slack;
5. ``CONVERGED`` and limits are near: :math:`\lvert f - f_\text{ref}\rvert / s \le`
   ``converged_rtol``.

The slack, ``1e-9`` relative, absorbs the rounding of two independent certificates.

Every model registered in :mod:`optframe.registry` lists small instances in
:meth:`Model.examples() <optframe.model.Model.examples>`; the test suite runs
:func:`assert_conforms` on each. A model of your own package, registered through the
``optframe.plugins`` entry point, is covered the same way in your tests:

.. code-block:: python

    import pytest
    from optframe.conformance import assert_conforms
    from mypackage import MyModel

    @pytest.mark.parametrize("model", MyModel.examples())
    def test_my_model_conforms(model):
        assert_conforms(model)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from optframe.certificate import gap_of
from optframe.compare import Pair, applicable_pairs
from optframe.errors import OptframeError
from optframe.model import Model
from optframe.result import Result, Status
from optframe.solve import solve

#: Relative slack for comparing two independent certificates.
SLACK = 1e-9
#: Default relative distance of a CONVERGED (or limited) objective from the reference: the
#: certificate did not prove these, so the check is for gross errors (a wrong problem, a sign),
#: not for a first-order solver's accuracy.
CONVERGED_RTOL = 1e-2


@dataclass(frozen=True)
class ConformanceCheck:
    r"""The verdict on one (driver, back-end) pair.

    Attributes
    ----------
    label : str
        The driver (with Direct's form) and the back-end, e.g. ``"direct:dual cvxpy:osqp"``.
    status : str
        The pair's status, or ``"raised"``.
    objective, bound : float
        Its objective and certified bound (nan when absent).
    distance : float
        :math:`(f - f_\text{ref}) / s`, signed (nan without a solution).
    problems : tuple of str
        What broke the rules; empty when the pair conforms.
    """

    label: str
    status: str
    objective: float
    bound: float
    distance: float
    problems: tuple[str, ...]

    @property
    def conforms(self) -> bool:
        """Whether the pair broke no rule."""
        return not self.problems


def check_conformance(
    model: Model,
    *,
    converged_rtol: float = CONVERGED_RTOL,
    pairs: Iterable[Pair] | None = None,
    **options: Any,
) -> tuple[Result, list[ConformanceCheck]]:
    """Solve ``model`` with the reference and every applicable pair, and judge each.

    Parameters
    ----------
    model : Model
        The model, on data small enough for every back-end (tens of samples).
    converged_rtol : float
        How far a CONVERGED or limited objective may be from the reference, relative.
    pairs : iterable of Pair, optional
        The pairs to check (default: :func:`optframe.compare.applicable_pairs`).
    **options
        Passed to :func:`optframe.solve` for every solve (``time_limit``, ``gap_tol``, ...).

    Returns
    -------
    reference : Result
        The reference solve.
    checks : list of ConformanceCheck
        One per pair, the reference's own first (label ``"reference"``).
    """
    reference = solve(model, **options)
    scale = model.gap_scale(reference.objective, reference.bound)
    checks = [_reference_check(reference)]
    for pair in applicable_pairs(model) if pairs is None else pairs:
        label = f"{pair.label} {pair.backend}"
        try:
            result = solve(model, driver=pair.driver, backend=pair.backend, **options)
        except OptframeError as exc:
            problem = f"raised {type(exc).__name__}: {exc}"
            checks.append(
                ConformanceCheck(label, "raised", math.nan, math.nan, math.nan, (problem,))
            )
            continue
        checks.append(_judge(label, result, reference, scale, converged_rtol))
    return reference, checks


def assert_conforms(model: Model, **kwargs: Any) -> list[ConformanceCheck]:
    """Run :func:`check_conformance` and raise ``AssertionError`` listing every failed pair.

    Returns the checks when every pair conforms.
    """
    _, checks = check_conformance(model, **kwargs)
    failed = [check for check in checks if not check.conforms]
    if failed:
        rows = "\n".join(f"  {c.label}: {c.status}; {'; '.join(c.problems)}" for c in failed)
        raise AssertionError(f"{model.name}: {len(failed)} of {len(checks)} pairs fail\n{rows}")
    return checks


def _reference_check(reference: Result) -> ConformanceCheck:
    problems = ()
    if reference.status is not Status.OPTIMAL:
        problems = (
            f"the reference is {reference.status.value}, not optimal (gap {reference.gap:.3g})",
        )
    bound = math.nan if reference.bound is None else reference.bound
    return ConformanceCheck(
        "reference", reference.status.value, reference.objective, bound, 0.0, problems
    )


def _judge(
    label: str, result: Result, reference: Result, scale: float, converged_rtol: float
) -> ConformanceCheck:
    status = result.status
    problems: list[str] = []
    if status in (Status.ERROR, Status.INFEASIBLE, Status.UNBOUNDED):
        why = result.stats.get("error") or result.stats.get("message") or ""
        problems.append(f"{status.value} on a model with a finite optimum {why}".strip())
    if "bound_above_objective" in result.stats:  # a bound above its own objective, withheld
        problems.append(str(result.stats["certificate_error"]))
    bound = math.nan if result.bound is None else float(result.bound)
    has_solution = result.has_solution and math.isfinite(result.objective)
    objective = float(result.objective) if has_solution else math.nan
    if math.isfinite(bound) and bound > reference.objective + SLACK * scale:
        over = (bound - reference.objective) / scale
        problems.append(f"bound {bound:.10g} above the reference objective by {over:.3g}")
    distance = (objective - reference.objective) / scale if has_solution else math.nan
    if status is Status.OPTIMAL:
        gap_tol = float(result.stats.get("gap_tol", 0.0))
        true_gap = gap_of(objective, reference.bound, scale)
        if true_gap > gap_tol + SLACK:
            problems.append(f"optimal, but {true_gap:.3g} above the reference bound > {gap_tol:g}")
    elif status.is_success or status.is_limit:
        if not has_solution:
            problems.append("no solution")
        elif abs(distance) > converged_rtol:
            problems.append(f"objective {distance:+.3g} from the reference (> {converged_rtol:g})")
    return ConformanceCheck(label, status.value, objective, bound, distance, tuple(problems))


__all__ = ["ConformanceCheck", "assert_conforms", "check_conformance"]
