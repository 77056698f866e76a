"""Retry signals, timeouts, in-flight limits, rate budgets and keys of the HTTP backend, through
the fault-injecting proxy (tests/faultproxy.py) answering on its own (no model behind it)."""

import asyncio
import time

import pytest
from faultproxy import BAD_BODIES, Fault, FaultProxy
from patience import PATIENT_S

from convoscope.models import GenerateRequest, Message, ModelError, OpenAIModel
from convoscope.models._limits import AdaptiveLimit
from convoscope.models._retry import RetryPolicy, retry_after_seconds, should_retry

PROMPT = GenerateRequest(prompt="Score:", max_tokens=1)


@pytest.fixture
def proxy():
    with FaultProxy() as running:
        yield running


def model_for(proxy, **options):
    options.setdefault("backoff_s", 0.01)
    return OpenAIModel("canned", base_url=proxy.base_url, **options)


async def generate(model, request=PROMPT):
    try:
        return await model.generate(request)
    finally:
        await model.aclose()


def test_the_default_policy_bounds_a_hung_endpoint_to_minutes_not_ten():
    policy = RetryPolicy()
    # Before: 5 attempts x 120 s = 600 s and more per item, with no way to change it.
    assert policy.deadline <= 180 and policy.timeout <= 60 and policy.max_retries == 3


async def test_a_hung_endpoint_costs_the_timeout_not_minutes(proxy):
    proxy.always(Fault.hang(30))
    started = time.monotonic()
    with pytest.raises(ModelError, match="timeout of 0.3 s"):
        await generate(model_for(proxy, timeout=0.3, max_retries=1))
    assert time.monotonic() - started < 5
    assert len(proxy.requests) == 2


async def test_the_deadline_bounds_a_call_whatever_the_retries(proxy):
    proxy.always(Fault.hang(30))
    started = time.monotonic()
    with pytest.raises(ModelError, match="deadline of 1 s"):
        await generate(model_for(proxy, timeout=0.4, max_retries=50, deadline=1.0))
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("status", [500, 502, 503, 504, 520, 521, 522, 523, 524, 408, 409, 429])
async def test_transient_statuses_are_retried(proxy, status):
    proxy.script(Fault.status(status), Fault.status(status))
    generation = await generate(model_for(proxy))
    assert generation.text == " 1" and len(proxy.requests) == 3


async def test_x_should_retry_overrides_the_status(proxy):
    proxy.script(Fault.status(400, headers={"x-should-retry": "true"}))
    assert (await generate(model_for(proxy))).text == " 1"
    proxy.script(Fault.status(503, headers={"x-should-retry": "false"}))
    with pytest.raises(ModelError, match="HTTP 503"):
        await generate(model_for(proxy))
    assert len(proxy.requests) == 3  # 2 for the first call, 1 for the second


@pytest.mark.parametrize("fault, at_least", [
    (lambda: Fault.throttle(retry_after="1"), 0.9),
    (lambda: Fault.throttle(http_date_in=2), 0.9),  # an HTTP date has whole seconds: 1-2 s from now
    (lambda: Fault.throttle(retry_after_ms="400"), 0.35),
], ids=["seconds", "http-date", "milliseconds"])
async def test_retry_after_in_every_form_is_honoured(proxy, fault, at_least):
    proxy.script(fault())  # made now: the date must be in the future
    started = time.monotonic()
    await generate(model_for(proxy))
    assert time.monotonic() - started >= at_least


def test_retry_signals_are_read_as_the_servers_send_them():
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0) == 10.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert should_retry(522, {}) and not should_retry(501, {}) and not should_retry(400, {})
    assert should_retry(400, {"x-should-retry": "true"})
    assert not should_retry(429, {"x-should-retry": "false"})


async def test_a_dropped_connection_is_retried(proxy):
    proxy.script(Fault.drop(), Fault.drop())
    assert (await generate(model_for(proxy))).text == " 1"
    assert len(proxy.requests) == 3


