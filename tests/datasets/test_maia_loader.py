"""MAIA-DQE: three levels, customer-side text, repeats across files read once, -1 placeholders."""

import pytest

from convoscope.datasets import load_benchmark
from convoscope.items import ItemError

DE = "en_de_#CLIENT-01#_default_2021-01-01-0"
BR = "en_pt-br_#CLIENT-04#_2021-01-03-"


def test_turns_show_what_the_customer_saw(samples):
    maia = load_benchmark("maia-dqe-turn", samples / "maia-dqe")
    by_id = {item.id: item for item in maia.items}
    agent = by_id[f"{DE}:1"]
    assert agent.response == ("Danke, dass Sie #PRS_ORG# kontaktiert haben. "
                              "Ist der Drucker mit dem WLAN verbunden?")
    assert agent.meta["response_en"] == ("Thank you for contacting #PRS_ORG#. "
                                         "Is the printer connected to wlan?")
    assert agent.context[0].speaker == "customer"
    assert agent.context[0].text == "Hallo. Mein Drucker druckt nicht."
    assert agent.system == "client-01" and agent.language == "de"
    assert by_id[f"{DE}:0"].system is None  # a customer's turn is not the system's
    assert {item.language for item in maia.items} == {"de", "pt-BR", "pt-PT"}


def test_turn_labels_skip_what_was_not_annotated(samples):
    maia = load_benchmark("maia-dqe-turn", samples)
    first = [(v.criterion, v.value) for v in maia.human if v.item_id == f"{DE}:0"]
    assert first == [("politeness", 1)]  # understanding, sensibleness and IQ are null there
    agent = {v.criterion: v.value for v in maia.human if v.item_id == f"{DE}:1"}
    assert agent == {"understanding": 1, "sensibleness": 1, "politeness": 1, "interaction-quality": 4}
    assert maia.raters == ("human:1",)


def test_a_repeated_dialogue_is_read_once_from_the_first_file(samples):
    maia = load_benchmark("maia-dqe-turn", samples)
    assert len([item for item in maia.items if item.id.startswith(BR)]) == 3 * 2
    iq = [v.value for v in maia.human if v.item_id == f"{BR}1:1" and v.criterion == "interaction-quality"]
    assert iq == [1]  # pt_br_client_02 says 1; the repeat in pt_br_client_04 says 0
    assert any("first file kept: 1" in note for note in maia.notes)
    assert any("labels differ: 1" in note for note in maia.notes)


def test_sentences_get_emotion_names_and_skip_misaligned_lists(samples):
    maia = load_benchmark("maia-dqe-sentence", samples)
    by_id = {item.id: item for item in maia.items}
    assert by_id[f"{DE}:0:1"].response == "Mein Drucker druckt nicht."
    assert by_id[f"{DE}:0:1"].meta["turn_text"] == "Hallo. Mein Drucker druckt nicht."
    emotion = [v.value for v in maia.human if v.item_id == f"{DE}:0:1" and v.criterion == "emotion"]
    assert emotion == ["frustration"]
    # Turn 2 has two sentences but one correctness label: correctness is skipped there, the rest kept.
    turn_two = {v.criterion for v in maia.human if v.item_id.startswith(f"{DE}:2:")}
    assert turn_two == {"templated", "emotion"}  # engagement is an empty list: not annotated
    assert any("'correctness' labels not one per sentence" in note for note in maia.notes)


def test_dialogue_labels_read_floats_and_unscore_placeholders(samples):
    maia = load_benchmark("maia-dqe-dialogue", samples)
    assert maia.granularity == "dialogue" and len(maia.items) == 5
    labels = {(v.item_id, v.criterion): v for v in maia.human}
    assert labels[("en_pt_#CLIENT-03#_2020-12-27-0", "task-success")].value == 5  # written 5.0
    placeholder = labels[(f"{BR}2", "task-success")]
    assert placeholder.value is None and placeholder.raw == "-1"
    assert placeholder.unscored_reason == "not_applicable"
    assert any("outside 1-5" in note for note in maia.notes)


def test_an_unknown_floor_names_line_and_field(broken_copy):
    def mutate(data):
        data[0]["turns"][1]["floor"] = "sideways"

    file, line = broken_copy("maia-dqe/pt_pt_client_03.json", mutate, '"sideways"')
    with pytest.raises(ItemError, match="'inbound' or 'outbound'") as caught:
        load_benchmark("maia-dqe-turn", file.parent)
    error = caught.value
    assert (error.path, error.line, error.field) == (str(file), line, "[0].turns[1].floor")


def test_an_unknown_emotion_id_names_line_and_field(broken_copy):
    def mutate(data):
        data[0]["turns"][0]["Emotion"][1] = 12

    file, line = broken_copy("maia-dqe/de_client_01.json", mutate, "12", after="Mein Drucker druckt nicht.")
    with pytest.raises(ItemError, match="unknown emotion id 12") as caught:
        load_benchmark("maia-dqe-sentence", file)
    assert (caught.value.line, caught.value.field) == (line, "[0].turns[0].Emotion[1]")
