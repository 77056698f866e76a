"""Generate simulated dialogues for many seed contexts: concurrent, resumable, one line each.

Every (context, user model, chatbot) triple is one dialogue, written as one
:class:`~convoscope.items.Item` the moment it is finished: dialogues that pass the filters go to
``out``, filtered ones (with their reasons) to ``filtered_out``. A re-run reads both files and
skips every id already there, so an interrupted run continues where it stopped; with a response
cache, the unfinished dialogues it redoes cost no model call up to the point of interruption.
The opening user turn is generated once per context and user model and shared by all chatbots.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from convoscope.items import Item
from convoscope.models import Model, UsageTotals
from convoscope.synth._agents import SynthSettings, Usage, uses_completion
from convoscope.synth._checks import JudgeCalibration, calibrate, calibration_languages, merge_usage
from convoscope.synth._choice import FirstCallsInTurn, RoleModel, for_language
from convoscope.synth._contexts import SeedContext
from convoscope.synth._dialogue import DialogueResult, UserTurnLog, continue_dialogue, opening_turn
from convoscope.synth._filters import filter_dialogue
from convoscope.synth._io import append_jsonl, ids_in, repair_tail

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


class GenerationSummary(BaseModel):
    """What a generation run did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    planned: int
    already_done: int
    written: int
    filtered: int
    ends: dict[str, int] = Field(default_factory=dict)
    filter_reasons: dict[str, int] = Field(default_factory=dict)
    usage: dict[str, UsageTotals] = Field(default_factory=dict)
    wall_time_s: float = 0.0
    out: str
    filtered_out: str
    judge_calibration: JudgeCalibration | None = Field(
        default=None, description="Completion-mode judge: how each check separated its examples "
        "(when one calibration was made; see judge_calibrations).")
    judge_calibrations: dict[str, JudgeCalibration] = Field(default_factory=dict, description=(
        "Every calibration made, keyed 'examples language: judge model' (one per judge model and "
        "language of the examples)."))
    judge_note: str | None = Field(default=None, description="What the judge could and could not check.")


def model_label(spec: str) -> str:
    """A short name for a model spec: ``NAME=SPEC`` gives NAME; otherwise the model's own name
    (``openai:llama3.1-8b@URL`` -> ``llama3.1-8b``, ``embedded`` -> ``embedded``)."""
    name, sep, _ = spec.partition("=")
    if sep and _LABEL.match(name):
        return name
    prefix, _, rest = spec.partition(":")
    label = rest.partition("@")[0] if rest else prefix
    label = Path(label).stem if label.endswith(".gguf") else label
    return re.sub(r"[^A-Za-z0-9_.+-]+", "-", label).strip("-") or "model"


def dialogue_id(context: SeedContext, user_label: str, chatbot_label: str) -> str:
    return f"{context.id}.{user_label}.{chatbot_label}"


def default_filtered_path(out: Path) -> Path:
    return out.with_name(out.name.removesuffix(".jsonl") + ".filtered.jsonl")


