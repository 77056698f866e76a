import math

import pytest

from convoscope.judges import parse_answer, score_distribution


def test_json_answer_with_reason_and_options(appropriate):
    text = 'Sure.\n```json\n{"score": "Negative", "reason": "bland", "options": ["genericness", "x"]}\n```'
    answer = parse_answer(text, appropriate)
    assert answer.value == "negative" and answer.reason == "bland"
    assert answer.options == ("genericness",) and "unknown explanation options" in answer.problems[0]


@pytest.mark.parametrize(("text", "value"), [
    ('{"score": 3, "reason": "ok"}', 3), ('{"score": "4"}', 4), ("score: 2", 2),
    ('{"score": 3.0}', 3),
])
def test_range_scores(effort, text, value):
    assert parse_answer(text, effort).value == value


@pytest.mark.parametrize(("text", "reason"), [
    ('{"score": 9}', "parse_failure"), ('{"score": 2.5}', "parse_failure"),
    ("no idea what you mean", "parse_failure"), ("", "parse_failure"),
    ("I can't help with evaluating this content.", "refusal"),
    ('{"score": "idk"}', "parse_failure"),  # effort does not allow "I don't know"
])
def test_unscorable_answers_are_never_given_a_default(effort, text, reason):
    answer = parse_answer(text, effort)
    assert answer.value is None and answer.unscored_reason == reason


def test_idk_when_allowed(appropriate):
    answer = parse_answer('{"score": "I don\'t know", "reason": "too short"}', appropriate)
    assert answer.value is None and answer.unscored_reason == "idk"


def test_binary_with_relevance(kpi):
    answer = parse_answer('{"score": "not fulfilled", "relevant": "no"}', kpi)
    assert (answer.value, answer.relevant) == (0, False)
    assert parse_answer('{"score": true, "relevant": true}', kpi).value == 1


def test_distribution_merges_surface_forms(effort):
    logprobs = {"1": math.log(0.1), " 1": math.log(0.1), " 3": math.log(0.3), "cat": math.log(0.5)}
    distribution, expected, mode = score_distribution(logprobs, effort)
    assert distribution["1"] == pytest.approx(0.4) and distribution["3"] == pytest.approx(0.6)
    assert expected == pytest.approx(0.4 * 1 + 0.6 * 3) and mode == 3
    assert sum(distribution.values()) == pytest.approx(1.0)


def test_distribution_none_without_scale_tokens(effort, appropriate):
    assert score_distribution({"cat": -0.1}, effort) is None
    distribution, expected, mode = score_distribution({"positive": -1.0, "negative": -2.0}, appropriate)
    assert expected is None and mode == "positive"
