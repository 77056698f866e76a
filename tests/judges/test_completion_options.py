"""Seed 002's explanation options: "other" with free text, and options from a next-token judge in
completion mode, one yes/no question per option (issue 26, observation 7)."""

from __future__ import annotations

import math

import pytest

from convoscope.criteria import answer_schema, get_criterion, missing_free_text, render_rubric
from convoscope.items import Item, Turn
from convoscope.judges import RubricJudge
from convoscope.models import Generation

APPROPRIATENESS = get_criterion("response-candidates:appropriateness")
ITEM = Item(id="c1", context=(Turn(speaker="A", text="what else do they sell?"),),
            response="my cousin is learning to drive .")


def test_every_response_candidate_criterion_offers_other_with_free_text() -> None:
    for criterion in (get_criterion(f"response-candidates:{name}") for name in
                      ("appropriateness", "contextualization", "listening", "correctness")):
        other = [option for option in criterion.options if option.name == "other"]
        assert len(other) == 1 and other[0].free_text and other[0].when == (0,)
        assert "other [after not " in render_rubric(criterion)
        assert "choose it only with a reason that says what applies" in render_rubric(criterion)
        assert "other" in answer_schema(criterion)["properties"]["options"]["items"]["enum"]
    assert missing_free_text(APPROPRIATENESS, ["other"], "  ") == "'other' needs a note saying what applies"
    assert missing_free_text(APPROPRIATENESS, ["other"], "off topic and rude") is None
    assert missing_free_text(APPROPRIATENESS, ["incoherence"], None) is None


class NextTokenFakeModel:
    """A scripted base model (unit tests only): next-token log-probabilities chosen by the test,
    'not appropriate' for the score, then Yes/No per option question by the option's name."""

    name = "next-token-fake"

    def __init__(self, yes_for: set[str]) -> None:
        self.yes_for, self.prompts = yes_for, []

    async def generate(self, request):  # type: ignore[no-untyped-def]
        self.prompts.append(request.prompt)
        if request.prompt.endswith("Score:"):
            logprobs = {" not appropriate": math.log(0.8), " appropriate": math.log(0.2)}
        else:
            asked = request.prompt.rsplit('Reason "', 1)[1].split('"', 1)[0]
            yes = 0.9 if asked in self.yes_for else 0.1
            logprobs = {" Yes": math.log(yes), " No": math.log(1 - yes)}
        return Generation(text="", model=self.name, next_token_logprobs=logprobs, prompt_tokens=100)


async def test_completion_mode_asks_one_question_per_offered_option() -> None:
    model = NextTokenFakeModel(yes_for={"incoherence"})
    verdict = await RubricJudge(model, mode="completion")(ITEM, APPROPRIATENESS)
    assert verdict.value == 0 and verdict.options == ("incoherence",)
    asked = [prompt for prompt in model.prompts if prompt.endswith("Applies:")]
    # Offered after "not appropriate": incoherence and other; "other" needs words, so it is not asked.
    assert len(asked) == 1 and 'Reason "incoherence"' in asked[0]
    assert asked[0].startswith(model.prompts[0]) and "Score: not appropriate\nReason" in asked[0]
    assert verdict.prompt_tokens == 200


@pytest.mark.slow
async def test_the_embedded_judge_gives_options_in_completion_mode(tmp_path) -> None:
    """Observed: completion mode never produced options."""
    pytest.importorskip("llama_cpp")
    from convoscope.runs import JudgeSpec, judge_async

    items = [ITEM, Item(id="c2", context=ITEM.context, response="i has try it it yesterday yesterday .")]
    result = await judge_async(items, [APPROPRIATENESS, get_criterion("response-candidates:correctness")],
                               [JudgeSpec("embedded")], store=tmp_path / "s.db", cache_path=tmp_path / "c.db")
    questions = 0
    for verdict in result.verdicts:
        assert verdict.scored
        criterion = get_criterion(f"response-candidates:{verdict.criterion}")
        offered = {o.name for o in criterion.offered_options(verdict.value) if not o.free_text}
        assert set(verdict.options) <= offered
        questions += len(offered)
    # One score question per verdict, then one question per option offered after its answer:
    # the response cache holds every one of them.
    import sqlite3

    with sqlite3.connect(tmp_path / "c.db") as db:
        asked = db.execute("select count(*) from responses").fetchone()[0]
    assert questions > 0 and asked == len(result.verdicts) + questions
