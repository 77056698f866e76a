"""Several workers on one run never do a task twice (task leases in the store), and a dead
worker's tasks are taken over once its lease runs out: unit checks on a real SQLite file, then
three real ``convoscope judge`` processes and a kill -9, on SQLite and on a real PostgreSQL server,
against the real llama.cpp server behind the counting fault proxy."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
import sqlalchemy as sa
from patience import PATIENT_ARGS, PATIENT_S
from short_rubric import CRITERIA

from convoscope.store import Store

KEYS = [f"k{i}" for i in range(200)]


def test_two_workers_never_claim_the_same_task(tmp_path):
    path = tmp_path / "s.db"
    Store(path).register_tasks("r", KEYS)
    got: dict[str, set[str]] = {}

    def worker(name):
        store, mine = Store(path), set()
        for start in range(0, len(KEYS), 10):
            claimed, _ = store.claim("r", name, KEYS[start:start + 10], lease_s=60)
            mine |= claimed
        got[name] = mine

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set.union(*got.values()) == set(KEYS)
    assert sum(len(claimed) for claimed in got.values()) == len(KEYS)  # disjoint


def test_a_dead_workers_lease_expires_and_finished_tasks_stay_finished(tmp_path):
    store = Store(tmp_path / "s.db")
    store.register_tasks("r", ["a", "b", "c"], done=["c"])
    assert store.claim("r", "dead", ["a", "b", "c"], lease_s=0.2) == ({"a", "b"}, {"c"})
    assert store.claim("r", "alive", ["a", "b"], lease_s=60) == (set(), set())  # still leased
    time.sleep(0.3)
    assert store.claim("r", "alive", ["a", "b"], lease_s=60) == ({"a", "b"}, set())
    store.register_tasks("r", ["a", "b", "c"])  # a later process registering never reopens "c"
    assert store.claim("r", "third", ["c"], lease_s=60) == (set(), {"c"})


N_ITEMS = 12
CONCURRENCY = 2


def _command(tmp_path, store, base_url, lease_s):
    return [sys.executable, "-m", "convoscope", "judge", str(tmp_path / "items.jsonl"),
            "--criteria-file", str(tmp_path / "criteria.yaml"), "--store", str(store),
            "--judge", f"openai:smollm2@{base_url}", "--mode", "completion", "--no-cache",
            "--concurrency", str(CONCURRENCY), "--lease", str(lease_s), *PATIENT_ARGS]


def _rows(store):
    try:
        with Store(store).engine.connect() as connection:
            return connection.execute(sa.text("select task_key, item_id, value from verdicts")).fetchall()
    except sa.exc.OperationalError:
        return []


def _three_workers_and_a_kill(tmp_path, store, proxy):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    with (tmp_path / "items.jsonl").open("w") as handle:
        for i in range(N_ITEMS):
            handle.write(json.dumps({"id": f"i{i}", "response": f"Answer {i}: more trains."}) + "\n")
    proxy.always(None)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # The worker to be killed holds short leases, so its tasks are free again soon after the kill;
    # the survivors hold long ones, so a heartbeat delayed on a loaded machine never lets a task
    # they are judging go to another worker (which would be a second call, whatever the code does).
    workers = [subprocess.Popen(_command(tmp_path, store, proxy.base_url, lease_s), env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
               for lease_s in (4, 600, 600)]
    deadline = time.monotonic() + PATIENT_S
    while len(_rows(store)) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(workers[0].pid, signal.SIGKILL)
    codes = [worker.wait(timeout=PATIENT_S) for worker in workers]
    assert codes[0] == -signal.SIGKILL and codes[1:] == [0, 0], workers[1].stderr.read().decode()[-2000:]
    rows = _rows(store)
    assert sorted(item for _, item, _ in rows) == sorted(f"i{i}" for i in range(N_ITEMS))  # none lost
    assert len({key for key, _, _ in rows}) == len(rows)  # none twice
    assert all(value is not None for _, _, value in rows)
    # One scoring request per task (the backend may ask once more past a leading space).
    prompts = [entry.body["prompt"] for entry in proxy.requests
               if entry.body.get("prompt", "").endswith("Score:")]
    assert len(set(prompts)) == N_ITEMS
    # The only repeated calls are the ones the killed worker had in flight when it died.
    assert len(prompts) - len(set(prompts)) <= CONCURRENCY


@pytest.mark.slow
def test_three_processes_and_a_kill_9_do_every_task_once_on_sqlite(tmp_path, fault_proxy):
    _three_workers_and_a_kill(tmp_path, tmp_path / "shared.db", fault_proxy)


@pytest.mark.slow
def test_three_processes_and_a_kill_9_do_every_task_once_on_postgres(tmp_path, fault_proxy):
    pytest.importorskip("psycopg")
    from pg_server import postgres_server

    with postgres_server() as url:
        if url is None:
            pytest.skip("PostgreSQL server binaries not installed (scripts/test.sh installs them)")
        _three_workers_and_a_kill(tmp_path, url, fault_proxy)
