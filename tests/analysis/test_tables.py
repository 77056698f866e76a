"""Reading long-format ratings and turning judgements into rater x item matrices."""

import json
from pathlib import Path

import numpy as np
import pytest

from convoscope.analysis import IDK, Rating, rater_matrices, read_ratings
from convoscope.items import ColumnMap, ItemError

SAMPLES = Path(__file__).parent / "samples"
HUMAN_COLUMNS = ColumnMap(id="id", rater="annotator", value="label")


def test_reads_the_human_sample():
    ratings = read_ratings(SAMPLES / "humans.csv", columns=HUMAN_COLUMNS)
    assert len(ratings) == 96
    first = ratings[0]
    assert (first.item_id, first.rater, first.criterion, first.value) == ("q00", "ann1", "overall", 2)
    assert first.source.endswith("humans.csv:2")
    values = {r.value for r in ratings}
    assert "I don't know" in values and None in values  # the empty cell is missing


def test_reads_verdict_jsonl_with_its_extra_fields():
    ratings = read_ratings(SAMPLES / "verdicts.jsonl")
    unscored = [r for r in ratings if r.value is None]
    assert len(unscored) == 1 and unscored[0].unscored_reason == "parse_failure"
    assert {r.language for r in ratings} == {"en", "ko"}
    assert isinstance(ratings[0].expected_value, float)


def test_value_parsing(tmp_path):
    path = tmp_path / "ratings.csv"
    path.write_text("item_id,rater,value\n1,a,3\n2,a,3.5\n3,a,NA\n4,a, good \n5,a,1e2\n")
    values = [r.value for r in read_ratings(path, columns=ColumnMap(default_criterion="q"))]
    assert values == [3, 3.5, None, "good", 100.0]


@pytest.mark.parametrize(("text", "line", "field", "problem"), [
    ("item_id,rater,value,criterion\n1,a,3,c\n,b,2,c\n", 3, "item_id", "is empty"),
    ("item_id,value,criterion\n1,3,c\n", 2, "rater", "missing"),
    ("item_id,rater,value,criterion\n1,a,3,c\n1,a,4,c\n", 3, "rater", "already rated item '1'"),
    ("item_id,rater,value\n1,a,3\n", 2, "criterion", "missing"),
    ("item_id,rater,value,criterion\n1,a,inf,c\n", 2, "value", "not a finite number"),
])
def test_csv_errors_name_file_line_and_field(tmp_path, text, line, field, problem):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ItemError, match=problem) as caught:
        read_ratings(path)
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), line, field)
    assert f"{path}, line {line}, field '{field}'" in str(caught.value)


def test_jsonl_errors(tmp_path):
    path = tmp_path / "bad.jsonl"
    good = {"item_id": "1", "rater": "a", "criterion": "c", "value": 1}
    path.write_text(json.dumps(good) + "\n\n{not json\n")
    with pytest.raises(ItemError, match=r"line 3: not valid JSON"):
        read_ratings(path)
    path.write_text(json.dumps({**good, "value": {"score": 1}}) + "\n")
    with pytest.raises(ItemError, match=r"line 1, field 'value': must be a number or a label, got dict"):
        read_ratings(path)
    with pytest.raises(ItemError, match="file not found"):
        read_ratings(tmp_path / "absent.csv")
    (tmp_path / "ratings.xlsx").write_text("")
    with pytest.raises(ItemError, match="unknown file type"):
        read_ratings(tmp_path / "ratings.xlsx")


def _ratings():
    return [
        Rating("i1", "overall", "human:b", 4, language="en"),
        Rating("i1", "overall", "human:a", 5),
        Rating("i2", "overall", "human:a", None, unscored_reason="idk", language="ko"),
        Rating("i2", "overall", "human:b", 2),
        Rating("i1", "style", "human:a", "formal"),
        Rating("i2", "style", "human:a", "casual"),
    ]


def test_rater_matrices_per_criterion():
    matrices = rater_matrices(_ratings())
    overall = matrices[("overall", None)]
    assert overall.raters == ("human:a", "human:b") and overall.items == ("i1", "i2")
    np.testing.assert_array_equal(overall.values, [[5, np.nan], [4, 2]])
    assert overall.numeric
    style = matrices[("style", None)]
    assert not style.numeric and list(style.row("human:a")) == ["formal", "casual"]


def test_rater_matrices_by_language_and_idk():
    matrices = rater_matrices(_ratings(), by="language", keep_idk=True)
    # The group of an item is the first language any rater recorded for it.
    assert set(matrices) == {("overall", "en"), ("overall", "ko"), ("style", "en"), ("style", "ko")}
    korean = matrices[("overall", "ko")]
    assert list(korean.values[:, 0]) == [IDK, 2]
    assert korean.without_idk().numeric


def test_select_reorders_and_pads():
    overall = rater_matrices(_ratings())[("overall", None)]
    chosen = overall.select(raters=["human:b", "human:z"], items=["i2", "i9"])
    np.testing.assert_array_equal(chosen.values, [[2, np.nan], [np.nan, np.nan]])


def test_expected_value_score_and_errors():
    judged = [Rating("i1", "c", "model:x", 4, expected_value=3.6), Rating("i2", "c", "model:x", 2)]
    values = rater_matrices(judged, score="expected_value")[("c", None)].values
    np.testing.assert_allclose(values, [[3.6, 2.0]])
    with pytest.raises(ValueError, match="judged item 'i1' on 'c' more than once"):
        rater_matrices([judged[0], judged[0]])
    with pytest.raises(ValueError, match="mixes numbers and labels"):
        rater_matrices([Rating("i1", "c", "a", 4), Rating("i2", "c", "a", "good")])
    with pytest.raises(ValueError, match="by must be None, 'language' or 'system'"):
        rater_matrices(judged, by="country")


def test_verdicts_tabulate_like_ratings():
    judges = pytest.importorskip("convoscope.judges")
    verdicts = [judges.Verdict(item_id="i1", criterion="c", rater="model:x", value=3, language="en"),
                judges.Verdict(item_id="i2", criterion="c", rater="model:x", value=None,
                               unscored_reason="refusal")]
    matrix = rater_matrices(verdicts)[("c", None)]
    np.testing.assert_array_equal(matrix.values, [[3, np.nan]])


def test_reads_a_json_list(tmp_path):
    path = tmp_path / "ratings.json"
    path.write_text(json.dumps([{"item_id": 1, "rater": 7, "criterion": "c", "value": "3"}]))
    (rating,) = read_ratings(path)
    assert (rating.item_id, rating.rater, rating.value) == ("1", "7", 3)
    path.write_text(json.dumps({"item_id": 1}))
    with pytest.raises(ItemError, match="must hold a list of objects"):
        read_ratings(path)
