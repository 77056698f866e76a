"""The survey pipeline: gibberish filter, dimension judging, aggregation, decision, follow-up."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from convoscope.criteria import get_criterion
from convoscope.filters import LanguageChoice, detect
from convoscope.items import Item, Turn
from convoscope.judges import Verdict
from convoscope.models import Model
from convoscope.runs import JudgeSpec, RunSummary, is_embedded, judge_async
from convoscope.store import Store
from convoscope.survey._fit import DIMENSION_MAXIMA, DIMENSIONS, FittedModel
from convoscope.survey._followup import follow_up_for, model_follow_up

Aggregation = Literal["sum", "ridge", "llm"]
Decision = Literal["accept", "hold", "reject"]
Rubrics = Literal["auto", "en"]
RUBRIC_SUITES: dict[str, str] = {"ko": "survey-ko"}


class ScoredAnswer(BaseModel):
    """One survey answer after the whole pipeline. Dimension scores are on their rubric scales;
    ``overall`` is 0-1 (for ``llm`` it is the 0-4 synthesis divided by 4)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    question: str | None
    answer: str
    language: str
    gibberish: bool
    gibberish_reasons: tuple[str, ...] = ()
    scores: dict[str, int | None] = Field(default_factory=dict)
    reasons: dict[str, str | None] = Field(default_factory=dict)
    unscored: dict[str, str] = Field(default_factory=dict, description="Dimension -> why unscored.")
    overall: float | None = None
    overall_reason: str | None = None
    decision: Decision
    decision_reason: str
    weakest: str | None = None
    follow_up: str | None = None
    follow_up_source: str | None = Field(default=None, description="'template:<dim>' or 'model'.")
    baselines: dict[str, float | None] = Field(
        default_factory=dict, description="Baseline name -> score (length in words, similarity).")


