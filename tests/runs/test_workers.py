"""``convoscope judge --workers N`` (issue 23, observation 3: "more cores need processes started by
hand"): one command, N processes sharing the run through the store's chunk leases, one summary
and exit status. Real ``convoscope judge`` processes, a real SQLite store; the answers are the
fault proxy's canned completions (a real HTTP server on 127.0.0.1): what is checked is how the
work is divided, and the proxy can hold answers so that a worker is certainly killed in the
middle of a call, however fast or slow the machine."""

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from patience import PATIENT_S
from spread_run import (
    N_ITEMS,
    every_item_once,
    judge_command,
    kill_one_worker_mid_call,
    run,
    run_summary,
    scoring,
    stored,
    write_inputs,
)

pytestmark = pytest.mark.slow


def _command(tmp_path, base_url, *extra):
    return judge_command(tmp_path, base_url, "--chunk-size", "1", *extra)


def test_two_workers_share_one_run_every_task_once_and_a_rerun_judges_nothing(tmp_path, canned_proxy):
    write_inputs(tmp_path)
    first = run(_command(tmp_path, canned_proxy.base_url, "--out", str(tmp_path / "verdicts.jsonl")))
    assert first.returncode == 0, first.stderr[-3000:]
    every_item_once(tmp_path)
    prompts = scoring(canned_proxy)
    assert len(prompts) == len(set(prompts)) == N_ITEMS  # no task asked twice
    summary = run_summary(tmp_path)  # one summary for both processes
    assert summary["total_tasks"] == summary["verdicts"] == summary["model_calls"] == N_ITEMS
    assert re.search(r"and 1 more \(which judged \d+\)", summary["worker"])
    lines = (tmp_path / "verdicts.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["item_id"] for line in lines) == [f"i{i}" for i in range(N_ITEMS)]

    sent = len(canned_proxy.requests)
    again = run(_command(tmp_path, canned_proxy.base_url))
    assert again.returncode == 0, again.stderr[-3000:]
    assert scoring(canned_proxy, sent) == []
    assert run_summary(tmp_path)["resumed"] == N_ITEMS and run_summary(tmp_path)["verdicts"] == 0


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


def test_a_killed_worker_leaves_its_chunks_to_the_other_at_the_cost_of_its_call_in_flight(
        tmp_path, canned_proxy):
    write_inputs(tmp_path)

    def second_process(process):
        worker = _worker_of(process.pid)
        assert worker is not None, "the second process should be in a call"
        return worker

    command = _command(tmp_path, canned_proxy.base_url, "--lease", "2")
    kill_one_worker_mid_call(tmp_path, canned_proxy, command, second_process)
    summary = run_summary(tmp_path)
    assert summary["outstanding"] == {} and summary["total_tasks"] == N_ITEMS


def test_a_batch_run_with_several_workers_is_refused_before_any_call(tmp_path, canned_proxy):
    """A batch run's ledger lives beside one process's cache: several workers would each submit."""
    from click.testing import CliRunner

    from convoscope.cli import cli
    from convoscope.cli._app import _register

    _register()
    write_inputs(tmp_path)
    result = CliRunner().invoke(cli, _command(tmp_path, canned_proxy.base_url, "--batch", "openai")[3:])
    assert result.exit_code == 2, result.output
    assert "not with several workers" in result.output
    assert canned_proxy.requests == []


# Put first on the path of a `convoscope judge` process, this holds every process it spawns
# (multiprocessing's ``spawn_main``) in its start-up until the file GATE exists.
_SLOW_START = """
import os, time

def _hold():
    try:
        with open("/proc/self/cmdline", "rb") as handle:
            spawned = b"spawn_main" in handle.read()
    except OSError:
        return
    while spawned and not os.path.exists(GATE):
        time.sleep(0.05)

_hold()
"""


def test_the_first_process_judges_while_the_second_is_still_starting(tmp_path, canned_proxy):
    """A spawned worker's start-up (its imports: most of a second of CPU, more on a busy machine) is
    not waited for (issue 39, observation 5): the first process judges from its own start and the
    second claims what is left once it has loaded. Here the second cannot finish loading until
    every item is stored, so the first judges them all."""
    write_inputs(tmp_path)
    hook, gate = tmp_path / "hook", tmp_path / "gate"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_SLOW_START.replace("GATE", repr(str(gate))))
    path = [str(hook), *filter(None, [os.environ.get("PYTHONPATH")])]
    process = subprocess.Popen(_command(tmp_path, canned_proxy.base_url), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": os.pathsep.join(path)})
    try:
        deadline = time.monotonic() + PATIENT_S
        while len(stored(tmp_path)) < N_ITEMS and time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read()[-3000:]
            time.sleep(0.1)
        assert _worker_of(process.pid) is not None  # the second process is still held in its start
        gate.touch()
        assert process.wait(timeout=PATIENT_S) == 0, process.stderr.read()[-3000:]
    finally:
        gate.touch()
        if process.poll() is None:
            process.kill()
            process.wait()
    every_item_once(tmp_path)
    assert len(scoring(canned_proxy)) == N_ITEMS
    summary = run_summary(tmp_path)
    assert summary["verdicts"] == N_ITEMS and "and 1 more (which judged 0)" in summary["worker"]
