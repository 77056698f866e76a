"""Items from DataFrames, Hugging Face datasets and lists of dicts; verdicts back out."""

from __future__ import annotations

import json

import pytest
from installed import library_or_skip

from convoscope import Verdict
from convoscope.items import ColumnMap, ItemError, read_items, verdicts_to_table

pd = pytest.importorskip("pandas")


def test_a_dataframe_reads_like_a_csv_with_row_numbers_as_ids():
    frame = pd.DataFrame({"question": ["Why?", "Why?"], "answer": ["Because.", None],
                          "wave": [1, 2]})
    items = read_items(frame, columns=ColumnMap(response="answer"))
    assert [item.id for item in items] == ["1", "2"]
    assert items[0].response == "Because." and items[1].response is None  # NaN is missing, not "nan"
    assert items[1].meta == {"wave": 2}


def test_a_bad_row_names_the_table_row_and_field():
    frame = pd.DataFrame({"id": ["a", "a"], "response": ["x", "y"]})
    with pytest.raises(ItemError, match=r"DataFrame, line 2, field 'id': duplicate id 'a'"):
        read_items(frame)
    with pytest.raises(ItemError, match="DataFrame, line 1, field 'context'"):
        read_items(pd.DataFrame({"id": ["a"], "context": ["[" * 300 + "]" * 300]}))


def test_a_list_of_dicts_and_a_hugging_face_dataset():
    rows = [{"id": "q1", "response": "ok", "context": json.dumps([{"speaker": "user", "text": "hi"}])}]
    assert read_items(rows)[0].context[0].text == "hi"
    datasets = library_or_skip("datasets")
    items = read_items(datasets.Dataset.from_list(rows))
    assert items[0].id == "q1" and items[0].context[0].speaker == "user"


def test_verdicts_to_pandas_and_to_a_hugging_face_dataset():
    verdicts = [Verdict(item_id="a", criterion="overall", rater="model:x", value=3, options=("genericness",),
                        distribution={"3": 0.7, "4": 0.3}),
                Verdict(item_id="b", criterion="kpi:follow-up", rater="human:1", value="yes")]
    frame = verdicts_to_table(verdicts)
    assert list(frame["value"]) == [3, "yes"] and frame.loc[0, "options"] == ["genericness"]
    datasets = library_or_skip("datasets")
    dataset = verdicts_to_table(verdicts, kind="hf")
    assert isinstance(dataset, datasets.Dataset)
    assert dataset[0]["value"] == "3" and json.loads(dataset[0]["distribution"]) == {"3": 0.7, "4": 0.3}
