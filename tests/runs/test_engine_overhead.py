"""The client's own costs stay off the hot path (issue 23, observations 6 and 7).

Before: a thread wake-up per response and per verdict, a synchronous cache read on the event loop
per request, eight TLS contexts for an http:// URL, the gibberish filter imported by ``judge``;
timeouts never lowered the in-flight limit and failed calls were counted nowhere. Throughput and
CPU against a plain loop are measured in benchmarks/cli_overhead.py, not here.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys

import httpx
import pytest
from faultproxy import canned_answer
from test_run_semantics import CRITERION, ScriptedModel, corpus

from convoscope.judges import RubricJudge, Verdict
from convoscope.models import GenerateRequest, Generation, ModelError, OpenAIModel, ResponseCache
from convoscope.models._cache import CachedModel
from convoscope.runs import run_judge
from convoscope.store import Store, VerdictWriter

PROMPT = GenerateRequest(prompt="Score:", max_tokens=1)


async def test_a_burst_of_verdicts_wakes_the_writer_a_few_times_not_once_each(tmp_path):
    store = Store(tmp_path / "s.db")
    writer = VerdictWriter(store, "r")
    for number in range(500):
        verdict = Verdict(item_id=str(number), criterion="c", rater="model:x", value=1)
        writer.put([(f"k{number}", verdict)])
    await asyncio.sleep(0.05)
    writer.close()
    assert writer.handovers <= 10  # 64 tasks a hand-over at most, not 500 wake-ups
    assert len(store.verdicts_by_key([f"k{n}" for n in range(500)])) == 500


async def test_a_burst_of_answers_reaches_the_cache_writer_in_groups(tmp_path):
    cache = ResponseCache(tmp_path / "c.db")
    for number in range(500):
        cache.put(f"k{number}", Generation(text=str(number), model="m"))
    await asyncio.sleep(0.05)
    cache.close()
    with ResponseCache(tmp_path / "c.db") as again:
        assert len(again) == 500
    assert cache.commits <= 10


class FakeCountingModel:
    """A scripted model (unit test): counts calls."""

    name = "fake:counting"

    def __init__(self):
        self.calls = 0

    async def generate(self, request):
        self.calls += 1
        return Generation(text="answer", model=self.name)

    async def aclose(self):
        pass


async def test_prefetched_requests_never_read_the_cache_file_on_the_event_loop(tmp_path, monkeypatch):
    with ResponseCache(tmp_path / "c.db") as cache:
        inner = FakeCountingModel()
        model = CachedModel(inner, cache)
        first = [GenerateRequest(prompt=f"p{n}") for n in range(3)]
        model.prefetch(first)  # in a worker thread, in a run
        monkeypatch.setattr(cache, "get", lambda key: pytest.fail("a cache read on the event loop"))
        await asyncio.gather(*(model.generate(request) for request in first))
        assert inner.calls == 3
        again = [GenerateRequest(prompt=f"p{n}") for n in range(3)]
        model.prefetch(again)
        answers = await asyncio.gather(*(model.generate(request) for request in again))
        assert inner.calls == 3 and all(answer.cached for answer in answers)


def test_the_connection_pools_of_an_endpoint_share_one_tls_context():
    model = OpenAIModel("m", base_url="https://127.0.0.1:9/v1")
    contexts = model._sender.tls_contexts()
    asyncio.run(model.aclose())
    assert len(contexts) > 1 and len({id(context) for context in contexts}) == 1
    assert contexts[0].cert_store_stats()["x509_ca"] > 0  # https: the CA bundle, loaded once


def test_a_plain_http_endpoint_loads_no_ca_bundle_and_still_fails_closed():
    import ssl

    model = OpenAIModel("m", base_url="http://127.0.0.1:9/v1")
    contexts = model._sender.tls_contexts()
    asyncio.run(model.aclose())
    assert len({id(context) for context in contexts}) == 1
    context = contexts[0]
    assert context.cert_store_stats()["x509_ca"] == 0  # loading it costs tens of milliseconds
    # Never used for http; were a request to reach https with it, nothing would be trusted.
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def test_calls_go_through_the_core_sender_unless_a_proxy_or_transport_says_otherwise(monkeypatch):
    # Observed: httpx's client (request and response models, header merging, auth and redirect
    # flows) cost about a quarter of the CPU of each call; the default sender does without it
    # (h11 over asyncio, models/_net.py). A proxy from the environment or a caller's transport
    # keeps httpx's client.
    from convoscope.models._http import CoreSender, HttpxSender

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
                 "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    made = [OpenAIModel("m", base_url="http://127.0.0.1:9/v1")]
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:3128")
    made.append(OpenAIModel("m", base_url="http://10.1.2.3:9/v1"))
    monkeypatch.setenv("NO_PROXY", "10.1.2.3")
    made.append(OpenAIModel("m", base_url="http://10.1.2.3:9/v1"))
    made.append(OpenAIModel("m", base_url="http://127.0.0.1:9/v1", transport=httpx.MockTransport(
        lambda request: httpx.Response(500))))
    kinds = [type(model._sender) for model in made]
    for model in made:
        asyncio.run(model.aclose())
    assert kinds == [CoreSender, HttpxSender, CoreSender, HttpxSender]


async def test_timeouts_lower_the_in_flight_limit_as_429s_do():
    # A scripted transport (unit test): the first round of requests times out, then answers come.
    # Real timeouts against a hanging proxy are in tests/models/test_endpoint_policy.py.
    state = {"late": False}

    async def answer(request):
        await asyncio.sleep(0.01)
        if state["late"]:
            raise httpx.ReadTimeout("scripted: no answer in time", request=request)
        return httpx.Response(200, json=canned_answer("/v1/completions"))

    model = OpenAIModel("canned", base_url="http://127.0.0.1:9/v1", max_concurrency=8, max_retries=0,
                        backoff_s=0.01, transport=httpx.MockTransport(answer))
    await asyncio.gather(*(model.generate(PROMPT) for _ in range(32)))  # slow start up to 8
    assert model.in_flight_limit.limit == 8
    state["late"] = True
    results = await asyncio.gather(*(model.generate(PROMPT) for _ in range(8)), return_exceptions=True)
    assert all(isinstance(result, ModelError) for result in results)
    assert model.in_flight_limit.limit == 4  # halved once for the round of timeouts (before: 8)
    assert model.in_flight_limit.cuts == 1
    state["late"] = False
    await asyncio.gather(*(model.generate(PROMPT) for _ in range(200)))
    await model.aclose()
    assert model.in_flight_limit.limit > 4  # and it grows back once answers come in time


async def test_failed_calls_are_counted_in_the_summary(tmp_path):
    result = await run_judge(corpus(5), [CRITERION], RubricJudge(ScriptedModel(down=True)),
                             store=Store(tmp_path / "s.db"))
    assert result.summary.failed_calls == 5 and result.summary.model_calls == 0  # before: 0 and 0


def test_judge_imports_only_what_it_uses():
    probe = ("import sys\nfrom convoscope.cli import cli\n"
             "try:\n    cli(['judge', '--help'])\nexcept SystemExit:\n    pass\n"
             "print('\\n'.join(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    imported = set(done.stdout.split())
    unwanted = {name for name in imported if name.startswith((
        "convoscope.filters", "convoscope.analysis", "convoscope.web", "convoscope.campaigns",
        "convoscope.survey", "convoscope.synth", "convoscope.reports", "pandas", "scipy"))}
    assert "convoscope.cli._judge" in imported and not unwanted, sorted(unwanted)
