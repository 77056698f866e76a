"""The three agents of a simulated dialogue: user, judge of user turns, chatbot.

Each agent is one model call built from the prompts in :mod:`convoscope.synth._prompts`; the
regeneration loop that ties user and judge together lives in :mod:`convoscope.synth._dialogue`.
Every call's usage is added to a per-role :class:`~convoscope.models.UsageTotals`, so a dialogue
can report how many calls and tokens it cost.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from convoscope.items import Turn
from convoscope.models import GenerateRequest, Generation, Message, Model, UsageTotals
from convoscope.synth import _prompts as prompts
from convoscope.synth._checks import CHECKS, judge_by_checks, merge_usage
from convoscope.synth._choice import Prompting, model_prompting
from convoscope.synth._contexts import SeedContext
from convoscope.synth._patterns import clean_user_text


class SynthSettings(BaseModel):
    """Limits and sampling settings. Defaults are seed 001's (appendix C.2) where it gives them.

    ``max_turns`` counts utterances (user and chatbot). The opening message is sampled with a
    presence penalty, later user turns and chatbot replies with nucleus sampling (top-p), as in
    the seed; backends that ignore a setting simply sample without it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    first_turn_attempts: int = Field(default=10, ge=1, description="Tries for the opening message.")
    later_turn_attempts: int = Field(default=5, ge=1, description="Tries for each later user turn.")
    max_turns: int = Field(default=10, ge=2, description="Utterances per dialogue, both sides.")
    end_signal: str = Field(default=prompts.DEFAULT_END_SIGNAL, min_length=3)
    user_first_temperature: float = 1.5
    user_first_presence_penalty: float | None = Field(default=0.6, ge=-2, le=2)
    user_temperature: float = 0.9
    user_top_p: float | None = Field(default=0.95, gt=0, le=1)
    user_max_tokens: int = 512
    user_first_max_tokens: int = Field(default=64, ge=1, description=(
        "Longest opening message, in tokens (also capped by user_max_tokens): an opening is one or "
        "two sentences, and a hot sampler on a small model otherwise rambles for hundreds of words."))
    user_stop: tuple[str, ...] = Field(default=("\n",), description=(
        "Where a user message ends: a chat message is one line; small models go on to write labels "
        "and the prompt's own fields on the next lines."))
    max_user_words: int = Field(default=60, ge=1, description="Longer user messages are rejected by rule.")
    rejected_words_shown: int = Field(default=25, ge=1, description=(
        "A rejected attempt is quoted to the next try up to this many words, then summarised."))
    identical_rejections_stop: int = Field(default=3, ge=2, description=(
        "Give up on a turn after this many judge rejections in a row with the same feedback."))
    judge_thresholds: dict[str, float] | None = Field(default=None, description=(
        "Completion mode: P(yes) threshold per named check (natural, in_role, coherent). None: "
        "calibrated at the start of a run (generate_dialogues), or 0.5 for each check when a turn "
        "is judged on its own; {}: the judge checks nothing and the rules alone decide."))
    judge_temperature: float = 0.1
    judge_max_tokens: int = 64
    chatbot_temperature: float = 0.9
    chatbot_top_p: float | None = Field(default=0.95, gt=0, le=1)
    chatbot_max_tokens: int = 512
    check_role: bool = Field(default=True, description="Ask the judge whether the user swapped roles.")
    prompting: Literal["auto", "chat", "completion"] = Field(default="auto", description=(
        "How user and chatbot models are prompted: chat (instructions through the chat template) "
        "or completion (a document to continue, for base models). auto: completion for packaged "
        "base models (Gemma 3 270M), chat for every other model."))
    judge_mode: Literal["auto", "chat", "completion"] = Field(
        default="auto", description="chat: the judge writes yes/no and feedback; completion: yes/no is "
        "read from the next-token probabilities (no feedback). auto: completion for embedded models.")
    seed: int = 0


class Usage(BaseModel):
    """Calls and tokens per role: ``user``, ``judge``, ``chatbot``, ``filter``."""

    roles: dict[str, UsageTotals] = Field(default_factory=dict)

    def add(self, role: str, model_usage: UsageTotals) -> None:
        merge_usage(self.roles.setdefault(role, UsageTotals()), model_usage)


