"""``convoscope judge --engine ray`` on a real local Ray cluster (issue 23, "spread over an existing
distributed engine"): one head node started with ``ray start --head`` on 127.0.0.1 for the whole
module, its Ray worker processes running the per-batch judge, a real SQLite store, real
``convoscope judge`` processes. The answers come from the fault proxy's canned completions (a
real HTTP server on 127.0.0.1): what is checked is how the work is divided, not what a model
says, and the proxy can hold answers so that a worker is certainly killed in the middle of a
call, however fast or slow the machine. The cluster is stopped by the ids of the processes it
started (its own temp folder is in their command lines); ``ray stop`` would stop every cluster
on the machine."""

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from installed import import_path, library_or_skip
from patience import PATIENT_S
from spread_run import (
    N_ITEMS,
    every_item_once,
    judge_command,
    kill_one_worker_mid_call,
    out_ids,
    run_summary,
    scoring,
    stop_mid_call,
    stored,
    write_inputs,
)

pytestmark = pytest.mark.slow


@contextlib.contextmanager
def _cluster(*first_on_path):
    """A one-node Ray cluster on 127.0.0.1 (4 logical CPUs: two judging workers and the reads):
    its address, and its temp folder (named in the command lines of its processes). Its processes
    find ``first_on_path`` before the package under test."""
    library_or_skip("ray.data")
    folder = tempfile.mkdtemp(prefix="cs-ray-", dir="/tmp")  # short: Ray's socket paths must fit
    with socket.socket() as probe:  # a free port for the head node
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    source = import_path()  # the workers import the package under test (wheel or checkout)
    path = [*map(str, first_on_path), source, os.environ.get("PYTHONPATH")]
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": os.pathsep.join(filter(None, path))}
    command = [str(Path(sys.executable).parent / "ray"), "start", "--head", "--port", str(port),
               "--node-ip-address", "127.0.0.1", "--num-cpus", "4", "--temp-dir", folder,
               "--include-dashboard", "false", "--disable-usage-stats"]
    try:
        started = subprocess.run(command, env=env, capture_output=True, text=True, timeout=PATIENT_S)
        assert started.returncode == 0, f"ray start failed: {started.stderr[-3000:]}"
        yield f"127.0.0.1:{port}", folder.encode()
    finally:
        _stop_processes(folder.encode())
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def ray_address():
    with _cluster() as cluster:
        yield cluster


def _processes():
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                found[int(entry.name)] = (parent, (entry / "cmdline").read_bytes())
            except (OSError, IndexError, ValueError):
                continue
    return found


def _cluster_processes(mark):
    """The processes whose command line names the cluster's folder, and all their descendants."""
    table = _processes()
    chosen = {pid for pid, (_, command) in table.items() if mark in command}
    grown = True
    while grown:
        more = {pid for pid, (parent, _) in table.items() if parent in chosen} - chosen
        chosen |= more
        grown = bool(more)
    return chosen, table


def _judge_workers(mark):
    """This cluster's worker processes running the per-batch judge (Ray titles a worker by its
    actor; other clusters on the machine are not ours)."""
    chosen, table = _cluster_processes(mark)
    return [pid for pid in chosen
            if table[pid][1].startswith(b"ray::MapWorker(") and b"JudgeBatch" in table[pid][1]]


def _stop_processes(mark):
    chosen, _ = _cluster_processes(mark)
    for sent in (signal.SIGTERM, signal.SIGKILL):
        for pid in chosen:
            try:
                os.kill(pid, sent)
            except OSError:
                pass
        time.sleep(1)


def _command(tmp_path, address, base_url, *extra):
    return judge_command(tmp_path, base_url, "--engine", "ray", "--ray-address", address,
                         "--chunk-size", "2", *extra)


