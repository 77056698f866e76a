"""Explanation options from a next-token judge: one yes/no question per option (seed 002, issue 26).

A chat judge lists the options that apply in its JSON answer. A tiny base model in completion mode
cannot, so after the score each option offered after that answer is asked as its own next-token
question, on the very prompt the score was read from (rubric, examples, item, then the score it
gave), so an engine that keeps its KV cache evaluates only the few new tokens. The option is
chosen when P(" Yes") >= P(" No").

Free-text options ("other") are not asked: choosing one means saying in words what applies, which
a model that only answers with a next token cannot do.
"""

from __future__ import annotations

import math

from convoscope.criteria import Criterion, ExplanationOption
from convoscope.items import Item
from convoscope.judges._prompt import render_completion_prompt
from convoscope.judges._verdict import Verdict
from convoscope.models import GenerateRequest, Model, ModelError

YES, NO = " Yes", " No"


def option_prompt(criterion: Criterion, item: Item, value: int | str, option: ExplanationOption, *,
                  persona: str | None = None) -> str:
    """The score prompt, the score the judge gave, then the question whether ``option`` applies."""
    scored = render_completion_prompt(criterion, item, persona=persona)
    return (f"{scored} {criterion.answer_word(value)}\nReason \"{option.name}\": {option.description}\n"
            "Does this reason apply to the answer? Answer Yes or No.\nApplies:")


async def with_options(verdict: Verdict, model: Model, criterion: Criterion, item: Item, *,
                       persona: str | None = None) -> Verdict:
    """``verdict`` with the options (asked one by one) that the model says apply; its tokens are
    added to the verdict's. An option whose question fails or comes back without probabilities
    is left out; the score stands."""
    if verdict.value is None:
        return verdict
    chosen: list[str] = []
    tokens = verdict.prompt_tokens
    for option in criterion.offered_options(verdict.value):
        if option.free_text:
            continue
        prompt = option_prompt(criterion, item, verdict.value, option, persona=persona)
        request = GenerateRequest(prompt=prompt, max_tokens=1, next_token_candidates=(YES, NO))
        try:
            generation = await model.generate(request)
        except ModelError:
            continue
        tokens += 0 if generation.cached else generation.prompt_tokens
        logprobs = generation.next_token_logprobs or {}
        if YES in logprobs and NO in logprobs and math.exp(logprobs[YES]) >= math.exp(logprobs[NO]):
            chosen.append(option.name)
    return verdict.model_copy(update={"options": tuple(chosen), "prompt_tokens": tokens})
