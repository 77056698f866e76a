"""Judged quality as a test: ``assert_judged(items, "overall", at_least=3.5)`` in any pytest suite.

The run goes through the usual store and response cache, so a second test run with unchanged
items and judge makes no model call. Under pytest the ``convoscope_store`` fixture (registered
by the plugin in :mod:`convoscope.testing._plugin`) keeps that store in pytest's cache folder.

``check_judge(my_judge)`` checks a plug-in judge against the judge contract in one call.
"""

from convoscope.testing._assert import JudgedQualityError, assert_judged
from convoscope.testing._check import JudgeContractError, check_judge

__all__ = ["JudgeContractError", "JudgedQualityError", "assert_judged", "check_judge"]
