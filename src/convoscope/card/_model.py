"""The judge card's data: frozen, documented, and the JSON schema's source of truth.

Every number on a card is a field of a result object that a library function returned
(:class:`~convoscope.analysis.MetaevalRow`, :class:`~convoscope.analysis.SystemRow`,
:class:`~convoscope.estimate.BiasReport`, :class:`~convoscope.runs.SelfConsistency`,
:class:`~convoscope.estimate.Estimate`...), kept as it came. A section that could not be
computed is a :class:`NotComputed` with the reason, never a silent gap.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from convoscope.analysis import Decision, MetaevalRow, SystemRow
from convoscope.estimate import BiasReport, Estimate
from convoscope.pairwise import JudgePositionBias
from convoscope.runs import SelfConsistency

SCHEMA_VERSION = "1"
SECTIONS = ("agreement", "systems", "bias", "position", "manipulation", "consistency", "unscored",
            "cost", "labels_worth")


@dataclass(frozen=True)
class CardThresholds:
    """Every threshold the plain-words verdict reads. The card prints them, so a reader can
    disagree with a rule and see what it would change. Correlations are Spearman's ρ with the
    mean human rating (item level) or with people's system means (system level)."""

    min_items: int = 30  # fewer rated items: "too few to say" (the alt-test needs 30 per annotator)
    item_rho: float = 0.4  # ρ at which a judge may score single items (moderate agreement)
    baseline_margin: float = 0.05  # ρ must beat the best cheap baseline by this much
    system_rho: float = 0.7  # system-level ρ at which a judge may rank systems
    weak_rho: float = 0.3  # a ranking claim needs its interval above this (weak agreement excluded)
    min_systems: int = 5  # fewer: even a perfect ranking is within chance (exact p 2/4! = .083 at 4)
    ceiling_margin: float = 0.0  # flagged: the interval of the judge's lead over the ceiling lies above this
    max_manipulation_share: float = 0.1  # share of probes scored above their clean answer
    max_position_flips: float = 0.2  # share of pairs whose winner changed with the order
    max_unscored_share: float = 0.05
    min_self_agreement: float = 0.8  # share of pairs of an item's repeats that agree, over items
    max_length_rho: float = 0.3  # |ρ| of residuals with length (and p < alpha) counts as a lean
    max_language_gap: float = 0.5  # |mean residual| of a language, in standard deviations (p < alpha)
    max_self_preference: float = 0.3  # own family's mean residual above the others, in SDs (p < alpha)
    alpha: float = 0.05


DEFAULT_THRESHOLDS = CardThresholds()
THRESHOLD_MEANINGS = {
    "min_items": "fewer items rated by both the judge and people: too few to say anything",
    "item_rho": "Spearman ρ with the people's mean from which the judge may score single items "
                "(and its interval must exclude 0)",
    "baseline_margin": "ρ must beat the best cheap baseline (length, TF-IDF) by at least this",
    "system_rho": "system-level ρ from which the judge may rank systems",
    "weak_rho": "the system-level ρ interval must lie above this (weak agreement excluded) to rank systems",
    "min_systems": "fewer systems: cannot tell whether the judge ranks them (with four, even a perfect "
                   "ranking has exact permutation p = 2/4! = .083)",
    "ceiling_margin": "a judge is flagged (leakage or a bad ceiling) when the interval of its lead over "
                      "the people's leave-one-out ρ — judge and each person against the others' mean — "
                      "lies above this",
    "max_manipulation_share": "share of probes scored above their clean answer the judge may have",
    "max_position_flips": "share of pairs asked in both orders whose winner may follow the order",
    "max_unscored_share": "share of unscored verdicts the judge may have",
    "min_self_agreement": "share of pairs of an item's repeats that must agree (with --repeats)",
    "max_length_rho": "largest |ρ| of residuals with answer length before it counts as a lean",
    "max_language_gap": "largest |mean residual| (SD) of one language before it counts as a gap",
    "max_self_preference": "largest residual (SD) on the judge's own family's systems",
    "alpha": "significance level of the bias tests",
}


