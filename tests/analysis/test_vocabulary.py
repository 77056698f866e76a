"""Issue 27, observation 4: one vocabulary from file to statistic. ``item_id`` is the item column
everywhere (``item`` accepted), one column mapping names item and rating columns, and the verdict
table of a real run goes straight into ``cs.agree`` and ``cs.metaeval``."""

import json
import warnings

import pandas as pd
import pytest

import convoscope as cs
from convoscope.analysis import RatingColumns, read_frame, read_ratings
from convoscope.items import ColumnMap


def _people(verdicts):
    """Two people who rate every judged item (one agrees with the judge, one is one level off)."""
    rows = []
    for verdict in verdicts:
        value = verdict.value if verdict.value is not None else 1
        rows.append({"item_id": verdict.item_id, "criterion": verdict.criterion, "rater": "human:ann",
                     "value": value})
        rows.append({"item_id": verdict.item_id, "criterion": verdict.criterion, "rater": "human:bo",
                     "value": max(0, value - 1)})
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_the_verdict_table_of_a_real_run_goes_into_agree_and_metaeval(tmp_path):
    pytest.importorskip("llama_cpp")
    items = cs.read_items("examples/survey_items.jsonl")
    result = cs.judge(items, [cs.criterion("survey:effort")], "embedded", store=tmp_path / "run.db")
    table = result.to_pandas()
    assert "item_id" in table.columns and "item" not in table.columns
    people = _people(result.verdicts)
    rows = cs.agree(pd.concat([table, people], ignore_index=True), n_resamples=50)
    assert rows[0].criterion == "effort" and rows[0].n_raters == 3
    found = cs.metaeval(table, people, n_resamples=50)
    assert [row.judge for row in found] == [result.verdicts[0].rater]
    assert found[0].n_items == len(items)
    aliased = people.rename(columns={"item_id": "item"})
    from_verdicts = cs.metaeval(cs.verdicts_to_table(result.verdicts), aliased, n_resamples=50)
    assert from_verdicts[0].kappa == found[0].kappa
    study = cs.metaeval_study(table, people, n_resamples=50, permutations=0)
    assert len(study.to_pandas()) == 1


def test_a_frame_with_item_or_item_id_gives_the_same_agreement():
    frame = pd.DataFrame({"item_id": list("aabbccdd"), "criterion": "q", "rater": ["h1", "h2"] * 4,
                          "value": [1, 1, 2, 1, 3, 3, 1, 2]})
    first = cs.agree(frame, n_resamples=0)[0]
    second = cs.agree(frame.rename(columns={"item_id": "item"}), n_resamples=0)[0]
    assert first.krippendorff_alpha == second.krippendorff_alpha and first.n_items == 4


def test_a_frame_missing_a_column_is_a_clear_error():
    frame = pd.DataFrame({"id": ["a"], "rater": ["h"], "value": [1]})
    with pytest.raises(cs.ConfigError, match="needs the columns item_id \\(or item\\), criterion, rater and "
                                             "value; missing item_id, criterion"):
        cs.agree(frame)


def test_one_column_mapping_for_items_and_ratings(tmp_path):
    path = tmp_path / "ratings.csv"
    path.write_text("id,annotator,label\na,x,1\na,y,2\nb,x,3\nb,y,3\n", encoding="utf-8")
    columns = ColumnMap(id="id", rater="annotator", value="label", default_criterion="q")
    assert cs.ColumnMap is ColumnMap
    ratings = read_ratings(path, columns=columns)
    assert [(r.item_id, r.rater, r.value) for r in ratings][:2] == [("a", "x", 1), ("a", "y", 2)]
    frame = read_frame(path, columns=columns)
    assert list(frame.columns[:1]) == ["item_id"]
    with pytest.warns(DeprecationWarning, match="ColumnMap"):
        old = RatingColumns(item="id", rater="annotator", value="label", default_criterion="q")
    assert old == columns


@pytest.mark.parametrize("name", ["item_id", "item", "id"])
def test_ratings_files_name_the_item_as_item_id_item_or_id(tmp_path, name):
    path = tmp_path / "ratings.jsonl"
    path.write_text("".join(json.dumps({name: f"i{k}", "criterion": "q", "rater": r, "value": k % 3})
                            + "\n" for k in range(4) for r in ("h1", "h2")), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert {r.item_id for r in read_ratings(path)} == {"i0", "i1", "i2", "i3"}
        assert set(read_frame(path)["item_id"]) == {"i0", "i1", "i2", "i3"}
