"""The HTTP backend against a real OpenAI-compatible server (llama-cpp-python's) on 127.0.0.1."""

import pytest
from patience import PATIENT

from convoscope.criteria import get_criterion
from convoscope.items import Item
from convoscope.judges import Panel, RubricJudge
from convoscope.models import GenerateRequest, model_from_spec

pytestmark = pytest.mark.slow


async def test_chat_judging_through_the_server(llama_server):
    base_url, alias = llama_server
    model = model_from_spec(f"openai:{alias}@{base_url}", **PATIENT)
    criterion = get_criterion("response-candidates:appropriateness")
    item = Item(id="c1", context=({"speaker": "A", "text": "do you like jazz ?"},),
                response="yes , miles davis is my favourite .")
    verdict = await RubricJudge(model, max_tokens=120)(item, criterion)
    await model.aclose()
    # The server rejects the OpenAI json_schema format; the backend falls back to the schema in
    # json_object form, whose grammar keeps the answer on the scale.
    assert verdict.unscored_reason in (None, "idk"), verdict.raw
    assert verdict.value in (0, 1, None)
    assert verdict.prompt_tokens > 0 and verdict.completion_tokens > 0
    assert verdict.rater == f"model:openai:{alias}@{base_url}"


async def test_completion_scoring_reads_top_logprobs(llama_server):
    base_url, alias = llama_server
    model = model_from_spec(f"openai:{alias}@{base_url}", **PATIENT)
    request = GenerateRequest(prompt="Numbers: 1, 2, 3, 4, 5, 6, 7, 8,", max_tokens=1,
                              next_token_candidates=("9", " 9", "1", " 1"))
    generation = await model.generate(request)
    await model.aclose()
    assert generation.next_token_logprobs, "the server returned no top logprobs"
    best = max(generation.next_token_logprobs, key=generation.next_token_logprobs.get)
    assert best.strip() == "9"


async def test_a_panel_of_embedded_and_http_judges(llama_server):
    base_url, alias = llama_server
    http = model_from_spec(f"openai:{alias}@{base_url}", **PATIENT)
    embedded = model_from_spec("embedded:smollm2")
    panel = Panel((RubricJudge(embedded, mode="completion"), RubricJudge(http, mode="completion")),
                  rule="mean")
    criterion = get_criterion("survey:completeness")
    final, members = await panel.judge_all(
        Item(id="p", question="What do you like and dislike?", response="Like the price, dislike the noise."),
        criterion)
    await http.aclose()
    await embedded.aclose()
    assert len(members) == 2 and all(member.value is not None for member in members)
    # The same weights in-process and behind HTTP see the same prompt: their distributions agree.
    assert members[0].expected_value == pytest.approx(members[1].expected_value, abs=0.05)
    assert final.rater.startswith("panel:mean")
