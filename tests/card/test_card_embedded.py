"""The card of the embedded model (llama.cpp, SmolLM2-135M), really run on a handful of items:
repeats give self-consistency, pairs asked in both orders give position flips, tokens and model
time are counted, and a second card on the same store makes no model call."""

from __future__ import annotations

import pytest

import convoscope as cs
from convoscope.card import card_probes
from convoscope.pairwise import judge_pairs, position_bias_rates

from .conftest import OVERALL, study

pytestmark = pytest.mark.slow


def test_the_embedded_judges_card_from_the_store(tmp_path):
    pytest.importorskip("llama_cpp")
    items, humans = study(n_contexts=1, systems=("alpha", "beta"))
    probes = [p for p in card_probes() if p.id == "k02"]
    store = tmp_path / "card.db"
    options = dict(criteria=[OVERALL], store=store, repeats=2, probes=probes, pairs=1, n_resamples=200,
                   concurrency=2, cache_path=None)
    card = cs.judge_card(["embedded"], items, humans, **options)
    (report,) = card.judges
    assert report.rater.startswith("panel:") and report.cost.new_calls > 0
    # Judging only what is missing: the same run again asks the model nothing, and its verdicts
    # are the ones the card read.
    # (the card pools a judge's repeats by their median: two repeats that differ are not a tie)
    again = cs.judge(items, [OVERALL], "embedded", store=store, repeats=2, pool="median", cache_path=None)
    assert again.summary.model_calls == 0
    assert list(report.consistency) == cs.runs.self_consistency(again.member_verdicts)
    assert report.consistency[0].repeats == 2
    members = again.member_verdicts
    assert report.cost.calls == len(members) == 2 * len(items)
    assert report.cost.prompt_tokens == sum(v.prompt_tokens for v in members) > 0
    assert report.cost.model_seconds == pytest.approx(sum(v.latency_s for v in members))
    pairs = judge_pairs(items, OVERALL, ["embedded"], store=store, per_context=1, n_resamples=0)
    ((criterion, flips),) = report.position
    assert criterion == "overall" and [flips] == position_bias_rates(pairs.verdicts) and flips.pairs == 1
    assert report.manipulation is None or report.manipulation.pairs == 1
    assert report.agreement[0].judge.n_items == 2
    assert "Cannot tell: too few rated items on overall to say (2, fewer than 30)" in report.verdict
    second = cs.judge_card(["embedded"], items, humans, **options)
    assert second.judges[0].cost.new_calls == 0
    assert second.judges[0].agreement == report.agreement
