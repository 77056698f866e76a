"""Computed KPIs: timestamps in both documented formats, latency and length verdicts, and bad
timestamps failing with file, line and field."""

import json

import pytest

from convoscope.criteria import load_suite
from convoscope.items import Item, ItemError, read_items
from convoscope.metrics import (
    TimestampError,
    check_metric_inputs,
    compute_metric,
    item_lines,
    parse_instant,
    response_latency,
)

KPI = load_suite("kpi")
LATENCY = KPI.get("low-latency")  # max_seconds 2.0
LENGTH = KPI.get("answer-length")  # max_words 60


def turn_item(item_id="t1", response="Press the seat icon.", **meta):
    return Item(id=item_id, context=({"speaker": "user", "text": "How do I heat the seat?"},),
                response=response, system="assistant", meta=meta)


@pytest.mark.parametrize(("request_time", "response_time", "seconds"), [
    ("2024-05-01T09:30:00Z", "2024-05-01T09:30:01.5Z", 1.5),
    ("2024-05-01T11:30:00+02:00", "2024-05-01T09:30:03Z", 3.0),  # zones are honoured
    ("2024-05-01 09:30:00", "2024-05-01 09:30:00.25", 0.25),  # both without a zone
    (1714555800, 1714555802.75, 2.75),
    ("1714555800", "1714555801", 1.0),  # epoch seconds written as text (CSV)
])
def test_latency_from_both_timestamp_forms(request_time, response_time, seconds):
    listed = turn_item(timestamps=[request_time, response_time])
    paired = turn_item(request_time=request_time, response_time=response_time)
    assert response_latency(listed) == pytest.approx(seconds)
    assert response_latency(paired) == pytest.approx(seconds)


def test_latency_verdict_is_a_metric_verdict_with_the_measurement():
    fast = compute_metric(turn_item(timestamps=[0, 1.25]), LATENCY)
    slow = compute_metric(turn_item(timestamps=[0, 2.5]), LATENCY)
    assert (fast.rater, fast.value, slow.value) == ("metric:latency", 1, 0)
    assert json.loads(slow.raw) == {"seconds": 2.5, "max_seconds": 2.0}
    assert "2.50 s" in slow.reason and fast.system == "assistant"
    exactly = compute_metric(turn_item(timestamps=[10, 12]), LATENCY)
    assert exactly.value == 1  # the budget is inclusive


def test_no_timestamps_is_an_unscored_not_applicable_verdict():
    verdict = compute_metric(turn_item(), LATENCY)
    assert verdict.value is None and verdict.unscored_reason == "not_applicable"
    unknown_time = compute_metric(turn_item(timestamps=[None, 5]), LATENCY)
    assert unknown_time.value is None


def test_answer_length_against_the_target():
    short = compute_metric(turn_item(response="Press the seat icon."), LENGTH)
    long = compute_metric(turn_item(response=" ".join(["word"] * 61)), LENGTH)
    assert (short.value, long.value) == (1, 0)
    assert json.loads(long.raw)["words"] == 61 and short.rater == "metric:answer_length"
    floor = LENGTH.model_copy(update={"parameters": {"metric": "answer_length", "max_words": 10,
                                                     "min_words": 5}})
    assert compute_metric(turn_item(response="Yes."), floor).value == 0


@pytest.mark.parametrize(("meta", "field", "words"), [
    ({"timestamps": ["2024-05-01T09:30:00Z", "yesterday"]}, "meta.timestamps.1", "neither ISO-8601"),
    ({"timestamps": [0, -3]}, "meta.timestamps.1", ">= 0"),
    ({"timestamps": [0]}, "meta.timestamps", "has 1 entries"),
    ({"timestamps": "not json"}, "meta.timestamps", "JSON list"),
    ({"timestamps": [5, 2]}, "meta.timestamps.1", "earlier"),
    ({"timestamps": ["2024-05-01T09:30:00", 1714555802]}, "meta.timestamps.1", "zone"),
    ({"request_time": 3}, "meta.response_time", "missing"),
    ({"timestamps": [0, True]}, "meta.timestamps.1", "True"),
])
def test_bad_timestamps_name_the_field(meta, field, words):
    with pytest.raises(TimestampError) as caught:
        response_latency(turn_item(**meta))
    assert caught.value.field == field and words in str(caught.value)


def test_parse_instant_rejects_non_finite_numbers():
    with pytest.raises(TimestampError, match="finite"):
        parse_instant("nan", "meta.response_time")


def test_bad_timestamp_in_a_file_names_file_line_and_field(tmp_path):
    path = tmp_path / "turns.jsonl"
    good = turn_item("t1", timestamps=[0, 1]).model_dump(mode="json")
    bad = turn_item("t2", timestamps=["2024-05-01T09:30:00Z", "2024-13-01T09:30:00Z"]).model_dump(mode="json")
    path.write_text(json.dumps(good) + "\n\n" + json.dumps(bad) + "\n")  # a blank line 2
    items = read_items(path)
    assert item_lines(path) == [1, 3]
    with pytest.raises(ItemError) as caught:
        check_metric_inputs(items, [LATENCY], source=path)
    message = str(caught.value)
    assert message.startswith(f"{path}, line 3, field 'meta.timestamps.1': ")
    check_metric_inputs(items, [LENGTH], source=path)  # length: no times


def test_csv_timestamps_column_is_read_as_json(tmp_path):
    path = tmp_path / "turns.csv"
    path.write_text('id,context,response,timestamps\n'
                    'a,user: a map please,"Sure, here it is.","[1714555800, 1714555800.5]"\n'
                    'b,user: and now?,Fine.,"[1714555800, ""soon""]"\n')
    items = read_items(path)
    assert compute_metric(items[0], LATENCY).value == 1
    with pytest.raises(ItemError, match=r"turns.csv, line 3, field 'meta\.timestamps\.1': 'soon'"):
        check_metric_inputs(items, [LATENCY], source=path)
