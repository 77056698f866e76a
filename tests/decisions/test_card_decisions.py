"""Issue 36, observations 3 and 4: the card's verdicts on simulated studies with a known answer.
Ranking claims need enough systems, an interval clear of weak agreement and no unexplained
outlier; a judge above people's own agreement is flagged; self-consistency is pairwise; a
Python judge's exact values are scored everywhere."""

import numpy as np
import pytest
from scipy import stats
from simstudies import categorical_study, systems_study
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from convoscope.analysis import Rating, metaeval, pairwise_agreement, system_level
from convoscope.card import CardThresholds
from convoscope.card._model import Agreement, JudgeReport
from convoscope.card._sections import exact, systems
from convoscope.card._verdict import findings, paragraph, system_decision
from convoscope.judges import Verdict
from convoscope.runs import self_consistency

LIMITS = CardThresholds()


def _ratings(rows):
    return [Rating(item, "q", rater, score, system=system) for item, system, rater, score in rows]


def _report(agreement=(), system_rows=(), consistency=()):
    return JudgeReport("model:j", "model:j", tuple(agreement), tuple(system_rows), (), (), None,
                       tuple(consistency), (), 0, None, (), ())


def _system_row(rows):
    ratings = _ratings(rows)
    judge = [r for r in ratings if r.rater == "model:j"]
    humans = [r for r in ratings if r.rater.startswith("human:")]
    return system_level(judge, humans, n_resamples=300, seed=0)[0]


@pytest.mark.parametrize("seed", range(4))
def test_a_blind_judge_that_only_sees_a_broken_system_may_not_rank(seed):
    # Five systems; the judge is blind to quality except that one system is broken. The strong
    # correlation rests on that one system: the card must not say "for ranking systems".
    rows = systems_study(np.random.default_rng(seed), n_systems=5, judge_weight=0.0, outlier=True)
    row = _system_row(rows)
    decision = system_decision(row, LIMITS)
    assert decision.outcome != "pass", decision.describe()
    item_row = next(r for r in metaeval(_ratings(rows), n_resamples=100) if r.judge == "model:j")
    report = _report([Agreement("q", None, item_row)], [row])
    found = findings(report, LIMITS)
    assert not any(f.good and f.rule == "system_rho" for f in found)
    assert "for ranking systems" not in paragraph(report, found).split(". ")[0]


@pytest.mark.parametrize("seed", [6, 14, 20])
def test_five_systems_with_an_outlier_and_an_interval_from_weak_agreement_make_no_ranking_claim(seed):
    # The case: system ρ .9–1.0 on five systems, one of them broken, the interval from .11.
    # The old rule (ρ ≥ .7 and interval above 0) said "usable for ranking systems".
    row = _system_row(systems_study(np.random.default_rng(seed), n_systems=5, judge_weight=0.3, outlier=True))
    assert row.spearman.estimate >= LIMITS.system_rho and 0 < row.spearman.low <= LIMITS.weak_rho
    decision = system_decision(row, LIMITS)
    assert decision.outcome == "fail" and decision.number("low") == row.spearman.low


def test_four_systems_cannot_tell_even_when_the_judge_ranks_them_perfectly():
    row = _system_row(systems_study(np.random.default_rng(0), n_systems=4, judge_noise=0.01,
                                    human_noise=0.01))
    decision = system_decision(row, LIMITS)
    assert decision.outcome == "cannot_tell" and "fewer than 5" in decision.reason
    assert decision.number("systems") == 4


@pytest.mark.parametrize("seed", range(3))
def test_a_judge_that_tracks_quality_over_eight_systems_may_rank(seed):
    rng = np.random.default_rng(seed)
    row = _system_row(systems_study(rng, n_systems=8, spread=1.0, judge_noise=0.2, human_noise=0.2))
    assert system_decision(row, LIMITS).outcome == "pass"


