"""Issue 35, observation 4: items and verdicts from and to every kind of table through one
adapter — pandas, polars (eager and lazy), pyarrow Table and dataset, Hugging Face Dataset and
one split of a DatasetDict — with unusual content (scripts, emoji, None, nested meta and lists)."""

from __future__ import annotations

import pytest
from installed import library_or_skip

import convoscope as cs
from convoscope import ConvoscopeError, Item, Turn, Verdict
from convoscope.items import items_to_table, read_items, verdicts_to_table

KINDS = ("pandas", "polars", "pyarrow", "hf")
LIBRARY = {"pandas": "pandas", "polars": "polars", "pyarrow": "pyarrow", "hf": "datasets"}

ITEMS = [
    Item(id="007", question="어떻게 지내요?", response="잘 지내요 🙂 — thanks\nsecond line",
         context=(Turn(speaker="user", text="שלום"), Turn(speaker="bot", text="zero\u200bwidth")),
         language="ko", system="bot-a",
         meta={"wave": 2, "tags": ["a", "ü"], "nested": {"x": None, "y": [1, 2.5]}, "note": None}),
    Item(id="d2", context=(Turn(speaker="A", text="a whole dialogue"), Turn(speaker="B", text="…")),
         meta={}),
    Item(id="r3", response="", reference="réf", meta={"wave": 3}),
]

VERDICTS = [
    Verdict(item_id="007", criterion="overall", rater="model:x", value=3, options=("générique", "🙂"),
            distribution={"3": 0.7, "4": 0.3}, expected_value=3.3, reason="naïve, but “fine”", seed=7,
            latency_s=0.25, language="ko"),
    Verdict(item_id="d2", criterion="kpi:follow-up", rater="human:1", value="yes", relevant=True),
    Verdict(item_id="r3", criterion="overall", rater="model:x", value=None, unscored_reason="parse_failure",
            raw="line one\nline two ✓", options=()),
]


@pytest.mark.parametrize("kind", KINDS)
def test_items_go_to_each_kind_of_table_and_come_back_unchanged(kind):
    library = library_or_skip(LIBRARY[kind])
    table = items_to_table(ITEMS, kind=kind)
    assert type(table).__module__.partition(".")[0] == library.__name__
    assert read_items(table) == ITEMS


@pytest.mark.parametrize("kind", KINDS)
def test_verdicts_go_to_each_kind_of_table_and_come_back_unchanged(kind):
    library_or_skip(LIBRARY[kind])
    table = verdicts_to_table(VERDICTS, kind=kind)
    assert cs.read_verdicts(table) == VERDICTS


@pytest.mark.parametrize("kind", ["polars", "pyarrow", "hf"])
def test_verdicts_written_to_parquet_from_a_typed_table_read_back(kind, tmp_path):
    """Before: Parquet written from ``verdicts_to_table(v, kind="hf")`` failed to read with
    "field 'options': Input should be a valid tuple" (options were JSON text)."""
    library_or_skip(LIBRARY[kind])
    pq = library_or_skip("pyarrow.parquet")
    table = verdicts_to_table(VERDICTS, kind=kind)
    path = tmp_path / "verdicts.parquet"
    if kind == "polars":
        table.write_parquet(path)
    elif kind == "pyarrow":
        pq.write_table(table, path)
    else:
        table.to_parquet(str(path))
    assert cs.read_verdicts(path) == VERDICTS


def test_parquet_from_the_old_hugging_face_form_with_options_as_json_text_reads(tmp_path):
    pa = library_or_skip("pyarrow")
    pq = library_or_skip("pyarrow.parquet")
    rows = [{"item_id": "a", "criterion": "overall", "rater": "model:x", "value": "3",
             "options": '["genericness"]', "distribution": '{"3": 1.0}'}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "old.parquet")
    (verdict,) = cs.read_verdicts(tmp_path / "old.parquet")
    assert verdict.options == ("genericness",) and verdict.value == 3 and verdict.distribution == {"3": 1.0}