class SurveyResult(BaseModel):
    """A scored survey: the answers plus how they were scored (for the CSV and the report)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answers: tuple[ScoredAnswer, ...]
    aggregation: Aggregation
    threshold: float
    hold_band: float
    run_ids: tuple[str, ...] = ()
    model_calls: int = 0
    cache_hits: int = Field(default=0, description="Judgements answered by the response cache.")
    resumed: int = Field(default=0, description="Judgements already in the store from an earlier run.")
    judged: int = Field(default=0, description="Answers that reached the judge.")
    fitted: FittedModel | None = None
    judges: tuple[str, ...] = Field(default=(), description="Model specs of the judges used.")


async def score_survey_async(
    items: Sequence[Item], specs: Sequence[JudgeSpec], *, store: Store,
    cache_path: str | Path | None, aggregation: Aggregation = "sum",
    fitted: FittedModel | None = None, threshold: float = 0.5, hold_band: float = 0.05,
    lang: LanguageChoice = "auto", concurrency: int = 8,
    on_progress: Callable[[int], None] | None = None, follow_up_model: Model | None = None,
    rubrics: Rubrics = "auto", baselines: Sequence[str] = (),
) -> SurveyResult:
    """Score survey answers (``item.response``) against their questions.

    Gibberish answers are rejected by the offline filter and never reach a model. The rest are
    judged on effort, relevance and completeness (stored, cached, resumable), combined into an
    overall score, then accepted, held or rejected. A fitted model replaces the weights and the
    threshold (and implies ``aggregation="ridge"``). Follow-up questions come from
    ``follow_up_model``, else from the first non-embedded judge, else from templates.
    With ``rubrics="auto"`` Korean answers are judged with the Korean rubrics (``survey-ko``);
    ``"en"`` judges every answer with the English ones. ``baselines`` (``length``, ``tfidf``,
    ``embedding``) add judge-free scores of every answer beside the judged ones, so a fitted
    model or a meta-evaluation can show whether the judge beats them.
    """
    if aggregation == "ridge" and fitted is None:
        raise ValueError("ridge aggregation needs a fitted model: run 'convoscope survey fit' first")
    if fitted is not None:
        aggregation, threshold, hold_band = "ridge", fitted.threshold, fitted.hold_band
    flags = {item.id: detect(item.response or "", lang=lang) for item in items}
    clean = [item for item in items if not flags[item.id].gibberish]
    run_ids: list[str] = []
    calls = cache_hits = resumed = 0
    verdicts: dict[tuple[str, str], Verdict] = {}
    synthesis: dict[str, Verdict] = {}
    for suite, group in _by_rubric(clean, flags, rubrics).items():
        dimensions = [get_criterion(f"{suite}/{name}") for name in DIMENSIONS]
        summary = await judge_async(group, dimensions, specs, store=store, cache_path=cache_path,
                                    concurrency=concurrency, on_progress=on_progress)
        run_ids.append(summary.run_id)
        calls += summary.model_calls
        cache_hits += summary.cache_hits
        resumed += summary.resumed
        verdicts |= _final_verdicts(store, summary.run_id, len(specs))
        if aggregation == "llm":
            found, summary = await _synthesise(suite, group, verdicts, specs, store, cache_path,
                                               concurrency, on_progress)
            synthesis |= found
            run_ids.append(summary.run_id)
            calls += summary.model_calls
            cache_hits += summary.cache_hits
            resumed += summary.resumed
    answers = tuple(
        _assemble(item, flags[item.id], verdicts, synthesis.get(item.id), aggregation, fitted,
                  threshold, hold_band)
        for item in items
    )
    if baselines:
        answers = _with_baselines(items, answers, baselines)
    answers, used = await _written_follow_ups(answers, specs, follow_up_model, cache_path)
    calls += used
    return SurveyResult(answers=answers, aggregation=aggregation, threshold=threshold,
                        hold_band=hold_band, run_ids=tuple(run_ids), model_calls=calls,
                        cache_hits=cache_hits, resumed=resumed,
                        judged=len(clean), fitted=fitted, judges=tuple(str(spec.model) for spec in specs))


async def _written_follow_ups(answers: tuple[ScoredAnswer, ...], specs: Sequence[JudgeSpec],
                              model: Model | None, cache_path: str | Path | None,
                              ) -> tuple[tuple[ScoredAnswer, ...], int]:
    """Replace template follow-ups of judged answers with ones a capable model writes."""
    wanted = [a for a in answers if a.follow_up and a.weakest in DIMENSIONS]
    capable = next((spec.model for spec in specs if not is_embedded(spec.model)), None)
    if not wanted or (model is None and capable is None):
        return answers, 0
    owned = model is None
    if model is None:
        from convoscope.models import CachedModel, ResponseCache, model_from_spec

        model = model_from_spec(str(capable))
        if cache_path is not None:
            model = CachedModel(model, ResponseCache(cache_path))
    try:
        written = {a.id: await model_follow_up(
            model, question=a.question, answer=a.answer, weakest=str(a.weakest),
            reason=a.reasons.get(str(a.weakest)), language=a.language) for a in wanted}
    finally:
        if owned:
            await model.aclose()
    updated = tuple(a.model_copy(update={"follow_up": written[a.id][0],
                                         "follow_up_source": written[a.id][1]})
                    if a.id in written else a for a in answers)
    return updated, len(written)


def _with_baselines(items: Sequence[Item], answers: tuple[ScoredAnswer, ...],
                    baselines: Sequence[str]) -> tuple[ScoredAnswer, ...]:
    """Every answer's judge-free scores: length in words, question-answer similarity."""
    from convoscope.baselines import baseline_scores

    scores = {name: baseline_scores(items, name) for name in dict.fromkeys(baselines)}
    return tuple(answer.model_copy(update={"baselines": {name: found.get(answer.id)
                                                         for name, found in scores.items()}})
                 for answer in answers)


def _by_rubric(items: Sequence[Item], flags: dict[str, Any], rubrics: Rubrics) -> dict[str, list[Item]]:
    """Answers grouped by the suite whose rubrics judge them: ``survey``, or ``survey-ko`` for
    answers in Korean (by the item's language, else the filter's detection)."""
    groups: dict[str, list[Item]] = {}
    for item in items:
        language = (item.language or flags[item.id].lang or "").split("-")[0].lower()
        suite = RUBRIC_SUITES.get(language, "survey") if rubrics == "auto" else "survey"
        groups.setdefault(suite, []).append(item)
    return groups


def _final_verdicts(store: Store, run_id: str, judges: int) -> dict[tuple[str, str], Verdict]:
    # A panel stores its members' verdicts beside the pooled one; only the pooled one counts.
    final: dict[tuple[str, str], Verdict] = {}
    for verdict in store.verdicts(run_id):
        if judges == 1 or verdict.rater.startswith("panel:"):
            final[(verdict.item_id, verdict.criterion.replace(":", "/").rsplit("/", 1)[-1])] = verdict
    return final


