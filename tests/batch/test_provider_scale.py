"""Batch APIs at provider scale (issue 23, observation 4), through `convoscope judge --batch` as a
user runs it, against the local batch server in front of the real llama.cpp server: submissions
split at the provider's limits with one endpoint per batch, the ledger in the store (a second
machine with its own cache collects and pays nothing twice), files deleted after collection,
cancel."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from convoscope.batch._model import BatchLimits
from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.store import Store
from convoscope.store._batches import BatchLedger

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from batch_server import BatchServer  # noqa: E402
from patience import PATIENT_ARGS  # noqa: E402

pytestmark = pytest.mark.slow
_register()


@pytest.fixture
def batch_server(llama_server):
    with BatchServer(upstream=llama_server[0]) as server:
        yield server


def judge(server, alias, tmp_path, *extra, cache="a.cache.db", limit=2):
    out = tmp_path / "verdicts.jsonl"
    args = ["judge", "examples/survey_items.jsonl", "--criterion", "survey/relevance", "--limit", str(limit),
            "--judge", f"openai:{alias}@{server.base_url}", "--batch", "openai", "--max-tokens", "24",
            "--store", str(tmp_path / "run.db"), "--cache", str(tmp_path / cache), "--out", str(out),
            *PATIENT_ARGS, *extra]
    result = CliRunner().invoke(cli, args, env={"COLUMNS": "200"})
    rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return result, rows


def test_a_run_larger_than_the_provider_limit_is_split_into_batches(batch_server, llama_server, tmp_path,
                                                                     monkeypatch):
    # The server enforces the documented rule at a small scale: 1 request per batch file.
    batch_server.max_requests = 1
    limits = {"openai": BatchLimits(1, 200_000_000)}
    monkeypatch.setattr("convoscope.batch._model.LIMITS", limits, raising=False)
    first, _ = judge(batch_server, llama_server[1], tmp_path)
    assert first.exit_code == 3, first.output
    assert [len(ids) for _, _, ids in batch_server.submitted] == [1, 1]
    batch_server.wait_idle()
    second, rows = judge(batch_server, llama_server[1], tmp_path)
    assert second.exit_code in (0, 4), second.output
    assert len(rows) == 2 and all(row["unscored_reason"] != "model_error" for row in rows)
    assert Counter(batch_server.submitted_ids()).most_common(1)[0][1] == 1  # nothing sent twice


def test_a_second_machine_collects_from_the_shared_ledger_and_files_are_deleted(batch_server, llama_server,
                                                                                 tmp_path):
    first, _ = judge(batch_server, llama_server[1], tmp_path, cache="machine-a.cache.db")
    assert first.exit_code == 3, first.output
    batch_server.wait_idle()
    # Another machine: its own (empty) response cache, the same store.
    batch_server.refuse_delete = True  # the provider fails the deletions this time …
    second, rows = judge(batch_server, llama_server[1], tmp_path, cache="machine-b.cache.db")
    assert second.exit_code in (0, 4), second.output
    assert len(rows) == 2 and all(row["unscored_reason"] != "model_error" for row in rows)
    assert batch_server.uploads == 1 and len(batch_server.submitted_ids()) == 2  # paid once
    assert len(batch_server.files) == 2  # input and output still there
    batch_server.refuse_delete = False  # … and cleanup deletes them later
    store = ["--store", str(tmp_path / "run.db")]
    status = CliRunner().invoke(cli, ["batch", "status", "--all", *store], env={"COLUMNS": "250"})
    assert "collected (completed)" in status.output and "files not deleted" in status.output, status.output
    cleanup = CliRunner().invoke(cli, ["batch", "cleanup", "--older-than", "0", *store])
    assert cleanup.exit_code == 0 and "files of 1 batch" in cleanup.output, cleanup.output
    assert batch_server.files == {}  # the input, output (and error) files are deleted
    assert "dropped 1" in cleanup.output  # the ledger forgets the batch (its answers stay)
    third, rows = judge(batch_server, llama_server[1], tmp_path, cache="machine-c.cache.db")
    assert third.exit_code == second.exit_code and len(rows) == 2 and batch_server.uploads == 1


def test_chat_and_completion_requests_go_in_batches_of_their_own_endpoint(batch_server, llama_server,
                                                                          tmp_path):
    from patience import PATIENT

    from convoscope.criteria import select_criteria
    from convoscope.items import read_items
    from convoscope.runs import JudgeSpec, judge

    spec = f"openai:{llama_server[1]}@{batch_server.base_url}"
    panel = [JudgeSpec(spec, mode="chat"), JudgeSpec(spec, mode="completion")]
    items = read_items(Path("examples/survey_items.jsonl"))[:1]
    criteria = select_criteria(names=["survey/relevance"])

    def run():
        return judge(items, criteria, panel, store=tmp_path / "run.db", max_tokens=24,
                     model_options={"batch": "openai", **PATIENT})

    assert run().exit_code() == 3
    batch_server.wait_idle()
    endpoints = sorted(endpoint for _, endpoint, _ in batch_server.submitted)
    assert endpoints == ["/v1/chat/completions", "/v1/completions"]
    second = run()
    assert all(v.unscored_reason != "model_error" for v in second.member_verdicts), second.member_verdicts
    assert len(second.member_verdicts) == 2


def test_batch_cancel_cancels_the_open_batches(modelless_server, tmp_path):
    """No model needed: the batch is held until cancelled, and completion mode defers without
    asking the endpoint anything first."""
    modelless_server.hold = True
    first, _ = judge(modelless_server, "m", tmp_path, "--mode", "completion", limit=2)
    assert first.exit_code == 3, first.output
    result = CliRunner().invoke(cli, ["batch", "cancel", "--all", "--store", str(tmp_path / "run.db")])
    assert result.exit_code == 0, result.output
    modelless_server.wait_idle()
    assert [batch["status"] for batch in modelless_server.batches.values()] == ["cancelled"]
    store = Store(tmp_path / "run.db")
    try:
        (job,) = BatchLedger(store.engine).jobs()
    finally:
        store.close()
    assert job.cancel_requested_at is not None and job.provider_status in ("cancelling", "cancelled")
