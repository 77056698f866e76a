"""``judge_card``: judge what is missing, then put every section of the card together."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from convoscope.card import _sections as sections
from convoscope.card._model import (
    DEFAULT_THRESHOLDS,
    CardThresholds,
    JudgeCard,
    JudgeReport,
    Manipulation,
    NotComputed,
    Provenance,
)
from convoscope.card._probes import PROBE_PREFIX, Probe, card_probes, manipulation_counts, probe_items
from convoscope.card._verdict import findings, paragraph
from convoscope.criteria import Criterion
from convoscope.errors import ConfigError
from convoscope.items import Item
from convoscope.judges import RaterKind
from convoscope.runs import BESIDE_STORE

BASELINE_PREFIX = "baseline:"


@dataclass
class _Judged:
    """One judge's verdicts, as judging left them."""

    name: str
    rater: str
    verdicts: list[Any]
    members: list[Any] = field(default_factory=list)
    probes: list[Any] = field(default_factory=list)
    position: list[tuple[str, Any]] = field(default_factory=list)
    wall_time_s: float = 0.0
    new_calls: int = 0
    missing: list[NotComputed] = field(default_factory=list)


def judge_card(judges: Sequence[Any], items: Sequence[Item] | str | Path, human: Sequence[Any] | str | Path,
               *, criteria: Sequence[Criterion], **options: Any) -> JudgeCard:
    """:func:`judge_card_async` for scripts, notebooks and the CLI."""
    from convoscope.runs import run_sync

    return run_sync(judge_card_async(judges, items, human, criteria=criteria, **options))


async def judge_card_async(
    judges: Sequence[Any], items: Sequence[Item] | str | Path, human: Sequence[Any] | str | Path, *,
    criteria: Sequence[Criterion], languages: Sequence[str] = (), store: str | Path = "convoscope.db",
    baselines: Sequence[str] = ("length", "tfidf"), repeats: int = 1,
    probes: bool | Sequence[Probe] = True,
    pairs: int = 1, families: Mapping[str, Sequence[str]] | None = None, n_resamples: int = 1000,
    seed: int = 0, confidence: float = 0.95, alpha: float = 0.05, alt_epsilon: float = 0.2,
    score: str = "value", thresholds: CardThresholds = DEFAULT_THRESHOLDS, mode: str = "auto",
    concurrency: int = 8, cache_path: str | Path | None = BESIDE_STORE, data_source: str | None = None,
    licence: str | None = None, intended_use: str | None = None, limits: str | None = None,
) -> JudgeCard:
    """A :class:`JudgeCard` for each of ``judges`` on ``items`` against people's ``human`` ratings.

    ``judges``: model specs (``"embedded"``, ``"openai:MODEL@URL"``), Python judges, or
    ``"baseline:length"`` / ``"baseline:tfidf"`` (a cheap baseline carded like a judge).
    Every verdict goes through the ``store``: a second card on the same store judges only what
    is missing. ``baselines`` are the rows beside each judge; ``repeats`` > 1 asks each judge
    that many times (self-consistency); ``probes`` judges the card's manipulation
    probes (``True``: all of :func:`card_probes`, or a list of them);
    ``pairs`` asks that many pairs of systems per context in both orders (position bias; 0:
    not asked); ``families`` maps a judge (as given) to the systems built on its model family
    (self-preference); ``cache_path`` is the model response cache as :func:`~convoscope.runs.judge`
    takes it (None: none). ``thresholds`` decide the plain-words verdict and are printed on the card.
    Bad input raises :class:`~convoscope.errors.ConfigError` (or ``ItemError``) before any model
    call.

    Example: ``judge_card(["embedded", "baseline:length"], "items.jsonl", "human.csv",
    criteria=select_criteria(files=["usr-overall.yaml"])).to_markdown()``.
    """
    item_list, humans, names = _inputs(items, human, criteria, languages, judges, repeats, pairs)
    options = dict(n_resamples=n_resamples, confidence=confidence, seed=seed, alpha=alpha,
                   alt_epsilon=alt_epsilon, score=score, repeats=repeats)
    # Repeats of one judge are pooled by their median: with two repeats a majority ties whenever
    # they differ, and a tie is left unscored (docs/kpi-and-options.md), which would drop the item.
    run_options: dict[str, Any] = dict(store=store, mode=mode, concurrency=concurrency, repeats=repeats,
                                       cache_path=cache_path, **({"pool": "median"} if repeats > 1 else {}))
    chosen = tuple(card_probes()) if probes is True else tuple(probes or ())
    judged = [await _judge_one(judge, item_list, list(criteria), chosen, pairs, run_options)
              for judge in judges]
    carded = {j.rater for j in judged}
    reference = [r for name in baselines for r in _baseline(name, item_list, names) if r.rater not in carded]
    ratings = sections.exact([v for j in judged for v in j.verdicts], score) + reference
    by_language = len({item.language for item in item_list if item.language}) > 1 or bool(languages)
    rows = sections.agreement_rows(ratings, humans, criteria=names, by_language=by_language, options=options)
    families = families or {}
    reports = tuple(_report(j, rows, ratings, humans, item_list, names, languages,
                            families.get(j.name, ()), options, thresholds, chosen) for j in judged)
    rated = {str(r.item_id) for r in humans} & {item.id for item in item_list}
    settings = (("n_resamples", n_resamples), ("seed", seed), ("confidence", confidence), ("alpha", alpha),
                ("alt_epsilon", alt_epsilon), ("score", score), ("repeats", repeats), ("pairs", pairs),
                ("probes", len(chosen)), ("baselines", tuple(baselines)))
    origin = _provenance(judges, judged, criteria, dict(data_source=data_source, licence=licence,
                                                         intended_use=intended_use, limits=limits))
    return JudgeCard(reports, tuple(names), tuple(languages) or _languages(item_list), len(item_list),
                     len(rated), len({str(r.rater) for r in humans}), thresholds, settings,
                     provenance=origin)


