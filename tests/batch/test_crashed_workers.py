"""Workers that die mid-way (issue 23, batch ledger): a killed collector's job is taken over once
its lease runs out; a submission cut short is adopted when the batch was created (found by the
ledger's job id in its metadata) and sent again when it was not — never paid twice.

The local batch server answers every request with a scripted error here (no model behind it), so
these tests need no llama.cpp server; the requests are completion requests (no capability probe).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import httpx
import pytest

from convoscope.batch import open_model
from convoscope.models import GenerateRequest, ModelError, ResponseCache, cache_key
from convoscope.store._batches import BatchLedger
from convoscope.store._schema import batch_jobs

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from patience import PATIENT  # noqa: E402

REQUEST = GenerateRequest(prompt="The number after 1 is", max_tokens=2)
DEAD = "dead-host:1:000000"


@pytest.fixture
def server(modelless_server):
    modelless_server.fail_ids = set()  # each test scripts its errors
    return modelless_server


def _model(server, store, tmp_path):
    return open_model(f"openai:m@{server.base_url}", cache=ResponseCache(tmp_path / "c.db"), batch="openai",
                      ledger=store, **PATIENT)


async def _ask(model):
    try:
        return await model.generate(REQUEST)
    except ModelError as error:
        return str(error)
    finally:
        await model.aclose()
        model.cache.close()


def _lease(store, job_id, owner, until):
    with store.engine.begin() as connection:
        connection.execute(batch_jobs.update().where(batch_jobs.c.job_id == job_id)
                           .values(owner=owner, lease_until=until))


async def test_a_killed_collectors_job_is_taken_over_when_its_lease_runs_out(server, store, tmp_path):
    first = _model(server, store, tmp_path)
    server.fail_ids = {cache_key(first.name, REQUEST)}
    assert "deferred to a batch" in await _ask(first)
    server.wait_idle()
    ledger = BatchLedger(store.engine)
    (job,) = ledger.jobs()
    # A collector died holding the job: its lease (never renewed again) runs out in 1 s.
    _lease(store, job.job_id, DEAD, time.time() + 1.0)
    outcome = await _ask(_model(server, store, tmp_path))
    collected = ledger.job(job.job_id)
    assert collected is not None and collected.state == "collected" and collected.owner is None
    assert (collected.provider_status, collected.failed) == ("completed", 1)
    # The batch's answer (a scripted error) was read once and the request sent again, alone.
    assert "scripted failure" in outcome and "deferred to a batch" in outcome
    assert [ids for _, _, ids in server.submitted] == [[*server.fail_ids]] * 2


async def test_an_interrupted_submission_is_adopted_if_created_else_sent_again(server, store, tmp_path):
    model = _model(server, store, tmp_path)
    key = cache_key(model.name, REQUEST)
    await model.aclose()
    model.cache.close()
    ledger = BatchLedger(store.engine)
    server.hold = True  # nothing finishes: only what is sent counts
    # Two submissions cut short by a crash (state "submitting", leases run out): one created its
    # batch at the provider before the worker died, the other did not.
    ledger.defer(model.name, {key: REQUEST.model_dump_json(), "other": REQUEST.model_dump_json()})
    created, _ = ledger.open_job(provider="openai", base_url=server.base_url, model=model.name,
                                 endpoint="/v1/completions", keys=[key], size=1, worker=DEAD, lease_s=-1)
    lost, _ = ledger.open_job(provider="openai", base_url=server.base_url, model=model.name,
                              endpoint="/v1/completions", keys=["other"], size=1, worker=DEAD, lease_s=-1)
    line = {"custom_id": key, "method": "POST", "url": "/v1/completions", "body": {"model": "m"}}
    async with httpx.AsyncClient(base_url=server.base_url) as client:
        uploaded = (await client.post("/files", files={"file": ("b.jsonl", json.dumps(line).encode())},
                                      data={"purpose": "batch"})).json()
        batch = (await client.post("/batches", json={
            "input_file_id": uploaded["id"], "endpoint": "/v1/completions", "completion_window": "24h",
            "metadata": {"convoscope_job": created.job_id}})).json()
    outcome = await _ask(_model(server, store, tmp_path))
    assert "waiting for batch job" in outcome  # adopted: its request is not sent again
    adopted, abandoned = ledger.job(created.job_id), ledger.job(lost.job_id)
    assert adopted is not None and (adopted.state, adopted.remote_id) == ("in_progress", batch["id"])
    assert abandoned is not None and abandoned.state == "collected"
    assert abandoned.provider_status == "not submitted"
    assert ledger.lookup("other").state == "pending"  # deferred again: the next batch carries it
    assert server.uploads == 1 and [ids for _, _, ids in server.submitted] == [[key]]


async def test_a_dead_collector_on_this_machine_loses_its_job_at_once_a_live_one_keeps_it(server, store,
                                                                                           tmp_path):
    # Before (issue 39, observation 6): a collector killed on this very machine kept its job until
    # its lease ran out (118 s), unlike a chunk lease, although its process was gone.
    import subprocess

    from convoscope.store._chunks import this_machine, worker_name

    first = _model(server, store, tmp_path)
    server.fail_ids = {cache_key(first.name, REQUEST)}
    assert "deferred to a batch" in await _ask(first)
    server.wait_idle()
    ledger = BatchLedger(store.engine)
    (job,) = ledger.jobs()
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()  # a process of this machine that has ended: its pid names nobody now
    _lease(store, job.job_id, f"{this_machine()}:{ended.pid}:abcdef", time.time() + 3600)
    assert ledger.hold(job.job_id, worker_name(), 120.0)
    _lease(store, job.job_id, f"{this_machine()}:{os.getppid()}:abcdef", time.time() + 3600)  # alive
    assert not ledger.hold(job.job_id, worker_name(), 120.0)
    _lease(store, job.job_id, DEAD, time.time() + 3600)  # another machine's: it may be at work
    assert not ledger.hold(job.job_id, worker_name(), 120.0)
