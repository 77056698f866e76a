"""ABC-Eval: two people's binary labels per behaviour; GPT-3.5 and classifier labels kept apart."""

import pytest

from convoscope.datasets import load_benchmark
from convoscope.items import ItemError


def test_counts_people_and_published_labels(samples):
    abc = load_benchmark("abc-eval", samples / "abc-eval-gpt")
    assert abc.granularity == "turn" and len(abc.items) == 4
    assert len(abc.human) == 4 * 9 * 2
    assert abc.raters == ("human:1", "human:2")
    assert len(abc.published) == 4 * (9 + 6)  # GPT everywhere, the classifier on six behaviours
    assert {v.rater for v in abc.published} == {"model:gpt-3.5-turbo", "model:abc-eval-specialized"}
    assert all(v.value in (0, 1) for v in (*abc.human, *abc.published))
    assert {"self-contradiction", "lack-of-empathy", "partner-contradiction"} <= set(abc.criteria)


def test_turn_items_have_the_dialogue_so_far(samples):
    abc = load_benchmark("abc-eval", samples)
    second = abc.items[1]
    assert second.id == "abc:(3,1)_emora:1" and second.system == "emora"
    assert [turn.speaker for turn in second.context] == ["user", "system", "user"]
    assert second.context[1].text == "Hi! How has your week been?"
    assert second.response == "Moving is stressful. How do you like the new place?"


def test_both_people_are_kept_per_behaviour(samples):
    abc = load_benchmark("abc-eval", samples)
    labels = [(v.rater, v.value) for v in abc.human
              if v.item_id == "abc:(8,2)_blender2_3B:1" and v.criterion == "redundant"]
    assert labels == [("human:1", 1), ("human:2", 0)]


def test_a_bad_dialogue_key_names_the_field(broken_copy):
    def mutate(data):
        data["dialogue-nine"] = data.pop("(8,2)_blender2_3B")

    file, line = broken_copy("abc-eval-gpt/behavior-classification-results.json", mutate, '"dialogue-nine"')
    with pytest.raises(ItemError, match="not of the form") as caught:
        load_benchmark("abc-eval", file)
    assert (caught.value.line, caught.value.field) == (line, "dialogue-nine")


def test_a_text_label_names_line_and_field(broken_copy):
    def mutate(data):
        data["(3,1)_emora"][1]["behaviors"]["ignore"]["human"][0] = "yes"

    file, line = broken_copy("abc-eval-gpt/behavior-classification-results.json", mutate, '"yes"')
    with pytest.raises(ItemError) as caught:
        load_benchmark("abc-eval", file)
    assert caught.value.line == line
    assert caught.value.field == "(3,1)_emora[1].behaviors.ignore.human[0]"
