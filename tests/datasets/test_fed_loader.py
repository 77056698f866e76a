"""FED: 5 AMT ratings per quality, 'N/A (...)' notes kept as unscored verdicts with the note."""

import pytest

from convoscope.datasets import load_benchmark
from convoscope.items import ItemError


def test_turn_level_counts_and_context(samples):
    fed = load_benchmark("fed-turn", samples / "fed")
    assert fed.granularity == "turn" and len(fed.items) == 3
    assert len(fed.human) == 3 * 9 * 5
    first = fed.items[0]
    assert [turn.speaker for turn in first.context] == ["user", "system", "user"]
    assert first.context[2].text == "Not really, the neighbours had a party"
    assert first.response == "Oh no. Was the music loud?"  # the "System: " prefix is removed
    assert first.system == "Meena" and first.language == "en"


def test_each_worker_keeps_their_own_rating(samples):
    fed = load_benchmark("fed-turn", samples)
    overall = [v for v in fed.human if v.item_id == "fed:0" and v.criterion == "overall"]
    assert [(v.rater, v.value) for v in overall] == [
        ("human:1", 2), ("human:2", 3), ("human:3", 4), ("human:4", 3), ("human:5", 1)]
    assert all(v.language == "en" and v.system == "Meena" for v in overall)


def test_na_note_is_an_unscored_verdict_with_the_workers_words(samples):
    fed = load_benchmark("fed-turn", samples)
    (unscored,) = [v for v in fed.human if v.value is None]
    assert (unscored.item_id, unscored.criterion, unscored.rater) == ("fed:1", "correct", "human:5")
    assert unscored.unscored_reason == "not_applicable"
    assert unscored.reason == "N/A (I cannot tell whether the system is right.)"


def test_dialogue_level_uses_its_own_qualities(samples):
    fed = load_benchmark("fed-dialogue", samples)
    assert fed.granularity == "dialogue" and [item.id for item in fed.items] == ["fed:3", "fed:4"]
    assert all(item.response is None for item in fed.items)
    assert len(fed.human) == 2 * 11 * 5
    assert {"error-recovery", "topic-depth", "inquisitive", "overall"} <= set(fed.criteria)
    assert "interesting" not in fed.criteria
    recovery = [v.value for v in fed.human if v.item_id == "fed:3" and v.criterion == "error-recovery"]
    assert recovery == [None, 1, 2, None, 2]


def test_a_score_that_is_not_a_number_names_line_and_field(tmp_path, broken_copy):
    def mutate(data):
        data[2]["annotations"]["Overall"][3] = "great"

    file, line = broken_copy("fed/fed_data.json", mutate, '"great"')
    with pytest.raises(ItemError) as caught:
        load_benchmark("fed-turn", tmp_path)
    assert caught.value.path == str(file) and caught.value.line == line
    assert caught.value.field == "[2].annotations.Overall[3]"
    assert "'N/A (...)' note" in caught.value.problem


def test_an_unknown_quality_is_refused(tmp_path, broken_copy):
    def mutate(data):
        data[0]["annotations"]["Funny"] = [1, 1, 1, 1, 1]

    _, line = broken_copy("fed/fed_data.json", mutate, '"Funny"')
    with pytest.raises(ItemError, match="unknown quality 'Funny'") as caught:
        load_benchmark("fed-turn", tmp_path / "fed" / "fed_data.json")
    assert caught.value.line == line and caught.value.field == "[0].annotations.Funny"
