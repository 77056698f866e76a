"""A server that answers one request at a time, at the default settings (issue 35, observation 6).

llama-cpp-python's server (the ``llama_server`` fixture) takes one request at a time and keeps
computing a request whose client gave up. Before: ``convoscope judge`` of 8 items at the defaults
(concurrency 8, timeout 60 s, deadline 180 s) sent 8 requests at once; the later ones waited in
the server's queue past their timeout, their retries queued behind the abandoned requests, and 7
of 8 items ended as ``model_error`` (524 s, on this machine under load). The in-flight limit now
starts at one request and counts an answer slower than a quarter of the timeout as congestion, so the
server's queue stays short of the timeout.

This test can only fail where the server is slow next to the timeout (a loaded machine): the
mechanism itself is pinned machine-independently in tests/models/test_endpoint_policy.py.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner

from convoscope.cli import cli
from convoscope.cli._app import _register

_register()
pytestmark = pytest.mark.slow


def test_eight_items_at_the_default_settings_are_all_judged(llama_server, tmp_path):
    base_url, alias = llama_server
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{n}", "question": "How was the delivery?",
                                         "response": f"It came {n + 1} days late and the box was wet."})
                             + "\n" for n in range(8)))
    store = tmp_path / "s.db"
    # Defaults for --concurrency, --timeout, --deadline and --max-retries; few tokens to keep it short.
    result = CliRunner().invoke(cli, ["judge", str(items), "--criterion", "survey/effort", "--judge",
                                      f"openai:{alias}@{base_url}", "--max-tokens", "24", "--store",
                                      str(store), "--no-cache"], env={"COLUMNS": "200"})
    with sqlite3.connect(store) as connection:
        reasons = [row[0] for row in connection.execute("SELECT unscored_reason FROM verdicts")]
    assert len(reasons) == 8, result.output
    assert "model_error" not in reasons, result.output
    assert result.exit_code in (0, 4), result.output  # 4: a tiny model's unreadable answers, not failures