def test_a_ray_run_survives_a_worker_killed_mid_call_and_keys_tasks_as_the_local_engine(
        ray_address, tmp_path, canned_proxy):
    """Two Ray workers; one is killed while its call is held at the server. Ray starts another
    and gives it the block again: the tasks the store holds are passed on, only the killed call is
    asked again. Every verdict is stored once, ``--out`` gets each once, and the local engine on
    the same file finds the same run and every task by its key (it judges nothing)."""
    import convoscope as cs

    address, mark = ray_address
    write_inputs(tmp_path)
    out = tmp_path / "verdicts.jsonl"

    def one_ray_worker(_process):
        workers = _judge_workers(mark)
        assert len(workers) == 2, workers
        return workers[0]

    command = _command(tmp_path, address, canned_proxy.base_url, "--out", str(out))
    kill_one_worker_mid_call(tmp_path, canned_proxy, command, one_ray_worker)
    summary = run_summary(tmp_path)  # counted as the local engine counts
    assert summary["total_tasks"] == N_ITEMS and summary["outstanding"] == {}
    assert summary["verdicts"] + summary["resumed"] == N_ITEMS  # a block given again: found stored
    assert summary["model_calls"] == summary["verdicts"]
    assert sorted(json.loads(line)["item_id"] for line in out.read_text().splitlines()) == \
        [f"i{i}" for i in range(N_ITEMS)]

    sent = len(canned_proxy.requests)
    local = cs.judge(tmp_path / "items.jsonl", cs.load_criteria(tmp_path / "criteria.yaml"),
                     f"openai:canned@{canned_proxy.base_url}", mode="completion", store=tmp_path / "store.db",
                     cache_path=None, timeout=PATIENT_S, deadline=2 * PATIENT_S)
    assert local.run_id == summary["run_id"]
    assert local.summary.resumed == N_ITEMS and local.summary.verdicts == 0
    assert scoring(canned_proxy, sent) == []