@pytest.mark.parametrize("name", sorted(BAD_BODIES))
async def test_a_bad_body_is_retried_then_names_the_endpoint_and_what_came_back(proxy, name):
    proxy.always(BAD_BODIES[name])
    with pytest.raises(ModelError) as raised:
        await generate(model_for(proxy, max_retries=1))
    message = str(raised.value)
    assert proxy.base_url in message and "HTTP 200 with" in message
    assert len(proxy.requests) == 2
    shown = BAD_BODIES[name].text[:40]
    assert (shown in message) if shown else ("an empty body" in message)


async def until(condition, what: str) -> None:
    """Wait for a state of the proxy (not for a time): patient on a busy machine."""
    deadline = time.monotonic() + PATIENT_S
    while not condition():
        assert time.monotonic() < deadline, f"never {what}"
        await asyncio.sleep(0.01)


async def warmed(model, proxy, answers: int) -> None:
    """Quick answers until slow start has taken the in-flight limit up to the ceiling."""
    await asyncio.gather(*(model.generate(PROMPT) for _ in range(answers)))
    assert model.in_flight_limit.limit == model.in_flight_limit.ceiling


async def test_the_in_flight_limit_follows_the_requested_concurrency(proxy):
    # Before: at most 8 requests in flight to an endpoint, whatever --concurrency said. The limit
    # starts at one (slow start) and reaches the requested 32 once answers come in time.
    model = model_for(proxy, max_concurrency=32)
    await warmed(model, proxy, 64)
    proxy.hold_after(0)
    held = asyncio.gather(*(model.generate(PROMPT) for _ in range(32)))
    await until(lambda: proxy.in_flight == 32, "32 requests in flight")
    proxy.release()
    await held
    await model.aclose()
    assert proxy.peak_in_flight == 32


async def test_a_ceiling_given_by_the_user_is_kept(proxy):
    proxy.always(Fault.slow(0.1))
    model = model_for(proxy, max_concurrency=4)
    await asyncio.gather(*(model.generate(PROMPT) for _ in range(24)))
    await model.aclose()
    assert proxy.peak_in_flight == 4


async def test_the_limit_starts_at_one_request_and_doubles_each_round(proxy):
    # Issue 35: eight requests sent at once to a server that answers one at a time (llama-cpp-
    # python) queued there, and the later ones' wait ran into their timeout.
    model = model_for(proxy, max_concurrency=8)
    limit = model.in_flight_limit
    assert limit.limit == 1
    proxy.hold_after(0)
    first = asyncio.gather(*(model.generate(PROMPT) for _ in range(8)))
    await until(lambda: proxy.in_flight == 1, "one request in flight")
    await asyncio.sleep(0.2)  # nothing more is sent while the first is unanswered
    assert proxy.in_flight == 1 and limit.in_flight == 1
    proxy.release()
    await first
    await model.aclose()
    assert limit.limit == 8 and limit.cuts == 0  # +1 per answer up to the ceiling


async def test_the_capability_probes_do_not_grow_the_limit(proxy):
    # Probes are tiny (8 tokens): counted as answers, they took the limit to 4 before the first
    # item, and four long items then queued at a one-slot server.
    model = model_for(proxy, max_concurrency=8)
    chat = GenerateRequest(messages=(Message(role="user", content="Rate this."),), max_tokens=5)
    await model.generate(chat)
    await model.aclose()
    assert len(proxy.requests) >= 3  # the probes went out, then the item
    assert model.in_flight_limit.limit == 2  # one answer: the item's


