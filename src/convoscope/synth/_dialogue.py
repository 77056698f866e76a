"""One simulated dialogue: the user-judge regeneration loop, the chatbot, the end signal.

A user message is kept only when the judge accepts it; a rejected one is written again with the
judge's feedback, up to ``first_turn_attempts`` for the opening message and
``later_turn_attempts`` afterwards. A later turn that never passes ends the dialogue, as does the
user's end signal or the turn cap. Cheap rule checks (empty text, placeholder names, an end signal
in the opening message) reject an attempt without spending a judge call.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from convoscope.items import Turn
from convoscope.models import EndpointUnreachable, Model, ModelError
from convoscope.synth import _prompts as prompts
from convoscope.synth._agents import (
    SynthSettings,
    Usage,
    chatbot_reply,
    judge_user_turn,
    prompting_of,
    request_seed,
    uses_completion,
    write_user_turn,
)
from convoscope.synth._contexts import SeedContext
from convoscope.synth._rules import rule_failure

EndReason = Literal["end_signal", "turn_cap", "turn_rejected", "first_turn_rejected",
                    "user_error", "judge_error", "chatbot_error"]


class Attempt(BaseModel):
    """One try at a user turn and what became of it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    accepted: bool
    checked_by: Literal["judge", "rule"]
    feedback: str | None = None
    rule: str | None = Field(default=None, description=(
        "The rule that refused the attempt (gibberish, speaker_label, role_break, ...)."))
    model: str | None = Field(default=None, description="The model that wrote the attempt.")
    unreadable: bool = Field(default=False, description="The judge's answer was neither yes nor no.")
    scores: dict[str, float] | None = Field(
        default=None, description="Completion-mode judge: P(yes) of each named check it asked.")


class UserTurnLog(BaseModel):
    """Every attempt at one user turn; ``accepted`` is False when all of them failed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    position: int = Field(description="Index of the turn in the dialogue (0 = opening message).")
    attempts: tuple[Attempt, ...]
    accepted: bool
    ended: bool = Field(default=False, description="The accepted message carried the end signal.")
    stopped_early: bool = Field(default=False, description=(
        "Tries were left, but the judge kept rejecting with the same feedback, so they were not spent."))


async def user_turn_loop(user: Model, judge: Model | None, context: SeedContext, turns: list[Turn],
                         settings: SynthSettings, usage: Usage, *, key: str) -> UserTurnLog:
    """Write, check and rewrite one user turn until the judge accepts it or the tries run out.
    Without a judge (``None``) the first attempt that passes the rule checks is kept.

    Model errors of the user or the judge propagate (the dialogue records them as its end).
    """
    opening = not turns
    limit = settings.first_turn_attempts if opening else settings.later_turn_attempts
    attempts: list[Attempt] = []
    rejected: str | None = None
    feedback: str | None = None
    earlier = [turn.text for turn in turns]
    shown = prompts.example_messages(context.language) if prompting_of(user, settings) == "completion" else ()
    for number in range(limit):
        seed = request_seed(settings.seed, key, len(turns), number)
        text, cut = await write_user_turn(user, context, turns, settings, usage, seed=seed,
                                          rejected=rejected, feedback=feedback)
        refused = rule_failure(text, opening=opening, end_signal=settings.end_signal,
                               language=context.language, earlier=earlier,
                               max_words=settings.max_user_words, cut=cut, examples=shown)
        if refused is not None:
            attempts.append(Attempt(text=text, accepted=False, checked_by="rule", rule=refused[0],
                                    feedback=refused[1], model=user.name))
        else:
            attempt = (await _judged(judge, context, turns, text, settings, usage, seed=seed)
                       ).model_copy(update={"model": user.name})
            attempts.append(attempt)
            if attempt.accepted:
                return UserTurnLog(position=len(turns), attempts=tuple(attempts), accepted=True,
                                   ended=settings.end_signal in text)
        if _same_rejections(attempts, settings.identical_rejections_stop) and number + 1 < limit:
            return UserTurnLog(position=len(turns), attempts=tuple(attempts), accepted=False,
                               stopped_early=True)
        rejected, feedback = text, attempts[-1].feedback or "the message was not acceptable"
    return UserTurnLog(position=len(turns), attempts=tuple(attempts), accepted=False)


async def _judged(judge: Model | None, context: SeedContext, turns: list[Turn], text: str,
                  settings: SynthSettings, usage: Usage, *, seed: int) -> Attempt:
    """The judge's verdict on an attempt that passed the rules (no judge, or a completion-mode
    judge left with no check it can do: the rules alone decide)."""
    if judge is None or settings.judge_thresholds == {} and uses_completion(judge, settings):
        return Attempt(text=text, accepted=True, checked_by="rule")
    try:
        verdict, said, scores = await judge_user_turn(judge, context, turns, text, settings, usage,
                                                      seed=seed)
    except EndpointUnreachable:
        raise  # every dialogue would fail alike: the run stops
    except ModelError as error:
        raise _JudgeFailed(str(error)) from error
    accepted = bool(verdict)
    return Attempt(text=text, accepted=accepted, checked_by="judge",
                   feedback=None if accepted else (said or None), unreadable=verdict is None,
                   scores=scores)


def _same_rejections(attempts: list[Attempt], run: int) -> bool:
    """The last ``run`` attempts were all rejected for the same reason (by the same rule, or by
    the judge with the same feedback; for a completion-mode judge: the same checks failed)."""
    last = attempts[-run:]
    if len(last) < run or any(attempt.accepted for attempt in last):
        return False
    return len({(attempt.checked_by, _rejection_key(attempt)) for attempt in last}) == 1


def _rejection_key(attempt: Attempt) -> str:
    if attempt.scores is not None:
        return " ".join(sorted(re.findall(r"\((\w+): P\(yes\)", attempt.feedback or "")))
    return (attempt.feedback or "").strip().lower()


class _JudgeFailed(Exception):
    pass


class DialogueResult(BaseModel):
    """A finished simulated dialogue with everything needed to audit how it was made."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turns: tuple[Turn, ...]
    turn_models: tuple[str, ...] = Field(default=(), description="The model that wrote each turn.")
    user_turns: tuple[UserTurnLog, ...]
    end: EndReason
    error: str | None = None
    usage: Usage


