"""Usage is counted in one place (issue 27, obs. 4): before, ``models.UsageTotals`` (synth, per
generation) and ``RunSummary`` (runs, per verdict) each had their own counters and their own rule
for cache hits and failed calls."""

from __future__ import annotations

from convoscope.judges import Verdict
from convoscope.models import Generation, UsageTotals
from convoscope.runs import RunSummary


def _verdict(**fields: object) -> Verdict:
    base = dict(item_id="i", criterion="effort", rater="model:m", value=3, prompt_tokens=100,
                completion_tokens=5, cost=0.002)
    return Verdict(**{**base, **fields})  # type: ignore[arg-type]


def test_a_run_summary_counts_through_the_same_usage_totals_as_synth():
    summary = RunSummary(run_id="r", store="s.db")
    summary.count(_verdict(), [])
    summary.count(_verdict(cached=True), [])
    summary.count(_verdict(value=None, unscored_reason="model_error", prompt_tokens=0, completion_tokens=0,
                           cost=None), [])
    expected = UsageTotals()
    expected.add(Generation(text="3", model="m", prompt_tokens=100, completion_tokens=5, cost=0.002))
    expected.add(Generation(text="3", model="m", prompt_tokens=100, completion_tokens=5, cost=0.002,
                            cached=True))
    expected.record(failed=True)
    assert summary.usage == expected
    assert (summary.model_calls, summary.cache_hits, summary.failed_calls) == (1, 1, 1)
    assert (summary.prompt_tokens, summary.completion_tokens, summary.cost) == (100, 5, 0.002)
    flat = summary.as_dict()
    assert "usage" not in flat and flat["model_calls"] == 1 and flat["failed_calls"] == 1


def test_merging_usage_adds_every_counter():
    one, other = UsageTotals(), UsageTotals()
    one.record(prompt_tokens=3, completion_tokens=1, cost=0.5)
    other.record(cached=True)
    other.record(failed=True)
    one.merge(other)
    assert one == UsageTotals(calls=1, cache_hits=1, errors=1, prompt_tokens=3, completion_tokens=1, cost=0.5)
