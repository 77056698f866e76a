"""ConTurE: an aggregated turn label and per-worker DSTC9 dialogue ratings."""

import pytest

from convoscope.datasets import load_benchmark
from convoscope.items import ItemError


def test_turns_carry_history_and_the_majority_label(samples):
    conture = load_benchmark("conture-turn", samples / "conture")
    assert conture.granularity == "turn" and len(conture.items) == 5
    assert conture.raters == ("human:majority",)
    assert [v.value for v in conture.human] == [2, 0, 1, 2, 2]
    third = conture.items[2]
    assert third.id == "conture:0:2"
    assert [turn.speaker for turn in third.context] == ["user", "chatbot", "user", "chatbot", "user"]
    assert third.context[-1].text == "That was random"
    assert third.response == "sorry, tell me about winter."  # "Chatbot:" without a space
    assert third.system is None  # the file does not say which chatbot


def test_dialogues_keep_each_workers_ratings(samples):
    conture = load_benchmark("conture-dialogue", samples)
    assert [item.id for item in conture.items] == ["conture:0", "conture:1"]
    assert len(conture.items[0].context) == 6 and conture.items[0].response is None
    assert len(conture.human) == (3 + 2) * 11
    assert "overall" in conture.criteria and "human-overall" not in conture.criteria
    overall = [(v.rater, v.value) for v in conture.human
               if v.item_id == "conture:0" and v.criterion == "overall"]
    assert overall == [("human:1", 2), ("human:2", 3), ("human:3", 4)]
    (na,) = [v for v in conture.human if v.value is None]
    assert (na.item_id, na.criterion, na.rater) == ("conture:0", "error-recovery", "human:2")
    assert na.reason == "N/A" and na.unscored_reason == "not_applicable"


def test_a_text_label_names_line_and_field(broken_copy):
    def mutate(data):
        data[1]["turns"][1]["overall impression"] = "like"

    file, line = broken_copy("conture/data.json", mutate, '"overall impression": "like"')
    with pytest.raises(ItemError) as caught:
        load_benchmark("conture-turn", file)
    assert (caught.value.line, caught.value.field) == (line, "[1].turns[1].overall impression")


def test_a_missing_field_is_named(broken_copy):
    def mutate(data):
        del data[0]["turns"][0]["chatbot"]

    file, line = broken_copy("conture/data.json", mutate, "What's your favourite season?")
    with pytest.raises(ItemError, match="missing") as caught:
        load_benchmark("conture-dialogue", file)
    assert caught.value.field == "[0].turns[0].chatbot"
    assert caught.value.line == line - 1  # the turn object opens on the line before its first key
