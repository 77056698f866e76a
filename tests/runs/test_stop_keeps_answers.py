"""SIGTERM keeps its word (issue 39, observation 4): the calls in flight when the signal comes are
answered and stored before the run stops (not paid again on resume), and ``--out`` holds what the
store holds, with one process or several (``--workers 2``).

Real ``convoscope judge`` processes, a real SQLite store, and the fault proxy's canned answers (a
real HTTP server on 127.0.0.1) holding every call after the first two, so the signal certainly
comes while calls are in flight, however fast or slow the machine."""

import subprocess

import pytest
from patience import PATIENT_S
from spread_run import N_ITEMS, judge_command, out_ids, scoring, stop_mid_call, stored, write_inputs

pytestmark = pytest.mark.slow


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
    code, stderr = stop_mid_call(tmp_path, canned_proxy, command, in_flight=int(workers))
    assert code == 3, stderr[-3000:]
    assert "Stopped (SIGTERM)" in stderr
    kept = sorted(item for _, item, _ in stored(tmp_path))
    assert len(kept) >= 2 + int(workers)  # the two answered at once, and every call held at the signal
    assert out_ids(out) == kept, stderr[-3000:]

    again = subprocess.run(judge_command(tmp_path, canned_proxy.base_url, "--chunk-size", "1",
                                         "--workers", workers, "--out", str(out)),
                           capture_output=True, text=True, timeout=PATIENT_S)
    assert again.returncode == 0, again.stderr[-3000:]
    assert out_ids(out) == [f"i{i}" for i in range(N_ITEMS)]
    prompts = scoring(canned_proxy)
    assert sorted(prompts) == sorted(set(prompts)) and len(prompts) == N_ITEMS  # none paid twice