def _provenance(judges: Sequence[Any], judged: list[_Judged], criteria: Sequence[Criterion],
                stated: dict[str, str | None]) -> Provenance:
    """The card's provenance; the prompt hash covers what decides a judge's prompt: its settings
    (a spec string, or a built judge's ``identity()``), the criteria's text and convoscope's version
    (whose templates render the prompt)."""
    import datetime
    import hashlib
    import json

    from convoscope import __version__

    rows = []
    for judge, found in zip(judges, judged, strict=True):
        described = getattr(judge, "identity", None)
        identity = judge if isinstance(judge, str) else described() if callable(described) else found.rater
        text = json.dumps({"judge": identity, "criteria": [c.model_dump(mode="json") for c in criteria],
                           "convoscope": __version__}, sort_keys=True, default=str)
        served = sorted({str(v.served_model) for v in found.verdicts if getattr(v, "served_model", None)})
        rows.append((found.name, ", ".join(served) or "not reported",
                     hashlib.sha256(text.encode()).hexdigest()[:16]))
    created = datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat()
    extra = {key: value for key, value in stated.items() if value is not None}
    return Provenance(__version__, created, tuple(rows), **extra)


def _inputs(items: Any, human: Any, criteria: Sequence[Criterion], languages: Sequence[str],
            judges: Sequence[Any], repeats: int, pairs: int) -> tuple[list[Item], list[Any], list[str]]:
    """Everything read and checked before the first model call."""
    from convoscope.analysis import read_ratings
    from convoscope.items import read_items

    if not judges:
        raise ConfigError("name at least one judge to card")
    if not criteria:
        raise ConfigError("name at least one criterion (the people's criterion names)")
    if repeats < 1 or pairs < 0:
        raise ConfigError("repeats must be at least 1 and pairs at least 0")
    item_list = read_items(items) if isinstance(items, str | Path) else list(items)
    humans = read_ratings(human) if isinstance(human, str | Path) else list(human)
    names = [c.name for c in criteria]
    rated = {str(r.criterion) for r in humans}
    for name in names:
        if name not in rated:
            raise ConfigError(f"criterion {name!r}: people rated none (their criteria: {sorted(rated)})")
    ids = {item.id for item in item_list}
    if not any(str(r.item_id) in ids for r in humans):
        raise ConfigError("no item the people rated is among the items: their item ids do not match")
    for judge in judges:
        if isinstance(judge, str) and judge.startswith(BASELINE_PREFIX):
            _baseline_name(judge)
    return item_list, humans, names


def _baseline_name(spec: str) -> str:
    from convoscope.baselines import BASELINES

    name = spec[len(BASELINE_PREFIX):]
    if name not in BASELINES:
        raise ConfigError(f"judge {spec!r}: the baselines are {', '.join(BASELINES)}")
    return name


def _baseline(name: str, items: list[Item], criteria: list[str]) -> list[Any]:
    from convoscope.baselines import baseline_ratings

    return baseline_ratings(items, [name], criteria)