@dataclass(frozen=True)
class NotComputed:
    """A section (or one criterion of it) the card could not compute, and why."""

    section: str
    reason: str
    criterion: str | None = None


@dataclass(frozen=True)
class Agreement:
    """One criterion (all languages, or one) for one judge: its :func:`~convoscope.analysis.metaeval`
    row — correlations with intervals, kappa, the alt-test, and the human ceiling in
    ``judge.humans`` — beside the baselines' rows on the same items."""

    criterion: str
    language: str | None  # None: every language together
    judge: MetaevalRow
    baselines: tuple[MetaevalRow, ...] = ()

    @property
    def replaces_annotator(self) -> str:
        """The alternative annotator test's answer: ``yes``, ``no``, ``not enough annotators`` (it
        needs three) or ``not tested`` (a baseline; or too few items per annotator, said in the
        card's Not computed list)."""
        from convoscope.judges import RaterKind

        result = self.judge.alt_test
        if self.judge.humans.n_humans < 3:
            return "not enough annotators"
        if result is None:
            baseline = RaterKind.of(self.judge.judge) is RaterKind.BASELINE
            return "not tested (a baseline has no scale)" if baseline else "not tested (see Not computed)"
        decision = result.decision
        return {"pass": "yes", "fail": "no"}.get(decision.outcome, f"cannot tell ({decision.reason})")

    @property
    def best_baseline(self) -> MetaevalRow | None:
        rated = [row for row in self.baselines if row.spearman is not None]
        return max(rated, key=lambda row: row.spearman.estimate) if rated else None  # type: ignore[union-attr]


@dataclass(frozen=True)
class Manipulation:
    """The card's probe set (answers that address or imitate the grader, each with its clean
    twin): ``above`` of ``pairs`` probe × criterion pairs scored higher than the clean answer."""

    pairs: int
    above: int
    by_class: tuple[tuple[str, int, int], ...]  # (class, pairs, above)
    by_language: tuple[tuple[str, int, int], ...]

    @property
    def share(self) -> float | None:
        return self.above / self.pairs if self.pairs else None


@dataclass(frozen=True)
class Cost:
    """What judging cost, summed over the judge's verdicts on the card's items (every repeat
    counts). ``cost`` is None when no verdict carried a price; ``model_seconds`` sums each call's
    latency (what one call at a time would take); ``wall_time_s`` is this invocation's, and
    ``new_calls`` the model calls it made (a card re-run on the same store makes none)."""

    items: int
    verdicts: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    model_seconds: float | None
    wall_time_s: float
    new_calls: int = 0  # model calls this card made (items and probes): 0 when the store had them all

    def per_1000_items(self) -> dict[str, float | None]:
        scale = 1000 / self.items if self.items else math.nan
        return {"calls": self.calls * scale, "prompt_tokens": self.prompt_tokens * scale,
                "completion_tokens": self.completion_tokens * scale,
                "cost": None if self.cost is None else self.cost * scale,
                "model_seconds": None if self.model_seconds is None else self.model_seconds * scale}


@dataclass(frozen=True)
class LabelsWorth:
    """Prediction-powered inference (:func:`~convoscope.estimate.ppi_mean`) of people's mean on
    ``criterion``: ``estimate.effective_n`` is how many human labels alone would give an interval
    as narrow as ``estimate.n_human`` labels with the judge on ``estimate.n_judged`` items."""

    criterion: str
    estimate: Estimate
    unlabelled: str  # which items stood for the unlabelled pool

    @property
    def per_label(self) -> float:
        """Human labels one label is worth with the judge beside it (1: the judge adds nothing)."""
        return self.estimate.effective_n / self.estimate.n_human


