"""Prompts for rubric judges.

Shared instructions and the rubric come first and the item last, so that a serving engine can
reuse the cached prefix across every item judged on the same criterion.

Two modes:

* ``chat`` — for capable instruction-tuned models: a system message with the rubric and a JSON
  answer schema, a user message with the item.
* ``completion`` — for tiny base models that cannot follow a JSON instruction: a few-shot text
  built from the rubric's examples, ending in ``Score:``; the verdict is read from the
  distribution of the next token over the scale values, never sampled.
"""

from __future__ import annotations

import json

from convoscope.criteria import Criterion
from convoscope.items import Item, Turn
from convoscope.models import GenerateRequest, Message

JUDGE_INSTRUCTIONS = """\
You are a careful evaluator of conversational responses. You will be given one criterion with \
its rubric and then one item to judge. Read the rubric, read the item, and decide which level \
of the scale fits best. Judge only what the criterion asks about; ignore other qualities. \
Answer with a single JSON object that follows the answer schema and nothing else."""

IDK_NOTE = 'If the item gives you too little to decide, set "score" to "idk".'


# Item meta fields that belong to the situation the response was written in, shown to the judge
# before the conversation: grounding knowledge (Topical-Chat), the responder's persona
# (PersonaChat) and documents a KPI is checked against (InCA's "LLM + documents").
SITUATION_FIELDS: dict[str, str] = {
    "knowledge": "Knowledge the responder could draw on",
    "persona": "The responder's persona",
    "documents": "Reference documents",
}


def render_situation(item: Item) -> list[str]:
    """The situation fields of ``item.meta`` that are set, one labelled block each."""
    blocks = []
    for key, label in SITUATION_FIELDS.items():
        value = item.meta.get(key)
        if isinstance(value, list | tuple):
            value = "\n".join(f"- {entry}" for entry in value if str(entry).strip())
        if isinstance(value, str) and value.strip():
            blocks.append(f"{label}:\n{value.strip()}")
    return blocks


def render_item(item: Item, criterion: Criterion) -> str:
    """The item as the judge reads it."""
    parts: list[str] = render_situation(item)
    if item.question:
        parts.append(f"Question: {item.question}")
    turns = list(item.context)
    whole_dialogue = criterion.granularity == "dialogue"
    if whole_dialogue and item.response is not None:
        turns.append(Turn(speaker=item.system or "system", text=item.response))
    if turns:
        label = "Dialogue" if whole_dialogue else "Conversation so far"
        lines = "\n".join(f"{turn.speaker}: {turn.text}" for turn in turns)
        parts.append(f"{label}:\n{lines}")
    if item.response is not None and not whole_dialogue:
        parts.append(f"Response to judge: {item.response}")
    if item.reference:
        parts.append(f"Reference response (for comparison): {item.reference}")
    return "\n\n".join(parts)


def render_messages(
    criterion: Criterion, item: Item, *, persona: str | None = None
) -> tuple[Message, ...]:
    """The chat prompt of a rubric judge: system (instructions, persona, rubric, schema), user (item)."""
    from convoscope.criteria import answer_schema, render_rubric

    system = [JUDGE_INSTRUCTIONS]
    if persona:
        system.append(f"Judge from this point of view: {persona}")
    system.append(render_rubric(criterion))
    if criterion.scale.allow_idk:
        system.append(IDK_NOTE)
    system.append("Answer schema:\n" + json.dumps(answer_schema(criterion), ensure_ascii=False))
    user = render_item(item, criterion) + f"\n\nYour judgement of {criterion.name} as JSON:"
    return (Message(role="system", content="\n\n".join(system)), Message(role="user", content=user))


def scale_tokens(criterion: Criterion) -> dict[str, int | str]:
    """Map each answer string a base model may write after ``Score:`` to its scale value."""
    scale = criterion.scale
    if scale.kind == "binary":
        positive, negative = scale.binary_labels
        return {positive: 1, negative: 0}
    return {str(value): value for value in scale.values()}


def render_completion_prompt(
    criterion: Criterion, item: Item, *, persona: str | None = None
) -> str:
    """A few-shot completion prompt for base models; the next token after it is the score."""
    scale_words = ", ".join(str(key) for key in scale_tokens(criterion))
    head = [f"{criterion.question} {criterion.definition}".strip()]
    if persona:
        head.append(f"Rater: {persona}")
    head.append(f"Possible scores: {scale_words}.")
    for level in criterion.levels:
        name = f" ({level.name})" if level.name else ""
        head.append(f"Score {criterion.answer_word(level.value)}{name}: {level.definition}")
    shots = []
    for level in criterion.levels:
        for example in level.examples[:1]:
            shots.append(f"Answer: {example}\nScore: {criterion.answer_word(level.value)}")
    target = render_item(item, criterion).replace("Response to judge: ", "Answer: ")
    if "Answer: " not in target:
        target += "\nAnswer: (the whole dialogue above)"
    return "\n".join(head) + "\n\n" + "\n\n".join(shots) + "\n\n" + target + "\nScore:"


def build_request(
    criterion: Criterion,
    item: Item,
    *,
    mode: str = "chat",
    persona: str | None = None,
    max_tokens: int = 400,
) -> GenerateRequest:
    """The model request a rubric judge sends for one item and criterion."""
    if mode == "completion":
        words = scale_tokens(criterion)
        candidates = tuple(sorted({form for word in words for form in (word, " " + word)}))
        prompt = render_completion_prompt(criterion, item, persona=persona)
        return GenerateRequest(prompt=prompt, max_tokens=1, next_token_candidates=candidates)
    if mode != "chat":
        raise ValueError(f"unknown judge mode {mode!r}: use 'chat' or 'completion'")
    from convoscope.criteria import answer_schema

    return GenerateRequest(
        messages=render_messages(criterion, item, persona=persona),
        json_schema=answer_schema(criterion),
        max_tokens=max_tokens,
    )
