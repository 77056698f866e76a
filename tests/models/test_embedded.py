"""The embedded backend runs the real SmolLM2 weights in-process."""

import math

import pytest

from convoscope.criteria import get_criterion
from convoscope.items import Item
from convoscope.judges import RubricJudge, build_request, parse_answer
from convoscope.models import EmbeddedModel, GenerateRequest, Message, ModelError, model_from_spec

pytest.importorskip("llama_cpp")


@pytest.fixture(scope="module")
def model():
    return EmbeddedModel("smollm2")


def test_specs_resolve_to_packaged_weights():
    assert model_from_spec("embedded").name == "embedded:smollm2"
    assert model_from_spec("embedded:smollm2").name == "embedded:smollm2"
    with pytest.raises(ModelError, match="unknown embedded model"):
        model_from_spec("embedded:nonexistent")
    with pytest.raises(ModelError, match="no GGUF model file"):
        model_from_spec("embedded:/nowhere/model.gguf")
    with pytest.raises(ModelError, match="unknown model spec"):
        model_from_spec("carrier-pigeon:fast")


async def test_next_token_scoring_is_a_distribution_and_reuses_the_prefix_exactly(model):
    words = ("1", "2", "3", " 1", " 2", " 3")
    first = GenerateRequest(prompt="Rate from 1 to 3.\nAnswer: great food\nScore:", max_tokens=1,
                            next_token_candidates=words)
    other = GenerateRequest(prompt="Rate from 1 to 3.\nAnswer: asdf\nScore:", max_tokens=1,
                            next_token_candidates=words)
    a = await model.generate(first)
    await model.generate(other)  # shares the rubric prefix with `first`
    again = await model.generate(first)
    assert set(a.next_token_logprobs) == set(words)
    assert all(value <= 0 for value in a.next_token_logprobs.values())
    assert sum(math.exp(value) for value in a.next_token_logprobs.values()) <= 1.0 + 1e-6
    for word in words:  # prefix reuse must not change the numbers
        assert again.next_token_logprobs[word] == pytest.approx(a.next_token_logprobs[word], abs=1e-3)
    assert a.prompt_tokens > 5 and a.text in words


async def test_chat_with_a_schema_returns_json_the_parser_reads(model):
    criterion = get_criterion("survey:relevance")
    item = Item(id="1", question="Why did you pick this phone?", response="The battery lasts two days.")
    request = build_request(criterion, item, mode="chat", max_tokens=120)
    generation = await model.generate(request)
    answer = parse_answer(generation.text, criterion)
    # Grammar-constrained decoding: the score is always on the scale, even from a tiny model.
    assert answer.value in criterion.scale.values(), generation.text
    assert generation.completion_tokens > 0


async def test_rubric_judge_in_completion_mode_gives_an_expected_value(model):
    criterion = get_criterion("survey:effort")
    verdict = await RubricJudge(model, mode="completion")(
        Item(id="x", question="What did you like?", response="The staff were kind."), criterion)
    assert verdict.value in range(0, 8)
    assert 0.0 <= verdict.expected_value <= 7.0
    assert sum(verdict.distribution.values()) == pytest.approx(1.0)
    assert verdict.rater == "model:embedded:smollm2[completion]"


async def test_an_over_long_prompt_is_a_model_error_not_a_crash(model):
    request = GenerateRequest(prompt="word " * 5000, max_tokens=1, next_token_candidates=("1",))
    with pytest.raises(ModelError, match="exceeds the context"):
        await model.generate(request)


async def test_an_over_long_chat_prompt_names_its_tokens_and_the_context(model):
    request = GenerateRequest(messages=(Message(role="user", content="word " * 5000),), max_tokens=4)
    with pytest.raises(ModelError, match=r"prompt of \d+ tokens exceeds the context of 4096"):
        await model.generate(request)


async def test_an_embedded_generation_records_the_weights_seed_and_temperature(model):
    generation = await model.generate(GenerateRequest(prompt="1, 2,", max_tokens=2, temperature=0.0))
    assert generation.served_model.endswith(".gguf") and generation.seed == 0
    assert generation.temperature == 0.0 and generation.system_fingerprint.startswith("llama-cpp-python")
