"""A next-token judge of user turns, one named check at a time, with calibrated thresholds.

Tiny embedded models cannot write a verdict, but the probability they give to " Yes" against
" No" after a question can still carry a signal. Three checks are asked separately (the
conversation and the message come first, so every question after the first reuses the model's
cached prefix): ``natural``, ``in_role`` and ``coherent``. Their raw probabilities are not
comparable to 0.5 (a small model may favour " No" whatever the message), so before a run each
check is *calibrated*: the judge answers it for a few good and bad examples
(``synth/data/judge_calibration.yaml``, in the dialogue's language where the file has it); the
check is used only when every good example scores above every bad one, with the threshold
halfway between the two groups. A check that does not
separate its examples is reported as one the judge could not do, and is not asked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from convoscope.items import Turn
from convoscope.models import GenerateRequest, Model, UsageTotals

CHECKS: dict[str, str] = {
    "natural": "Does the message sound like a real person typing a short chat message?",
    "in_role": "Does the person write as a user who asks or reacts, not as an assistant who helps?",
    "coherent": "Does the message make sense after the conversation so far?",
}
# How a failed check reads in the feedback the user agent gets on its next try.
FAILED: dict[str, str] = {
    "natural": "it does not read like a person typing a short chat message",
    "in_role": "it sounds like an assistant helping, not like the user",
    "coherent": "it does not follow from the conversation",
}
_HEAD = ("A program plays a person chatting with a chatbot. Below is the conversation so far and "
         "the person's next message. Answer the question about that message with Yes or No.")


class CheckCalibration(BaseModel):
    """How one check separated its calibration examples (probabilities of " Yes")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    good: tuple[float, ...]
    bad: tuple[float, ...]
    threshold: float | None = Field(description="None: the examples did not separate; check unused.")


class JudgeCalibration(BaseModel):
    """Per check: the examples' scores and the threshold, or None when the judge cannot do it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    checks: dict[str, CheckCalibration]

    @property
    def thresholds(self) -> dict[str, float]:
        return {name: c.threshold for name, c in self.checks.items() if c.threshold is not None}

    def describe(self) -> str:
        """One plain sentence: what this judge could and could not check."""
        could = [f"{name} (threshold {c.threshold:.2f})" for name, c in self.checks.items()
                 if c.threshold is not None]
        could_not = [name for name, c in self.checks.items() if c.threshold is None]
        parts = [f"the judge could check: {', '.join(could)}" if could else "the judge could check nothing"]
        if could_not:
            parts.append(f"could not check (its examples did not separate): {', '.join(could_not)}")
        return "; ".join(parts) + ("; rules checked form, speaker labels, role breaks, gibberish, length, "
                                   "language and repeats")


def check_prompt(turns: Sequence[Turn], candidate: str, check: str) -> str:
    """Shared head, dialogue and message first, the question last (prefix reuse across checks)."""
    shown = "\n".join(f"{turn.speaker}: {turn.text}" for turn in turns) or "(no messages yet)"
    return (f"{_HEAD}\n\nConversation so far:\n{shown}\n\nThe person's next message:\n{candidate}\n\n"
            f"Question: {CHECKS[check]}\nAnswer:")


async def yes_probability(model: Model, prompt: str, *, seed: int) -> tuple[float | None, UsageTotals]:
    """P(" Yes") against " No" as the next token (None when the backend gives no probabilities)."""
    request = GenerateRequest(prompt=prompt, max_tokens=1, temperature=0.0, seed=seed,
                              next_token_candidates=(" Yes", " No"))
    totals = UsageTotals()
    generation = await model.generate(request)
    totals.add(generation)
    logprobs = generation.next_token_logprobs or {}
    if " Yes" not in logprobs or " No" not in logprobs:
        return None, totals
    yes, no = math.exp(logprobs[" Yes"]), math.exp(logprobs[" No"])
    return yes / (yes + no), totals


@cache
def _calibration_file() -> dict[str, Any]:
    text = resources.files("convoscope.synth").joinpath("data/judge_calibration.yaml").read_text("utf-8")
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def calibration_languages() -> tuple[str, ...]:
    """Languages with their own calibration examples (others use the English ones)."""
    return tuple(_calibration_file())


Examples = dict[str, dict[str, tuple[tuple[tuple[Turn, ...], str], ...]]]


def calibration_examples(language: str = "en") -> Examples:
    """The built-in examples in ``language`` (English when it has none): check -> "good"/"bad" ->
    ((turns, message), ...)."""
    raw = _calibration_file().get(language) or _calibration_file()["en"]
    return {check: {group: tuple((_turns(entry.get("conversation") or ()), entry["message"])
                                 for entry in raw[check][group]) for group in ("good", "bad")}
            for check in CHECKS}


def _turns(texts: Sequence[str]) -> tuple[Turn, ...]:
    return tuple(Turn(speaker="user" if i % 2 == 0 else "chatbot", text=text) for i, text in enumerate(texts))


def threshold_between(good: Sequence[float], bad: Sequence[float]) -> float | None:
    """Halfway between the groups when every good score is above every bad one, else None."""
    if not good or not bad or min(good) <= max(bad):
        return None
    return (min(good) + max(bad)) / 2


async def calibrate(model: Model, *, language: str = "en") -> tuple[JudgeCalibration, UsageTotals]:
    """Ask every check on its examples in ``language``; a few short next-token calls (the head is
    cached)."""
    totals = UsageTotals()
    checks: dict[str, CheckCalibration] = {}
    for check, groups in calibration_examples(language).items():
        scores: dict[str, list[float]] = {"good": [], "bad": []}
        for group, examples in groups.items():
            for turns, message in examples:
                probability, usage = await yes_probability(model, check_prompt(turns, message, check), seed=0)
                merge_usage(totals, usage)
                if probability is not None:
                    scores[group].append(probability)
        checks[check] = CheckCalibration(good=tuple(scores["good"]), bad=tuple(scores["bad"]),
                                         threshold=threshold_between(scores["good"], scores["bad"]))
    return JudgeCalibration(checks=checks), totals


async def judge_by_checks(model: Model, turns: Sequence[Turn], candidate: str,
                          thresholds: dict[str, float], *, seed: int
                          ) -> tuple[bool | None, str, dict[str, float], UsageTotals]:
    """(accepted, feedback naming each failed check and its probability, scores, usage).

    Only the checks in ``thresholds`` are asked; with none, nothing is asked and the message is
    accepted (the rules alone decide). None when the backend gives no probabilities."""
    totals = UsageTotals()
    scores: dict[str, float] = {}
    for check in thresholds:
        probability, usage = await yes_probability(model, check_prompt(turns, candidate, check), seed=seed)
        merge_usage(totals, usage)
        if probability is None:
            return None, "the judge gave no yes/no probabilities", scores, totals
        scores[check] = round(probability, 4)
    failed = [f"{FAILED[check]} ({check}: P(yes) {scores[check]:.2f}, needs {threshold:.2f})"
              for check, threshold in thresholds.items() if scores[check] < threshold]
    return not failed, "; ".join(failed), scores, totals


def merge_usage(totals: UsageTotals, usage: UsageTotals) -> None:
    """Add ``usage`` into ``totals`` (calls, cache hits, tokens, errors, cost)."""
    for name in ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "errors"):
        setattr(totals, name, getattr(totals, name) + getattr(usage, name))
    totals.cost += usage.cost
