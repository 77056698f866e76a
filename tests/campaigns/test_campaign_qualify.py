"""The qualification decision against each reference (issue 37, observation 1), on simulated
workers whose right answer is known: careless, constant, random, adversarial and good."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from campaign_helpers import answer_all, write_campaign
from leavers import right
from scipy.stats import binom
from sklearn.metrics import cohen_kappa_score

from convoscope.analysis import fleiss_kappa
from convoscope.campaigns import (
    CampaignError,
    Submission,
    chance_of_hits,
    invite,
    load_campaign,
    open_campaign,
    qualify,
)
from convoscope.judges import Verdict

# The observed batch: two references agreeing on 24 cells, 18 positive and 6 negative.
REFERENCE = [1] * 18 + [0] * 6


def _votes(rater: str, answers: list[int | None], criterion: str = "appropriateness") -> list[Verdict]:
    return [Verdict(item_id=f"i{k:02d}", criterion=criterion, rater=f"human:{rater}", value=value,
                    unscored_reason="idk" if value is None else None) for k, value in enumerate(answers)]


def _batch(candidate: list[int | None], first: list[int] = REFERENCE,
           second: list[int] = REFERENCE) -> list[Verdict]:
    return [*_votes("ref1", list(first)), *_votes("ref2", list(second)), *_votes("cand", candidate)]


def _decide(candidate: list[int | None], **kw: object) -> object:
    return qualify("cand", _batch(candidate, **kw), ["ref1", "ref2"], threshold=0.21,  # type: ignore[arg-type]
                   min_accuracy=0.6)


def _pooled_fleiss(candidate: list[int]) -> float:
    """The old rule: Fleiss' kappa of the references and the candidate together."""
    return fleiss_kappa([[str(v) for v in REFERENCE], [str(v) for v in REFERENCE],
                         [str(v) for v in candidate]])


COIN_FLIPS = [1] * 10 + [0] * 8 + [1] * 4 + [0] * 2  # the observed coin-flipper's 24 answers


def test_a_worker_who_always_clicks_the_first_option_is_refused() -> None:
    """Observed: passed at Fleiss' kappa .400 (pooled with the references); Cohen's kappa 0 with each."""
    careless = [1] * 24
    assert _pooled_fleiss(careless) == pytest.approx(0.400, abs=5e-4)  # the old rule: 0.400 >= 0.21
    decision = _decide(careless)
    assert decision.kappas == {"ref1": pytest.approx(0.0), "ref2": pytest.approx(0.0)}
    assert decision.accuracy == pytest.approx(0.75)  # accuracy alone would let this one through
    assert not decision.qualified and decision.outcome == "not_qualified"
    assert "kappa below 0.21" in decision.note


def test_a_coin_flipper_is_refused() -> None:
    """Observed: passed at Fleiss' kappa .215; Cohen's kappa -.091 with each reference."""
    assert _pooled_fleiss(COIN_FLIPS) == pytest.approx(0.2145, abs=5e-4)
    decision = _decide(COIN_FLIPS)
    assert decision.kappas["ref1"] == pytest.approx(-0.0909, abs=5e-4)
    assert decision.accuracy == pytest.approx(0.5)
    assert not decision.qualified


def test_a_perfect_worker_is_qualified_when_the_batch_holds_one_label() -> None:
    """Observed: kappa undefined (one label everywhere) meant "not qualified"; accuracy decides now."""
    same = [1] * 24
    with pytest.raises(ValueError):  # the old rule's statistic is undefined here
        fleiss_kappa([["1"] * 24] * 3)
    decision = _decide(same, first=same, second=same)
    assert decision.qualified and decision.kappa is None and decision.accuracy == 1.0
    assert "decided by accuracy" in decision.note
    refused = _decide([0] * 24, first=same, second=same)  # one label, the other one: refused
    assert not refused.qualified and refused.accuracy == 0.0


def test_constant_adversarial_and_good_workers_are_decided_right() -> None:
    assert not _decide([0] * 24).qualified  # constant, the other label: kappa 0, accuracy .25
    adversarial = [1 - v for v in REFERENCE]
    decision = _decide(adversarial)
    assert not decision.qualified
    assert decision.kappa == pytest.approx(cohen_kappa_score(REFERENCE, adversarial))
    assert decision.kappa < 0 and decision.accuracy == 0.0
    good = list(REFERENCE)
    good[0], good[20] = 0, 1  # two honest slips
    decision = _decide(good)
    assert decision.qualified and decision.outcome == "qualified"
    assert decision.accuracy == pytest.approx(22 / 24)