async def _synthesise(suite: str, items: Sequence[Item], verdicts: dict[tuple[str, str], Verdict],
                      specs: Sequence[JudgeSpec], store: Store, cache_path: str | Path | None,
                      concurrency: int, on_progress: Callable[[int], None] | None,
                      ) -> tuple[dict[str, Verdict], RunSummary]:
    """The seed's LLM synthesis: the ``overall`` criterion, shown the three scores and reasons."""
    overall = get_criterion(f"{suite}/overall").model_copy(update={"instructions": (
        "The earlier turn from 'scores' lists this answer's effort, relevance and completeness "
        "scores, each normalised to 0-1, with the judge's reasons. Weigh them; in your reason "
        "name the strongest and the weakest dimension.")})
    with_scores = [item.model_copy(update={"context": (*item.context, Turn(
        speaker="scores", text=_scores_text(item.id, verdicts)))}) for item in items]
    summary = await judge_async(with_scores, [overall], specs, store=store, cache_path=cache_path,
                                concurrency=concurrency, on_progress=on_progress)
    final = _final_verdicts(store, summary.run_id, len(specs))
    return {item_id: v for (item_id, _), v in final.items()}, summary


def _scores_text(item_id: str, verdicts: dict[tuple[str, str], Verdict]) -> str:
    parts = []
    for name in DIMENSIONS:
        verdict = verdicts.get((item_id, name))
        value = _normalised(name, verdict)
        shown = "unscored" if value is None else f"{value:.2f}"
        reason = (verdict.reason if verdict else None) or "no reason given"
        parts.append(f"{name} {shown} ({reason})")
    return "; ".join(parts)


def _normalised(name: str, verdict: Verdict | None) -> float | None:
    if verdict is None or not isinstance(verdict.value, int):
        return None
    return verdict.value / DIMENSION_MAXIMA[name]


def _assemble(item: Item, flag, verdicts, synthesis: Verdict | None,  # type: ignore[no-untyped-def]
              aggregation: Aggregation, fitted: FittedModel | None, threshold: float,
              hold_band: float) -> ScoredAnswer:
    base = dict(id=item.id, question=item.question, answer=item.response or "",
                language=item.language or flag.lang, gibberish=flag.gibberish,
                gibberish_reasons=tuple(flag.reasons))
    if flag.gibberish:
        question, origin = follow_up_for("gibberish", item.language or flag.lang)
        return ScoredAnswer(**base, overall=0.0, decision="reject",
                            decision_reason=f"gibberish ({', '.join(flag.reasons)}); not judged",
                            follow_up=question, follow_up_source=origin)
    found = {name: verdicts.get((item.id, name)) for name in DIMENSIONS}
    scores = {name: v.value if v and isinstance(v.value, int) else None for name, v in found.items()}
    reasons = {name: v.reason if v else None for name, v in found.items()}
    unscored = {name: (v.unscored_reason if v else None) or "missing"
                for name, v in found.items() if scores[name] is None}
    normalised = {name: _normalised(name, v) for name, v in found.items()}
    overall, overall_reason = _overall(normalised, synthesis, aggregation, fitted)
    decision, why = decide(overall, threshold=threshold, hold_band=hold_band)
    known = {name: value for name, value in normalised.items() if value is not None}
    weakest = min(known, key=lambda name: known[name]) if known else None
    follow_up: str | None = None
    source: str | None = None
    if decision != "accept":
        follow_up, source = follow_up_for(weakest, item.language or flag.lang)
    return ScoredAnswer(**base, scores=scores, reasons=reasons, unscored=unscored,
                        overall=overall, overall_reason=overall_reason, decision=decision,
                        decision_reason=why, weakest=weakest, follow_up=follow_up,
                        follow_up_source=source)


def _overall(normalised: dict[str, float | None], synthesis: Verdict | None,
             aggregation: Aggregation, fitted: FittedModel | None) -> tuple[float | None, str | None]:
    if aggregation == "llm":
        if synthesis is None or not isinstance(synthesis.value, int):
            return None, (synthesis.unscored_reason if synthesis else None)
        return synthesis.value / 4, synthesis.reason
    if any(value is None for value in normalised.values()):
        return None, None
    values = [float(normalised[name]) for name in DIMENSIONS]  # type: ignore[arg-type]
    if fitted is not None:
        return fitted.predict(values), None
    return sum(values) / len(values), None


def decide(overall: float | None, *, threshold: float, hold_band: float) -> tuple[Decision, str]:
    """Accept at or above ``threshold + hold_band``, reject below ``threshold - hold_band``, hold
    in between; an answer without an overall score is held for a person to look at."""
    if overall is None:
        return "hold", "not every dimension was scored"
    if overall >= threshold + hold_band:
        return "accept", f"overall {overall:.2f} >= {threshold + hold_band:.2f}"
    if overall < threshold - hold_band:
        return "reject", f"overall {overall:.2f} < {threshold - hold_band:.2f}"
    return "hold", f"overall {overall:.2f} within {hold_band:.2f} of threshold {threshold:.2f}"
