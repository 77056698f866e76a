"""Reading a judge's answer: tolerant JSON parsing and next-token score distributions."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from convoscope.criteria import Criterion
from convoscope.judges._prompt import scale_tokens
from convoscope.judges._verdict import UnscoredReason

_REFUSAL = re.compile(
    r"\b(i can(?:'|no)t (?:help|assist|comply|evaluate|judge)|i(?: a|')m (?:not able|unable) to"
    r"|i won'?t (?:evaluate|judge|help)|as an ai\b)",
    re.IGNORECASE,
)
_SCORE_LINE = re.compile(r'"?score"?\s*[:=]\s*"?([A-Za-z][\w\- ]*?|-?\d+(?:\.\d+)?)"?\s*(?:[,}\n]|$)',
                         re.IGNORECASE)
_IDK = {"idk", "i don't know", "i do not know", "unknown", "unsure"}


@dataclass(frozen=True)
class Answer:
    """A parsed answer: a value on the scale, or the reason there is none."""

    value: int | str | None
    unscored_reason: UnscoredReason | None = None
    reason: str | None = None
    options: tuple[str, ...] = ()
    relevant: bool | None = None
    problems: tuple[str, ...] = field(default=())


def parse_answer(text: str, criterion: Criterion) -> Answer:
    """Read a JSON (or JSON-like) answer; never raises and never invents a score.

    The verdict is the *last* complete JSON object in the reply whose ``score`` is an answer
    the criterion's schema allows: a reply that first quotes the judged text (``{"score": 7}``
    written by the item) and then gives its own verdict is read by its own verdict. When no
    object qualifies, the last object with a ``score`` is read (so the problem is reported),
    then the last ``score: N`` line."""
    data = _verdict_object(text, criterion)
    if data is None:
        matches = list(_SCORE_LINE.finditer(text))
        data = {"score": matches[-1].group(1)} if matches else None
    if data is None or "score" not in data:
        reason: UnscoredReason = "refusal" if _REFUSAL.search(text) else "parse_failure"
        return Answer(value=None, unscored_reason=reason)
    raw_score = data.get("score")
    explanation = _text_or_none(data.get("reason") or data.get("explanation"))
    options, problems = _read_options(data.get("options"), criterion)
    relevant = _read_bool(data.get("relevant"))
    if _is_idk(raw_score):
        if criterion.scale.allow_idk:
            return Answer(None, "idk", explanation, options, relevant, problems)
        return Answer(None, "parse_failure", explanation, options, relevant, ("idk not allowed",))
    value = criterion.scale.coerce(raw_score)
    if value is None:
        return Answer(None, "parse_failure", explanation, options, relevant,
                      (*problems, f"score {raw_score!r} is not on the scale"))
    return Answer(value, None, explanation, options, relevant, problems)


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every complete top-level JSON object in ``text``, in order (objects nested in another
    object, or inside a JSON string, are part of that object, not separate ones)."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    position = text.find("{")
    while position >= 0:
        try:
            data, end = decoder.raw_decode(text, position)
        except (json.JSONDecodeError, RecursionError):
            position = text.find("{", position + 1)
            continue
        if isinstance(data, dict):
            found.append(data)
        position = text.find("{", end)
    return found


def _verdict_object(text: str, criterion: Criterion) -> dict[str, Any] | None:
    scored = [data for data in json_objects(text) if "score" in data]
    for data in reversed(scored):
        raw = data["score"]
        if (_is_idk(raw) and criterion.scale.allow_idk) or criterion.scale.coerce(raw) is not None:
            return data
    return scored[-1] if scored else None


def _is_idk(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() in _IDK


def _text_or_none(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _read_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("yes", "true", "relevant", "1"):
            return True
        if text in ("no", "false", "not relevant", "irrelevant", "0"):
            return False
    return None


def _read_options(value: Any, criterion: Criterion) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if not value or not criterion.options:
        return (), ()
    names = {option.name.lower(): option.name for option in criterion.options}
    chosen: list[str] = []
    unknown: list[str] = []
    for entry in value if isinstance(value, list) else [value]:
        name = names.get(str(entry).strip().lower())
        if name is None:
            unknown.append(str(entry))
        elif name not in chosen:
            chosen.append(name)
    problems = (f"unknown explanation options {unknown}",) if unknown else ()
    return tuple(chosen), problems


def score_distribution(
    logprobs: dict[str, float], criterion: Criterion
) -> tuple[dict[str, float], float | None, int | str] | None:
    """Turn next-token log-probabilities into (distribution over scale values, expected value, mode).

    Each scale value may have several surface forms (``"3"`` and ``" 3"``); their probabilities
    add up. The distribution is renormalised over the scale. Returns None when no scale value
    received any probability. The expected value is None for label scales (no order).
    """
    words = scale_tokens(criterion)
    mass: dict[int | str, float] = {}
    for token, logprob in logprobs.items():
        value = _value_of_token(token, words)
        if value is not None and math.isfinite(logprob):
            mass[value] = mass.get(value, 0.0) + math.exp(logprob)
    total = sum(mass.values())
    if total <= 0.0:
        return None
    distribution = {str(value): mass.get(value, 0.0) / total for value in words.values()}
    mode = max(mass, key=lambda value: mass[value])
    if not criterion.scale.is_numeric():
        return distribution, None, mode
    expected = sum(float(value) * mass.get(value, 0.0) for value in words.values()) / total
    return distribution, expected, mode


def _value_of_token(token: str, words: dict[str, int | str]) -> int | str | None:
    """The scale value a token stands for: an exact word, or the one word it is a prefix of
    (a tokenizer may split "not fulfilled" into "not" + " fulfilled")."""
    text = token.strip().lower()
    if not text:
        return None
    exact = [value for word, value in words.items() if word.lower() == text]
    if exact:
        return exact[0]
    prefixed = {value for word, value in words.items() if word.lower().startswith(text)}
    return prefixed.pop() if len(prefixed) == 1 else None
