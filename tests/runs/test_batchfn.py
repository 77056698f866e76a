"""The per-batch judge (JudgeBatch) that Ray Data, Spark and Dask map over tables of items: it keys
tasks exactly as the local engine does, passes on what the shared store holds, judges only what
is missing, and is picklable before and after use. The fault proxy's canned completions (a real
HTTP server on 127.0.0.1: what is checked is which tasks are asked, not what a model says), a
real SQLite store; the Dask example of docs/runs.md on Dask's own scheduler."""

import pickle

import pandas as pd
import pyarrow as pa
import pytest
import sqlalchemy as sa
from installed import library_or_skip
from patience import PATIENT
from short_rubric import CRITERIA

import convoscope as cs
from convoscope.items import ItemError
from convoscope.runs import JudgeBatch, JudgeSpec, batch_settings
from convoscope.store import Store

ROWS = [{"id": f"i{i}", "question": "What would you change?", "response": f"Answer {i}: more trains."}
        for i in range(4)]
DIALOGUE = {"id": "d0", "context": '[{"speaker": "A", "text": "hi"}]'}  # no response: not applicable


def _criteria(tmp_path):
    path = tmp_path / "criteria.yaml"
    path.write_text(CRITERIA)
    return cs.load_criteria(path)


def _spec(proxy):
    return JudgeSpec(f"openai:canned@{proxy.base_url}", mode="completion")


def _scoring_calls(proxy):
    return sum(1 for entry in proxy.requests if entry.body.get("prompt", "").endswith("Score:"))


def _stored(store_path):
    store = Store(store_path)
    try:
        with store.engine.connect() as connection:
            return dict(connection.execute(sa.text("select task_key, item_id from verdicts")).fetchall())
    finally:
        store.close()


def test_a_batch_keys_tasks_as_the_local_engine_and_judges_only_what_the_store_lacks(tmp_path, canned_proxy):
    criteria, store = _criteria(tmp_path), tmp_path / "store.db"
    local = cs.judge([cs.Item(**row) for row in ROWS[:2]], criteria, _spec(canned_proxy), store=store,
                     cache_path=None, model_options=PATIENT)
    local_keys = set(_stored(store))
    assert len(local_keys) == 2

    settings = batch_settings(criteria, _spec(canned_proxy), store=store, cache_path=None,
                              model_options=PATIENT, concurrency=2)
    judge_batch = pickle.loads(pickle.dumps(JudgeBatch(settings)))  # as an engine ships it
    sent = _scoring_calls(canned_proxy)
    table = judge_batch(pa.Table.from_pylist([*ROWS, DIALOGUE]))
    rows = table.to_pylist()
    by_origin = {origin: [row for row in rows if row["origin"] == origin] for origin in ("stored", "judged",
                                                                                       "skipped")}
    assert {row["task_key"] for row in by_origin["stored"]} == local_keys  # the local engine's keys
    assert sorted(row["item_id"] for row in by_origin["judged"]) == ["i2", "i3"]
    assert _scoring_calls(canned_proxy) - sent == 2  # only the missing tasks were asked
    assert [(row["item_id"], row["rater"]) for row in by_origin["skipped"]] == [("d0", "")]
    assert local.verdicts[0].value == next(row["value"] for row in rows if row["item_id"] == "i0")
    assert set(_stored(store)) == {row["task_key"] for row in rows if row["origin"] != "skipped"}

    # The same batch again, as pandas and from a copy pickled after use: everything is stored.
    again = pickle.loads(pickle.dumps(judge_batch))(pd.DataFrame(ROWS))
    assert isinstance(again, pd.DataFrame) and set(again["origin"]) == {"stored"}
    assert _scoring_calls(canned_proxy) - sent == 2
    opened = Store(store)
    try:
        listed = opened.verdicts(settings.run_id)
    finally:
        opened.close()
    assert sorted(v.item_id for v in listed) == ["i0", "i1", "i2", "i3"]  # the run lists its keys
    judge_batch.close()


def test_a_bad_row_names_the_source_the_field_and_the_item_before_any_call(tmp_path, canned_proxy):
    settings = batch_settings(_criteria(tmp_path), _spec(canned_proxy), store=tmp_path / "s.db",
                              cache_path=None, rows="records", source="answers.parquet")
    sent = len(canned_proxy.requests)
    with pytest.raises(ItemError) as caught:
        JudgeBatch(settings)(pd.DataFrame([ROWS[0], {"id": "bad", "response": 7}]))
    message = str(caught.value)
    assert message.startswith("answers.parquet, field 'response'") and "'bad'" in message
    assert len(canned_proxy.requests) == sent


def test_dask_map_partitions_judges_every_task_once(tmp_path, canned_proxy):
    """The Dask example of docs/runs.md."""
    dd = library_or_skip("dask.dataframe")
    from convoscope.runs import verdict_schema

    criteria, store = _criteria(tmp_path), tmp_path / "store.db"
    settings = batch_settings(criteria, _spec(canned_proxy), store=store, cache_path=None,
                              model_options=PATIENT)
    items = dd.from_pandas(pd.DataFrame(ROWS), npartitions=2)
    meta = verdict_schema(criteria).empty_table().to_pandas()
    sent = _scoring_calls(canned_proxy)
    verdicts = items.map_partitions(JudgeBatch(settings), meta=meta).compute(scheduler="threads")
    assert sorted(verdicts["item_id"]) == ["i0", "i1", "i2", "i3"]
    assert set(verdicts["origin"]) == {"judged"} and _scoring_calls(canned_proxy) - sent == 4
    assert len(_stored(store)) == 4
    again = items.map_partitions(JudgeBatch(settings), meta=meta).compute(scheduler="threads")
    assert set(again["origin"]) == {"stored"} and _scoring_calls(canned_proxy) - sent == 4