def request_seed(*parts: object) -> int:
    """A stable per-call seed, so regenerations differ and a re-run asks the very same question."""
    digest = hashlib.sha256("\x1f".join(str(part) for part in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


async def call(model: Model, request: GenerateRequest, usage: Usage, role: str) -> str:
    """One model call; its usage goes to ``role``. Model errors propagate to the caller."""
    return (await call_generation(model, request, usage, role)).text


async def call_generation(model: Model, request: GenerateRequest, usage: Usage, role: str) -> Generation:
    """:func:`call`, returning the whole generation (finish reason, probabilities)."""
    totals = UsageTotals()
    try:
        generation = await model.generate(request)
    except Exception:
        totals.errors += 1
        usage.add(role, totals)
        raise
    totals.add(generation)
    usage.add(role, totals)
    return generation


async def write_user_turn(user: Model, context: SeedContext, turns: Sequence[Turn],
                          settings: SynthSettings, usage: Usage, *, seed: int,
                          rejected: str | None = None, feedback: str | None = None) -> tuple[str, bool]:
    """The user agent's next message (the opening one when ``turns`` is empty), and whether it
    was cut off by the token limit with no complete sentence to keep."""
    request = user_request(user, context, turns, settings, seed=seed, rejected=rejected, feedback=feedback)
    generation = await call_generation(user, request, usage, "user")
    message = clean_user_text(generation.text)
    if generation.finish_reason != "length":
        return message, False
    kept = whole_sentences(message)
    return (kept, False) if kept else (message, True)


def user_request(user: Model, context: SeedContext, turns: Sequence[Turn], settings: SynthSettings,
                 *, seed: int, rejected: str | None = None, feedback: str | None = None) -> GenerateRequest:
    """The user agent's request. A chat model gets instructions, and on a retry the rejected try
    and the feedback on it; a base model gets a document to continue (it cannot read feedback,
    so a retry is a fresh sample with its own seed)."""
    opening = not turns
    sampling: dict[str, Any] = ({"presence_penalty": settings.user_first_presence_penalty} if opening
                                else {"top_p": settings.user_top_p})
    options: dict[str, Any] = {
        "temperature": settings.user_first_temperature if opening else settings.user_temperature,
        "max_tokens": min(settings.user_max_tokens, settings.user_first_max_tokens) if opening
        else settings.user_max_tokens, "seed": seed, **sampling}
    if prompting_of(user, settings) == "completion":
        document = (prompts.first_turn_document(context) if opening
                    else prompts.next_turn_document(context, turns))
        return GenerateRequest(prompt=document, stop=prompts.DOCUMENT_STOP, **options)
    shown = prompts.shorten(rejected, settings.rejected_words_shown) if rejected is not None else None
    if opening:
        system, text = prompts.USER_FIRST_SYSTEM, prompts.first_turn_prompt(context, shown, feedback)
    else:
        system = prompts.USER_NEXT_SYSTEM.format(end=settings.end_signal)
        text = prompts.next_turn_prompt(context, turns, shown, feedback)
    messages = (Message(role="system", content=system), Message(role="user", content=text))
    return GenerateRequest(messages=messages, stop=settings.user_stop, **options)


def prompting_of(model: Model, settings: SynthSettings) -> Prompting:
    """Chat or completion prompts for a user or chatbot model (``settings.prompting``; auto:
    packaged base models get completion prompts, every other model chat)."""
    return model_prompting(model) if settings.prompting == "auto" else settings.prompting


_SENTENCE_END = re.compile(r"[.!?。！？…]+[\"'”’)]*")


def whole_sentences(text: str) -> str:
    """The text up to its last complete sentence ("" when it has none)."""
    ends = [match.end() for match in _SENTENCE_END.finditer(text)]
    return text[: ends[-1]].strip() if ends else ""


async def judge_user_turn(judge: Model, context: SeedContext, turns: Sequence[Turn], candidate: str,
                          settings: SynthSettings, usage: Usage, *, seed: int
                          ) -> tuple[bool | None, str, dict[str, float] | None]:
    """(accepted, feedback, P(yes) per check) from the judge; accepted is None when its answer is
    unreadable. In completion mode each named check is asked on its own and the feedback names
    the checks that failed with their probabilities; in chat mode the judge writes its reason."""
    if uses_completion(judge, settings):
        thresholds = settings.judge_thresholds
        if thresholds is None:
            thresholds = dict.fromkeys(CHECKS, 0.5)
        accepted, feedback, scores, totals = await judge_by_checks(judge, turns, candidate, thresholds,
                                                                   seed=seed)
        usage.add("judge", totals)
        return accepted, feedback, scores
    system = prompts.JUDGE_SYSTEM.format(language=context.language_name, end=settings.end_signal)
    accepted, said = await ask_yes_no(judge, system, prompts.judge_prompt(turns, candidate), settings,
                                      usage, seed=seed, role="judge")
    return accepted, said, None


def uses_completion(model: Model, settings: SynthSettings) -> bool:
    """Tiny embedded models cannot write a readable verdict, but their next token still tells."""
    if settings.judge_mode != "auto":
        return settings.judge_mode == "completion"
    return model.name.startswith("embedded:")


async def ask_yes_no(model: Model, system: str, question: str, settings: SynthSettings, usage: Usage,
                     *, seed: int, role: str) -> tuple[bool | None, str]:
    """A yes/no question to a judge model: (answer or None when unreadable, explanation)."""
    if uses_completion(model, settings):
        prompt = f"{system}\n\n{question}\nAnswer with Yes or No.\nAnswer:"
        request = GenerateRequest(prompt=prompt, max_tokens=1, temperature=0.0, seed=seed,
                                  next_token_candidates=(" Yes", " No"))
        totals = UsageTotals()
        generation = await model.generate(request)
        totals.add(generation)
        usage.add(role, totals)
        logprobs = generation.next_token_logprobs or {}
        if " Yes" not in logprobs or " No" not in logprobs:
            return None, "the judge gave no yes/no probabilities"
        accepted = logprobs[" Yes"] > logprobs[" No"]
        return accepted, "" if accepted else "rejected by the judge (completion mode gives no reason)"
    request = GenerateRequest(messages=(Message(role="system", content=system),
                                        Message(role="user", content=question)),
                              max_tokens=settings.judge_max_tokens,
                              temperature=settings.judge_temperature, seed=seed)
    return read_yes_no(await call(model, request, usage, role))


async def chatbot_reply(chatbot: Model, turns: Sequence[Turn], settings: SynthSettings, usage: Usage,
                        *, seed: int, language: str | None = None) -> str:
    """The chatbot's reply. It sees the shared system prompt and the dialogue, nothing else (a
    base model: the shared header and an example exchange in the dialogue's ``language``)."""
    options: dict[str, Any] = {"max_tokens": settings.chatbot_max_tokens, "seed": seed,
                               "temperature": settings.chatbot_temperature, "top_p": settings.chatbot_top_p}
    if prompting_of(chatbot, settings) == "completion":
        document = prompts.chatbot_document(turns, language)
        request = GenerateRequest(prompt=document, stop=prompts.DOCUMENT_STOP, **options)
        return (await call(chatbot, request, usage, "chatbot")).strip()
    messages = [Message(role="system", content=prompts.CHATBOT_SYSTEM)]
    messages.extend(Message(role="user" if turn.speaker == "user" else "assistant", content=turn.text)
                    for turn in turns)
    request = GenerateRequest(messages=tuple(messages), **options)
    return (await call(chatbot, request, usage, "chatbot")).strip()


_YES_NO = re.compile(r"^[\W_]*(yes|no)\b[\W_]*(.*)$", re.IGNORECASE | re.DOTALL)


def read_yes_no(text: str) -> tuple[bool | None, str]:
    """``("Yes.", ...)`` -> (True, rest); ``"No. too long"`` -> (False, "too long"); else None."""
    match = _YES_NO.match(text.strip())
    if match is None:
        return None, text.strip()
    return match.group(1).lower() == "yes", match.group(2).strip()
