"""Driver options with a fixed set of values are enums that take their documented strings."""

import dataclasses

import pytest

import optframe as of
from optframe.data import make_toy
from optframe.drivers import ADMM, MFW, SMO, FrankWolfe
from optframe.drivers.admm import Order, Stop
from optframe.drivers.frank_wolfe import Candidates, Radius, Variant
from optframe.drivers.smo import Stopping, WorkingSet
from optframe.errors import ModelError
from optframe.kernels import RBF
from optframe.models import L2SVM

# (driver class, option, its enum, the documented strings)
CHOICES = [
    (FrankWolfe, "variant", Variant, ["fw", "mfw", "pfw"]),
    (FrankWolfe, "candidates", Candidates, ["union", "sample"]),
    (FrankWolfe, "radius", Radius, ["maintained", "recursion", "paper"]),
    (SMO, "working_set", WorkingSet, ["second_order", "mvp"]),
    (SMO, "stopping", Stopping, ["complete", "paper"]),
    (ADMM, "order", Order, ["gauss-seidel", "printed"]),
    (ADMM, "stop", Stop, ["residual", "paper"]),
]
IDS = [f"{cls.__name__}.{option}" for cls, option, _, _ in CHOICES]


@pytest.mark.parametrize(("cls", "option", "kind", "values"), CHOICES, ids=IDS)
def test_documented_strings_become_members(cls, option, kind, values):
    assert [member.value for member in kind] == values
    for value in values:
        for given in (value, value.upper(), kind(value)):
            driver = cls(**{option: given})
            stored = getattr(driver, option)
            assert type(stored) is kind
            assert stored == value  # a member equals its string
            assert f"{option}={value!r}" in repr(driver)  # the repr reads as written


@pytest.mark.parametrize(("cls", "option", "kind", "values"), CHOICES, ids=IDS)
@pytest.mark.parametrize("bad", ["nonsense", 3, None])
def test_a_bad_value_names_the_valid_ones(cls, option, kind, values, bad):
    valid = ", ".join(repr(v) for v in values)
    with pytest.raises(ModelError, match=f"{option} must be one of {valid}; got {bad!r}"):
        cls(**{option: bad})


def test_members_survive_replace_and_stats_hold_strings():
    driver = dataclasses.replace(FrankWolfe(variant="PFW"), seed=1)
    assert driver.variant is Variant.PFW
    model = L2SVM(make_toy(2, 1, n_per_class=20), C=1.0, kernel=RBF(gamma=0.5))
    stats = of.solve(model, driver=MFW(sample_size=None)).stats
    assert type(stats["variant"]) is str
    assert stats["variant"] == "mfw"