async def continue_dialogue(opening: UserTurnLog, context: SeedContext, *, user: Model, judge: Model | None,
                            chatbot: Model, settings: SynthSettings, key: str) -> DialogueResult:
    """Run a dialogue on from a shared opening user turn until it ends. ``opening`` usage is not
    counted here (it is shared by every chatbot and counted once, by the caller)."""
    usage = Usage()
    logs = [opening]
    if not opening.accepted:
        return DialogueResult(turns=(), user_turns=tuple(logs), end="first_turn_rejected", usage=usage)
    turns = [Turn(speaker="user", text=opening.attempts[-1].text)]
    authors = [opening.attempts[-1].model or user.name]
    end: EndReason = "turn_cap"
    error: str | None = None
    while len(turns) < settings.max_turns:
        try:
            reply = await chatbot_reply(chatbot, turns, settings, usage, language=context.language,
                                        seed=request_seed(settings.seed, key, "chatbot", len(turns)))
        except EndpointUnreachable:
            raise
        except ModelError as failure:
            end, error = "chatbot_error", str(failure)
            break
        turns.append(Turn(speaker="chatbot", text=reply))
        authors.append(chatbot.name)
        if len(turns) >= settings.max_turns:
            break
        try:
            log = await user_turn_loop(user, judge, context, turns, settings, usage, key=key)
        except _JudgeFailed as failure:
            end, error = "judge_error", str(failure)
            break
        except EndpointUnreachable:
            raise
        except ModelError as failure:
            end, error = "user_error", str(failure)
            break
        logs.append(log)
        if not log.accepted:
            end = "turn_rejected"
            break
        text = log.attempts[-1].text
        if log.ended:
            remainder = text.replace(settings.end_signal, "").strip()
            if remainder:
                turns.append(Turn(speaker="user", text=remainder))
                authors.append(user.name)
            end = "end_signal"
            break
        turns.append(Turn(speaker="user", text=text))
        authors.append(user.name)
    return DialogueResult(turns=tuple(turns), turn_models=tuple(authors), user_turns=tuple(logs), end=end,
                          error=error, usage=usage)


async def opening_turn(context: SeedContext, *, user: Model, judge: Model | None, settings: SynthSettings,
                       key: str) -> tuple[UserTurnLog | None, Usage, str | None]:
    """The opening user turn for a context and user model: (log, usage, error)."""
    usage = Usage()
    try:
        log = await user_turn_loop(user, judge, context, [], settings, usage, key=key)
    except EndpointUnreachable:
        raise
    except (ModelError, _JudgeFailed) as error:
        return None, usage, str(error)
    return log, usage, None
