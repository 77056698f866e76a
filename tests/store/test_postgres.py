"""The same store code on a real PostgreSQL server, started for this test on 127.0.0.1."""

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from convoscope.judges import Verdict
from convoscope.store import Store

pytest.importorskip("psycopg")


def find(binary):
    found = shutil.which(binary)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{binary}"))
    return str(candidates[-1]) if candidates else None


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def postgres_url():
    initdb, pg_ctl = find("initdb"), find("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL server binaries not installed (scripts/test.sh installs them)")
    # Not under pytest's tmp dir: as root, initdb runs as 'postgres', who cannot enter it.
    home = Path(tempfile.mkdtemp(prefix="convoscope-pg-"))
    data = home / "data"
    as_user = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        shutil.chown(home, user="postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    subprocess.run([*as_user, initdb, "-D", str(data), "-U", "postgres", "-A", "trust"],
                   check=True, capture_output=True)
    port = free_port()
    options = f"-h 127.0.0.1 -p {port} -k {data}"
    subprocess.run([*as_user, pg_ctl, "-D", str(data), "-o", options, "-w", "start",
                    "-l", str(data / "log")], check=True, capture_output=True)
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, pg_ctl, "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def test_store_on_postgres(postgres_url):
    store = Store(postgres_url)
    assert store.start_run("r", {"x": 1}) and not store.start_run("r", {})
    store.add("r", "k1", Verdict(item_id="1", criterion="c", rater="model:m", value=2))
    store.add_many("r", [("k1", Verdict(item_id="1", criterion="c", rater="model:m", value=0)),
                         ("k2", Verdict(item_id="2", criterion="c", rater="human:a", value=None,
                                        unscored_reason="idk"))])
    assert store.done_keys("r") == {"k1", "k2"}
    assert [(v.item_id, v.value) for v in store.verdicts("r")] == [("1", 2), ("2", None)]
    store.close()
    reopened = Store(postgres_url)  # migrations run once
    assert len(reopened.verdicts()) == 2
    reopened.close()


def test_a_failure_is_superseded_with_its_attempts_counted_on_postgres(postgres_url):
    """The writer's compiled INSERT (named parameters on psycopg): a stored model_error is
    replaced and counted, a scored verdict is kept, and the columns hold the verdict."""
    import json

    import sqlalchemy as sa

    store = Store(postgres_url)
    failed = Verdict(item_id="1", criterion="c", rater="model:m", value=None, unscored_reason="model_error")
    scored = Verdict(item_id="1", criterion="c", rater="model:m", value=3, reason="fine")
    store.add_many("", [("s1", failed), ("s2", scored)], supersede=["model_error"])
    store.add_many("", [("s1", scored), ("s2", failed)], supersede=["model_error"])
    with store.engine.connect() as connection:
        rows = {row.task_key: row for row in connection.execute(sa.text(
            "select task_key, run_id, item_id, value, unscored_reason, data, attempts from verdicts "
            "where scope = '' and task_key in ('s1', 's2')"))}
    assert rows["s1"].attempts == 2 and rows["s2"].attempts == 1
    for key in ("s1", "s2"):
        assert (rows[key].run_id, rows[key].item_id, rows[key].value, rows[key].unscored_reason,
                rows[key].data) == ("", "1", json.dumps(3), None, scored.model_dump_json())
    store.close()


def test_a_new_run_takes_another_runs_done_chunks_on_postgres(postgres_url):
    """What a renamed input's run does (tests/runs/test_renamed_input.py), in PostgreSQL's SQL."""
    from collections import Counter

    import sqlalchemy as sa

    from convoscope.items._prefix import Prefix
    from convoscope.store._chunks import (
        chunk_states,
        chunk_task_keys,
        claim_chunk,
        finish_chunk,
        register_tasks,
        related_prefixes,
        save_prefix,
        take_chunks,
    )

    store = Store(postgres_url)
    try:
        store.start_run("old", {"config": "same"})
        store.start_run("other", {"config": "another"})
        store.start_run("new", {"config": "same"})
        with store.engine.begin() as connection:
            for chunk in (0, 1, 2):
                claim_chunk(store.engine, "old", chunk, f"f{chunk}", "w", 60.0)
                keys = [(f"k{chunk}{i}", 2 * chunk + i, False) for i in (0, 1)]
                register_tasks(connection, "old", chunk, keys)
        with store.engine.begin() as connection:
            for chunk in (0, 1):
                finish_chunk(connection, "old", chunk, Counter(scored=2))
        prefix = Prefix(2, 2, 4, 100, "d", b"\0" * 32)
        save_prefix(store.engine, "old", prefix, only_longer=False)
        save_prefix(store.engine, "other", prefix, only_longer=False)
        assert [owner for owner, _ in related_prefixes(store.engine, "new", "same")] == ["old"]
        assert not take_chunks(store.engine, "new", "old", 3)  # chunk 2 is not done: nothing taken
        assert chunk_states(store.engine, "new") == {}
        assert take_chunks(store.engine, "new", "old", 2) and take_chunks(store.engine, "new", "old", 2)
        states = chunk_states(store.engine, "new")
        assert sorted(states) == [0, 1] and {state.state for state in states.values()} == {"done"}
        assert states[1].outcome == Counter(scored=2) and states[1].fingerprint == "f1"
        assert sorted(chunk_task_keys(store.engine, "new", 1)) == ["k10", "k11"]
        with store.engine.connect() as connection:
            count = sa.text("select count(*) from run_tasks where run_id = 'new'")
            assert connection.execute(count).scalar() == 4
        # a run that holds one of those chunks with other content takes nothing
        store.start_run("stale", {"config": "same"})
        claim_chunk(store.engine, "stale", 1, "changed", "w", 60.0)
        assert not take_chunks(store.engine, "stale", "old", 2)
        assert list(chunk_states(store.engine, "stale")) == [1]
    finally:
        store.close()
