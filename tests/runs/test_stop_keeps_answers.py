"""SIGTERM keeps its word (issue 39, observation 4): the calls in flight when the signal comes are
answered and stored before the run stops (not paid again on resume), and ``--out`` holds what the
store holds, with one process or several (``--workers 2``).

Real ``convoscope judge`` processes, a real SQLite store, and the fault proxy's canned answers (a
real HTTP server on 127.0.0.1) holding every call after the first two, so the signal certainly
comes while calls are in flight, however fast or slow the machine."""

import json
import os
import signal
import subprocess
import time

import pytest
from patience import PATIENT_S
from spread_run import N_ITEMS, judge_command, scoring, stored, write_inputs

pytestmark = pytest.mark.slow


def _stop_mid_call(tmp_path, proxy, command, in_flight):
    """Run ``command``; once two answers are stored and ``in_flight`` calls are held, SIGTERM it,
    let the proxy answer, and return the exit status and the stderr."""
    proxy.hold_after(2)
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + PATIENT_S
        while (proxy.in_flight < in_flight or len(stored(tmp_path)) < 2) and time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read()[-3000:]
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        proxy.release()  # the answers come after the signal: they must still be kept
        _, stderr = process.communicate(timeout=PATIENT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, stderr


def _out_ids(path):
    return sorted(json.loads(line)["item_id"] for line in path.read_text().splitlines())


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigterm_keeps_the_answers_in_flight_and_out_holds_what_the_store_holds(tmp_path, canned_proxy,
                                                                               workers):
    # Before: with --workers 2, --out held about half of the store (the other worker's verdicts
    # were never passed on); in one process, the answered calls in flight were thrown away and
    # asked again on resume.
    write_inputs(tmp_path)
    out = tmp_path / "verdicts.jsonl"
    command = judge_command(tmp_path, canned_proxy.base_url, "--chunk-size", "1", "--workers", workers,
                            "--out", str(out))
    code, stderr = _stop_mid_call(tmp_path, canned_proxy, command, in_flight=int(workers))
    assert code == 3, stderr[-3000:]
    assert "Stopped (SIGTERM)" in stderr
    kept = sorted(item for _, item, _ in stored(tmp_path))
    assert len(kept) >= 2 + int(workers)  # the two answered at once, and every call held at the signal
    assert _out_ids(out) == kept, stderr[-3000:]

    again = subprocess.run(judge_command(tmp_path, canned_proxy.base_url, "--chunk-size", "1",
                                         "--workers", workers, "--out", str(out)),
                           capture_output=True, text=True, timeout=PATIENT_S)
    assert again.returncode == 0, again.stderr[-3000:]
    assert _out_ids(out) == [f"i{i}" for i in range(N_ITEMS)]
    prompts = scoring(canned_proxy)
    assert sorted(prompts) == sorted(set(prompts)) and len(prompts) == N_ITEMS  # none paid twice
