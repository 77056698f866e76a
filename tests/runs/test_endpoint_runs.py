"""Failure semantics end to end: ``convoscope judge`` against the real llama.cpp server behind the
fault-injecting proxy. An outage leaves model_error verdicts and exit status 3; once the endpoint
is back, one re-run does exactly the failed tasks (0 lost, 0 duplicated) and exits 0; the --out rows
carry the run id and the served model."""

import json
import sqlite3

import pytest
from click.testing import CliRunner
from faultproxy import Fault
from patience import PATIENT_ARGS

from convoscope.cli import cli
from convoscope.cli._app import _register

pytestmark = pytest.mark.slow

CRITERIA = """
suite: test-short
description: a tiny rubric so that prompts stay short
criteria:
  - name: clarity
    question: Is the answer clear?
    definition: Clear answers say one thing plainly.
    scale: {kind: range, minimum: 1, maximum: 3}
    levels:
      - {value: 1, definition: unclear, examples: ["asdf qwer"]}
      - {value: 3, definition: clear, examples: ["More buses at night."]}
"""
N_ITEMS = 6


def _judge(tmp_path, base_url, *extra):
    _register()
    return CliRunner().invoke(cli, [
        "judge", str(tmp_path / "items.jsonl"), "--criteria-file", str(tmp_path / "criteria.yaml"),
        "--store", str(tmp_path / "s.db"), "--judge", f"openai:smollm2@{base_url}",
        "--mode", "completion", "--max-retries", "0", "--concurrency", "2", *PATIENT_ARGS, *extra])


def test_outage_exits_3_and_one_rerun_completes_every_task_once(tmp_path, fault_proxy):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    (tmp_path / "items.jsonl").write_text("".join(
        json.dumps({"id": f"i{i}", "response": f"More buses ({i})."}) + "\n" for i in range(N_ITEMS)))
    fault_proxy.always(Fault.status(500))  # the endpoint is down for the whole first run
    down = _judge(tmp_path, fault_proxy.base_url)
    assert down.exit_code == 3, down.output
    assert "model_error" in down.output and "Work outstanding" in down.output

    fault_proxy.always(None)  # back up
    sent_before = len(fault_proxy.requests)
    out = tmp_path / "v.jsonl"
    back = _judge(tmp_path, fault_proxy.base_url, "--out", str(out))
    assert back.exit_code == 0, back.output
    scoring = [e for e in fault_proxy.requests[sent_before:] if e.body.get("prompt", "").endswith("Score:")]
    assert len(scoring) == N_ITEMS  # exactly the failed tasks, each once
    with sqlite3.connect(tmp_path / "s.db") as connection:
        rows = connection.execute("select item_id, value, attempts from verdicts").fetchall()
    assert sorted(item for item, _, _ in rows) == [f"i{i}" for i in range(N_ITEMS)]
    assert all(value is not None and attempts == 2 for _, value, attempts in rows)
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(written) == N_ITEMS and len({row["run_id"] for row in written}) == 1
    assert written[0]["run_id"] and written[0]["served_model"] and written[0]["convoscope_version"]
    assert written[0]["temperature"] == 0.0 and written[0]["seed"] == 0

    sent = len(fault_proxy.requests)
    again = _judge(tmp_path, fault_proxy.base_url)
    assert again.exit_code == 0 and len(fault_proxy.requests) == sent  # nothing left: no call


def test_concurrency_reaches_the_endpoint(tmp_path, fault_proxy):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    (tmp_path / "items.jsonl").write_text("".join(
        json.dumps({"id": f"c{i}", "response": f"Fewer cars ({i})."}) + "\n" for i in range(16)))
    fault_proxy.always(Fault.slow(1.0))  # every answer a second late: only concurrency helps
    result = _judge(tmp_path, fault_proxy.base_url, "--concurrency", "12", "--no-cache")
    fault_proxy.always(None)
    assert result.exit_code == 0, result.output
    assert fault_proxy.peak_in_flight >= 10  # was 8 at most, whatever --concurrency said
