"""An independent check of a result's certificate, for tests of every driver.

It recomputes, from the model alone (its objective oracle and its dual bound at the returned
solution), the status that :func:`optframe.solve` must report, without the certificate module's
code path.
"""

import optframe as of


def certified_status(result: of.Result) -> of.Status:
    """OPTIMAL when the model's own gap at the solution is within the result's gap_tol."""
    model = result.source
    objective = model.objective(result.solution)
    bound = model.dual_bound(result.solution)
    assert bound <= objective + 1e-12 * max(1.0, abs(objective))
    scale = max(abs(objective), abs(bound), model.objective_floor())
    gap = max(0.0, objective - bound) / scale
    return of.Status.OPTIMAL if gap <= result.stats["gap_tol"] else of.Status.CONVERGED