def test_random_workers_rarely_pass_and_good_ones_nearly_always_do() -> None:
    """200 coin-flippers and 200 workers who slip on one answer in ten, on a 40-cell batch. Chance
    lets some coin-flippers through on a batch this small (about 8 in 100, measured on 1,000 by
    benchmarks/qualification_rates.py): the rule bounds it, gold checks catch the rest."""
    rng = random.Random(37)
    reference = [rng.randint(0, 1) for _ in range(40)]
    passed_random = passed_good = 0
    for _ in range(200):
        flips = [rng.randint(0, 1) for _ in range(40)]
        slips = [v if rng.random() > 0.1 else 1 - v for v in reference]
        passed_random += _decide(flips, first=reference, second=reference).qualified
        passed_good += _decide(slips, first=reference, second=reference).qualified
    assert passed_random <= 30 and passed_good >= 195


def test_each_kappa_is_sklearns_cohen_kappa_score() -> None:
    second = list(REFERENCE)
    second[:3] = [0, 0, 0]
    decision = _decide(COIN_FLIPS, second=second)
    assert decision.kappas["ref1"] == pytest.approx(cohen_kappa_score(REFERENCE, COIN_FLIPS))
    assert decision.kappas["ref2"] == pytest.approx(cohen_kappa_score(second, COIN_FLIPS))
    assert decision.references_kappa == pytest.approx(cohen_kappa_score(REFERENCE, second))
    assert decision.kappa == min(decision.kappas.values())


def test_weighted_kappa_on_an_ordered_scale_is_sklearns_linear_kappa() -> None:
    first, cand = [1, 2, 3, 4, 5, 5, 4, 3, 2, 1], [1, 2, 4, 4, 5, 4, 4, 3, 1, 1]
    votes = [*_votes("ref1", first), *_votes("cand", cand)]
    decision = qualify("cand", votes, ["ref1"], threshold=0.21, min_accuracy=0.6,
                       ordinal_labels=["1", "2", "3", "4", "5"])
    expected = cohen_kappa_score(first, cand, weights="linear", labels=[1, 2, 3, 4, 5])
    assert decision.kappas["ref1"] == pytest.approx(expected) and decision.weights == "linear"
    assert decision.references_note == "one reference: its own agreement cannot be measured"


def test_the_decision_is_a_value_with_the_rule_the_numbers_and_the_references_agreement() -> None:
    second = [1] * 12 + [0] * 12
    decision = _decide(REFERENCE, second=second)
    assert decision.rule.startswith("Cohen's kappa with each reference >= 0.21")
    assert decision.majority_cells == 18  # the 6 cells where the two references differ are left out
    assert decision.references_kappa == pytest.approx(cohen_kappa_score(REFERENCE, second))
    assert decision.cells == 24 and decision.min_accuracy == 0.6


def test_cannot_tell_when_the_references_never_agree() -> None:
    first = [1, 0] * 12
    decision = _decide([1] * 24, first=first, second=[1 - v for v in first])
    assert decision.outcome == "cannot_tell" and decision.accuracy is None
    assert decision.note.startswith("cannot tell: the references agree by majority on none")


def test_with_no_reference_everyone_qualifies() -> None:
    assert qualify("anyone", [], [], threshold=0.21).outcome == "qualified"


def _small(candidate: list[int], reference: list[int], **kw: object) -> object:
    votes = [*_votes("ref1", reference), *_votes("ref2", reference), *_votes("cand", candidate)]
    return qualify("cand", votes, ["ref1", "ref2"], threshold=0.21, min_accuracy=0.6,  # type: ignore[arg-type]
                   chance=0.5, **kw)


