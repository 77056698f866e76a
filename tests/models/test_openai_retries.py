"""The HTTP backend against a scripted server on 127.0.0.1: retries, fallbacks, errors, usage."""

import pytest
from scripted_server import ScriptedServer, chat_reply

from convoscope.models import GenerateRequest, Message, ModelError, OpenAIModel

REQUEST = GenerateRequest(messages=(Message(role="user", content="hi"),),
                          json_schema={"type": "object", "properties": {"score": {"enum": [1, 2]}}})


@pytest.fixture
def server(request):
    servers = []

    def make(*replies):
        servers.append(ScriptedServer(replies))
        return servers[-1]

    yield make
    for scripted in servers:
        scripted.close()


def model_for(scripted, **options):
    return OpenAIModel("m", base_url=scripted.base_url, backoff_s=0.01, **options)


async def test_transient_errors_are_retried_with_backoff(server):
    scripted = server((503, "busy", {}), (429, "slow down", {"retry-after": "0"}),
                      (200, chat_reply('{"score": 2}'), {}))
    model = model_for(scripted)
    generation = await model.generate(REQUEST)
    await model.aclose()
    assert generation.text == '{"score": 2}' and len(scripted.requests) == 3
    assert (generation.prompt_tokens, generation.completion_tokens) == (10, 5)


async def test_retries_run_out_into_a_model_error(server):
    scripted = server(*[(503, "busy", {})] * 3)
    model = model_for(scripted, max_retries=2)
    with pytest.raises(ModelError, match="HTTP 503"):
        await model.generate(REQUEST)
    await model.aclose()
    assert len(scripted.requests) == 3


async def test_structured_output_degrades_once_per_server(server):
    scripted = server((500, "response_format json_schema not supported", {}),
                      (400, "unknown field: schema", {}),
                      (200, chat_reply('{"score": 1}'), {}), (200, chat_reply('{"score": 2}'), {}))
    model = model_for(scripted)
    first = await model.generate(REQUEST)
    second = await model.generate(REQUEST)
    await model.aclose()
    formats = [request["body"].get("response_format", {}).get("type") for request in scripted.requests]
    assert formats == ["json_schema", "json_object", None, None]  # remembered after degrading
    assert (first.text, second.text) == ('{"score": 1}', '{"score": 2}')


async def test_logprobs_are_dropped_when_rejected_and_read_when_given(server):
    logprobs = [{"token": t, "logprob": -0.1, "top_logprobs": []} for t in ['{"', "score", '":', " "]]
    logprobs.append({"token": "2", "logprob": -0.2, "top_logprobs": [
        {"token": "2", "logprob": -0.2}, {"token": "1", "logprob": -1.8}]})
    scripted = server((400, "logprobs are not supported", {}), (200, chat_reply('{"score": 2}'), {}))
    model = model_for(scripted)
    generation = await model.generate(REQUEST)
    await model.aclose()
    assert "logprobs" in scripted.requests[0]["body"] and "logprobs" not in scripted.requests[1]["body"]
    assert generation.next_token_logprobs is None  # this server gave none after dropping them

    scripted = server((200, chat_reply('{"score": 2}', logprobs=logprobs), {}))
    model = model_for(scripted)
    generation = await model.generate(REQUEST)
    await model.aclose()
    assert generation.next_token_logprobs == {"2": -0.2, "1": -1.8}


async def test_auth_errors_say_what_to_set_and_the_key_is_sent(server, monkeypatch):
    monkeypatch.setenv("CONVOSCOPE_API_KEY", "sk-test")
    scripted = server((401, "bad key", {}))
    model = model_for(scripted)
    with pytest.raises(ModelError, match="CONVOSCOPE_API_KEY"):
        await model.generate(REQUEST)
    await model.aclose()
    assert scripted.requests[0]["auth"] == "Bearer sk-test"


async def test_a_hanging_server_times_out(server):
    scripted = server(("hang", 2.0, {}), ("hang", 2.0, {}))
    model = model_for(scripted, timeout_s=0.3, max_retries=1)
    with pytest.raises(ModelError, match="Timeout"):
        await model.generate(REQUEST)
    await model.aclose()


async def test_cost_is_computed_only_from_given_prices(server):
    scripted = server((200, chat_reply("{}", prompt_tokens=1000, completion_tokens=500), {}))
    model = model_for(scripted, price_per_million=(2.0, 8.0))
    generation = await model.generate(REQUEST)
    await model.aclose()
    assert generation.cost == pytest.approx((1000 * 2.0 + 500 * 8.0) / 1e6)


async def test_concurrent_requests_probe_the_server_once(server):
    import asyncio

    rejection = (500, "response_format json_schema not supported", {})
    scripted = server(rejection, *[(200, chat_reply('{"score": 1}'), {})] * 4)
    model = model_for(scripted)
    results = await asyncio.gather(*(model.generate(REQUEST) for _ in range(4)))
    await model.aclose()
    assert all(result.text == '{"score": 1}' for result in results)
    formats = [request["body"].get("response_format", {}).get("type") for request in scripted.requests]
    # One request finds out what the server accepts; the others wait for it and never get rejected.
    assert formats == ["json_schema", "json_object", "json_object", "json_object", "json_object"]


async def test_sampling_settings_are_sent_only_when_set(server):
    scripted = server((200, chat_reply("a"), {}), (200, chat_reply("b"), {}))
    model = model_for(scripted)
    plain = GenerateRequest(messages=(Message(role="user", content="hi"),), temperature=1.5)
    await model.generate(plain)
    await model.generate(plain.model_copy(update={"top_p": 0.95, "presence_penalty": 0.6}))
    await model.aclose()
    first, second = (entry["body"] for entry in scripted.requests)
    assert "top_p" not in first and "presence_penalty" not in first
    assert (second["top_p"], second["presence_penalty"], second["temperature"]) == (0.95, 0.6, 1.5)
