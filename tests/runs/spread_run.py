"""What the tests of a run spread over processes share: the input, the command, and reading back
the store and the requests the proxy saw."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from patience import PATIENT_ARGS, PATIENT_S
from short_rubric import CRITERIA

N_ITEMS = 8


def write_inputs(tmp_path, items=N_ITEMS):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    with (tmp_path / "items.jsonl").open("w") as handle:
        for i in range(items):
            handle.write(json.dumps({"id": f"i{i}", "response": f"Answer {i}: more trains."}) + "\n")


def judge_command(tmp_path, base_url, *extra):
    """``convoscope judge`` on the inputs, one call in flight per worker, two workers."""
    return [sys.executable, "-m", "convoscope", "judge", str(tmp_path / "items.jsonl"),
            "--criteria-file", str(tmp_path / "criteria.yaml"), "--store", str(tmp_path / "store.db"),
            "--judge", f"openai:canned@{base_url}", "--mode", "completion", "--no-cache",
            "--concurrency", "1", "--workers", "2", *PATIENT_ARGS, *extra]


def run(command):
    return subprocess.run(command, capture_output=True, text=True, timeout=PATIENT_S,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})


def stored(tmp_path):
    """(task key, item id, value) of every stored verdict; none while the store is being created."""
    if not (tmp_path / "store.db").exists():
        return []
    try:
        with sqlite3.connect(tmp_path / "store.db", timeout=30) as connection:
            return connection.execute("select task_key, item_id, value from verdicts").fetchall()
    except sqlite3.OperationalError:
        return []


def every_item_once(tmp_path, items=N_ITEMS):
    rows = stored(tmp_path)
    # none lost, none twice
    assert sorted(item for _, item, _ in rows) == sorted(f"i{i}" for i in range(items))
    assert all(value is not None for _, _, value in rows)


def run_summary(tmp_path):
    with sqlite3.connect(tmp_path / "store.db", timeout=30) as connection:
        (summary,) = connection.execute("select summary from runs").fetchone()
    return json.loads(summary)


def scoring(proxy, since=0):
    """The scoring prompts the proxy received (one per task asked)."""
    return [entry.body["prompt"] for entry in proxy.requests[since:]
            if entry.body.get("prompt", "").endswith("Score:")]


def kill_one_worker_mid_call(tmp_path, proxy, command, pick_worker):
    """Start ``command`` with the proxy holding every answer after the second; once two calls
    are held (one per worker: --concurrency 1) and the two answered ones are committed, SIGKILL
    the worker ``pick_worker()`` names, release the answers, and wait for the run to end well.
    Then each item has one verdict and only the killed call was asked again."""
    proxy.hold_after(2)  # two answers, then every call waits: the run is surely under way
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + PATIENT_S
        while (proxy.in_flight < 2 or len(stored(tmp_path)) < 2) and time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read()[-3000:]
            time.sleep(0.1)
        os.kill(pick_worker(process), signal.SIGKILL)
        proxy.release()
        assert process.wait(timeout=PATIENT_S) == 0, process.stderr.read()[-3000:]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    every_item_once(tmp_path)
    prompts = scoring(proxy)
    assert len(set(prompts)) == N_ITEMS
    assert len(prompts) == N_ITEMS + 1  # the killed worker's one call in flight, asked again


def stop_mid_call(tmp_path, proxy, command, in_flight, sent=signal.SIGTERM):
    """Run ``command`` with the proxy holding every answer after the second; once two answers
    are stored and ``in_flight`` calls are held, send ``sent``, let the proxy answer, and return
    the exit status and the stderr."""
    proxy.hold_after(2)
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + PATIENT_S
        while (proxy.in_flight < in_flight or len(stored(tmp_path)) < 2) and time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read()[-3000:]
            time.sleep(0.05)
        process.send_signal(sent)
        proxy.release()  # the answers come after the signal: they must still be kept
        _, stderr = process.communicate(timeout=PATIENT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, stderr


def out_ids(path):
    """The item ids of the verdicts in an --out file, sorted."""
    if not path.exists():
        return []
    return sorted(json.loads(line)["item_id"] for line in path.read_text().splitlines())
