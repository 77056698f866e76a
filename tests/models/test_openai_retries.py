"""The HTTP backend against a scripted server on 127.0.0.1: probing, errors, usage, sampling.

The first chat request of a model probes the endpoint on dedicated requests (logprobs, then
json_schema, then json_object), so scripts start with the probe's replies."""

import asyncio

import pytest
from scripted_server import chat_reply

from convoscope.models import GenerateRequest, Message, ModelError, OpenAIModel

REQUEST = GenerateRequest(messages=(Message(role="user", content="hi"),),
                          json_schema={"type": "object", "properties": {"score": {"enum": [1, 2]}}})
OK = (200, chat_reply('{"ok": true}'), {})
REFUSED_SCHEMA = (500, "response_format: Input should be 'text' or 'json_object'", {})


def model_for(scripted, **options):
    return OpenAIModel("m", base_url=scripted.base_url, backoff_s=0.01, **options)


def posted(scripted, path="/v1/chat/completions"):
    return [entry["body"] for entry in scripted.requests if entry["path"] == path]


def is_probe(body):
    return body.get("max_tokens") == 8 and "ok" in body["messages"][0]["content"]


async def test_capabilities_are_probed_on_dedicated_requests_before_the_first_item(server):
    scripted = server(OK, REFUSED_SCHEMA, OK, (200, chat_reply('{"score": 1}'), {}))
    model = model_for(scripted)
    generation = await model.generate(REQUEST)
    await model.aclose()
    bodies = posted(scripted)
    assert [is_probe(body) for body in bodies] == [True, True, True, False]
    assert bodies[0]["logprobs"] is True
    assert [body.get("response_format", {}).get("type") for body in bodies[1:]] == [
        "json_schema", "json_object", "json_object"]
    assert bodies[3]["logprobs"] is True and generation.text == '{"score": 1}'


async def test_concurrent_requests_probe_the_server_once(server):
    scripted = server(OK, REFUSED_SCHEMA, OK, *[(200, chat_reply('{"score": 1}'), {})] * 4)
    model = model_for(scripted)
    results = await asyncio.gather(*(model.generate(REQUEST) for _ in range(4)))
    await model.aclose()
    assert all(result.text == '{"score": 1}' for result in results)
    bodies = posted(scripted)
    assert sum(is_probe(body) for body in bodies) == 3
    assert all(body["response_format"]["type"] == "json_object" for body in bodies if not is_probe(body))


async def test_logprobs_are_not_asked_for_when_the_probe_is_refused_and_read_when_given(server):
    logprobs = [{"token": t, "logprob": -0.1, "top_logprobs": []} for t in ['{"', "score", '":', " "]]
    logprobs.append({"token": "2", "logprob": -0.2, "top_logprobs": [
        {"token": "2", "logprob": -0.2}, {"token": "1", "logprob": -1.8}]})
    scripted = server((400, "logprobs are not supported", {}), OK, (200, chat_reply('{"score": 2}'), {}))
    model = model_for(scripted)
    generation = await model.generate(REQUEST)
    await model.aclose()
    assert "logprobs" not in posted(scripted)[-1]
    assert generation.next_token_logprobs is None

    scripted = server(OK, OK, (200, chat_reply('{"score": 2}', logprobs=logprobs), {}))
    model = model_for(scripted)
    generation = await model.generate(REQUEST)
    await model.aclose()
    assert generation.next_token_logprobs == {"2": -0.2, "1": -1.8}


async def test_a_refused_item_is_that_items_error_and_changes_nothing_for_the_next(server):
    scripted = server(OK, OK, (400, "unknown field", {}), (200, chat_reply('{"score": 1}'), {}))
    model = model_for(scripted)
    with pytest.raises(ModelError, match="HTTP 400"):
        await model.generate(REQUEST)
    await model.generate(REQUEST)
    await model.aclose()
    first, second = (body for body in posted(scripted) if not is_probe(body))
    assert first["response_format"] == second["response_format"] and second["logprobs"] is True


async def test_auth_errors_say_what_to_set_and_the_named_key_is_sent(server, monkeypatch):
    monkeypatch.setenv("MY_ENDPOINT_KEY", "sk-test")
    scripted = server((401, "bad key", {}))
    model = model_for(scripted, api_key_env="MY_ENDPOINT_KEY")
    with pytest.raises(ModelError, match="--api-key-env"):
        await model.generate(REQUEST)
    await model.aclose()
    assert scripted.requests[0]["auth"] == "Bearer sk-test"


async def test_completion_usage_and_cost(server):
    reply = {"choices": [{"index": 0, "text": "ok", "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 1000, "completion_tokens": 500}}
    scripted = server((200, reply, {}))
    model = model_for(scripted, price_per_million=(2.0, 8.0))
    generation = await model.generate(GenerateRequest(prompt="a"))
    await model.aclose()
    assert generation.cost == pytest.approx((1000 * 2.0 + 500 * 8.0) / 1e6)
    assert (generation.prompt_tokens, generation.completion_tokens) == (1000, 500)


async def test_sampling_settings_are_sent_only_when_set(server):
    scripted = server(OK, OK, OK, (200, chat_reply("a"), {}), (200, chat_reply("b"), {}))
    model = model_for(scripted)
    plain = GenerateRequest(messages=(Message(role="user", content="hi"),), temperature=1.5)
    await model.generate(plain)
    await model.generate(plain.model_copy(update={"top_p": 0.95, "presence_penalty": 0.6}))
    await model.aclose()
    first, second = (body for body in posted(scripted) if not is_probe(body))
    assert "top_p" not in first and "presence_penalty" not in first
    assert (second["top_p"], second["presence_penalty"], second["temperature"]) == (0.95, 0.6, 1.5)