def test_a_polars_frame_is_read_as_polars_not_taken_for_pandas():
    """Before: both classes are named ``DataFrame``; polars was sent down pandas' path and failed
    with a raw AttributeError (``to_dict(orient=...)``)."""
    pl = library_or_skip("polars")
    frame = pl.DataFrame({"id": ["1", "2"], "response": ["ok", None], "wave": [1, None]})
    items = read_items(frame)
    assert [(item.id, item.response, item.meta) for item in items] == [("1", "ok", {"wave": 1}),
                                                                         ("2", None, {"wave": None})]
    assert read_items(frame.lazy()) == items  # a LazyFrame is collected


def test_a_users_own_tables_of_each_kind_read_alike():
    """Tables built by hand, not by convoscope: context as JSON text, an extra column as meta."""
    rows = {"id": ["a", "b"], "response": ["fine ✓", "não"],
            "context": ['[{"speaker": "user", "text": "hi"}]', "user: olá"], "wave": [1, 2]}
    expected = read_items([dict(zip(rows, values, strict=True))
                           for values in zip(*rows.values(), strict=True)])
    pd = library_or_skip("pandas")
    assert read_items(pd.DataFrame(rows)) == expected
    pa = library_or_skip("pyarrow")
    assert read_items(pa.table(rows)) == expected
    assert read_items(pa.table(rows).to_batches()[0]) == expected
    pl = library_or_skip("polars")
    assert read_items(pl.DataFrame(rows)) == expected
    datasets = library_or_skip("datasets")
    assert read_items(datasets.Dataset.from_dict(rows)) == expected


def test_a_pyarrow_dataset_is_read_batch_by_batch(tmp_path):
    library_or_skip("pyarrow")
    ds = library_or_skip("pyarrow.dataset")
    pq = library_or_skip("pyarrow.parquet")
    pq.write_table(items_to_table(ITEMS, kind="pyarrow"), tmp_path / "items.parquet")
    assert read_items(ds.dataset(tmp_path / "items.parquet")) == ITEMS


def test_one_split_of_a_dataset_dict_is_read_by_name_and_a_missing_name_lists_the_splits():
    datasets = library_or_skip("datasets")
    splits = datasets.DatasetDict({"train": items_to_table(ITEMS, kind="hf"),
                                   "test": items_to_table(ITEMS[:1], kind="hf")})
    assert read_items(splits, split="test") == ITEMS[:1]
    with pytest.raises(ConvoscopeError, match=r"holds splits \(train, test\): name one, e\.g\. split='train"):
        read_items(splits)
    with pytest.raises(ConvoscopeError, match=r"no split 'dev' \(its splits: train, test\)"):
        read_items(splits, split="dev")
    verdict_splits = datasets.DatasetDict({"judged": verdicts_to_table(VERDICTS, kind="hf")})
    assert cs.read_verdicts(verdict_splits, split="judged") == VERDICTS
    shuffled = items_to_table(ITEMS, kind="hf").select([2, 0])  # an indices mapping, not a copy
    assert [item.id for item in read_items(shuffled)] == ["r3", "007"]


@pytest.mark.parametrize("thing", [42, {"id": "a"}, object(), [1, 2]])
def test_an_object_that_is_no_table_is_one_clear_error(thing):
    with pytest.raises(ConvoscopeError) as raised:
        read_items(thing)
    assert "cannot read items or verdicts from a" in str(raised.value) and "\n" not in str(raised.value)
    with pytest.raises(ConvoscopeError, match="cannot read items or verdicts from a"):
        cs.read_verdicts(thing)


def test_an_unknown_table_kind_is_named():
    with pytest.raises(ConvoscopeError, match=r"unknown table kind 'excel' \(use pandas, polars, pyarrow"):
        verdicts_to_table(VERDICTS, kind="excel")


def test_a_bad_row_of_a_polars_table_names_the_library_the_row_and_the_field():
    pl = library_or_skip("polars")
    with pytest.raises(ConvoscopeError, match=r"polars\.DataFrame, line 2, field 'id': duplicate id 'a'"):
        read_items(pl.DataFrame({"id": ["a", "a"], "response": ["x", "y"]}))
    bad = pl.DataFrame({"item_id": ["a"], "criterion": ["c"], "rater": ["model:x"], "value": ["3"],
                        "unscored_reason": ["bored"]})
    with pytest.raises(ConvoscopeError, match=r"polars\.DataFrame, line 1, field 'unscored_reason'"):
        cs.read_verdicts(bad)
