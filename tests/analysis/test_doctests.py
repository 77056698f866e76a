"""The docstring examples of the public statistics run (issue 12)."""

import doctest
import importlib

import pytest

MODULES = ["_agreement", "_bootstrap", "_classification", "_compare", "_correlation", "_detection",
           "_export", "_krippendorff", "_labels", "_pooling", "_raters", "_significance", "_summary",
           "_system"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(f"convoscope.analysis.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_the_statistics_carry_examples():
    examples = sum(doctest.testmod(importlib.import_module(f"convoscope.analysis.{name}")).attempted
                   for name in MODULES)
    assert examples >= 30
