import sqlite3

from convoscope.judges import Verdict
from convoscope.store import Store
from convoscope.store._schema import MIGRATIONS


def verdict(item_id, value=1):
    return Verdict(item_id=item_id, criterion="c", rater="model:x", value=value)


def test_store_round_trip_dedup_and_reopen(tmp_path):
    path = tmp_path / "v.db"
    store = Store(path)
    assert store.location == str(path.resolve())
    assert store.start_run("r1", {"a": 1}) is True
    store.add("r1", "k1", verdict("1"))
    store.add_many("r1", [("k1", verdict("1", 0)), ("k2", verdict("2", None))])
    store.close()
    again = Store(path)  # migrations are idempotent
    assert again.start_run("r1", {}) is False
    assert again.done_keys("r1") == {"k1", "k2"}
    assert [(v.item_id, v.value) for v in again.verdicts("r1")] == [("1", 1), ("2", None)]
    assert again.verdicts("other") == []
    version = sqlite3.connect(path).execute("select version from schema_version").fetchall()
    assert version == [(len(MIGRATIONS),)]  # one row: the latest migration


def test_postgres_url_is_normalised():
    from convoscope.store import store_url

    assert store_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert store_url("rel.db").startswith("sqlite:////")
