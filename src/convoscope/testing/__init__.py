"""Judged quality as a test: ``assert_judged(items, "overall", at_least=3.5)`` in any pytest suite.

The run goes through the usual store and response cache, so a second test run with unchanged
items and judge makes no model call. Under pytest the ``convoscope_store`` fixture (registered
by the plugin in :mod:`convoscope.testing._plugin`) keeps that store in pytest's cache folder.
"""

from convoscope.testing._assert import JudgedQualityError, assert_judged

__all__ = ["JudgedQualityError", "assert_judged"]
