"""Several workers on one run never do a task twice (chunk leases in the store), and a dead
worker's chunks are taken over once its lease runs out: unit checks on a real SQLite file, then
three real ``convoscope judge`` processes and a kill -9, on SQLite and on a real PostgreSQL server,
against the real llama.cpp server behind the counting fault proxy."""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest
import sqlalchemy as sa
from patience import PATIENT_ARGS, PATIENT_S
from short_rubric import CRITERIA

from convoscope.store import Store
from convoscope.store._chunks import chunk_states, claim_chunk, finish_chunk, this_machine, worker_name
from convoscope.store._schema import MIGRATIONS


def test_three_workers_never_claim_the_same_chunk(tmp_path):
    path = tmp_path / "s.db"
    Store(path).close()
    got: dict[str, set[int]] = {}

    def worker(name):
        store, mine = Store(path), set()
        for chunk in range(120):
            if claim_chunk(store.engine, "r", chunk, "same", name, 60) == "claimed":
                mine.add(chunk)
        got[name] = mine
        store.close()

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set.union(*got.values()) == set(range(120))
    assert sum(len(claimed) for claimed in got.values()) == 120  # disjoint


def test_a_worker_done_with_its_own_chunks_looks_again_at_held_ones_soon_then_less_often():
    """At the end of a run spread over processes, each waits for the chunks the others still
    hold. It looks again after 50 ms, not after a fixed 2 s (issue 39: every `--workers 2` run
    ended up to 2 s after its last verdict), and backs off to at most min(2 s, lease / 4)."""
    from itertools import islice

    from convoscope.runs._engine import held_waits

    waits = list(islice(held_waits(120.0), 12))
    assert waits[0] == 0.05
    assert all(later >= earlier for earlier, later in zip(waits, waits[1:], strict=False))
    assert max(waits) == waits[-1] == 2.0
    assert sum(1 for wait in waits if wait < 2.0) == 6  # 0.05 to 1.6: about 3 s before the cap
    assert max(islice(held_waits(1.0), 12)) == 0.25  # a short lease is looked at more often
    assert next(held_waits(0.1)) == 0.025


def test_a_dead_workers_lease_expires_finished_chunks_stay_finished_changed_ones_reopen(tmp_path):
    store = Store(tmp_path / "s.db")
    assert claim_chunk(store.engine, "r", 0, "f0", "dead", 0.2) == "claimed"
    assert claim_chunk(store.engine, "r", 0, "f0", "alive", 60) == "held"  # still leased
    time.sleep(0.3)
    assert claim_chunk(store.engine, "r", 0, "f0", "alive", 60) == "claimed"
    with store.engine.begin() as connection:
        finish_chunk(connection, "r", 0, Counter(scored=3))
    assert claim_chunk(store.engine, "r", 0, "f0", "third", 60) == "done"
    assert claim_chunk(store.engine, "r", 0, "f0", "third", 60, again=True) == "claimed"  # on request
    with store.engine.begin() as connection:
        finish_chunk(connection, "r", 0, Counter(scored=2, model_error=1))
    assert chunk_states(store.engine, "r")[0].state == "failed"  # a next run takes it again
    assert claim_chunk(store.engine, "r", 0, "f0", "fourth", 60) == "claimed"
    with store.engine.begin() as connection:
        finish_chunk(connection, "r", 0, Counter(scored=3))
    assert claim_chunk(store.engine, "r", 0, "changed", "fifth", 60) == "claimed"  # other content
    assert chunk_states(store.engine, "r")[0].fingerprint == "changed"


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # reaped: that pid runs nothing now (reuse within this test is not a worry)
    return child.pid


def test_a_killed_run_on_this_machine_gives_its_chunks_back_at_once(tmp_path):
    # Found while measuring issue 23: a run killed with kill -9 and started again waited for its
    # own dead process's leases to run out (120 s by default) before judging those chunks.
    store = Store(tmp_path / "s.db")
    machine = this_machine()
    dead = f"{machine}:{_dead_pid()}:abc123"
    assert claim_chunk(store.engine, "r", 0, "f0", dead, 3600) == "claimed"
    assert claim_chunk(store.engine, "r", 0, "f0", worker_name(), 3600) == "claimed"
    # A live process on this machine, or any process on another machine: its lease is respected.
    alive = f"{machine}:{os.getppid()}:def456"
    assert claim_chunk(store.engine, "r", 1, "f1", alive, 3600) == "claimed"
    assert claim_chunk(store.engine, "r", 1, "f1", worker_name(), 3600) == "held"
    elsewhere = f"{socket.gethostname()}-other:{_dead_pid()}:abc123"
    assert claim_chunk(store.engine, "r", 2, "f2", elsewhere, 3600) == "claimed"
    assert claim_chunk(store.engine, "r", 2, "f2", worker_name(), 3600) == "held"
    # Ray's workers are named "ray:<machine>:<pid>:<random>".
    assert claim_chunk(store.engine, "r", 3, "f3", f"ray:{dead}", 3600) == "claimed"
    assert claim_chunk(store.engine, "r", 3, "f3", worker_name(), 3600) == "claimed"
    store.close()


