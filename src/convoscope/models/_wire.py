"""What an OpenAI-compatible server sends back, checked before anything reads it.

A 200 whose body is not a completion (invalid JSON, an empty body, a proxy's HTML page, a
``content`` that is an object, ``choices: ["x"]``) is named here, so the caller can retry it and,
in the end, report it as that request's failure, quoting what came back.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal

Kind = Literal["chat", "completion"]
SNIPPET = 200
_SCORE_KEY = re.compile(r'"score"\s*:\s*"?$')
_CONTEXT_PATTERNS = (
    re.compile(r"context (?:window|length|size) (?:of|is) (\d+)", re.IGNORECASE),
    re.compile(r"maximum context length is (\d+)", re.IGNORECASE),
    re.compile(r"n_ctx[^\d]{1,12}(\d+)", re.IGNORECASE),
)
_PROMPT_TOKENS = re.compile(r"(\d+) in (?:your prompt|the messages)|requested tokens \((\d+)\)"
                            r"|prompt (?:of|has|is) (\d+) tokens|n_prompt_tokens\D{1,4}(\d+)", re.IGNORECASE)


def snippet(text: str) -> str:
    text = text.strip()
    return repr(text[:SNIPPET] + ("..." if len(text) > SNIPPET else "")) if text else "an empty body"


def body_problem(text: str | bytes, kind: Kind) -> tuple[dict[str, Any] | None, str | None]:
    """The decoded body, or what is wrong with it as a ``kind`` completion. Takes the raw bytes
    too: JSON detects UTF-8/16/32 itself, and no text is decoded for a body that is fine."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None, "a body that is not JSON"
    if not isinstance(data, dict):
        return None, "JSON that is not an object"
    if "error" in data and "choices" not in data:
        return None, "an error object"
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        return None, "no choices"
    choice = choices[0]
    if not isinstance(choice, dict):
        return None, "a choice that is not an object"
    if kind == "chat":
        message = choice.get("message")
        if not isinstance(message, dict):
            return None, "a choice without a message object"
        if not isinstance(message.get("content"), str | None):
            return None, "message content that is not text"
    elif not isinstance(choice.get("text"), str):
        return None, "a choice without text"
    if not isinstance(data.get("usage") or {}, dict):
        return None, "usage that is not an object"
    return data, None


def context_overflow(detail: str) -> tuple[int | None, int] | None:
    """(prompt tokens or None, context size) when an error message says the prompt is too long."""
    for pattern in _CONTEXT_PATTERNS:
        found = pattern.search(detail)
        if found:
            tokens = _PROMPT_TOKENS.search(detail)
            count = next((int(group) for group in tokens.groups() if group), None) if tokens else None
            return count, int(found.group(1))
    return None


def top_logprobs(data: dict[str, Any]) -> dict[str, float] | None:
    try:
        return first_top(data["choices"][0])
    except (KeyError, IndexError, TypeError):
        return None


def first_top(choice: dict[str, Any]) -> dict[str, float] | None:
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, dict):
        return None
    tops = logprobs.get("top_logprobs") or [None]
    if not isinstance(tops, list) or not isinstance(tops[0], dict):
        return None
    return {token: float(value) for token, value in tops[0].items() if _is_number(value)} or None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def completion_top_logprobs(choice: dict[str, Any], candidates: tuple[str, ...]) -> dict[str, float] | None:
    top = first_top(choice)
    if not top:
        return None
    wanted = set(candidates)
    return {token: float(logprob) for token, logprob in top.items() if token in wanted}


def score_token_logprobs(choice: dict[str, Any]) -> dict[str, float] | None:
    """In a chat answer, the alternatives the model weighed for the first token of the score."""
    logprobs = choice.get("logprobs")
    content = (logprobs.get("content") if isinstance(logprobs, dict) else None) or []
    written = ""
    for entry in content:
        if not isinstance(entry, dict):
            return None
        if _SCORE_KEY.search(written) and str(entry.get("token", "")).strip(' "'):
            alternatives = entry.get("top_logprobs") or []
            if not isinstance(alternatives, list):
                return None
            return {str(alt["token"]): float(alt["logprob"]) for alt in alternatives
                    if isinstance(alt, dict) and "token" in alt and _is_number(alt.get("logprob"))} or None
        written += str(entry.get("token", ""))
    return None


def whitespace_lead(data: dict[str, Any]) -> tuple[str, float] | None:
    """The most likely next token when it is bare whitespace (with its log-probability), else None.

    BPE tokenizers often write " 3" as " " + "3", so after "Score:" the likeliest token is a space."""
    top = top_logprobs(data)
    if not top:
        return None
    lead, lead_logprob = max(top.items(), key=lambda pair: pair[1])
    return None if lead.strip() or not lead else (lead, lead_logprob)


def fold_past_whitespace(data: dict[str, Any], second: dict[str, Any], lead: tuple[str, float],
                         candidates: tuple[str, ...]) -> dict[str, Any]:
    """``data`` with the second step (asked with the space appended) folded into its first
    token's alternatives: P(" 3") = P(" ") * P("3" | prompt + " "). Usage adds up."""
    space, space_logprob = lead
    folded = dict(top_logprobs(data) or {})
    for token, logprob in (top_logprobs(second) or {}).items():
        word = space + token
        if word in candidates or token in candidates:
            key = word if word in candidates else space + token.strip()
            folded[key] = max(folded.get(key, -math.inf), space_logprob + logprob)
    choice = dict(data["choices"][0])
    choice["logprobs"] = {**(choice.get("logprobs") or {}), "top_logprobs": [folded]}
    usage = {key: usage_count(data, key) + usage_count(second, key)
             for key in ("prompt_tokens", "completion_tokens")}
    return {**data, "choices": [choice], "usage": usage}


def usage_count(data: dict[str, Any], key: str) -> int:
    """A token count from an answer's ``usage`` (0 when absent or malformed)."""
    usage = data.get("usage") or {}
    value = usage.get(key) if isinstance(usage, dict) else None
    return int(value) if isinstance(value, int | float) and value >= 0 else 0