def test_a_judge_above_the_people_ceiling_is_flagged():
    ratings = _ratings(systems_study(np.random.default_rng(1), n_systems=6, human_noise=1.5, leaked=True))
    row = next(r for r in metaeval(ratings, n_resamples=200) if r.judge == "model:j")
    assert row.spearman.low > row.humans.loo_spearman  # the premise: above people's own agreement
    found = findings(_report([Agreement("q", None, row)]), LIMITS)
    assert any(f.rule == "ceiling_margin" and "leakage" in f.text for f in found)


def test_an_honest_judge_below_the_ceiling_is_not_flagged():
    ratings = _ratings(systems_study(np.random.default_rng(1), n_systems=6, human_noise=0.3, judge_noise=1.0))
    row = next(r for r in metaeval(ratings, n_resamples=200) if r.judge == "model:j")
    assert not any(f.rule == "ceiling_margin" for f in findings(_report([Agreement("q", None, row)]), LIMITS))


def test_two_annotators_never_make_an_alt_test_pass_on_the_card():
    judge, humans = categorical_study(np.random.default_rng(1), annotator_accuracy=0.6, judge_accuracy=0.95,
                                      n_annotators=2)
    ratings = [Rating(f"i{i}", "q", "model:j", f"c{v}") for i, v in enumerate(judge)]
    ratings += [Rating(f"i{i}", "q", f"human:h{k}", f"c{v}") for k, row in enumerate(humans)
                for i, v in enumerate(row)]
    row = next(r for r in metaeval(ratings, n_resamples=50) if r.judge == "model:j")
    assert row.alt_test.decision.outcome == "cannot_tell"
    assert Agreement("q", None, row).replaces_annotator != "yes"


def _repeats(values_by_repeat):
    return [Verdict(item_id=f"i{i}", criterion="q", rater=f"model:j~r{k}", value=value)
            for k, values in enumerate(values_by_repeat) for i, value in enumerate(values)]


def test_self_consistency_is_the_share_of_agreeing_pairs_not_a_modal_share():
    # Two repeats agree on 1 item of 3: the modal share is 67 % (its floor is 50 %), pairs agree 33 %.
    found = self_consistency(_repeats([[1, 2, 3], [1, 3, 2]]))[0]
    assert found.pairwise == pytest.approx(1 / 3) and found.agreement == pytest.approx(2 / 3)
    report = _report(consistency=[found])
    assert any("33%" in f.text for f in findings(report, LIMITS) if f.rule == "min_self_agreement")


def test_pairwise_agreement_is_fleiss_observed_agreement():
    rng = np.random.default_rng(4)
    table = rng.integers(1, 4, (40, 3))  # 40 items, 3 repeats each
    counts, _ = aggregate_raters(table)
    p_j = counts.sum(0) / counts.sum()
    expected = (p_j**2).sum()
    observed = fleiss_kappa(counts) * (1 - expected) + expected
    assert pairwise_agreement(table.tolist()) == pytest.approx(observed, abs=1e-12)


def test_a_python_judges_exact_values_are_scored_at_system_level():
    rng = np.random.default_rng(2)
    rows = systems_study(rng, n_systems=6, judge_noise=0.05)
    verdicts, humans, items = [], [], {}
    for item, system, rater, score in rows:
        items[item] = system
        if rater == "model:j":
            value = float(np.clip(np.round(3 + score), 1, 5))  # the nearest scale point
            verdicts.append(Verdict(item_id=item, criterion="q", rater="python:mine", value=int(value),
                                    expected_value=3 + score, system=system))
        else:
            humans.append(Rating(item, "q", rater, score, system=system))

    class Item:
        def __init__(self, system):
            self.system = system

    names = sorted(set(items.values()))
    found, _ = systems(exact(verdicts, "value"), humans, [Item(s) for s in names], "python:mine",
                       criteria=["q"], options={"seed": 0, "n_resamples": 200})
    judge_means = {s: np.mean([v.expected_value for v in verdicts if v.system == s]) for s in names}
    human_means = {s: np.mean([h.value for h in humans if h.system == s]) for s in names}
    reference = stats.spearmanr([judge_means[n] for n in names], [human_means[n] for n in names]).statistic
    assert found[0].spearman.estimate == pytest.approx(reference, abs=1e-12)
