"""Batch mode against a local server that implements the documented batch endpoints, in front of
the real llama.cpp server: submit, process exit, collect, failures resubmitted, cost halved, the
ledger's states and files; Anthropic Message Batches; the old JSON ledger adopted."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from convoscope.batch import open_model
from convoscope.models import GenerateRequest, Message, ModelError, ResponseCache, cache_key
from convoscope.store._batches import BatchLedger

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from batch_server import BatchServer  # noqa: E402
from patience import PATIENT  # noqa: E402

pytestmark = pytest.mark.slow


def _requests(n, tokens=4):
    return [GenerateRequest(messages=(Message(role="user", content=f"Say the number {i}."),),
                            max_tokens=tokens) for i in range(n)]


@pytest.fixture
def batch_server(llama_server):
    with BatchServer(upstream=llama_server[0]) as server:
        yield server


def _model(server, alias, store, cache_path, provider="openai"):
    return open_model(f"openai:{alias}@{server.base_url}", cache=ResponseCache(cache_path), batch=provider,
                      ledger=store, price_per_million=(1.0, 2.0), **PATIENT)


async def _try_all(model, requests):
    answered, deferred = [], []
    try:
        for request in requests:
            try:
                answered.append(await model.generate(request))
            except ModelError as error:
                deferred.append(str(error))
    finally:
        await model.aclose()
        model.cache.close()
    return answered, deferred


async def test_requests_are_submitted_then_collected_after_the_process_exits(batch_server, llama_server,
                                                                             store, tmp_path):
    alias = llama_server[1]
    requests = _requests(3)
    answered, deferred = await _try_all(_model(batch_server, alias, store, tmp_path / "a.db"), requests)
    assert answered == [] and len(deferred) == 3 and "deferred to a batch" in deferred[0]
    ledger = BatchLedger(store.engine)
    (job,) = ledger.jobs()  # one batch, recorded in the store with its requests and file
    assert (job.state, job.requests, job.endpoint) == ("submitted", 3, "/v1/chat/completions")
    assert job.remote_id in batch_server.batches and job.input_file_id in batch_server.files
    batch_server.wait_idle()
    # A new process on another machine: its own empty cache, the same store.
    answered, deferred = await _try_all(_model(batch_server, alias, store, tmp_path / "b.db"), requests)
    assert deferred == [] and len(answered) == 3
    assert all(g.text and g.prompt_tokens > 0 for g in answered)
    list_price = [(g.prompt_tokens * 1.0 + g.completion_tokens * 2.0) / 1e6 for g in answered]
    assert [g.cost for g in answered] == pytest.approx([p / 2 for p in list_price])  # half price
    (job,) = ledger.jobs()
    assert (job.state, job.provider_status, job.answered, job.failed) == ("collected", "completed", 3, 0)
    assert job.collected_at >= job.submitted_at >= job.created_at and job.files_deleted_at
    assert batch_server.files == {} and batch_server.uploads == 1  # files deleted, nothing resubmitted


async def test_a_request_that_fails_inside_the_batch_is_resubmitted(batch_server, llama_server, store,
                                                                    tmp_path):
    alias = llama_server[1]
    requests = _requests(2)
    first = _model(batch_server, alias, store, tmp_path / "c.db")
    batch_server.fail_ids = {cache_key(first.name, requests[1])}
    await _try_all(first, requests)
    batch_server.wait_idle()
    batch_server.fail_ids = set()
    answered, deferred = await _try_all(_model(batch_server, alias, store, tmp_path / "c.db"), requests)
    assert len(answered) == 1 and len(deferred) == 1  # the failed one is deferred again …
    assert "scripted failure" in deferred[0]
    assert [len(ids) for _, _, ids in batch_server.submitted] == [2, 1]  # … alone in a new batch
    batch_server.wait_idle()
    answered, deferred = await _try_all(_model(batch_server, alias, store, tmp_path / "c.db"), requests)
    assert len(answered) == 2 and deferred == []


async def test_an_expired_batch_is_resubmitted_and_a_running_one_waited_for(batch_server, llama_server,
                                                                           store, tmp_path):
    alias = llama_server[1]
    requests = _requests(1)
    batch_server.expire_next = True
    await _try_all(_model(batch_server, alias, store, tmp_path / "c.db"), requests)
    batch_server.wait_idle()
    batch_server.hold = True
    _, deferred = await _try_all(_model(batch_server, alias, store, tmp_path / "c.db"), requests)
    assert "ended expired without an answer" in deferred[0] and batch_server.uploads == 2
    _, deferred = await _try_all(_model(batch_server, alias, store, tmp_path / "c.db"), requests)
    assert "waiting for batch job" in deferred[0]  # still in progress: not submitted twice
    assert batch_server.uploads == 2
    states = [job.provider_status for job in BatchLedger(store.engine).jobs()]
    assert states == ["expired", "in_progress"]


async def test_anthropic_message_batches(batch_server, llama_server, store, tmp_path):
    alias = llama_server[1]
    requests = [GenerateRequest(messages=(Message(role="system", content="Be brief."),
                                          Message(role="user", content="Say hi.")), max_tokens=4)]
    await _try_all(_model(batch_server, alias, store, tmp_path / "c.db", provider="anthropic"), requests)
    batch_server.wait_idle()
    answered, deferred = await _try_all(_model(batch_server, alias, store, tmp_path / "c.db",
                                               provider="anthropic"), requests)
    assert deferred == [] and answered[0].text and answered[0].prompt_tokens > 0
    (job,) = BatchLedger(store.engine).jobs()
    assert (job.endpoint, job.state, job.answered) == ("/v1/messages", "collected", 1)
    assert job.remote_id not in batch_server.batches  # deleted once collected


async def test_a_ledger_left_in_a_json_file_by_an_earlier_version_is_adopted(batch_server, llama_server,
                                                                            store, tmp_path):
    """Batches an earlier version recorded beside the cache are collected, never paid again."""
    alias = llama_server[1]
    (request,) = _requests(1)
    model = _model(batch_server, alias, store, tmp_path / "old.db")
    key = cache_key(model.name, request)
    await model.aclose()
    model.cache.close()
    line = {"custom_id": key, "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": alias, "messages": [{"role": "user", "content": "Say the number 0."}],
                     "max_tokens": 4, "temperature": 0.0, "seed": 0}}
    batch_server.files["file-old"] = (json.dumps(line) + "\n").encode()
    batch_id = (await _post_batch(batch_server, "file-old"))["id"]
    batch_server.wait_idle()
    old = {batch_id: {"provider": "openai", "submitted_at": 1.0,
                      "requests": {key: request.model_dump(mode="json")}}}
    (tmp_path / "old.db.batches.json").write_text(json.dumps(old))
    answered, deferred = await _try_all(_model(batch_server, alias, store, tmp_path / "old.db"), [request])
    assert deferred == [] and answered[0].text
    assert (tmp_path / "old.db.batches.json.adopted").exists() and batch_server.uploads == 0


async def _post_batch(server, file_id):
    import httpx

    async with httpx.AsyncClient(base_url=server.base_url) as client:
        answer = await client.post("/batches", json={
            "input_file_id": file_id, "endpoint": "/v1/chat/completions", "completion_window": "24h"})
    return answer.json()


def test_batch_mode_needs_a_store_and_an_openai_spec(tmp_path):
    with pytest.raises(ModelError, match="ledger in the verdict store"):
        open_model("openai:m@http://127.0.0.1:9/v1", batch="openai")
    with pytest.raises(ModelError, match="needs an openai:MODEL@BASE_URL"):
        open_model("embedded", cache=tmp_path / "c.db", batch="openai")
    with pytest.raises(ModelError, match="its batches are --batch anthropic"):
        open_model("anthropic:claude-x@http://127.0.0.1:9/v1", cache=tmp_path / "c.db", batch="openai",
                   ledger=tmp_path / "s.db")
    with pytest.raises(ModelError, match="unknown batch API"):
        open_model("openai:m@http://127.0.0.1:9/v1", cache=tmp_path / "c.db", batch="gemini")


def test_judge_with_batch_submits_exits_3_then_collects_and_exits_0(batch_server, llama_server, tmp_path):
    from click.testing import CliRunner
    from patience import PATIENT_ARGS

    from convoscope.cli import cli
    from convoscope.cli._app import _register

    _register()
    out = tmp_path / "verdicts.jsonl"
    args = ["judge", "examples/survey_items.jsonl", "--criterion", "survey/relevance", "--limit", "2",
            "--judge", f"openai:{llama_server[1]}@{batch_server.base_url}", "--batch", "openai",
            "--store", str(tmp_path / "run.db"), "--out", str(out), "--max-tokens", "24", *PATIENT_ARGS]
    first = CliRunner().invoke(cli, args, env={"COLUMNS": "200"})
    assert first.exit_code == 3, first.output  # submitted: work outstanding
    assert "still unscored: model_error" in first.output
    assert batch_server.uploads == 1
    batch_server.wait_idle()
    second = CliRunner().invoke(cli, args, env={"COLUMNS": "200"})
    assert second.exit_code in (0, 4), second.output  # collected (the tiny model may not parse)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 and all(row["unscored_reason"] != "model_error" for row in rows)
    assert batch_server.uploads == 1
