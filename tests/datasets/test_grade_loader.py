"""GRADE: a JSON list of scores inside a string, 8-11 workers per item."""

import pytest

from convoscope.datasets import load_benchmark
from convoscope.items import ItemError


def test_counts_and_one_verdict_per_score(samples):
    grade = load_benchmark("grade", samples / "grade" / "human_judgement.json")
    assert grade.granularity == "turn"
    assert [item.id for item in grade.items] == ["grade:0", "grade:1", "grade:2"]
    assert len(grade.human) == 10 + 8 + 11
    assert list(grade.criteria) == ["coherence"]
    scores = [v.value for v in grade.human if v.item_id == "grade:1"]
    assert scores == [1, 2, 1, 1, 2, 1, 3, 1]
    assert all(isinstance(v.value, int) for v in grade.human)
    assert grade.raters == tuple(sorted(f"human:{n}" for n in range(1, 12)))


def test_context_is_split_on_the_separator(samples):
    item = load_benchmark("grade", samples).items[1]
    assert [turn.text for turn in item.context] == [
        "i love hiking in the mountains .", "me too ! which ones ?", "mostly the alps"]
    assert item.response == "i had pasta for lunch ."
    assert item.system == "dialogGPT" and item.meta["dataset"] == "convai2"


def test_unreadable_scores_string_names_line_and_field(broken_copy):
    def mutate(data):
        data[2]["HumanScores"] = "[4, 4, five]"

    file, line = broken_copy("grade/human_judgement.json", mutate, "five")
    with pytest.raises(ItemError) as caught:
        load_benchmark("grade", file.parent)
    assert (caught.value.line, caught.value.field) == (line, "[2].HumanScores")
    assert "JSON list of scores" in caught.value.problem


def test_a_float_score_inside_the_string_is_refused(broken_copy):
    def mutate(data):
        data[0]["HumanScores"] = "[4, 3.5]"

    file, line = broken_copy("grade/human_judgement.json", mutate, "3.5")
    with pytest.raises(ItemError, match="expected an integer") as caught:
        load_benchmark("grade", file)
    assert (caught.value.line, caught.value.field) == (line, "[0].HumanScores[1]")
