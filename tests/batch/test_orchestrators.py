"""What cron jobs and orchestrators read (issue 39, observation 6): ``batch status --json`` gives
every field of every batch, whatever the terminal's width, and a request deferred to a batch is
counted as deferred, not as a failed call."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from convoscope.batch import open_model
from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.judges import Verdict
from convoscope.models import GenerateRequest, ModelError, ResponseCache
from convoscope.runs._summary import RunSummary

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from patience import PATIENT  # noqa: E402

_register()


async def test_batch_status_json_lists_every_field_of_every_batch_uncut(modelless_server, store, tmp_path):
    # Before: a table cut at 80 columns, and no --json.
    modelless_server.hold = True
    model = open_model(f"openai:a-model-with-a-rather-long-name@{modelless_server.base_url}",
                       cache=ResponseCache(tmp_path / "c.db"), batch="openai", ledger=store, **PATIENT)
    try:
        with pytest.raises(ModelError, match="deferred to a batch"):
            await model.generate(GenerateRequest(prompt="The number after 1 is", max_tokens=2))
    finally:
        await model.aclose()
        model.cache.close()
    result = CliRunner().invoke(cli, ["batch", "status", "--store", str(tmp_path / "run.db"), "--no-refresh",
                                      "--json"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    (line,) = result.output.splitlines()
    job = json.loads(line)
    assert "a-model-with-a-rather-long-name" in job["model"] and job["requests"] == 1
    assert job["provider"] == "openai" and job["state"] in ("submitted", "validating", "in_progress")
    assert {"job_id", "remote_id", "answered", "failed", "submitted_at", "detail"} <= set(job)


def test_a_request_deferred_to_a_batch_is_counted_as_deferred_not_as_a_failed_call():
    # Before: a submitting run reported "failed calls 250" for its 250 deferred requests.
    summary = RunSummary(run_id="r", store="s")
    deferred = Verdict(item_id="a", criterion="c", rater="model:m", value=None, unscored_reason="model_error",
                       raw="m: deferred to a batch; it is submitted by this run")
    failed = Verdict(item_id="b", criterion="c", rater="model:m", value=None, unscored_reason="model_error",
                     raw="m: HTTP 500 after 3 retries")
    summary.count(deferred, [])
    summary.count(failed, [])
    assert (summary.deferred, summary.failed_calls) == (1, 1)  # the failure alone is a failed call
    assert summary.as_dict()["deferred"] == 1
