"""One capability layer for every HTTP backend (issue 27 observation 2, issue 23 observation 7):
a validation error means "not supported" at once, a probe that fails for a transient reason
decides nothing and is asked again, the run summary says when structured output was off and
why, and every answer (cached ones too) records the request format that produced it."""

from __future__ import annotations

import pytest
from faultproxy import Fault
from scripted_server import chat_reply

from convoscope.models import GenerateRequest, Message, ModelError, OpenAIModel, ResponseCache, open_model

SCHEMA = {"type": "object", "properties": {"score": {"enum": [1, 2, 3]}}, "required": ["score"]}
CHAT = GenerateRequest(messages=(Message(role="user", content="Rate 'good food' from 1 to 3 as JSON."),),
                       json_schema=SCHEMA, max_tokens=4)
OK = (200, chat_reply('{"ok": true}'), {})
ANSWER = (200, chat_reply('{"score": 2}'), {})


def bodies(scripted):
    return [entry["body"] for entry in scripted.requests]


def is_probe(body):
    return body.get("max_tokens") == 8 and "ok" in body["messages"][0]["content"]


async def test_a_422_about_response_format_means_not_supported_and_is_not_retried(server):
    refused = (422, {"detail": [{"loc": ["body", "response_format", "type"], "msg": "unexpected value"}]}, {})
    scripted = server(OK, refused, OK, ANSWER)
    model = OpenAIModel("m", base_url=scripted.base_url, backoff_s=0.01)
    generation = await model.generate(CHAT)
    await model.aclose()
    sent = [body.get("response_format", {}).get("type") for body in bodies(scripted)]
    assert sent == [None, "json_schema", "json_object", "json_object"]  # one json_schema probe only
    assert generation.structured_output == "json_object" and model.capability_note is None


async def test_a_500_only_with_the_field_is_a_refusal_and_the_run_summary_says_why(server, tmp_path):
    import convoscope as cs

    failing = (500, "internal error", {})
    scripted = server(OK, failing, OK, failing, OK, ANSWER)  # each form fails, the plain request passes
    item = cs.Item(id="a", response="The food was good.")
    criterion = cs.Criterion(name="tasty", question="Tasty?", definition="Taste.",
                             scale=cs.Scale(kind="range", minimum=1, maximum=3))
    result = await cs.judge_async([item], [criterion], f"openai:m@{scripted.base_url}",
                                  store=tmp_path / "run.db", cache_path=None,
                                  model_options={"max_retries": 0, "backoff_s": 0.01})
    assert result.verdicts[0].value == 2
    (note,) = result.summary.notes
    assert note.startswith(f"openai:m@{scripted.base_url}: structured output off")
    assert "json_schema: HTTP 500 only when response_format is sent" in note
    assert "json_object: HTTP 500 only when response_format is sent" in note
    assert "response_format" not in bodies(scripted)[-1]


def test_the_cli_summary_prints_the_note(server, tmp_path):
    from click.testing import CliRunner

    from convoscope.cli import cli
    from convoscope.cli._app import _register

    refused = (400, "response_format is not supported", {})
    scripted = server(OK, refused, refused, ANSWER)
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "a", "question": "Why?", "response": "Because the price was fair."}\n')
    _register()
    done = CliRunner(env={"COLUMNS": "300"}).invoke(cli, [
        "judge", str(items), "--criterion", "survey:effort", "--judge", f"openai:m@{scripted.base_url}",
        "--store", str(tmp_path / "run.db"), "--no-cache", "--max-unscored", "1"])
    assert "structured output off" in done.output and "json_schema refused (HTTP 400" in done.output


async def test_a_probe_that_cannot_be_answered_decides_nothing_and_is_asked_again(server):
    down = (500, "model not loaded yet", {})
    scripted = server(down, down, down, down, (503, "busy", {}), OK, OK, ANSWER)
    model = OpenAIModel("m", base_url=scripted.base_url, backoff_s=0.01, max_retries=1)
    with pytest.raises(ModelError, match="could not find out what the endpoint accepts"):
        await model.generate(CHAT)  # the logprobs probe and the plain request both got 500s
    generation = await model.generate(CHAT)
    await model.aclose()
    last = bodies(scripted)[-1]
    assert last["response_format"]["type"] == "json_schema" and last["logprobs"] is True
    assert generation.structured_output == "json_schema"


async def test_cached_answers_record_the_request_format_that_produced_them(server, tmp_path):
    scripted = server(OK, OK, ANSWER)
    model = open_model(f"openai:m@{scripted.base_url}", cache=tmp_path / "cache.db")
    first = await model.generate(CHAT)
    await model.aclose()
    model.cache.close()
    cache = ResponseCache(tmp_path / "cache.db")
    again = open_model(f"openai:m@{scripted.base_url}", cache=cache)
    cached = await again.generate(CHAT)
    await again.aclose()
    cache.close()
    assert first.structured_output == cached.structured_output == "json_schema" and cached.cached
    assert len(scripted.requests) == 3  # two probes and one answer: the second came from the cache


@pytest.mark.slow
async def test_nine_500s_at_start_up_never_switch_structured_output_off(fault_proxy):
    # Before (issue 23, observation 7): the probe took every 500 as a refusal, so logprobs and
    # structured output were off for the whole run, exit 0, nothing said.
    fault_proxy.script(*[Fault.status(500, '{"error": {"message": "server starting"}}')] * 9)
    model = OpenAIModel("smollm2", base_url=fault_proxy.base_url, backoff_s=0.01)
    with pytest.raises(ModelError, match="could not find out what the endpoint accepts"):
        await model.generate(CHAT)
    generation = await model.generate(CHAT)  # the server is up now: probed again
    await model.aclose()
    item = [entry.body for entry in fault_proxy.requests if not is_probe(entry.body)]
    assert item[-1]["logprobs"] is True and item[-1]["response_format"]["type"] == "json_object"
    assert generation.structured_output == "json_object" and model.capability_note is None


async def test_the_probe_logic_with_a_scripted_sender():
    """CapabilityProbe alone, with a scripted sender (no endpoint): waiters share one failed
    probe instead of each probing again, and an endpoint that refuses even the plain request is
    "not known yet", never a crash."""
    import asyncio

    from convoscope.models import CapabilityProbe
    from convoscope.models._capabilities import Refused, Unavailable

    sent: list[dict] = []

    async def down(extra):
        sent.append(extra)
        await asyncio.sleep(0.01)
        raise Unavailable("HTTP 503: busy", status=503)

    probe = CapabilityProbe("scripted", down)
    outcomes = await asyncio.gather(*(probe.get() for _ in range(5)), return_exceptions=True)
    assert all(isinstance(outcome, ModelError) for outcome in outcomes) and len(sent) == 1

    async def refuses_everything_after_500s(extra):
        if extra:
            raise Unavailable("HTTP 500: boom", status=500)
        raise Refused(404, "no such route")

    with pytest.raises(ModelError, match="without logprob: HTTP 404"):
        await CapabilityProbe("scripted", refuses_everything_after_500s).get()