async def generate_dialogues_async(
    contexts: list[SeedContext], *, users: Mapping[str, RoleModel], judge: RoleModel | None,
    chatbots: Mapping[str, RoleModel], out: str | Path, filtered_out: str | Path | None = None,
    settings: SynthSettings | None = None, concurrency: int = 4,
    on_dialogue: Callable[[Item], None] | None = None,
) -> GenerationSummary:
    """Generate every missing dialogue and append it to ``out`` (or ``filtered_out``).

    ``users`` and ``chatbots`` map labels (used in ids and ``Item.system``) to models, or to
    :class:`EmbeddedByLanguage` (the embedded model chosen for each dialogue's language). With
    ``judge=None`` user turns are checked by the rules only and the role filter is skipped.
    """
    settings = settings or SynthSettings()
    out = Path(out)
    filtered_path = Path(filtered_out) if filtered_out else default_filtered_path(out)
    for path in (out, filtered_path):
        path.parent.mkdir(parents=True, exist_ok=True)
        repair_tail(path)
    done = ids_in(out) | ids_in(filtered_path)
    plan = [(context, user_label, bot_label) for context in contexts for user_label in users
            for bot_label in chatbots]
    todo = [entry for entry in plan if dialogue_id(*entry) not in done]
    started = time.perf_counter()
    counts = _Counts()
    cast = _Cast(users, judge, chatbots, settings)
    await cast.calibrate(sorted({context.language for context, _, _ in todo}), counts.usage)
    openings: dict[str, asyncio.Task[tuple[UserTurnLog | None, Usage, str | None]]] = {}
    limit = asyncio.Semaphore(max(1, concurrency))

    async def one(context: SeedContext, user_label: str, bot_label: str) -> None:
        async with limit:
            opening_key = f"{context.id}.{user_label}"
            user, judging = cast.user(user_label, context.language), cast.judge(context.language)
            mine = cast.settings_for(context.language)
            if opening_key not in openings:
                openings[opening_key] = asyncio.ensure_future(opening_turn(
                    context, user=user, judge=judging, settings=mine, key=opening_key))
            log, opening_usage, error = await asyncio.shield(openings[opening_key])
            key = dialogue_id(context, user_label, bot_label)
            item = await _finish(context, log, error, opening_key, opening_usage, key, user_label,
                                 bot_label, user, judging, cast.chatbot(bot_label, context.language), mine)
            passed = item.meta["synth"]["filter"]["passed"]
            append_jsonl(out if passed else filtered_path, item)
            counts.record(item)
            if on_dialogue is not None:
                on_dialogue(item)

    dialogues = [asyncio.ensure_future(one(*entry)) for entry in todo]
    try:
        await asyncio.gather(*dialogues)
    except BaseException:  # an unreachable endpoint, Ctrl-C: the rest stop now; finished ones are written
        for task in [*dialogues, *openings.values()]:
            task.cancel()
        await asyncio.gather(*dialogues, *openings.values(), return_exceptions=True)
        raise
    only = next(iter(cast.calibrations.values())) if len(cast.calibrations) == 1 else None
    return GenerationSummary(
        planned=len(plan), already_done=len(plan) - len(todo), written=counts.written,
        filtered=counts.filtered, ends=dict(counts.ends), filter_reasons=dict(counts.reasons),
        usage=counts.usage, wall_time_s=time.perf_counter() - started, out=str(out),
        filtered_out=str(filtered_path), judge_calibration=only, judge_calibrations=cast.calibrations,
        judge_note=_judge_note(judge, settings, cast.calibrations, cast.unjudged))


class _Cast:
    """The models of every dialogue: the one each role gets in a language (embedded models'
    first calls taken in turn), and the judge's calibration per model and language."""

    def __init__(self, users: Mapping[str, RoleModel], judge: RoleModel | None,
                 chatbots: Mapping[str, RoleModel], settings: SynthSettings) -> None:
        self._users, self._judge, self._chatbots, self._settings = users, judge, chatbots, settings
        self._gate = FirstCallsInTurn()
        self._gated: dict[int, Model] = {}
        self.calibrations: dict[str, JudgeCalibration] = {}
        self._thresholds: dict[str, dict[str, float]] = {}
        self.unjudged: set[str] = set()  # languages in which no embedded model can judge

    def _ready(self, model: Model | None) -> Model:
        assert model is not None, "only the judge can be missing in a language"
        if not model.name.startswith("embedded:"):
            return model
        return self._gated.setdefault(id(model), self._gate.wrap(model))

    def user(self, label: str, language: str) -> Model:
        return self._ready(for_language(self._users[label], language))

    def chatbot(self, label: str, language: str) -> Model:
        return self._ready(for_language(self._chatbots[label], language))

    def judge(self, language: str) -> Model | None:
        chosen = None if self._judge is None else for_language(self._judge, language)
        if chosen is None:
            if self._judge is not None:
                self.unjudged.add(language)
            return None
        return self._ready(chosen)

    async def calibrate(self, languages: list[str], usage: dict[str, UsageTotals]) -> None:
        """Calibrate the completion-mode judge of each language on that language's examples."""
        for language in languages:
            judge = self.judge(language)
            if judge is None or not uses_completion(judge, self._settings) or \
                    self._settings.judge_thresholds is not None:
                continue
            examples = language if language in calibration_languages() else "en"
            key = f"{examples}: {judge.name}"
            if key not in self.calibrations:
                self.calibrations[key], spent = await calibrate(judge, language=examples)
                merge_usage(usage.setdefault("calibration", UsageTotals()), spent)
            self._thresholds[language] = self.calibrations[key].thresholds

    def settings_for(self, language: str) -> SynthSettings:
        if language not in self._thresholds:
            return self._settings
        return self._settings.model_copy(update={"judge_thresholds": self._thresholds[language]})


