"""The native ``anthropic:`` route (issue 27, observation 2): the Messages API wire format over
httpx, against a local Messages server in front of the real llama.cpp server, and the
translation both ways."""

from __future__ import annotations

import json

import pytest
from messages_server import MessagesServer

import convoscope as cs
from convoscope.models import GenerateRequest, Message, ModelError, open_model
from convoscope.models._anthropic import chat_completion, messages_body

SCHEMA = {"type": "object", "properties": {"score": {"enum": [1, 2, 3]}}, "required": ["score"]}


def test_a_chat_body_becomes_a_messages_request_and_the_answer_a_chat_completion():
    chat = {"model": "claude-x", "max_tokens": 50, "temperature": 0.0, "seed": 0, "stop": ["\n\n"],
            "messages": [{"role": "system", "content": "Be strict."}, {"role": "user", "content": "Rate."}],
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "judgement", "schema": SCHEMA}}}
    body = messages_body(chat)
    assert body == {"model": "claude-x", "max_tokens": 50, "temperature": 0.0, "system": "Be strict.",
                    "messages": [{"role": "user", "content": "Rate."}], "stop_sequences": ["\n\n"],
                    "tools": [{"name": "judgement", "description": "Record the judgement.",
                               "input_schema": SCHEMA}],
                    "tool_choice": {"type": "tool", "name": "judgement"}}
    answer = chat_completion({"model": "claude-x-2025", "stop_reason": "tool_use", "content": [
        {"type": "tool_use", "id": "t", "name": "judgement", "input": {"score": 2}}],
        "usage": {"input_tokens": 30, "output_tokens": 5}})
    assert json.loads(answer["choices"][0]["message"]["content"]) == {"score": 2}
    assert answer["usage"] == {"prompt_tokens": 30, "completion_tokens": 5}
    assert answer["model"] == "claude-x-2025"


def test_the_anthropic_key_goes_only_to_anthropic(monkeypatch):
    from convoscope.models._keys import resolve_api_key

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-test")
    assert resolve_api_key("https://api.anthropic.com/v1") == "sk-ant-test"
    assert resolve_api_key("http://127.0.0.1:8080/v1") is None
    assert resolve_api_key("https://api.openai.com/v1") == "sk-openai-test"


@pytest.fixture
def messages_server(llama_server):
    with MessagesServer(llama_server[0], key="local-key") as server:
        yield server


@pytest.mark.slow
def test_judging_through_the_messages_api_uses_a_forced_tool_for_the_schema(messages_server, tmp_path,
                                                                            monkeypatch):
    monkeypatch.setenv("LOCAL_ANTHROPIC_KEY", "local-key")
    items = [cs.Item(id="a", question="What did you like?", response="The staff were kind and quick.")]
    effort = cs.criterion("survey:effort").model_copy(update={"ask_reason": False})  # a short answer
    result = cs.judge(items, [effort], f"anthropic:smollm2@{messages_server.base_url}",
                      store=tmp_path / "run.db", cache_path=None, max_tokens=40,
                      model_options={"api_key_env": "LOCAL_ANTHROPIC_KEY", "timeout": 900, "deadline": 1800})
    (verdict,) = result.verdicts
    assert verdict.rater == f"model:anthropic:smollm2@{messages_server.base_url}"
    assert verdict.unscored_reason is None and verdict.value in range(8), verdict.raw
    assert verdict.prompt_tokens > 0 and result.summary.notes == []
    asked = messages_server.requests[-1]
    assert asked["tool_choice"] == {"type": "tool", "name": "judgement"} and "system" in asked
    assert messages_server.headers[-1]["x-api-key"] == "local-key"
    assert "authorization" not in messages_server.headers[-1]
    # The Messages API takes neither log-probabilities nor a seed: the transport refused the
    # first before any network (the probe recorded it), and never sent the second.
    assert all("logprobs" not in body and "seed" not in body for body in messages_server.requests)


@pytest.mark.slow
async def test_completion_mode_and_a_wrong_key_are_clear_errors(messages_server, monkeypatch):
    monkeypatch.setenv("WRONG_KEY", "nope")
    model = open_model(f"anthropic:smollm2@{messages_server.base_url}", api_key_env="WRONG_KEY")
    with pytest.raises(ModelError, match="no raw completions: judge in chat mode"):
        await model.generate(GenerateRequest(prompt="1, 2, 3,", max_tokens=1))
    with pytest.raises(ModelError, match="not authorised"):
        await model.generate(GenerateRequest(messages=(Message(role="user", content="hi"),),
                                             json_schema=SCHEMA))
    await model.aclose()
