"""Safe sample screening along a path of the loss parameter C (Wang, Wonka and Ye; Ogawa et al.).

A rule looks at the solution at :math:`C_k` and proves, for :math:`C_{k+1} > C_k`, which samples
sit strictly on one side of their loss kink (the sets R and L of notes/dvi.md); the reduced
problem keeps them as fixed terms. :func:`optframe.solve_path` applies a rule between consecutive
values. Rules work on any model offering a :class:`~optframe.capabilities.LinearBoxDual`.
"""

from optframe.screening.base import ScreeningRule, ScreeningStep
from optframe.screening.dvi import DVI, dvi_bounds, dvi_gram
from optframe.screening.ssnsv import ESSNSV, SSNSV, ball_halfspace_min

__all__ = [
    "DVI",
    "ESSNSV",
    "SSNSV",
    "ScreeningRule",
    "ScreeningStep",
    "ball_halfspace_min",
    "dvi_bounds",
    "dvi_gram",
]