def test_a_lucky_coin_flipper_on_a_small_batch_is_not_qualified() -> None:
    """Observed: with 6 answers a third of coin-flippers passed (benchmarks/qualification_rates.py).
    Five of six right is kappa .667 and accuracy .833, over both minimums, yet a coin-flipper does
    as well 7 times in 64: the batch cannot tell them from chance."""
    reference, lucky = [1, 1, 1, 0, 0, 0], [1, 1, 0, 0, 0, 0]
    old = qualify("cand", [*_votes("ref1", reference), *_votes("ref2", reference), *_votes("cand", lucky)],
                  ["ref1", "ref2"], threshold=0.21, min_accuracy=0.6)
    assert old.qualified  # the rule without the chance check lets them through
    decision = _small(lucky, reference)
    assert (decision.qualified, decision.outcome) == (False, "cannot_tell")
    assert decision.chance_pass == pytest.approx(binom.sf(5 - 1, 6, 0.5)) == pytest.approx(7 / 64)
    assert decision.note.startswith("cannot tell from chance: 5 of 6 answers")
    admitted = _small(lucky, reference, admit_cannot_tell=True)
    assert (admitted.qualified, admitted.outcome) == (True, "cannot_tell")
    perfect = _small(reference, reference)  # six of six: 1 in 64
    assert perfect.qualified and perfect.chance_pass == pytest.approx(1 / 64)


@pytest.mark.parametrize("size", [6, 12, 24])
def test_with_the_chance_check_few_coin_flippers_pass_at_any_batch_size(size: int) -> None:
    """300 coin-flippers per size: at most 5 % pass whatever the size (the check's level bounds it;
    a little more is allowed for the draw). Good workers (one slip in ten) lose out on small batches
    only: the docs' table says how large a batch keeps them."""
    rng = random.Random(size)
    flippers_passed = good_passed = 0
    for _ in range(300):
        reference = [rng.randint(0, 1) for _ in range(size)]
        flippers_passed += _small([rng.randint(0, 1) for _ in range(size)], reference).qualified
        good_passed += _small([v if rng.random() > 0.1 else 1 - v for v in reference], reference).qualified
    assert flippers_passed / 300 <= 0.06
    if size >= 24:
        assert good_passed / 300 >= 0.97


def test_the_chance_of_as_many_hits_is_scipys_binomial_tail() -> None:
    for hits, cells, chance in ((5, 6, 0.5), (17, 24, 0.5), (0, 10, 0.2), (10, 10, 1 / 3)):
        assert chance_of_hits(hits, cells, chance) == pytest.approx(binom.sf(hits - 1, cells, chance))
    with pytest.raises(ValueError, match="0 <= hits <= cells"):
        chance_of_hits(7, 6, 0.5)


def test_a_campaign_spec_takes_the_chance_settings(tmp_path: Path) -> None:
    directory = write_campaign(tmp_path / "study")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text() + "  max_chance_pass: 0.01\n  when_cannot_tell: admit\n",
                    encoding="utf-8")
    settings = load_campaign(directory).qualification
    assert (settings.max_chance_pass, settings.when_cannot_tell) == (0.01, "admit")
    spec.write_text(spec.read_text().replace("when_cannot_tell: admit", "when_cannot_tell: maybe"))
    with pytest.raises(CampaignError, match="qualification.when_cannot_tell"):
        load_campaign(directory)


@pytest.mark.parametrize("when", ["refuse", "admit"])
def test_in_a_campaign_five_of_six_right_cannot_be_told_from_chance(tmp_path: Path, when: str) -> None:
    """The tiny test study's qualification batch has 6 answers; a candidate who misses one meets
    kappa and accuracy (0.667, 0.833) but a coin-flipper does as well 7 times in 64."""
    directory = write_campaign(tmp_path / "study", references=["a001"])
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text() + f"  when_cannot_tell: {when}\n", encoding="utf-8")
    reference, candidate = (person.id for person in invite(directory, 2))
    campaign = open_campaign(directory)
    answer_all(campaign, reference, right)
    missed = False
    while (work := campaign.work(candidate)).task is not None and work.batch.kind == "qualification":
        answer = right(work.task)
        if not missed and answer == "1":
            answer, missed = "0", True
        campaign.submit(candidate, work.task, Submission(answer=answer))
    decision = campaign.decision(candidate)
    assert decision.outcome == "cannot_tell" and decision.chance_pass == pytest.approx(7 / 64)
    assert decision.kappa == pytest.approx(2 / 3) and decision.accuracy == pytest.approx(5 / 6)
    assert campaign.work(candidate).state == ("not_qualified" if when == "refuse" else "task")
    person = next(a for a in campaign.status().annotators if a.annotator == candidate)
    word = "no" if when == "refuse" else "yes"
    assert person.qualified_text().startswith(f"{word}, cannot tell from chance")
