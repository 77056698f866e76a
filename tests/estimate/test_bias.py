"""Bias diagnostics recover the biases built into scripted judges."""

import numpy as np
import pytest

from convoscope import Verdict
from convoscope.errors import ConfigError
from convoscope.estimate import bias_diagnostics, position_bias

JUDGE = "model:scripted-biased-judge"


def _table(*, length_bias=0.0, korean_bonus=0.0, own_bonus=0.0, seed=0, items=400):
    rng = np.random.default_rng(seed)
    rows, lengths = [], {}
    for index in range(items):
        item = f"i{index}"
        language = "ko" if index % 2 else "en"
        system = "gpt-bot" if index % 4 < 2 else "other-bot"
        human = int(rng.integers(1, 6))
        words = int(rng.integers(3, 60))
        lengths[item] = words
        judged = (human + length_bias * words + korean_bonus * (language == "ko")
                  + own_bonus * (system == "gpt-bot") + rng.normal(0, 0.8))
        rows.append(Verdict(item_id=item, criterion="overall", rater=JUDGE, value=round(judged),
                            expected_value=judged, language=language, system=system))
        rows.append(Verdict(item_id=item, criterion="overall", rater="human:a", value=human,
                            language=language, system=system))
    return rows, lengths


def test_a_judge_that_rewards_length_is_caught():
    rows, lengths = _table(length_bias=0.08)
    report = bias_diagnostics(rows, criterion="overall", judge=JUDGE, lengths=lengths)
    assert report.length.rho > 0.3 and report.length.pvalue < 1e-6
    assert report.length.slope_per_10_words > 0


def test_an_unbiased_judge_shows_no_length_bias():
    rows, lengths = _table()
    report = bias_diagnostics(rows, criterion="overall", judge=JUDGE, lengths=lengths)
    assert abs(report.length.rho) < 0.12


def test_a_language_gap_is_caught():
    rows, _ = _table(korean_bonus=1.5)
    report = bias_diagnostics(rows, criterion="overall", judge=JUDGE)
    assert report.languages["ko"].mean_residual > 0.3 > report.languages["en"].mean_residual
    assert report.languages["ko"].pvalue < 1e-3
    assert report.length is None


def test_self_preference_is_measured_only_for_named_systems():
    rows, _ = _table(own_bonus=1.5)
    report = bias_diagnostics(rows, criterion="overall", judge=JUDGE, own_family=["gpt-bot"])
    assert report.self_preference.mean_residual > 0.5 and report.self_preference.pvalue < 1e-6
    assert bias_diagnostics(rows, criterion="overall", judge=JUDGE).self_preference is None
    fair, _ = _table()
    fair_report = bias_diagnostics(fair, criterion="overall", judge=JUDGE, own_family=["gpt-bot"])
    assert abs(fair_report.self_preference.mean_residual) < 0.25


def test_position_bias_of_a_judge_that_always_prefers_the_first_slot():
    rng = np.random.default_rng(0)
    answers = []
    for _ in range(200):
        better = rng.choice(["first", "second"])
        if rng.random() < 0.4:  # 40 % of the time the judge just names the first slot
            answers.append(("first", "first"))
        else:
            answers.append((better, "second" if better == "first" else "first"))
    result = position_bias(answers)
    assert result.flip_rate == pytest.approx(0.4, abs=0.08)
    assert result.first_rate == 1.0


def test_position_bias_rejects_unknown_answers():
    with pytest.raises(ConfigError, match="first, second or tie"):
        position_bias([("A", "B")])
