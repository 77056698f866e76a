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
    """Read a JSON (or JSON-like) answer; never raises and never invents a score."""
    data = _first_json_object(text)
    if data is None:
        match = _SCORE_LINE.search(text)
        data = {"score": match.group(1)} if match else None
    if data is None or "score" not in data:
        reason: UnscoredReason = "refusal" if _REFUSAL.search(text) else "parse_failure"
        return Answer(value=None, unscored_reason=reason)
    raw_score = data.get("score")
    explanation = _text_or_none(data.get("reason") or data.get("explanation"))
    options, problems = _read_options(data.get("options"), criterion)
    relevant = _read_bool(data.get("relevant"))
    if isinstance(raw_score, str) and raw_score.strip().lower() in _IDK:
        if criterion.scale.allow_idk:
            return Answer(None, "idk", explanation, options, relevant, problems)
        return Answer(None, "parse_failure", explanation, options, relevant, ("idk not allowed",))
    value = criterion.scale.coerce(raw_score)
    if value is None:
        return Answer(None, "parse_failure", explanation, options, relevant,
                      (*problems, f"score {raw_score!r} is not on the scale"))
    return Answer(value, None, explanation, options, relevant, problems)


def _first_json_object(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            data, _ = decoder.raw_decode(text[match.start():])
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            return data
    return None


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
