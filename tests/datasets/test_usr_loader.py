"""USR: three named expert annotators per context; the ground-truth turn is the reference."""

import pytest

from convoscope.datasets import load_benchmark
from convoscope.items import ItemError


def test_topicalchat_counts_raters_and_reference(samples):
    usr = load_benchmark("usr-topicalchat", samples / "usr")
    assert usr.granularity == "turn" and len(usr.items) == 6
    assert len(usr.human) == 6 * 6 * 3
    assert usr.raters == ("human:aa", "human:bb", "human:cc", "human:dd")
    by_id = {item.id: item for item in usr.items}
    truth = by_id["usr-tc:0:original-ground-truth"]
    other = by_id["usr-tc:0:argmax-decoding"]
    assert truth.reference is None  # a turn is not its own reference
    assert other.reference == truth.response == "i did not know that , do they do it every night ?"
    assert other.response == "i like the sky ."  # trailing " \n" stripped
    assert other.system == "Argmax Decoding"
    assert other.meta["knowledge"].startswith("a planetarium projects")


def test_context_speakers_alternate_so_the_responder_is_b(samples):
    usr = load_benchmark("usr-topicalchat", samples)
    context = usr.items[0].context
    assert [turn.speaker for turn in context] == ["A", "B", "A"]  # then B responds
    assert context[0].text == "have you ever been to a planetarium ?"


def test_ratings_follow_the_annotator_order_of_each_context(samples):
    usr = load_benchmark("usr-topicalchat", samples)
    overall = {v.rater: v.value for v in usr.human
               if v.item_id == "usr-tc:1:new-human-generated" and v.criterion == "overall"}
    assert overall == {"human:aa": 5, "human:dd": 4, "human:cc": 5}  # annotators listed aa, dd, cc
    assert set(usr.criteria) == {"understandable", "natural", "maintains-context", "engaging",
                                 "uses-knowledge", "overall"}


def test_personachat_reads_a_crlf_file_and_keeps_the_persona(samples):
    assert b"\r\n" in (samples / "usr" / "pc_usr_data.json").read_bytes()
    usr = load_benchmark("usr-personachat", samples)
    assert len(usr.items) == 4 and len(usr.human) == 4 * 6 * 3
    assert usr.items[0].meta["persona"].startswith("your persona: i ride my bike")
    assert usr.items[2].context == usr.items[3].context and len(usr.items[2].context) == 1


def test_ratings_that_do_not_match_the_annotators_name_the_field(broken_copy, tmp_path):
    def mutate(data):
        data[1]["responses"][2]["Natural"] = [1, 2]

    file, line = broken_copy("usr/usr_topical_chat.json", mutate, '"Natural"', after="tennis tennis tennis")
    with pytest.raises(ItemError) as caught:
        load_benchmark("usr-topicalchat", file)
    assert caught.value.field == "[1].responses[2].Natural"
    assert "2 ratings for 3 annotators" in caught.value.problem
    assert caught.value.line == line and caught.value.path == str(file)
