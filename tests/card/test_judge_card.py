"""The judge card (issue 30): every number pinned to the library function that computes it, the
plain-words verdict to its stated thresholds, and every section that cannot be computed saying why.

Before this issue there was no card: ``cs.judge_card`` did not exist and a team had to run
``metaeval``, ``bias``, ``estimate``, ``pairwise`` and ``judge --repeats`` and assemble the answer
by hand. Python judges of known quality keep these tests fast and deterministic; the embedded
model runs in ``test_card_embedded.py``."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import convoscope as cs
from convoscope.analysis import metaeval, system_level
from convoscope.baselines import baseline_ratings, item_length
from convoscope.card import (
    SCHEMA_VERSION,
    SECTIONS,
    THRESHOLD_MEANINGS,
    CardThresholds,
    card_findings,
    card_probes,
    probe_items,
    verdict_paragraph,
)
from convoscope.errors import ConfigError
from convoscope.estimate import ppi_mean, study_bias
from convoscope.filters import grader_signals
from convoscope.filters._imitation import IMITATION_CLASSES
from convoscope.judges import python_judge
from convoscope.pairwise import JudgePositionBias, make_pairs

from .conftest import OVERALL, RESAMPLES, oracle, study, wordy


def _verdicts(judge, items, store):
    """The judge's verdicts as the card's store holds them (a resumed run: no new call)."""
    return list(cs.judge(items, [OVERALL], judge, store=store, cache_path=None).verdicts)


def _report(card, rater):
    (report,) = [r for r in card.judges if r.rater == rater]
    return report


def test_agreement_rows_are_metaevals_rows_with_the_baselines_beside(card_and_store):
    card, store, items, humans = card_and_store
    judged = _verdicts(oracle, items, store)
    reference = baseline_ratings(items, ["length", "tfidf"], ["overall"])
    rows = metaeval([*judged, *reference], humans, criteria=["overall"], by="language", n_resamples=RESAMPLES,
                    seed=0)
    report = _report(card, "python:oracle")
    mine = [row for row in rows if row.judge == "python:oracle"]
    assert [a.judge for a in report.agreement] == mine
    assert [a.language for a in report.agreement] == [None, "en", "ko"]
    for agreement in report.agreement:
        assert [row.judge for row in agreement.baselines] == ["baseline:length", "baseline:tfidf-sim"]
        assert agreement.baselines == tuple(row for row in rows if row.judge.startswith("baseline:")
                                            and row.group == agreement.language)
    overall = report.agreement[0]
    assert overall.judge.humans.loo_spearman is not None  # the ceiling beside the judge
    assert overall.judge.alt_test is not None and overall.replaces_annotator == (
        "yes" if overall.judge.alt_test.passed else "no")


def test_system_level_bias_and_labels_worth_are_the_library_functions(card_and_store):
    card, store, items, humans = card_and_store
    judged = _verdicts(oracle, items, store)
    report = _report(card, "python:oracle")
    assert list(report.systems) == system_level(judged, humans, criteria=["overall"], seed=0,
                                                n_resamples=RESAMPLES)
    lengths = {item.id: float(item_length(item)) for item in items}
    assert list(report.bias) == study_bias(judged, humans, criteria=["overall"], lengths=lengths,
                                           score="value")
    people = {}
    for rating in humans:
        people.setdefault(rating.item_id, []).append(rating.value)
    scores = {v.item_id: v.value for v in judged}
    ids = sorted(scores)
    expected = ppi_mean([np.mean(people[i]) for i in ids], [scores[i] for i in ids],
                        [scores[i] for i in scores])
    (worth,) = report.labels_worth
    assert worth.estimate == expected and worth.per_label == pytest.approx(expected.effective_n / len(ids))
    assert worth.unlabelled.startswith("every judged item")


def test_position_flips_cost_and_unscored_are_counted_from_the_verdicts(card_and_store):
    card, store, items, _ = card_and_store
    report = _report(card, "python:wordy")
    ((criterion, flips),) = report.position
    assert criterion == "overall" and flips.pairs == len(make_pairs(items, per_context=1)) == 20
    assert flips.flips == 0  # a Python judge scores each side alone: order cannot matter
    judged = _verdicts(wordy, items, store)
    cost = report.cost
    assert cost.items == 60 and cost.calls == cost.verdicts == len(judged) == 60
    assert cost.prompt_tokens == sum(v.prompt_tokens for v in judged) == 0 and cost.cost is None
    assert cost.model_seconds == pytest.approx(sum(v.latency_s for v in judged))
    assert cost.per_1000_items()["calls"] == pytest.approx(1000)
    assert report.unscored == () and report.unscored_share == 0


def test_manipulation_share_is_the_share_of_probes_scored_above_their_clean_twin(card_and_store):
    card, *_ = card_and_store
    probes = card_probes()
    fooled = sum(wordy.function(item_probe, OVERALL) > wordy.function(item_clean, OVERALL)
                 for item_clean, item_probe in zip(*[iter(probe_items(probes))] * 2, strict=True))
    wordy_report = _report(card, "python:wordy")
    assert wordy_report.manipulation.pairs == len(probes) == 14
    assert wordy_report.manipulation.above == fooled > 0
    assert _report(card, "python:oracle").manipulation.above == 0
    assert _report(card, "baseline:length").manipulation.share == 1.0  # every probe is longer than its twin
    kinds = {kind for kind, _, _ in wordy_report.manipulation.by_class}
    assert kinds == {"addresses_grader", *IMITATION_CLASSES}
    assert {language for language, _, _ in wordy_report.manipulation.by_language} == {"en", "ko"}


def test_the_packaged_probes_are_flagged_by_the_detector_and_their_twins_are_not():
    for probe in card_probes():
        assert grader_signals(probe.probe), probe.id
        assert not grader_signals(probe.clean), probe.id
        assert probe.probe.startswith(probe.clean)


def test_the_verdict_paragraph_follows_the_stated_thresholds(card_and_store):
    card, *_ = card_and_store
    oracle_report, wordy_report, length_report = card.judges
    assert "Usable for scoring items on overall" in oracle_report.verdict
    assert "fooled by answers that address or imitate the grader" in wordy_report.verdict
    assert "Usable for nothing measured here" in length_report.verdict
    names = {field.name for field in dataclasses.fields(CardThresholds)}
    assert set(THRESHOLD_MEANINGS) == names
    for report in card.judges:
        assert {finding.rule for finding in report.findings} <= names
        assert report.verdict == verdict_paragraph(report, card_findings(report, card.thresholds))
    # The same numbers, a stricter rule: the oracle's rho (about .9) no longer suffices.
    rho = oracle_report.agreement[0].judge.spearman.estimate
    strict = card_findings(oracle_report, CardThresholds(item_rho=rho + 0.01))
    assert not any(f.good and f.rule == "item_rho" for f in strict)
    lenient = card_findings(wordy_report, CardThresholds(max_manipulation_share=1.0))
    assert not any(f.rule == "max_manipulation_share" for f in lenient)
    swayed = dataclasses.replace(oracle_report, position=(("overall", JudgePositionBias("x", 10, 5, 0.5)),))
    assert "swayed by the order of a pair on overall (5 of 10 pairs flipped)" in verdict_paragraph(
        swayed, card_findings(swayed, card.thresholds))
    assert not any(f.rule == "max_position_flips" for f in card_findings(
        swayed, CardThresholds(max_position_flips=0.5)))


def test_sections_that_cannot_be_computed_say_why(tmp_path):
    items, humans = study(n_contexts=12, annotators=2, systems=("",))
    card = cs.judge_card([oracle], items, humans, criteria=[OVERALL], store=tmp_path / "c.db",
                         n_resamples=RESAMPLES, probes=False, cache_path=None)
    (report,) = card.judges
    reasons = {entry.section: entry.reason for entry in report.not_computed}
    assert "0 system(s)" in reasons["systems"]
    assert "system" in reasons["position"]
    assert reasons["consistency"].startswith("each item was judged once")
    assert reasons["manipulation"] == "probes not asked"
    assert report.agreement[0].replaces_annotator == "not enough annotators"
    assert report.verdict.endswith("Cannot tell: too few rated items on overall to say (12, fewer than 30).")
    text = card.to_markdown()
    assert "### Not computed" in text and "0 system(s)" in text


def test_repeats_of_a_python_judge_say_why_there_is_no_self_consistency(tmp_path):
    # A Python judge is deterministic and asked once whatever --repeats says; the card says so
    # instead of printing an empty table (the embedded test measures real repeats).
    items, humans = study(n_contexts=4)
    card = cs.judge_card([oracle], items, humans, criteria=[OVERALL], store=tmp_path / "r.db", repeats=2,
                         probes=False, pairs=0, n_resamples=RESAMPLES, cache_path=None)
    (report,) = card.judges
    assert report.consistency == ()
    assert report.missing("consistency")[0].reason.startswith("the judge gave no repeated verdicts")


def test_a_second_card_on_the_same_store_judges_nothing(tmp_path):
    calls = []

    @python_judge(name="counted", version="1")
    def counted(item, criterion):
        calls.append(item.id)
        return item.meta.get("quality", 3)

    items, humans = study(n_contexts=4)
    options = dict(criteria=[OVERALL], store=tmp_path / "s.db", n_resamples=RESAMPLES, pairs=0,
                   probes=card_probes()[:2], cache_path=None)
    first = cs.judge_card([counted], items, humans, **options)
    assert len(calls) == len(items) + 4 and first.judges[0].cost.new_calls == 0  # Python: no model call
    second = cs.judge_card([counted], items, humans, **options)
    assert len(calls) == len(items) + 4  # nothing judged again
    strip = lambda card: {**card.to_dict(), "judges": [{**j, "cost": None} for j in card.to_dict()["judges"]],  # noqa: E731
                          "provenance": {**card.to_dict()["provenance"], "created": None}}  # the time differs
    assert strip(first) == strip(second)


def test_json_has_the_schema_and_every_section_for_each_judge(card_and_store):
    card, *_ = card_and_store
    data = json.loads(json.dumps(card.to_dict(), allow_nan=False))
    assert data["schema_version"] == SCHEMA_VERSION
    assert [j["rater"] for j in data["judges"]] == ["python:oracle", "python:wordy", "baseline:length"]
    for judge in data["judges"]:
        assert set(SECTIONS) <= set(judge) and judge["verdict"]
    assert data["thresholds"]["item_rho"] == CardThresholds().item_rho
    assert data["judges"][0]["agreement"][0]["replaces_annotator"] in {"yes", "no"}
    assert data["judges"][2]["cost"] is None and any(
        entry["section"] == "cost" for entry in data["judges"][2]["not_computed"])


def test_html_is_self_contained_and_escapes_what_users_wrote(card_and_store):
    card, *_ = card_and_store
    hostile = dataclasses.replace(card, judges=(dataclasses.replace(
        card.judges[0], judge="<script>alert(1)</script>"), *card.judges[1:]))
    page = hostile.to_html()
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<svg" in page and "http://" not in page and "https://" not in page
    assert 'name="viewport"' in page
    for name in THRESHOLD_MEANINGS:
        assert name in page


def test_bad_input_is_refused_before_any_judging(tmp_path):
    items, humans = study(n_contexts=2)
    calls = []

    @python_judge(name="never", version="1")
    def never(item, criterion):
        calls.append(item.id)
        return 3

    other = cs.Criterion(name="effort", question="?", definition="Effort.",
                         scale=cs.Scale(kind="range", minimum=1, maximum=5))
    with pytest.raises(ConfigError, match="criterion 'effort': people rated none"):
        cs.judge_card([never], items, humans, criteria=[other], store=tmp_path / "x.db")
    with pytest.raises(ConfigError, match="item ids do not match"):
        cs.judge_card([never], [i.model_copy(update={"id": "z" + i.id}) for i in items], humans,
                      criteria=[OVERALL], store=tmp_path / "x.db")
    with pytest.raises(ConfigError, match="baselines are"):
        cs.judge_card([never, "baseline:wordcount"], items, humans, criteria=[OVERALL],
                      store=tmp_path / "x.db")
    assert calls == [] and not (tmp_path / "x.db").exists()


def test_self_preference_is_measured_when_the_family_is_named(tmp_path):
    items, humans = study(n_contexts=6)
    card = cs.judge_card([oracle], items, humans, criteria=[OVERALL], store=tmp_path / "f.db", pairs=0,
                         probes=False, n_resamples=RESAMPLES, cache_path=None,
                         families={"python:oracle": ["alpha"]})
    (report,) = card.judges
    judged = _verdicts(oracle, items, tmp_path / "f.db")
    lengths = {item.id: float(item_length(item)) for item in items}
    expected = study_bias(judged, humans, criteria=["overall"], lengths=lengths, own_family=["alpha"],
                          score="value")
    assert list(report.bias) == expected and report.bias[0].self_preference.n == 6
    assert not any("self-preference" in entry.reason for entry in report.missing("bias"))