async def test_429_halves_the_in_flight_limit_and_it_grows_back(proxy):
    # Asserted on the limiter's state, not on timing (before: `assert 9.8 <= 8` on a busy
    # machine, as the answers after the cut had already grown it back).
    model = model_for(proxy, max_concurrency=16)
    limit = model.in_flight_limit
    await warmed(model, proxy, 64)
    proxy.script(*[Fault.throttle(retry_after_ms="50")] * 16)
    proxy.hold_after(0)
    round_of_429 = asyncio.gather(*(model.generate(PROMPT) for _ in range(16)))
    await until(lambda: proxy.in_flight == 16, "16 requests in flight")
    proxy.release()  # sixteen 429s to requests all sent before any cut
    await round_of_429
    assert limit.cuts == 1  # one halving per round of 429s, not one per 429 (that would reach 1)
    assert limit.lowest == 8
    await asyncio.gather(*(model.generate(PROMPT) for _ in range(200)))
    await model.aclose()
    assert limit.cuts == 1 and 8 < limit.limit <= 16  # additive increase brought it back


def test_the_adaptive_limit_is_additive_up_and_multiplicative_down():
    limit = AdaptiveLimit(10)
    limit.in_flight = 10
    limit.throttled(started=time.monotonic())
    assert limit.limit == 5
    limit.throttled(started=0.0)  # sent before the cut: the cut already answered it
    assert limit.limit == 5
    for _ in range(5):
        limit.succeeded()
    assert 5.9 < limit.limit < 6.1
    for _ in range(1000):
        limit.succeeded()
    assert limit.limit == 10


def test_slow_start_grows_by_one_per_answer_until_the_first_congestion():
    limit = AdaptiveLimit(64, start=1)
    for _ in range(7):
        limit.succeeded()
    assert limit.limit == 8
    limit.in_flight = 8
    limit.throttled(started=time.monotonic())
    assert limit.limit == 4 and limit.cuts == 1 and not limit.slow_start
    for _ in range(4):
        limit.succeeded()
    assert 4.9 < limit.limit < 5.1  # additive from now on


def test_an_answer_slower_than_slow_s_counts_as_congestion():
    limit = AdaptiveLimit(8, start=8, slow_s=30.0)
    limit.in_flight = 8
    limit.succeeded(started=time.monotonic())  # in time: no cut
    assert limit.limit == 8 and limit.cuts == 0
    limit.succeeded(started=time.monotonic() - 31.0)  # answered after 31 s
    assert limit.limit == 4 and limit.cuts == 1
    limit.succeeded(started=time.monotonic() - 45.0)  # sent before that cut: no second cut
    assert limit.limit == 4 and limit.cuts == 1


async def test_a_requests_per_minute_budget_spreads_requests(proxy):
    model = model_for(proxy, rpm=120)  # two a second
    started = time.monotonic()
    await asyncio.gather(*(model.generate(PROMPT) for _ in range(6)))
    await model.aclose()
    assert time.monotonic() - started >= 1.8


async def test_a_tokens_per_minute_budget_counts_prompt_and_answer(proxy):
    model = model_for(proxy, tpm=600)  # ten tokens a second; each request is about 1 + 9 tokens
    request = GenerateRequest(prompt="Score:", max_tokens=9)
    started = time.monotonic()
    for _ in range(3):
        await model.generate(request)
    await model.aclose()
    assert time.monotonic() - started >= 1.8


async def test_each_generation_records_the_served_model_seed_and_temperature(proxy):
    generation = await generate(model_for(proxy), GenerateRequest(prompt="Score:", temperature=0.7, seed=7))
    assert (generation.served_model, generation.seed, generation.temperature) == ("canned", 7, 0.7)


# -- keys ------------------------------------------------------------------------------------------

async def test_the_openai_key_is_not_sent_to_other_endpoints(proxy, monkeypatch):
    # Before: OPENAI_API_KEY went as a Bearer token to every base URL.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    await generate(model_for(proxy))
    assert "authorization" not in proxy.requests[0].headers