def test_sigterm_on_a_ray_run_leaves_out_holding_what_the_store_holds(ray_address, tmp_path, canned_proxy):
    """SIGTERM while the Ray workers' calls are held at the server (issue 39, observation 4): the
    command exits 3 and ``--out`` has every verdict the store has. Before, the command stopped
    at once: the batches the workers committed after the signal, or before it but not yet passed
    back, were in the store and missing from ``--out``. Run again, it judges only the rest."""
    address, _ = ray_address
    write_inputs(tmp_path)
    out = tmp_path / "verdicts.jsonl"
    command = _command(tmp_path, address, canned_proxy.base_url, "--out", str(out))
    code, stderr = stop_mid_call(tmp_path, canned_proxy, command, in_flight=2)
    assert code == 3, stderr[-3000:]
    assert "Stopped (SIGTERM)" in stderr
    kept = sorted(item for _, item, _ in stored(tmp_path))
    assert len(kept) >= 2
    assert out_ids(out) == kept, stderr[-3000:]

    again = subprocess.run(_command(tmp_path, address, canned_proxy.base_url, "--out", str(out)),
                           capture_output=True, text=True, timeout=PATIENT_S,
                           env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"})
    assert again.returncode == 0, again.stderr[-3000:]
    assert out_ids(out) == [f"i{i}" for i in range(N_ITEMS)]
    every_item_once(tmp_path)



def test_as_many_workers_as_the_cluster_has_cpus_leave_one_for_reading_and_the_run_ends(
        ray_address, tmp_path, canned_proxy):
    """``--workers 4`` on this 4-CPU cluster: each worker used to reserve a whole CPU, none was
    left for the tasks that read and cut the items, and Ray waited for ever with no word
    (found measuring ``--workers 2`` on a 2-CPU cluster). The workers now share three CPUs."""
    address, _ = ray_address
    write_inputs(tmp_path)
    out = tmp_path / "verdicts.jsonl"
    command = _command(tmp_path, address, canned_proxy.base_url, "--workers", "4", "--out", str(out))
    done = subprocess.run(command, capture_output=True, text=True, timeout=PATIENT_S,
                          env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert out_ids(out) == [f"i{i}" for i in range(N_ITEMS)]
    every_item_once(tmp_path)


def _script_report(tmp_path, source, *args):
    """Run ``source`` as a script with ``args`` (a driver process of its own) and read the JSON
    object it prints last."""
    script = tmp_path / "driver.py"
    script.write_text(source)
    done = subprocess.run([sys.executable, str(script), *map(str, args)], capture_output=True, text=True,
                          timeout=PATIENT_S, env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


RAY_DATASET_RUN = r'''
import json, sys
import ray
import convoscope as cs
from convoscope.runs import connect

address, folder, base_url, patience = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
rows = [json.loads(line) for line in open(f"{folder}/items.jsonl")]
connect(address)  # before the Dataset is made: a Dataset alone would start a local instance
dataset = ray.data.from_items(rows)
result = cs.judge(dataset, cs.load_criteria(f"{folder}/criteria.yaml"), f"openai:canned@{base_url}",
                  engine="ray", ray_address=address, mode="completion", store=f"{folder}/store.db",
                  cache_path=None, concurrency=1, timeout=patience, deadline=2 * patience)
print(json.dumps({"verdicts": result.summary.verdicts,
                  "items": sorted(verdict.item_id for verdict in result.verdicts)}))
'''


def test_the_python_entry_judges_a_ray_dataset_and_the_local_engine_finds_its_tasks_by_key(
        ray_address, tmp_path, canned_proxy):
    """``cs.judge(ray_dataset, ..., engine="ray")``: a Dataset made in memory (no file behind it)
    is judged on the cluster, each item once; the same items judged from a file by the local
    engine are found by their task keys and asked nothing."""
    import convoscope as cs

    address, _ = ray_address
    write_inputs(tmp_path)
    reported = _script_report(tmp_path, RAY_DATASET_RUN, address, tmp_path, canned_proxy.base_url, PATIENT_S)
    assert reported == {"verdicts": N_ITEMS, "items": sorted(f"i{i}" for i in range(N_ITEMS))}
    every_item_once(tmp_path)
    assert len(scoring(canned_proxy)) == N_ITEMS

    sent = len(canned_proxy.requests)
    local = cs.judge(tmp_path / "items.jsonl", cs.load_criteria(tmp_path / "criteria.yaml"),
                     f"openai:canned@{canned_proxy.base_url}", mode="completion", store=tmp_path / "store.db",
                     cache_path=None, timeout=PATIENT_S, deadline=2 * PATIENT_S)
    assert local.summary.verdicts == 0 and scoring(canned_proxy, sent) == []
    every_item_once(tmp_path)


# First on the path of a node's processes, this makes convoscope impossible to import there.
_NO_CONVOSCOPE = """
import sys

class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name == "convoscope" or name.startswith("convoscope."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _Missing())
"""


def test_a_cluster_whose_workers_cannot_import_convoscope_is_refused_at_once_naming_the_node(
        tmp_path, canned_proxy):
    """Issue 39, observation 5: Ray Data started worker after worker that died importing
    convoscope; the command ended with exit 1 and Ray's traceback (19 s here, 179 s on a cluster
    where another node could import it). Now each node is asked first: exit 2, one line naming
    the node and what is missing, no call made, no run recorded."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_NO_CONVOSCOPE)
    write_inputs(tmp_path)
    with _cluster(hook) as (address, _):
        done = subprocess.run(_command(tmp_path, address, canned_proxy.base_url), capture_output=True,
                              text=True, timeout=PATIENT_S)
    assert done.returncode == 2, done.stderr[-3000:]
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith("error: Ray workers cannot run convoscope"), done.stderr[-3000:]
    assert re.search(r" on node [\w.:-]+: ModuleNotFoundError: No module named 'convoscope' \(install", error)
    assert "Traceback" not in done.stderr
    assert scoring(canned_proxy) == [] and stored(tmp_path) == []
    if (tmp_path / "store.db").exists():
        with sqlite3.connect(tmp_path / "store.db") as connection:
            assert connection.execute("select count(*) from runs").fetchone() == (0,)


RAY_FILE_RUN = r'''
import json, sys
import ray, ray.data
import convoscope as cs
from convoscope.items import ItemStream
from convoscope.runs import _ray

address, folder, base_url, patience = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
events, sizes = [], []
nodes, read_text, batches = ray.nodes, ray.data.read_text, _ray._batches
repartition = ray.data.Dataset.repartition
ray.nodes = lambda *args, **kwargs: events.append("nodes asked") or nodes(*args, **kwargs)
ray.data.read_text = lambda *args, **kwargs: events.append("items read") or read_text(*args, **kwargs)
ray.data.Dataset.repartition = lambda self, *args, **kwargs: (events.append("repartitioned")
                                                              or repartition(self, *args, **kwargs))
map_batches = ray.data.Dataset.map_batches
ray.data.Dataset.map_batches = lambda self, *args, **kwargs: (
    events.append(f"batches of {kwargs.get('batch_size')} rows") or map_batches(self, *args, **kwargs))


def counted(mapped):
    for table in batches(mapped):
        sizes.append(len(set(table.column("item_id").to_pylist())))
        yield table


_ray._batches = counted
criteria = cs.load_criteria(f"{folder}/criteria.yaml")
result = cs.judge(ItemStream(f"{folder}/items.jsonl", chunk_size=4), criteria, f"openai:canned@{base_url}",
                  engine="ray", ray_address=address, mode="completion",
                  store=f"{folder}/store.db", cache_path=None, concurrency=1, timeout=patience,
                  deadline=2 * patience)
print(json.dumps({"events": list(dict.fromkeys(events)), "sizes": sizes,
                  "verdicts": result.summary.verdicts}))
'''


def test_a_file_judged_on_ray_is_cut_into_blocks_as_it_is_read_and_the_nodes_are_asked_meanwhile(
        ray_address, tmp_path, canned_proxy):
    """Issue 39, observation 5 (a Ray actor's start-up): a file came as one block that a
    repartition step cut into blocks of a chunk's rows, about 1.2 s before the first verdict of
    a 2,000-item run (Ray Data's start to its first block: 2.7 s with that step, 1.5 s without),
    and the nodes were asked whether they can run convoscope only after the items were set up
    (0.55 s more). The reader now cuts blocks of about a chunk's rows itself, each block is one
    batch (batches of exactly a chunk's rows, cut across blocks of about as many, took an actor's
    steady rate from 2,900 to 2,100 verdicts/s), and the question to the nodes is sent first and
    answered while the file is being set up."""
    address, _ = ray_address
    write_inputs(tmp_path, 24)
    reported = _script_report(tmp_path, RAY_FILE_RUN, address, tmp_path, canned_proxy.base_url, PATIENT_S)
    assert reported["verdicts"] == 24
    # before: ["items read", "nodes asked", "repartitioned", "batches of 4 rows"]
    assert reported["events"] == ["nodes asked", "items read", "batches of None rows"]
    assert sum(reported["sizes"]) == 24 and len(reported["sizes"]) >= 4  # blocks of about 4 items
    assert max(reported["sizes"]) <= 8
    every_item_once(tmp_path, 24)


RAY_BLOCKS = r'''
import csv, json, sys
import pyarrow as pa, pyarrow.parquet as pq
import ray
from convoscope.runs import connect, items_dataset

address, folder = sys.argv[1], sys.argv[2]
connect(address)
rows = [{"id": f"i{i}", "response": f"Answer {i}: " + "more trains, " * (i % 5)} for i in range(60)]
with open(f"{folder}/items.csv", "w", newline="") as handle:
    writer = csv.DictWriter(handle, ["id", "response"])
    writer.writeheader()
    writer.writerows(rows)
with open(f"{folder}/items.tsv", "w", newline="") as handle:
    writer = csv.DictWriter(handle, ["id", "response"], delimiter="\t")
    writer.writeheader()
    writer.writerows(rows)
with open(f"{folder}/items.jsonl", "w") as handle:
    handle.writelines(json.dumps(row) + "\n" for row in rows)
pq.write_table(pa.Table.from_pylist(rows), f"{folder}/items.parquet", row_group_size=60)
size = ray.data.DataContext.get_current().target_max_block_size
found = {}
for name in ("items.jsonl", "items.csv", "items.tsv", "items.parquet"):
    dataset, _ = items_dataset(f"{folder}/{name}", rows_per_block=6)
    found[name] = [block.num_rows for block in dataset.iter_batches(batch_size=None, batch_format="pyarrow")]
limited, _ = items_dataset(f"{folder}/items.csv", rows_per_block=6, limit=20)
found["limit"] = [block.num_rows for block in limited.iter_batches(batch_size=None, batch_format="pyarrow")]
kept = ray.data.DataContext.get_current().target_max_block_size == size
print(json.dumps({"blocks": found, "context kept": kept}))
'''


def test_every_kind_of_items_file_is_read_in_blocks_of_about_a_chunk_and_the_callers_context_is_kept(
        ray_address, tmp_path):
    """JSON lines, CSV, TSV (a row's bytes from the first rows, the header left out) and Parquet
    (from its metadata) come in blocks of about the rows asked (6 here; a block of twice or half
    that is harmless), every row once; the block size set for the reader is put back, so the
    caller's own Datasets are cut as before."""
    address, _ = ray_address
    reported = _script_report(tmp_path, RAY_BLOCKS, address, tmp_path)
    assert reported["context kept"]
    for name, sizes in reported["blocks"].items():
        assert sum(sizes) == (20 if name == "limit" else 60), (name, sizes)
        assert len(sizes) >= (3 if name == "limit" else 5), (name, sizes)  # one block before
        assert max(sizes) <= 12, (name, sizes)
