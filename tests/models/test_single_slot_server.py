"""A server that answers one request at a time (issue 35, observation 6).

llama-cpp-python's server (the ``llama_server`` fixture) takes one request at a time and keeps
computing a request whose client gave up. Before: ``convoscope judge`` of 8 items at the defaults
(concurrency 8, timeout 60 s, deadline 180 s) sent all 8 at once; the later ones waited in the
server's queue past their timeout, their retries queued behind the abandoned requests, and 7 of 8
items ended as ``model_error`` (524 s, on this machine under load). Now the in-flight limit starts
at one request, grows by one per answer, and counts an answer slower than a quarter of the
timeout as congestion (tests/models/test_endpoint_policy.py pins that machine-independently).

Here the real server sits behind the fault proxy, which counts the requests it holds at once.
Patient timeouts keep the machine's speed out of it: what is checked is that the burst never
reaches the server (before: 8 at once), and that every item is judged.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner
from patience import PATIENT_ARGS

from convoscope.cli import cli
from convoscope.cli._app import _register

_register()
pytestmark = pytest.mark.slow


def test_eight_items_reach_a_one_slot_server_a_few_at_a_time_and_are_all_judged(fault_proxy, tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{n}", "question": "How was the delivery?",
                                         "response": f"It came {n + 1} days late and the box was wet."})
                             + "\n" for n in range(8)))
    store = tmp_path / "s.db"
    # The default --concurrency (8) and retries; few tokens to keep it short.
    result = CliRunner().invoke(cli, ["judge", str(items), "--criterion", "survey/effort", "--judge",
                                      f"openai:smollm2@{fault_proxy.base_url}", "--max-tokens", "24",
                                      "--store", str(store), "--no-cache", *PATIENT_ARGS],
                                env={"COLUMNS": "200"})
    with sqlite3.connect(store) as connection:
        reasons = [row[0] for row in connection.execute("SELECT unscored_reason FROM verdicts")]
    assert len(reasons) == 8, result.output
    assert "model_error" not in reasons, result.output
    # Slow start: one request, then one more per answer; with 8 items at most 4 are ever out at
    # once (1 + k allowed after k answers, 8 - k left). Before: all 8 at once.
    assert fault_proxy.peak_in_flight <= 4
