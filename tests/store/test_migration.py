"""Stores written before verdicts were keyed by what they ask (schema 3) open and keep their data.

A store of schema 3 is built with the project's own first three migrations, filled as the old
engine filled it (the same key in two runs, a transient failure beside a lasting verdict, a
campaign's answers), then opened: judge verdicts are stored once per key (a lasting verdict beats
a model_error, then the latest wins), campaign answers keep their campaign, every old run still
lists its verdicts."""

import json

import sqlalchemy as sa

from convoscope.judges import Verdict
from convoscope.store import Store
from convoscope.store._schema import MIGRATIONS


def old_row(run_id, key, item, value, reason=None, rater="model:x"):
    verdict = Verdict(item_id=item, criterion="c", rater=rater, value=value, unscored_reason=reason)
    return {"run_id": run_id, "task_key": key, "item_id": item, "criterion": "c", "rater": rater,
            "value": None if value is None else json.dumps(value), "unscored_reason": reason,
            "data": verdict.model_dump_json(), "created_at": 1.0, "attempts": 1}


def test_a_schema_3_store_is_migrated_without_losing_anything(tmp_path):
    path = tmp_path / "old.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        for migration in MIGRATIONS[:3]:
            migration(connection)
        connection.execute(sa.text("CREATE TABLE schema_version (version INTEGER NOT NULL)"))
        connection.execute(sa.text("INSERT INTO schema_version VALUES (3)"))
        rows = [old_row("run-a", "k1", "i1", 4), old_row("run-a", "k2", "i2", None, "model_error"),
                old_row("run-b", "k2", "i2", 3), old_row("run-b", "k1", "i1", 5),
                old_row("run-b", "k3", "i3", None, "model_error"),
                old_row("campaign:study", "k1", "i1", 1, rater="human:a")]
        connection.execute(sa.text(
            "INSERT INTO verdicts (run_id, task_key, item_id, criterion, rater, value, unscored_reason, "
            "data, created_at, attempts) VALUES (:run_id, :task_key, :item_id, :criterion, :rater, "
            ":value, :unscored_reason, :data, :created_at, :attempts)"), rows)
    engine.dispose()

    store = Store(path)
    by_key = store.verdicts_by_key(["k1", "k2", "k3"])
    assert by_key["k1"].value == 5  # both lasting: the latest
    assert by_key["k2"].value == 3  # a lasting verdict beats the earlier model_error
    assert by_key["k3"].unscored_reason == "model_error"  # still to do: a re-run retries it
    assert [v.value for v in store.verdicts("campaign:study")] == [1]  # the campaign's own scope
    assert store.done_keys("campaign:study") == {"k1"}
    assert sorted(v.item_id for v in store.verdicts("run-a")) == ["i1", "i2"]
    assert sorted(v.item_id for v in store.verdicts("run-b")) == ["i1", "i2", "i3"]
    with store.engine.connect() as connection:
        assert connection.exec_driver_sql("select count(*) from verdicts").scalar() == 4
        versions = connection.exec_driver_sql("select version from schema_version").fetchall()
        assert versions == [(len(MIGRATIONS),)]
        tables = set(sa.inspect(connection).get_table_names())
    assert "tasks" not in tables and {"run_tasks", "run_chunks"} <= tables
    store.close()
    Store(path).close()  # opening again changes nothing