async def test_a_key_variable_is_sent_only_to_the_host_it_is_bound_to(proxy, monkeypatch):
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    monkeypatch.setenv("OTHER_KEY", "sk-other")
    await generate(model_for(proxy, api_key_env={"127.0.0.1": "LOCAL_KEY", "api.example.com": "OTHER_KEY"}))
    await generate(model_for(proxy, api_key_env={"api.example.com": "OTHER_KEY"}))
    assert proxy.requests[0].headers["authorization"] == "Bearer sk-local"
    assert "authorization" not in proxy.requests[1].headers


def test_a_key_is_refused_over_plain_http_to_a_remote_host(monkeypatch):
    monkeypatch.setenv("REMOTE_KEY", "sk-remote")
    with pytest.raises(ModelError, match="refusing to send the API key from REMOTE_KEY over plain http"):
        OpenAIModel("m", base_url="http://judge.example.com/v1", api_key_env="REMOTE_KEY")
    OpenAIModel("m", base_url="http://judge.example.com/v1", api_key_env="REMOTE_KEY", allow_insecure=True)
    OpenAIModel("m", base_url="https://judge.example.com/v1", api_key_env="REMOTE_KEY")
    OpenAIModel("m", base_url="http://localhost:8000/v1", api_key_env="REMOTE_KEY")


def test_a_named_key_variable_that_is_unset_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("MISSING_KEY", raising=False)
    with pytest.raises(ModelError, match="MISSING_KEY .* is not set"):
        OpenAIModel("m", base_url="https://judge.example.com/v1", api_key_env="MISSING_KEY")


async def test_waiting_behind_our_own_limits_does_not_count_against_the_deadline(proxy):
    # 6 requests, one in flight at a time, each answered in 0.3 s: the last waits ~1.5 s for its
    # slot, longer than the 1 s deadline, and must still be sent and answered.
    proxy.always(Fault.slow(0.3))
    model = model_for(proxy, max_concurrency=1, deadline=1.0)
    results = await asyncio.gather(*(model.generate(PROMPT) for _ in range(6)))
    await model.aclose()
    assert all(result.text == " 1" for result in results) and proxy.forwarded == 6


async def test_malformed_log_probabilities_are_left_out_not_a_crash(proxy):
    import json

    broken = {"model": "canned", "choices": [{"index": 0, "text": " 1", "logprobs": {
        "top_logprobs": [{" 1": "high", " 2": None, " 3": -0.5}]}}], "usage": {"prompt_tokens": "many"}}
    proxy.script(Fault.body(json.dumps(broken)))
    request = GenerateRequest(prompt="Score:", max_tokens=1, next_token_candidates=(" 1", " 2", " 3"))
    generation = await generate(model_for(proxy), request)
    assert generation.next_token_logprobs == {" 3": -0.5} and generation.prompt_tokens == 0


def test_context_sizes_are_read_as_each_server_reports_them():
    from convoscope.models._openai import _context_from_props
    from convoscope.models._wire import context_overflow

    # llama.cpp's /props: top level (newer builds) or inside the default generation settings.
    assert _context_from_props({"n_ctx": 8192}) == 8192
    assert _context_from_props({"default_generation_settings": {"n_ctx": 4096}}) == 4096
    assert _context_from_props({"detail": "Not Found"}) is None and _context_from_props(None) is None
    # Refusals: OpenAI / llama-cpp-python (both wordings), llama.cpp's JSON fields.
    assert context_overflow("This model's maximum context length is 8192 tokens. However, your messages "
                            "resulted in 9000 tokens.") == (None, 8192)
    assert context_overflow("This model's maximum context length is 2048 tokens. However, you requested "
                            "3035 tokens (3031 in the messages, 4 in the completion).") == (3031, 2048)
    assert context_overflow('{"error": {"message": "the request exceeds the available context size", '
                            '"n_prompt_tokens": 5000, "n_ctx": 4096}}') == (5000, 4096)
    assert context_overflow("HTTP 400: unknown field 'foo'") is None