def test_a_machine_that_shares_this_host_name_keeps_its_leases(tmp_path):
    # Two machines, or two containers with their own PID namespaces, may share a host name: a pid
    # that is free here may be at work there. Before, the host name alone decided, and such a
    # lease was taken at once. The owner's name now carries the boot id and PID namespace.
    store = Store(tmp_path / "s.db")
    host, pid = socket.gethostname(), _dead_pid()
    twin = f"{host}~00000000:{pid}:abc123"  # same host name, another boot or namespace
    bare = f"{host}:{pid}:abc123"  # a name from before the change: nothing to tell by
    for chunk, owner in enumerate((twin, bare)):
        assert claim_chunk(store.engine, "r", chunk, "f", owner, 3600) == "claimed"
        assert claim_chunk(store.engine, "r", chunk, "f", worker_name(), 3600) == "held"
    assert worker_name().startswith(f"{host}~") and this_machine() != f"{host}~00000000"
    store.close()


def test_a_killed_child_not_yet_reaped_counts_as_gone(tmp_path):
    store = Store(tmp_path / "s.db")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    try:
        owner = f"{this_machine()}:{child.pid}:abc123"
        assert claim_chunk(store.engine, "r", 0, "f0", owner, 3600) == "claimed"
        assert claim_chunk(store.engine, "r", 0, "f0", "me", 3600) == "held"  # it runs
        child.kill()
        deadline = time.monotonic() + PATIENT_S
        while _state(child.pid) != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _state(child.pid) == "Z"  # a zombie: its parent (this test) has not reaped it yet
        assert claim_chunk(store.engine, "r", 0, "f0", "me", 3600) == "claimed"
    finally:
        child.kill()
        child.wait()
        store.close()


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as handle:
        return handle.read().rsplit(")", 1)[1].split()[0]


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_workers_started_together_on_a_new_database_all_start(tmp_path, kind):
    """Before: on PostgreSQL, 1–2 of 3 workers started at once died with a UniqueViolation while
    creating the tables. Migrations now run under a lock. Processes, as users start them."""
    script = "import sys; from convoscope.store import Store; Store(sys.argv[1]).close(); print('ok')"
    with contextlib.ExitStack() as stack:
        if kind == "postgres":
            pytest.importorskip("psycopg")
            from pg_server import postgres_server

            target = stack.enter_context(postgres_server())
            if target is None:
                pytest.skip("PostgreSQL server binaries not installed (scripts/test.sh installs them)")
        else:
            target = str(tmp_path / "new.db")
        for _attempt in range(3):  # a race shows up in some starts, not every one
            if kind == "postgres":
                with Store(target).engine.begin() as connection:
                    for table in ("verdicts", "runs", "run_tasks", "run_chunks", "schema_version"):
                        connection.execute(sa.text(f"DROP TABLE IF EXISTS {table}"))
            else:
                for leftover in tmp_path.glob("new.db*"):
                    leftover.unlink()
            workers = [subprocess.Popen([sys.executable, "-c", script, target], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True) for _ in range(4)]
            results = [worker.communicate(timeout=PATIENT_S) for worker in workers]
            assert [worker.returncode for worker in workers] == [0] * 4, [err[-800:] for _, err in results]
        with Store(target).engine.connect() as connection:
            version = connection.execute(sa.text("select version from schema_version")).fetchall()
        assert version == [(len(MIGRATIONS),)]


N_ITEMS = 12
CONCURRENCY = 2


def _command(tmp_path, store, base_url, lease_s):
    return [sys.executable, "-m", "convoscope", "judge", str(tmp_path / "items.jsonl"),
            "--criteria-file", str(tmp_path / "criteria.yaml"), "--store", str(store),
            "--judge", f"openai:smollm2@{base_url}", "--mode", "completion", "--no-cache",
            "--concurrency", str(CONCURRENCY), "--lease", str(lease_s), "--chunk-size", "2", *PATIENT_ARGS]


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
