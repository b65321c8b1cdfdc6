"""The Examples sections of the public docstrings run and print what they say."""

import doctest
import importlib

import pytest

MODULES = [
    "optframe.solve",
    "optframe.threads",
    "optframe.models.lad",
    "optframe.models.weighted_svm",
    "optframe.models.knowledge_svm",
    "optframe.models.s3vm",
    "optframe.validation",
    "optframe.errors",
    "optframe.result",
    "optframe.drivers.base",
    "optframe.sklearn.quantile",
    "optframe.backend",
    "optframe.cvxpy_problem",
    "optframe.drivers.newton",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0, f"{name} has no examples"
    assert failures == 0