def _judge_note(judge: RoleModel | None, settings: SynthSettings,
                calibrations: dict[str, JudgeCalibration], unjudged: set[str]) -> str | None:
    if judge is None:
        return "no judge: the rules alone checked user turns, and the role filter did not run"
    notes = []
    if unjudged:
        notes.append(f"{', '.join(sorted(unjudged))}: no embedded judge (no packaged model separated a "
                     "check on that language's examples, benchmarks/results/synth_models.md): the rules "
                     "alone checked user turns")
    if len(calibrations) == 1 and not unjudged:
        return next(iter(calibrations.values())).describe()
    notes.extend(f"{key}: {calibration.describe()}" for key, calibration in calibrations.items())
    if not notes and settings.judge_thresholds is not None:
        return f"the judge checked with the given thresholds {settings.judge_thresholds}"
    return " | ".join(notes) or None


async def _finish(context: SeedContext, opening: UserTurnLog | None, opening_error: str | None,
                  opening_key: str, opening_usage: Usage, key: str, user_label: str, bot_label: str,
                  user: Model, judge: Model | None, chatbot: Model, settings: SynthSettings) -> Item:
    if opening is None:
        result = DialogueResult(turns=(), user_turns=(), end="user_error", error=opening_error,
                                usage=Usage())
    else:
        result = await continue_dialogue(opening, context, user=user, judge=judge, chatbot=chatbot,
                                         settings=settings, key=key)
    verdict = await filter_dialogue(result.turns, context.language, judge=judge, settings=settings,
                                    usage=result.usage, key=key)
    meta: dict[str, Any] = {"synth": {
        "context": context.model_dump(mode="json"), "user": user_label, "user_model": user.name,
        "judge_model": judge.name if judge else None, "chatbot_model": chatbot.name,
        "turn_models": list(result.turn_models), "end": result.end,
        "error": result.error, "user_turns": [log.model_dump(mode="json") for log in result.user_turns],
        "usage": result.usage.model_dump(mode="json")["roles"],
        "opening": {"key": opening_key, "usage": opening_usage.model_dump(mode="json")["roles"]},
        "filter": verdict.model_dump(mode="json"), "settings": settings.model_dump(mode="json"),
    }}
    return Item(id=key, context=result.turns, language=context.language, system=bot_label, meta=meta)


class _Counts:
    def __init__(self) -> None:
        self.written = 0
        self.filtered = 0
        self.ends: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()
        self.usage: dict[str, UsageTotals] = {}
        self._openings: set[str] = set()

    def record(self, item: Item) -> None:
        synth = item.meta["synth"]
        self.written += 1
        self.ends[synth["end"]] += 1
        if not synth["filter"]["passed"]:
            self.filtered += 1
            self.reasons.update(synth["filter"]["reasons"])
        usages = [synth["usage"]]
        if synth["opening"]["key"] not in self._openings:
            self._openings.add(synth["opening"]["key"])
            usages.append(synth["opening"]["usage"])
        for roles in usages:
            for role, totals in roles.items():
                mine = self.usage.setdefault(role, UsageTotals())
                for name, value in totals.items():
                    setattr(mine, name, getattr(mine, name) + value)


def generate_dialogues(contexts: list[SeedContext], **options: Any) -> GenerationSummary:
    """The sync edge of :func:`generate_dialogues_async` (same keyword options)."""
    return asyncio.run(generate_dialogues_async(contexts, **options))
