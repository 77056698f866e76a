"""assert_judged and the pytest plugin: a quality bar in any test suite, re-runs free."""

from __future__ import annotations

import pytest

from convoscope import Item
from convoscope.testing import JudgedQualityError, assert_judged

pytest_plugins = ["pytester"]
ITEMS = [Item(id="a1", question="What would improve the bus service?", language="en",
              response="More buses in the evening and real-time arrival screens at every stop."),
         Item(id="a2", question="What would improve the bus service?", language="en", response="nothing")]


@pytest.mark.slow
def test_assert_judged_passes_fails_and_reruns_without_model_calls(tmp_path):
    store = tmp_path / "judged.db"
    first = assert_judged(ITEMS, "survey:relevance", at_least=0, store=store)
    assert first.summary.model_calls == 2
    again = assert_judged(ITEMS, "survey:relevance", at_least=0, store=store)
    assert again.summary.model_calls == 0 and again.summary.resumed == 2
    with pytest.raises(JudgedQualityError, match=r"relevance=99: judged .* over 2 items") as failure:
        assert_judged(ITEMS, "survey:relevance", at_least=99, store=store)
    assert "lowest:" in str(failure.value) and "a1" in str(failure.value)


def test_assert_judged_needs_one_bar():
    with pytest.raises(ValueError, match="at_least"):
        assert_judged(ITEMS, "survey:relevance")
    with pytest.raises(ValueError, match="at_least"):
        assert_judged(ITEMS, "survey:relevance", at_least=1, label="yes", share=0.5)


@pytest.mark.slow
def test_the_plugin_fixture_keeps_the_store_across_pytest_runs(pytester):
    pytester.makepyfile(test_quality="""
        from convoscope import Item
        from convoscope.testing import assert_judged

        def test_answers_are_relevant(convoscope_store):
            items = [Item(id="x", question="Why?", response="Because the buses are late.", language="en")]
            result = assert_judged(items, "survey:relevance", at_least=0, store=convoscope_store)
            print("MODEL CALLS", result.summary.model_calls)
    """)
    first = pytester.runpytest("-s")
    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines(["*MODEL CALLS 1*"])
    second = pytester.runpytest("-s")
    second.assert_outcomes(passed=1)
    second.stdout.fnmatch_lines(["*MODEL CALLS 0*"])
