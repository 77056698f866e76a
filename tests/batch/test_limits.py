"""Batches are cut at the provider's limits (issue 23, observation 4: every pending request went
up as one batch, so a run past 50,000 requests / 200 MB was rejected), by requests and by bytes,
for OpenAI and Anthropic, at a small scale: the local batch server enforces the same rule with
small limits and fails a batch that breaks it, as the providers do. No model is needed: the
batches are held, only what is sent counts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from convoscope.batch import open_model
from convoscope.batch._model import BatchLimits
from convoscope.models import GenerateRequest, Message, ModelError, ResponseCache

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from patience import PATIENT  # noqa: E402


@pytest.fixture
def server(modelless_server):
    modelless_server.hold = True  # nothing is answered: only what is sent counts
    return modelless_server


async def _defer_all(server, store, tmp_path, requests, provider="openai"):
    model = open_model(f"{provider}:m@{server.base_url}", cache=ResponseCache(tmp_path / "c.db"),
                       batch=provider, ledger=store, **PATIENT)
    problems = []
    try:
        for request in requests:
            with pytest.raises(ModelError) as raised:
                await model.generate(request)
            problems.append(str(raised.value))
    finally:
        await model.aclose()
        model.cache.close()
    return problems


def _prompts(n, words=1):
    return [GenerateRequest(prompt=f"Item {i}: " + "word " * words, max_tokens=2) for i in range(n)]


async def test_openai_batches_are_cut_by_bytes_too(server, store, tmp_path, monkeypatch):
    requests = _prompts(7, words=40)
    one_line = 400  # each request's JSONL line is a little over 300 bytes: three fit in 1,000 bytes
    server.max_bytes = 1000
    monkeypatch.setattr("convoscope.batch._model.LIMITS", {"openai": BatchLimits(50_000, 1000)})
    await _defer_all(server, store, tmp_path, requests)
    sizes = [len(server.files[batch["input_file_id"]]) for batch in server.batches.values()]
    assert len(sizes) >= 3 and all(one_line < size <= 1000 for size in sizes[:-1]), sizes
    assert all(batch["status"] != "failed" for batch in server.batches.values())  # none rejected
    sent = server.submitted_ids()
    assert len(sent) == len(set(sent)) == 7  # each request once


async def test_anthropic_batches_are_cut_at_its_request_limit(server, store, tmp_path, monkeypatch):
    """Through the native ``anthropic:`` route (its Messages requests, its key header)."""
    requests = [GenerateRequest(messages=(Message(role="user", content=f"Say {i}."),), max_tokens=2)
                for i in range(5)]
    server.max_requests = 2
    monkeypatch.setattr("convoscope.batch._model.LIMITS", {"anthropic": BatchLimits(2, 256_000_000)})
    await _defer_all(server, store, tmp_path, requests, provider="anthropic")
    assert [(endpoint, len(ids)) for _, endpoint, ids in server.submitted] == [("/v1/messages", 2)] * 2 + [
        ("/v1/messages", 1)]
    params = [entry["params"] for batch in server.batches.values() for entry in batch["requests"]]
    assert sorted(p["messages"][0]["content"] for p in params) == [f"Say {i}." for i in range(5)]
    assert all(p["model"] == "m" and p["max_tokens"] == 2 for p in params)


async def test_a_request_larger_than_a_whole_batch_is_its_own_error(server, store, tmp_path, monkeypatch):
    monkeypatch.setattr("convoscope.batch._model.LIMITS", {"openai": BatchLimits(50_000, 1000)})
    (problem,) = await _defer_all(server, store, tmp_path, _prompts(1, words=300))
    assert "larger than a whole batch may be (1000 bytes)" in problem
    assert server.submitted == []


async def test_a_service_with_lower_caps_gets_batches_cut_at_the_caps_given_in_the_settings(server, store,
                                                                                            tmp_path):
    # Before (issue 39, observation 6): the limits were fixed at OpenAI's 50,000 / 200 MB, so a
    # service that takes at most 3 requests per batch failed the whole run; there was no setting.
    server.max_requests, server.max_bytes = 3, 1000
    model = open_model(f"openai:m@{server.base_url}", cache=ResponseCache(tmp_path / "c.db"), batch="openai",
                       ledger=store, batch_max_requests=3, batch_max_bytes=1000, **PATIENT)
    try:
        for request in _prompts(7, words=40):
            with pytest.raises(ModelError, match="deferred to a batch"):
                await model.generate(request)
    finally:
        await model.aclose()
        model.cache.close()
    assert all(batch["status"] != "failed" for batch in server.batches.values())  # none rejected
    assert all(len(ids) <= 3 for _, _, ids in server.submitted)
    sizes = [len(server.files[batch["input_file_id"]]) for batch in server.batches.values()]
    assert all(size <= 1000 for size in sizes), sizes
    sent = server.submitted_ids()
    assert len(sent) == len(set(sent)) == 7


def test_the_batch_caps_are_run_settings_and_a_cap_below_one_is_refused():
    from convoscope.errors import ConfigError
    from convoscope.runs import RunOptions

    options = RunOptions(batch="openai", batch_max_requests=3, batch_max_bytes=1000)
    wanted = {"batch": "openai", "batch_max_requests": 3, "batch_max_bytes": 1000}
    assert wanted.items() <= options.model_options().items()
    with pytest.raises(ConfigError, match="batch_max_requests"):
        RunOptions(batch="openai", batch_max_requests=0)