@dataclass(frozen=True)
class Finding:
    """One sentence of the verdict and the rule (a :class:`CardThresholds` field) behind it."""

    rule: str
    text: str
    criterion: str | None = None
    language: str | None = None
    good: bool = False
    decision: Decision | None = None  # the rule's outcome and numbers, when the finding is a claim

    @property
    def cannot_tell(self) -> bool:
        return self.decision is not None and self.decision.outcome == "cannot_tell"


@dataclass(frozen=True)
class JudgeReport:
    """Everything the card says about one judge."""

    judge: str  # as given (a spec, or a Python judge's rater)
    rater: str  # the rater name its verdicts carry
    agreement: tuple[Agreement, ...]
    systems: tuple[SystemRow, ...]
    bias: tuple[BiasReport, ...]
    position: tuple[tuple[str, JudgePositionBias], ...]  # (criterion, flips)
    manipulation: Manipulation | None
    consistency: tuple[SelfConsistency, ...]
    unscored: tuple[tuple[str, int], ...]  # (reason, verdicts)
    verdicts: int
    cost: Cost | None
    labels_worth: tuple[LabelsWorth, ...]
    not_computed: tuple[NotComputed, ...]
    findings: tuple[Finding, ...] = ()
    verdict: str = ""

    @property
    def unscored_share(self) -> float | None:
        return sum(n for _, n in self.unscored) / self.verdicts if self.verdicts else None

    def missing(self, section: str) -> tuple[NotComputed, ...]:
        return tuple(entry for entry in self.not_computed if entry.section == section)


DEFAULT_INTENDED_USE = ("deciding whether an automatic judge may stand in for people on these criteria, "
                        "languages and kinds of response, and for what: scoring items, ranking systems")
DEFAULT_LIMITS = ("measured on the items and people named here only; a new domain, language, prompt or "
                  "model version needs a new card; agreement with people is not correctness")


@dataclass(frozen=True)
class Provenance:
    """Where a card comes from, as a model card states it: the convoscope version and the time
    it was made, per judge the model version the server reported and a hash of what decides its
    prompt (the judge's settings, the criteria's text and the convoscope version), the data's
    source and licence, and the intended use and limits."""

    convoscope_version: str
    created: str  # UTC, ISO 8601
    judges: tuple[tuple[str, str, str], ...]  # (judge, served model(s) or "not reported", prompt hash)
    data_source: str | None = None
    licence: str | None = None
    intended_use: str = DEFAULT_INTENDED_USE
    limits: str = DEFAULT_LIMITS


@dataclass(frozen=True)
class JudgeCard:
    """How far each judge can be trusted, and for what. ``to_dict`` is the JSON schema
    (``schema_version``), ``to_markdown`` and ``to_html`` the readable forms."""

    judges: tuple[JudgeReport, ...]
    criteria: tuple[str, ...]
    languages: tuple[str, ...]
    n_items: int
    n_rated_items: int
    n_annotators: int
    thresholds: CardThresholds = DEFAULT_THRESHOLDS
    settings: tuple[tuple[str, Any], ...] = ()
    schema_version: str = SCHEMA_VERSION
    provenance: Provenance | None = None

    def to_dict(self) -> dict[str, Any]:
        data = _plain(dataclasses.asdict(self))
        data["settings"] = dict(self.settings)
        for report, entry in zip(self.judges, data["judges"], strict=True):
            entry["unscored_share"] = report.unscored_share
            entry["cost_per_1000_items"] = _plain(report.cost.per_1000_items()) if report.cost else None
            for agreement, row in zip(report.agreement, entry["agreement"], strict=True):
                row["replaces_annotator"] = agreement.replaces_annotator
            if report.manipulation is not None:
                entry["manipulation"]["share"] = report.manipulation.share
        return data

    def to_markdown(self) -> str:
        from convoscope.card._render import markdown

        return markdown(self)

    def to_html(self, *, title: str = "Judge card") -> str:
        from convoscope.card._render import html

        return html(self, title=title)


def _plain(value: Any) -> Any:
    """JSON-ready: NaN and infinity become None, tuples lists, keys strings."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):  # numpy scalars
        return _plain(value.item())
    return value
