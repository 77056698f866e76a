"""A run on a new SQLite store sends its first requests before the store is set up (issue 39,
runs/_head.py). Stopped in that moment, it keeps what it was answered: the calls in flight get
the engine's grace, their answers wait in the response cache, and the run that resumes asks the
endpoint none of them again. A store that already holds the run takes the usual path.

The fault proxy (a real HTTP server on 127.0.0.1) holds every call until released, so the stop
certainly comes while the store is not set up, however fast the machine."""

import asyncio
import sqlite3
import time
import types

import pytest
from patience import PATIENT_S

from convoscope.criteria import Criterion, Scale
from convoscope.items import Item
from convoscope.runs import _head, judge_async

CRITERION = Criterion(name="quality", question="Good?", definition="Overall quality.",
                      scale=Scale(kind="range", minimum=1, maximum=5))
ITEMS = [Item(id=f"i{i}", question="What would improve the bus?", response=f"{i} more buses")
         for i in range(10)]


def run(proxy, tmp_path):
    return judge_async(ITEMS, [CRITERION], f"openai:canned@{proxy.base_url}", mode="chat",
                       store=tmp_path / "s.db", concurrency=4)


def judged_prompts(proxy):
    return [request.body["messages"][-1]["content"] for request in proxy.requests
            if request.body.get("max_tokens") != 8]  # not the capability probes


async def test_a_run_stopped_before_its_new_store_is_set_up_keeps_the_answers_in_flight(
        canned_proxy, tmp_path, monkeypatch):
    monkeypatch.setattr(_head, "FIRST_ANSWER_WAIT_S", 3600.0)  # the store waits for a first answer
    canned_proxy.hold_after(0)
    started = asyncio.ensure_future(run(canned_proxy, tmp_path))
    deadline = time.monotonic() + PATIENT_S
    while canned_proxy.in_flight < 1 and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert canned_proxy.in_flight >= 1 and not (tmp_path / "s.db").exists()
    started.cancel()  # as SIGTERM and Ctrl-C stop a run
    await asyncio.sleep(0.05)
    canned_proxy.release()  # the answers come after the stop: they must still be kept
    with pytest.raises(asyncio.CancelledError):
        await started
    asked = judged_prompts(canned_proxy)
    assert 1 <= len(asked) <= 4  # the first chunk's first calls, as many as run at once
    with sqlite3.connect(tmp_path / "s.cache.db") as connection:
        assert connection.execute("select count(*) from responses").fetchone()[0] == len(asked)

    again = await run(canned_proxy, tmp_path)
    assert len(again.verdicts) == len(ITEMS) and again.summary.cache_hits == len(asked)
    prompts = judged_prompts(canned_proxy)
    assert len(prompts) == len(set(prompts)) == len(ITEMS)  # none asked twice


async def test_a_store_that_holds_the_run_is_set_up_before_any_request(canned_proxy, tmp_path,
                                                                       monkeypatch):
    from convoscope.runs import _here

    early: list[int] = []
    monkeypatch.setattr(_here, "head_start", lambda *args: early.append(1) or _head.head_start(*args))
    await run(canned_proxy, tmp_path)
    assert early == [1]
    grown = ITEMS + [Item(id="new", question="What would improve the bus?", response="trams")]
    result = await judge_async(grown, [CRITERION], f"openai:canned@{canned_proxy.base_url}", mode="chat",
                               store=tmp_path / "s.db", concurrency=4)
    assert early == [1]  # the usual path: the store first (what it holds is not asked again)
    assert result.summary.resumed == len(ITEMS) and result.summary.verdicts == 1
    assert len(judged_prompts(canned_proxy)) == len(ITEMS) + 1


async def test_the_early_requests_leave_no_cache_lookup_behind(canned_proxy, tmp_path, monkeypatch):
    # The engine looks a chunk's requests up in the cache by the request's id, and the lookup is
    # taken when the request is sent. Those sent early are never sent again: a lookup left for
    # them would be found by a later request that happens to get the same id.
    from convoscope.models._cache import CachedModel

    models = []
    prefetch = CachedModel.prefetch
    monkeypatch.setattr(CachedModel, "prefetch",
                        lambda self, requests: models.append(self) or prefetch(self, requests))
    result = await run(canned_proxy, tmp_path)
    assert len(result.verdicts) == len(ITEMS) and models
    assert all(model._prefetched == {} for model in models)


async def test_a_traced_model_made_earlier_in_the_process_leaves_later_runs_their_head_start(
        canned_proxy, tmp_path, monkeypatch):
    """Seen in CI: after a traced test had run in the same worker process, these tests found the
    store set up before any request. Whether this run's calls are traced decides, not whether
    any model ever was in the process."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider

    from convoscope.models._otel import TracedModel
    from convoscope.runs import _here

    a_model = types.SimpleNamespace(name="openai:m@http://127.0.0.1:9/v1")  # a fake: never called
    TracedModel(a_model, tracer_provider=TracerProvider())  # as an earlier traced run left the process
    early: list[int] = []
    monkeypatch.setattr(_here, "head_start", lambda *args: early.append(1) or _head.head_start(*args))
    await run(canned_proxy, tmp_path)
    assert early == [1]