async def _judge_one(judge: Any, items: list[Item], criteria: list[Criterion], probes: tuple[Probe, ...],
                     pairs: int, run_options: dict[str, Any]) -> _Judged:
    from convoscope.runs import judge_async

    names = [c.name for c in criteria]
    if isinstance(judge, str) and judge.startswith(BASELINE_PREFIX):
        name = _baseline_name(judge)
        ratings = _baseline(name, items, names)
        found = _Judged(judge, ratings[0].rater, ratings,
                        probes=_baseline(name, probe_items(probes), names) if probes else [])
        found.missing.append(NotComputed("position", "a baseline gives no pairwise answer"))
        return found
    started = time.monotonic()
    # one run for the items and the probes: one model load, and the probes asked as the items are
    result = await judge_async([*items, *probe_items(probes)], criteria, judge, **run_options)
    elapsed = time.monotonic() - started
    rater = result.verdicts[0].rater if result.verdicts else str(judge)
    own, probed = _split_probes(result.verdicts)
    found = _Judged(str(judge) if isinstance(judge, str) else rater, rater, own,
                    _split_probes(result.member_verdicts)[0], probes=probed, wall_time_s=elapsed,
                    new_calls=result.summary.model_calls)
    await _position(found, judge, items, criteria, pairs, run_options)
    return found


def _split_probes(verdicts: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """The verdicts on the card's items, and those on its probes."""
    probed = [v for v in verdicts if str(v.item_id).startswith(PROBE_PREFIX)]
    return [v for v in verdicts if not str(v.item_id).startswith(PROBE_PREFIX)], probed


async def _position(found: _Judged, judge: Any, items: list[Item], criteria: list[Criterion], pairs: int,
                    run_options: dict[str, Any]) -> None:
    from convoscope.pairwise import judge_pairs_async, make_pairs

    if pairs == 0:
        found.missing.append(NotComputed("position", "not asked (pairs = 0)"))
        return
    try:
        if not make_pairs(items, per_context=pairs):
            found.missing.append(NotComputed("position", "no context is answered by two systems"))
            return
        for criterion in criteria:
            report = await judge_pairs_async(items, criterion, [judge], mode=run_options["mode"],
                                             store=run_options["store"], per_context=pairs, n_resamples=0,
                                             concurrency=run_options["concurrency"])
            found.position.extend((criterion.name, section.bias) for section in report.by_judge.values())
    except ConfigError as error:
        found.missing.append(NotComputed("position", str(error)))


def _report(judged: _Judged, rows: list[Any], ratings: list[Any], humans: list[Any], items: list[Item],
            criteria: list[str], languages: Sequence[str], family: Sequence[str], options: dict[str, Any],
            thresholds: CardThresholds, probes: tuple[Probe, ...]) -> JudgeReport:
    from convoscope.runs import self_consistency

    agreement, missing = sections.agreements(rows, judged.rater, languages)
    system_rows, system_missing = sections.systems(ratings, humans, items, judged.rater, criteria=criteria,
                                                   options=options)
    scored = sections.exact(judged.verdicts, options["score"])  # exact values, as at item level
    bias, bias_missing = sections.bias(scored, humans, items, criteria=criteria, family=family,
                                       options=options)
    worth, worth_missing = sections.labels_worth(scored, humans, criteria=criteria,
                                                 confidence=options["confidence"])
    consistency = tuple(self_consistency(judged.members))
    if not consistency:
        missing.append(NotComputed("consistency", _why_no_repeats(judged.rater, options["repeats"])))
    manipulation = _manipulation(judged, probes, missing)
    calls = judged.members or judged.verdicts
    is_baseline = RaterKind.of(judged.rater) is RaterKind.BASELINE
    if is_baseline:
        missing.append(NotComputed("cost", "a baseline makes no model call"))
    report = JudgeReport(judged.name, judged.rater, agreement, system_rows, bias, tuple(judged.position),
                         manipulation, consistency, sections.unscored(judged.verdicts), len(judged.verdicts),
                         None if is_baseline else sections.cost(calls, len(items), judged.wall_time_s,
                                                                judged.new_calls),
                         worth, tuple([*judged.missing, *missing, *system_missing, *bias_missing,
                                       *worth_missing]))
    found = findings(report, thresholds)
    return replace(report, findings=found, verdict=paragraph(report, found))


def _why_no_repeats(rater: str, repeats: int) -> str:
    if RaterKind.of(rater) is RaterKind.BASELINE:
        return "a baseline is deterministic"
    if repeats == 1:
        return "each item was judged once (repeats = 1)"
    return "the judge gave no repeated verdicts (a Python judge is asked once: it answers the same each time)"


def _manipulation(judged: _Judged, probes: tuple[Probe, ...],
                  missing: list[NotComputed]) -> Manipulation | None:
    if not judged.probes:
        missing.append(NotComputed("manipulation", "probes not asked"))
        return None
    pairs, above, kinds, languages = manipulation_counts(judged.probes, probes)
    if not pairs:
        missing.append(NotComputed("manipulation", "no probe and its clean answer were both scored"))
        return None
    return Manipulation(pairs, above, tuple((k, *v) for k, v in sorted(kinds.items())),  # type: ignore[misc]
                        tuple((k, *v) for k, v in sorted(languages.items())))  # type: ignore[misc]


def _languages(items: list[Item]) -> tuple[str, ...]:
    return tuple(sorted({item.language for item in items if item.language}))
