"""Drivers: algorithms over models.

``Direct`` is the reference every other driver is tested against.
"""

from optframe.drivers.admm import ADMM, ADMMThenIPM
from optframe.drivers.aid import AggregateDisaggregate
from optframe.drivers.base import Driver, RunContext
from optframe.drivers.cd import CoordinateDescent
from optframe.drivers.cvm import CoreVectorMachine
from optframe.drivers.dcd import DCD
from optframe.drivers.direct import Direct
from optframe.drivers.frank_wolfe import FW, MFW, PFW, FrankWolfe
from optframe.drivers.newton import PrimalNewton
from optframe.drivers.smo import SMO

__all__ = [
    "ADMM",
    "DCD",
    "FW",
    "MFW",
    "PFW",
    "SMO",
    "ADMMThenIPM",
    "AggregateDisaggregate",
    "CoordinateDescent",
    "CoreVectorMachine",
    "Direct",
    "Driver",
    "FrankWolfe",
    "PrimalNewton",
    "RunContext",
]
