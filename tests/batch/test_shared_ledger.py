"""Nothing is paid twice across processes: real `convoscope judge --batch openai` processes, each
with its own response cache (as on separate machines), share one store — PostgreSQL, as several
machines would, and SQLite — and send one set of batches between them."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
sys.path.insert(0, str(Path(__file__).parents[1] / "runs"))
from batch_server import BatchServer  # noqa: E402
from patience import PATIENT_ARGS, PATIENT_S  # noqa: E402
from pg_server import postgres_server  # noqa: E402

pytestmark = pytest.mark.slow
N_ITEMS = 4  # the race without a model; two items where a model answers (each costs a call)


@pytest.fixture
def batch_server(llama_server):
    with BatchServer(upstream=llama_server[0]) as server:
        yield server


def _start(server, alias, items, store, cache, out, *extra):
    args = [sys.executable, "-m", "convoscope", "judge", str(items), "--criterion", "survey/relevance",
            "--judge", f"openai:{alias}@{server.base_url}", "--batch", "openai", "--max-tokens", "16",
            "--chunk-size", "1", "--store", store, "--cache", str(cache), "--out", str(out), *PATIENT_ARGS,
            *extra]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"})


def _together(processes):
    results = [process.communicate(timeout=PATIENT_S) for process in processes]
    return [process.returncode for process in processes], [err[-1500:] for _, err in results]


def _items(tmp_path, name="items.jsonl", count=N_ITEMS):
    lines = Path("examples/survey_items.jsonl").read_text().splitlines()[:count]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("kind", ["postgres", "sqlite"])
def test_two_processes_one_run_one_set_of_batches(batch_server, llama_server, tmp_path, kind):
    with contextlib.ExitStack() as stack:
        if kind == "postgres":
            store = stack.enter_context(postgres_server())
            if store is None:
                pytest.skip("PostgreSQL server binaries not installed (scripts/test.sh installs them)")
        else:
            store = str(tmp_path / "run.db")
        items = _items(tmp_path, count=2)
        machines = [(tmp_path / f"m{n}.cache.db", tmp_path / f"m{n}.jsonl") for n in (1, 2)]

        def both():
            return _together([_start(batch_server, llama_server[1], items, store, cache, out)
                              for cache, out in machines])

        codes, errors = both()
        assert codes == [3, 3], errors  # both submitted their part and exit with work outstanding
        sent = Counter(batch_server.submitted_ids())
        assert len(sent) == 2 and set(sent.values()) == {1}, sent  # one set of batches
        batch_server.wait_idle()
        codes, errors = both()  # both collect, from the ledger in the store
        assert set(codes) <= {0, 4}, errors
        assert Counter(batch_server.submitted_ids()) == sent  # nothing sent again
        rows = [json.loads(line) for _, out in machines for line in out.read_text().splitlines()]
        assert {row["item_id"] for row in rows} == {"s1", "s2"}
        assert all(row["unscored_reason"] != "model_error" for row in rows)
        assert batch_server.files == {}


def test_two_runs_deferring_the_same_requests_at_once_send_them_once(modelless_server, tmp_path):
    """Two runs (two item files with the same content: two run ids, the same task keys) in two
    processes defer the same requests at the same time: each request goes out in one batch. No
    model is needed: the batches are held (only what is sent counts), and completion mode asks
    the endpoint nothing before it defers (no capability probe)."""
    modelless_server.hold = True
    store = str(tmp_path / "run.db")
    processes = [_start(modelless_server, "m", _items(tmp_path, f"items-{n}.jsonl"), store,
                        tmp_path / f"m{n}.cache.db", tmp_path / f"m{n}.jsonl", "--mode", "completion")
                 for n in (1, 2)]
    codes, errors = _together(processes)
    assert codes == [3, 3], errors
    sent = Counter(modelless_server.submitted_ids())
    assert len(sent) == N_ITEMS and set(sent.values()) == {1}, sent
