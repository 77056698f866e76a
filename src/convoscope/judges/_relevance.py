"""Relevance from a next-token judge: a second yes/no question after the score (InCA, seed 004).

A KPI verdict says whether the KPI applies to the judged turn at all. A chat judge writes it in its
JSON answer; a tiny base model in completion mode cannot, so it is asked a second next-token
question. The question follows the very prompt the score was read from (rubric, examples and
item), so an engine that keeps its KV cache evaluates only the few new tokens.
"""

from __future__ import annotations

import math

from convoscope.criteria import Criterion
from convoscope.items import Item
from convoscope.judges._prompt import render_completion_prompt
from convoscope.judges._verdict import Verdict
from convoscope.models import GenerateRequest, Model, ModelError

RELEVANCE_QUESTION = ("Does this criterion apply to the judged turn at all, that is, does the turn "
                      "give the assistant occasion to show it? Answer Yes or No.\nApplies:")


def relevance_prompt(criterion: Criterion, item: Item, *, persona: str | None = None) -> str:
    """The score prompt up to the item, then the relevance question instead of ``Score:``."""
    scored = render_completion_prompt(criterion, item, persona=persona)
    stem = scored[: -len("Score:")] if scored.endswith("Score:") else scored + "\n"
    return stem + RELEVANCE_QUESTION


async def with_relevance(verdict: Verdict, model: Model, criterion: Criterion, item: Item, *,
                         persona: str | None = None) -> Verdict:
    """``verdict`` with ``relevant`` from P(" Yes") >= P(" No"), for criteria that ask relevance
    (KPIs) and scored verdicts; its tokens are added to the verdict's. A failed or unreadable
    second question leaves ``relevant`` None; the score stands."""
    if not criterion.ask_relevance or verdict.value is None:
        return verdict
    request = GenerateRequest(prompt=relevance_prompt(criterion, item, persona=persona), max_tokens=1,
                              next_token_candidates=(" Yes", " No"))
    try:
        generation = await model.generate(request)
    except ModelError:
        return verdict
    logprobs = generation.next_token_logprobs or {}
    if " Yes" not in logprobs or " No" not in logprobs:
        return verdict
    yes = math.exp(logprobs[" Yes"]) / (math.exp(logprobs[" Yes"]) + math.exp(logprobs[" No"]))
    return verdict.model_copy(update={
        "relevant": yes >= 0.5,
        "prompt_tokens": verdict.prompt_tokens + (0 if generation.cached else generation.prompt_tokens)})
