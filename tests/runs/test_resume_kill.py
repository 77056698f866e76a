"""kill -9 in the middle of a real run on the embedded model, then resume: nothing lost, nothing
duplicated, and a re-run against the same cache makes no model call."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from short_rubric import CRITERIA

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow

N_ITEMS = 30


def command(tmp_path, store):
    return [sys.executable, "-m", "convoscope", "judge", str(tmp_path / "items.jsonl"),
            "--criteria-file", str(tmp_path / "criteria.yaml"), "--store", str(store),
            "--cache", str(tmp_path / "cache.db"), "--concurrency", "2"]


def count_rows(store):
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store, timeout=5) as connection:
            return connection.execute("select count(*) from verdicts").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def last_summary(store):
    with sqlite3.connect(store) as connection:
        (summary,) = connection.execute(
            "select summary from runs order by created_at desc limit 1").fetchone()
    return json.loads(summary)


def test_kill_9_then_resume(tmp_path):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    with (tmp_path / "items.jsonl").open("w") as handle:
        for i in range(N_ITEMS):
            handle.write(json.dumps({"id": f"i{i}", "response": f"Answer number {i}: more trains."}) + "\n")
    store = tmp_path / "store.db"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(command(tmp_path, store), env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while count_rows(store) < 3 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    before = count_rows(store)
    assert 3 <= before < N_ITEMS, "the run should have been killed part-way"

    resumed = subprocess.run(command(tmp_path, store), env=env, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    with sqlite3.connect(store) as connection:
        ids = [row[0] for row in connection.execute("select item_id from verdicts")]
    assert sorted(ids) == sorted(f"i{i}" for i in range(N_ITEMS))  # all there, none twice
    summary = last_summary(store)
    assert summary["resumed"] == before and summary["verdicts"] == N_ITEMS - before

    fresh_store = tmp_path / "fresh.db"
    cached = subprocess.run(command(tmp_path, fresh_store), env=env, capture_output=True, text=True)
    assert cached.returncode == 0, cached.stderr
    summary = last_summary(fresh_store)
    assert summary["model_calls"] == 0 and summary["cache_hits"] == N_ITEMS
