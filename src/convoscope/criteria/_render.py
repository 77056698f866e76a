"""The rubric as a judge reads it, and the JSON schema of the judge's answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from convoscope.criteria._model import Criterion, Level

IDK: Literal["idk"] = "idk"  # the one "I don't know" answer, for judges, people and statistics
# How the judge's item shows ``meta.documents`` (judges._prompt.SITUATION_FIELDS uses this label).
DOCUMENTS_LABEL = "Reference documents"


def answer_words(criterion: Criterion) -> list[int | str]:
    """What the judge may put in ``score``: numbers for ranges, labels otherwise, plus 'idk'."""
    scale = criterion.scale
    words: list[int | str]
    if scale.kind == "range":
        words = list(scale.values())
    elif scale.kind == "binary":
        words = list(scale.binary_labels)
    else:
        words = list(scale.labels)
    return [*words, IDK] if scale.allow_idk else words


def describe_scale(criterion: Criterion) -> str:
    scale = criterion.scale
    if scale.kind == "range":
        text = f"an integer from {scale.minimum} to {scale.maximum}"
    else:
        text = "one of " + ", ".join(f'"{word}"' for word in answer_words(criterion) if word != IDK)
    if scale.allow_idk:
        text += ', or "idk" if you cannot tell'
    return text


def render_rubric(criterion: Criterion) -> str:
    """Criterion, scale, levels with examples, explanation options and extra instructions."""
    lines = [f"Criterion: {criterion.name}", f"Question: {criterion.question}",
             f"Definition: {criterion.definition.strip()}", f"Answer: {describe_scale(criterion)}."]
    if criterion.levels:
        lines.append("Levels:")
        lines.extend(_render_level(criterion, level) for level in criterion.levels)
    if criterion.options:
        lines.append("Explanation options (list every one that applies in \"options\"):")
        for option in criterion.options:
            when = ""
            if option.when:
                when = " [after " + " or ".join(criterion.answer_word(value) for value in option.when) + "]"
            words = " (choose it only with a reason that says what applies)" if option.free_text else ""
            lines.append(f"- {option.name}{when}: {option.description}{words}")
    if criterion.ask_relevance:
        lines.append('Also say whether the criterion is relevant to this item at all ("relevant": true '
                     "or false); when it is not, still give your best score.")
    if criterion.evaluation == "llm+documents":
        lines.append(f'Judge against the documents in the item\'s "{DOCUMENTS_LABEL}" field (the '
                     "manufacturer's approved material); what they do not say, the answer cannot "
                     "rest on.")
    if criterion.instructions:
        lines.append(f"Note: {criterion.instructions.strip()}")
    return "\n".join(lines)


def _render_level(criterion: Criterion, level: Level) -> str:
    name = f" ({level.name})" if level.name else ""
    text = f"- {criterion.answer_word(level.value)}{name}: {level.definition.strip()}"
    if level.examples:
        text += " Examples: " + " | ".join(f'"{example}"' for example in level.examples)
    return text


REASON_MAX_CHARS = 400


def missing_free_text(criterion: Criterion, options: Sequence[str], reason: str | None) -> str | None:
    """Why a choice of options is incomplete: a free-text option ('other') chosen without words
    saying what applies; None when it is complete. For forms and importers that take options."""
    chosen = [option.name for option in criterion.options if option.free_text and option.name in options]
    if chosen and not (reason or "").strip():
        return f"'{chosen[0]}' needs a note saying what applies"
    return None


def answer_schema(criterion: Criterion) -> dict[str, Any]:
    """JSON schema of a judge's answer. ``reason`` comes first so the model explains, then scores."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    if criterion.ask_reason:
        # A bound keeps a small model from looping in its reason until max_tokens cuts the JSON
        # (grammar-constrained servers such as llama.cpp enforce it; others read it as guidance).
        properties["reason"] = {"type": "string", "maxLength": REASON_MAX_CHARS,
                                "description": "Two or three sentences of justification."}
        required.append("reason")
    if criterion.ask_relevance:
        properties["relevant"] = {"type": "boolean"}
        required.append("relevant")
    properties["score"] = {"enum": answer_words(criterion)}
    required.append("score")
    if criterion.options:
        names = sorted({option.name for option in criterion.options})
        properties["options"] = {"type": "array", "items": {"enum": names}, "uniqueItems": True}
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}
