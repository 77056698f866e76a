"""Batch mode against a local server that implements the documented batch endpoints, in front of
the real llama.cpp server: submit, process exit, collect, failures resubmitted, cost halved."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from convoscope.models import GenerateRequest, Message, ModelError, ResponseCache, open_model

sys.path.insert(0, str(Path(__file__).parent))
from batch_server import BatchServer  # noqa: E402

pytestmark = pytest.mark.slow


def _requests(n):
    return [GenerateRequest(messages=(Message(role="user", content=f"Say the number {i}."),), max_tokens=6)
            for i in range(n)]


@pytest.fixture
def batch_server(llama_server):
    with BatchServer(upstream=llama_server[0]) as server:
        yield server


def _model(server, alias, cache_path, provider="openai"):
    return open_model(f"openai:{alias}@{server.base_url}", cache=ResponseCache(cache_path), batch=provider,
                      price_per_million=(1.0, 2.0))


async def _try_all(model, requests):
    answered, deferred = [], []
    for request in requests:
        try:
            answered.append(await model.generate(request))
        except ModelError as error:
            deferred.append(str(error))
    return answered, deferred


async def test_requests_are_submitted_then_collected_after_the_process_exits(batch_server, llama_server,
                                                                             tmp_path):
    alias = llama_server[1]
    requests = _requests(3)
    first = _model(batch_server, alias, tmp_path / "cache.db")
    answered, deferred = await _try_all(first, requests)
    assert answered == [] and len(deferred) == 3 and "deferred to a batch" in deferred[0]
    await first.aclose()  # the run ends: one batch submitted, its id in the ledger
    ledger = json.loads((tmp_path / "cache.db.batches.json").read_text())
    assert len(ledger) == 1 and len(next(iter(ledger.values()))["requests"]) == 3
    assert batch_server.uploads == 1
    batch_server.wait_idle()
    # A new process: a fresh model and cache object on the same files.
    second = _model(batch_server, alias, tmp_path / "cache.db")
    answered, deferred = await _try_all(second, requests)
    await second.aclose()
    assert deferred == [] and len(answered) == 3
    assert all(g.text and g.prompt_tokens > 0 for g in answered)
    list_price = [(g.prompt_tokens * 1.0 + g.completion_tokens * 2.0) / 1e6 for g in answered]
    assert [g.cost for g in answered] == pytest.approx([p / 2 for p in list_price])  # half price
    assert json.loads((tmp_path / "cache.db.batches.json").read_text()) == {}
    assert batch_server.uploads == 1  # nothing resubmitted


async def test_a_request_that_fails_inside_the_batch_is_resubmitted(batch_server, llama_server, tmp_path):
    from convoscope.models import cache_key

    alias = llama_server[1]
    requests = _requests(2)
    first = _model(batch_server, alias, tmp_path / "cache.db")
    await _try_all(first, requests)
    batch_server.fail_ids = {cache_key(first.name, requests[1])}
    await first.aclose()
    batch_server.wait_idle()
    batch_server.fail_ids = set()
    second = _model(batch_server, alias, tmp_path / "cache.db")
    answered, deferred = await _try_all(second, requests)
    await second.aclose()
    assert len(answered) == 1 and len(deferred) == 1  # the failed one is deferred again …
    assert batch_server.uploads == 2  # … and submitted in a new batch
    batch_server.wait_idle()
    third = _model(batch_server, alias, tmp_path / "cache.db")
    answered, deferred = await _try_all(third, requests)
    await third.aclose()
    assert len(answered) == 2 and deferred == []


async def test_an_expired_batch_is_resubmitted_and_a_running_one_waited_for(batch_server, llama_server,
                                                                           tmp_path):
    alias = llama_server[1]
    requests = _requests(1)
    batch_server.expire_next = True
    first = _model(batch_server, alias, tmp_path / "cache.db")
    await _try_all(first, requests)
    await first.aclose()
    batch_server.wait_idle()
    batch_server.hold = True
    second = _model(batch_server, alias, tmp_path / "cache.db")
    _, deferred = await _try_all(second, requests)
    await second.aclose()
    assert "deferred to a batch" in deferred[0] and batch_server.uploads == 2
    third = _model(batch_server, alias, tmp_path / "cache.db")
    _, deferred = await _try_all(third, requests)
    await third.aclose()
    assert "waiting for batch" in deferred[0]  # still in progress: not submitted twice
    assert batch_server.uploads == 2
    batch_server.hold = False


async def test_anthropic_message_batches(batch_server, llama_server, tmp_path):
    alias = llama_server[1]
    requests = [GenerateRequest(messages=(Message(role="system", content="Be brief."),
                                          Message(role="user", content="Say hi.")), max_tokens=6)]
    first = _model(batch_server, alias, tmp_path / "cache.db", provider="anthropic")
    await _try_all(first, requests)
    await first.aclose()
    batch_server.wait_idle()
    second = _model(batch_server, alias, tmp_path / "cache.db", provider="anthropic")
    answered, deferred = await _try_all(second, requests)
    await second.aclose()
    assert deferred == [] and answered[0].text and answered[0].prompt_tokens > 0


def test_batch_mode_needs_a_cache_and_an_openai_spec(tmp_path):
    with pytest.raises(ModelError, match="give a cache"):
        open_model("openai:m@http://127.0.0.1:9/v1", batch="openai")
    with pytest.raises(ModelError, match="needs an openai:MODEL@BASE_URL"):
        open_model("embedded", cache=tmp_path / "c.db", batch="openai")
    with pytest.raises(ModelError, match="unknown batch API"):
        open_model("openai:m@http://127.0.0.1:9/v1", cache=tmp_path / "c.db", batch="gemini")


def test_judge_with_batch_submits_exits_3_then_collects_and_exits_0(batch_server, llama_server, tmp_path):
    from click.testing import CliRunner

    from convoscope.cli import cli
    from convoscope.cli._app import _register

    _register()
    out = tmp_path / "verdicts.jsonl"
    args = ["judge", "examples/survey_items.jsonl", "--criterion", "survey/relevance", "--limit", "2",
            "--judge", f"openai:{llama_server[1]}@{batch_server.base_url}", "--batch", "openai",
            "--store", str(tmp_path / "run.db"), "--out", str(out), "--max-tokens", "60"]
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
