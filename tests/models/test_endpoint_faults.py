"""The HTTP backend against the real llama.cpp server with the fault-injecting proxy in front of
it (fixture ``fault_proxy``): faults are one item's problem and never change how later items are
asked."""

import pytest
from faultproxy import BAD_BODIES, Fault

from convoscope.criteria import get_criterion
from convoscope.items import Item
from convoscope.judges import RubricJudge
from convoscope.models import GenerateRequest, Message, ModelError, OpenAIModel

pytestmark = pytest.mark.slow

SCHEMA = {"type": "object", "properties": {"score": {"enum": [1, 2, 3]}}, "required": ["score"]}
CHAT = GenerateRequest(messages=(Message(role="user", content="Rate 'good food' from 1 to 3 as JSON."),),
                       json_schema=SCHEMA, max_tokens=4)
LONG_CHAT = CHAT.model_copy(update={"messages": (Message(role="user", content="word " * 3000),)})
ITEM = Item(id="i", question="What did you like?", response="The staff were kind.")


def model_for(proxy, **options):
    return OpenAIModel("smollm2", base_url=proxy.base_url, backoff_s=0.01, **options)


def item_requests(proxy):
    """The chat requests that carried an item (not the capability probe's)."""
    return [entry.body for entry in proxy.requests
            if entry.path.endswith("/chat/completions") and entry.body.get("max_tokens") != 8]


async def test_transient_faults_then_the_servers_real_answer(fault_proxy):
    fault_proxy.script(Fault.status(500), Fault.throttle(retry_after="0"), Fault.drop(),
                       BAD_BODIES["HTML"], Fault.status(522))
    model = model_for(fault_proxy, max_retries=5)
    generation = await model.generate(GenerateRequest(prompt="1, 2, 3, 4,", max_tokens=2))
    await model.aclose()
    assert fault_proxy.forwarded == 1 and generation.completion_tokens > 0


@pytest.mark.parametrize("name", ["invalid JSON", "choices of strings"])
async def test_a_bad_body_is_that_items_model_error_and_the_run_goes_on(fault_proxy, name):
    # Before: one such body aborted the whole run ("error: Unterminated string ..." or an
    # AttributeError traceback for choices: ["x"]). Every kind of bad body is checked against
    # the answering proxy in test_endpoint_policy.py; here the judge meets two of them.
    model = model_for(fault_proxy, max_retries=1)
    judge = RubricJudge(model, mode="completion")
    criterion = get_criterion("survey:effort")
    fault_proxy.always(BAD_BODIES[name])
    failed = await judge(ITEM, criterion)
    fault_proxy.always(None)
    scored = await judge(ITEM.model_copy(update={"id": "j"}), criterion)
    await model.aclose()
    assert failed.unscored_reason == "model_error" and failed.value is None
    assert fault_proxy.base_url in failed.raw and "HTTP 200 with" in failed.raw
    assert scored.unscored_reason is None and scored.value is not None


async def test_a_content_object_in_a_chat_answer_is_that_items_model_error(fault_proxy):
    model = model_for(fault_proxy, max_retries=1)
    await model.generate(CHAT)  # the probe and one item pass
    fault_proxy.script(BAD_BODIES["content object"], BAD_BODIES["content object"])
    with pytest.raises(ModelError, match="message content that is not text"):
        await model.generate(CHAT)
    assert (await model.generate(CHAT)).text
    await model.aclose()


async def test_one_transient_500_does_not_switch_structured_output_off(fault_proxy):
    # Before: a 500 on a request with response_format dropped it for the rest of the run
    # (384 of 398 requests then went without it).
    model = model_for(fault_proxy)
    await model.generate(CHAT)
    fault_proxy.script(Fault.status(500, "internal error"))
    await model.generate(CHAT)
    await model.generate(CHAT)
    await model.aclose()
    bodies = item_requests(fault_proxy)
    # llama-cpp-python's server refuses the json_schema form: json_object with the schema it is.
    assert all(body["response_format"]["type"] == "json_object" and body["logprobs"] for body in bodies)
    assert len(bodies) == 4  # one item retried once


async def test_an_over_long_item_leaves_schema_and_logprobs_to_the_items_after_it(fault_proxy):
    # Before: one HTTP 400 for an over-long prompt removed the schema and logprobs for every
    # later item, which then came back parse_failure.
    model = model_for(fault_proxy)
    with pytest.raises(ModelError, match=r"prompt of 30\d\d tokens exceeds the context of 2048"):
        await model.generate(LONG_CHAT)
    await model.generate(CHAT)
    asked = len(item_requests(fault_proxy))
    # The refusal told the context size; the server's tokenizer now finds the next one first.
    with pytest.raises(ModelError, match=r"prompt of \d+ tokens exceeds the context of 2048"):
        await model.generate(LONG_CHAT)
    await model.aclose()
    bodies = item_requests(fault_proxy)
    assert len(bodies) == asked == 2
    assert bodies[1]["response_format"]["type"] == "json_object" and bodies[1]["logprobs"]


async def test_an_over_long_prompt_is_refused_before_any_call_when_the_context_is_known(fault_proxy):
    model = model_for(fault_proxy, context_length=2048)
    with pytest.raises(ModelError, match=r"prompt of 300\d tokens exceeds the context of 2048"):
        await model.generate(GenerateRequest(prompt="word " * 3000, max_tokens=1))
    await model.generate(GenerateRequest(prompt="word " * 20, max_tokens=1))
    await model.aclose()
    assert fault_proxy.forwarded == 1  # only the short prompt reached the server


async def test_each_generation_records_what_the_server_served(fault_proxy):
    model = model_for(fault_proxy)
    generation = await model.generate(GenerateRequest(prompt="1, 2,", max_tokens=2, temperature=0.2, seed=11))
    await model.aclose()
    assert (generation.served_model, generation.seed, generation.temperature) == ("smollm2", 11, 0.2)
