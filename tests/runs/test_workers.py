"""``convoscope judge --workers N``: one command, N processes sharing the run through the store's
chunk leases, one summary and exit status. Real ``convoscope judge`` processes against the real
llama.cpp server behind the counting proxy; a real SQLite store."""

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from patience import PATIENT_ARGS, PATIENT_S
from short_rubric import CRITERIA

pytestmark = pytest.mark.slow

N_ITEMS = 8
CONCURRENCY = 1


def _setup(tmp_path):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    with (tmp_path / "items.jsonl").open("w") as handle:
        for i in range(N_ITEMS):
            handle.write(json.dumps({"id": f"i{i}", "response": f"Answer {i}: more trains."}) + "\n")


def _command(tmp_path, base_url, *extra):
    return [sys.executable, "-m", "convoscope", "judge", str(tmp_path / "items.jsonl"),
            "--criteria-file", str(tmp_path / "criteria.yaml"), "--store", str(tmp_path / "store.db"),
            "--judge", f"openai:smollm2@{base_url}", "--mode", "completion", "--no-cache",
            "--concurrency", str(CONCURRENCY), "--chunk-size", "1", "--workers", "2", *PATIENT_ARGS, *extra]


def _run(command):
    return subprocess.run(command, capture_output=True, text=True, timeout=PATIENT_S,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _verdicts(tmp_path):
    with sqlite3.connect(tmp_path / "store.db", timeout=30) as connection:
        return connection.execute("select task_key, item_id, value from verdicts").fetchall()


def _count(tmp_path):
    """Verdicts stored so far (0 while the store is being created)."""
    try:
        return len(_verdicts(tmp_path)) if (tmp_path / "store.db").exists() else 0
    except sqlite3.OperationalError:
        return 0


def _summary(tmp_path):
    with sqlite3.connect(tmp_path / "store.db", timeout=30) as connection:
        (summary,) = connection.execute("select summary from runs").fetchone()
    return json.loads(summary)


def _scoring(proxy, since=0):
    return [entry.body["prompt"] for entry in proxy.requests[since:]
            if entry.body.get("prompt", "").endswith("Score:")]


def test_two_workers_share_one_run_every_task_once_and_a_rerun_judges_nothing(tmp_path, fault_proxy):
    _setup(tmp_path)
    fault_proxy.always(None)
    first = _run(_command(tmp_path, fault_proxy.base_url, "--out", str(tmp_path / "verdicts.jsonl")))
    assert first.returncode == 0, first.stderr[-3000:]
    rows = _verdicts(tmp_path)
    assert sorted(item for _, item, _ in rows) == [f"i{i}" for i in range(N_ITEMS)]  # each once
    assert all(value is not None for _, _, value in rows)
    prompts = _scoring(fault_proxy)
    assert len(prompts) == len(set(prompts)) == N_ITEMS  # no task asked twice
    summary = _summary(tmp_path)  # one summary for both processes
    assert summary["total_tasks"] == summary["verdicts"] == summary["model_calls"] == N_ITEMS
    other = int(re.search(r"and 1 more \(which judged (\d+)\)", summary["worker"]).group(1))
    assert 1 <= other < N_ITEMS  # both processes judged
    lines = (tmp_path / "verdicts.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["item_id"] for line in lines) == [f"i{i}" for i in range(N_ITEMS)]

    sent = len(fault_proxy.requests)
    again = _run(_command(tmp_path, fault_proxy.base_url))
    assert again.returncode == 0, again.stderr[-3000:]
    assert _scoring(fault_proxy, sent) == []
    assert _summary(tmp_path)["resumed"] == N_ITEMS and _summary(tmp_path)["verdicts"] == 0


def _worker_of(parent_pid):
    """The spawned worker process of a `convoscope judge --workers 2` process."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent_pid and b"spawn_main" in command:
            return int(entry.name)
    return None


def test_a_killed_worker_leaves_its_chunks_to_the_other_and_a_rerun_judges_nothing(tmp_path, fault_proxy):
    _setup(tmp_path)
    fault_proxy.always(None)
    process = subprocess.Popen(_command(tmp_path, fault_proxy.base_url, "--lease", "3"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + PATIENT_S
    while _count(tmp_path) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
    worker = _worker_of(process.pid)
    assert worker is not None, "the second process should still be at work"
    os.kill(worker, signal.SIGKILL)
    assert process.wait(timeout=PATIENT_S) == 0, process.stderr.read()[-3000:]
    rows = _verdicts(tmp_path)
    assert sorted(item for _, item, _ in rows) == [f"i{i}" for i in range(N_ITEMS)]  # none lost, none twice
    prompts = _scoring(fault_proxy)
    assert len(set(prompts)) == N_ITEMS
    assert len(prompts) - N_ITEMS <= CONCURRENCY  # only what the killed worker had in flight
    assert _summary(tmp_path)["outstanding"] == {}

    sent = len(fault_proxy.requests)
    again = _run(_command(tmp_path, fault_proxy.base_url))
    assert again.returncode == 0, again.stderr[-3000:]
    assert _scoring(fault_proxy, sent) == []
