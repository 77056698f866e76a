"""What the tests of a run spread over processes share: the input, the command, and reading back
the store and the requests the proxy saw."""

import json
import os
import sqlite3
import subprocess
import sys

from patience import PATIENT_ARGS, PATIENT_S
from short_rubric import CRITERIA

N_ITEMS = 8


def write_inputs(tmp_path):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    with (tmp_path / "items.jsonl").open("w") as handle:
        for i in range(N_ITEMS):
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


def every_item_once(tmp_path):
    rows = stored(tmp_path)
    assert sorted(item for _, item, _ in rows) == [f"i{i}" for i in range(N_ITEMS)]  # none lost, none twice
    assert all(value is not None for _, _, value in rows)


def run_summary(tmp_path):
    with sqlite3.connect(tmp_path / "store.db", timeout=30) as connection:
        (summary,) = connection.execute("select summary from runs").fetchone()
    return json.loads(summary)


def scoring(proxy, since=0):
    """The scoring prompts the proxy received (one per task asked)."""
    return [entry.body["prompt"] for entry in proxy.requests[since:]
            if entry.body.get("prompt", "").endswith("Score:")]
