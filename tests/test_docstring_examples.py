"""Every ``>>>`` example in the package's docstrings gives what it shows (what a reader of ``help()``
or the API docs sees is what the code does). Before: ``cohen_kappa_ci``'s example showed 0.9565
where the function (and sklearn) give 0.9524, and nothing ran it."""

from __future__ import annotations

import doctest
import importlib

import pytest
from installed import package_dir

PACKAGE = package_dir()
WITH_EXAMPLES = sorted(
    "convoscope." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
    for path in PACKAGE.rglob("*.py") if ">>> " in path.read_text(encoding="utf-8"))


def test_the_package_has_examples_to_run():
    assert len(WITH_EXAMPLES) >= 10, WITH_EXAMPLES


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_the_examples_of_a_module_give_what_they_show(name):
    module = importlib.import_module(name)
    found = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                            report=False)
    assert found.failed == 0, f"{found.failed} of {found.attempted} examples in {name} fail: python -m " \
                              f"pytest --doctest-modules {module.__file__}"
