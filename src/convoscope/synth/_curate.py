"""Balanced benchmark curation (seed 001, appendix E.1), per language.

Input: dialogues (items) and the verdicts ``convoscope judge --suite dialogue-issues`` wrote for
them. Excluded: dialogues the synth filters flagged, dialogues without an overall score, and
dialogues whose only issue is ``uninterpretable`` because the chatbot mixed languages (trivial to
catch with rules, so of little use for meta-evaluation).

1. For every user model x chatbot pair, one issue-free dialogue drawn at random among those whose
   overall score reaches the bar (the top of the scale unless told: the seed draws among the
   issue-free dialogues scoring 5); ``clean_pick="best"`` takes one with the best score instead.
2. Then round-robin over the issue types: pick a dialogue with that issue whose overall score and
   chatbot are the least represented so far (among those the candidates offer); when no candidate
   has both, the chatbot requirement is dropped (the score one can always be met). Ties are broken by a
   seeded RNG. An issue with no candidates left drops out of the rotation; when all have, the
   benchmark is filled with issue-free dialogues by the same balance rule.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from convoscope.errors import ConfigError, LocatedError
from convoscope.items import Item
from convoscope.judges import RaterKind, Verdict, read_verdicts
from convoscope.synth._filters import check_user_language

DEFAULT_ISSUES = ("uninterpretable", "unsafe", "lacks-empathy", "lacks-commonsense", "repetitive",
                  "incoherent", "irrelevant", "non-factual")
_MIXING_WORDS = re.compile(
    r"language|script|english|chinese|mandarin|japanese|korean|spanish|portuguese|french|german|"
    r"italian|russian|mix|switch|translat|foreign", re.IGNORECASE)


class Candidate(BaseModel):
    """A dialogue as curation sees it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    language: str
    user: str
    chatbot: str
    issues: tuple[str, ...]
    overall: int | None
    language_mix_only: bool = False
    filtered: bool = False


class LanguageSummary(BaseModel):
    """How balanced one language's benchmark came out, and what was left out of its pool."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    language: str
    selected: int
    pool: int
    excluded: dict[str, int] = Field(default_factory=dict)
    by_chatbot: dict[str, int] = Field(default_factory=dict)
    by_overall: dict[str, int] = Field(default_factory=dict)
    by_issue: dict[str, int] = Field(default_factory=dict)
    issue_free: int = 0
    pairs_without_clean_dialogue: tuple[str, ...] = ()
    relaxed: dict[str, int] = Field(default_factory=dict)


def read_curation_verdicts(path: str | Path) -> list[Verdict]:
    """The verdicts curation reads: a JSONL verdict file (see :func:`convoscope.judges.read_verdicts`)."""
    if Path(path).suffix.lower() != ".jsonl":
        raise LocatedError(path, "curation reads the verdicts as JSONL: write them to a .jsonl file")
    return read_verdicts(path)


def pick_rater(verdicts: list[Verdict], rater: str | None = None) -> str:
    """The rater whose verdicts curation uses: the one given, the only one, or the only panel."""
    raters = sorted({verdict.rater for verdict in verdicts})
    if rater is not None:
        if rater not in raters:
            raise ConfigError(f"rater {rater!r} is not in the verdicts (there: {', '.join(raters)})")
        return rater
    if len(raters) == 1:
        return raters[0]
    panels = [name for name in raters if RaterKind.of(name) is RaterKind.PANEL]
    if len(panels) == 1:
        return panels[0]
    raise ConfigError(f"the verdicts hold several raters ({', '.join(raters)}): choose one with --rater "
                      "(rater=… from Python)")


def _present(verdict: Verdict, criteria: dict[str, Any]) -> bool:
    """Is the issue there? The label is mapped to 1 / 0 the way the issue's criterion says
    (``present`` / ``absent`` for dialogue-issues; yes / no, true / false, fulfilled / not
    fulfilled as well), so human labels kept as words count like a judge's stored values; a pooled
    mean (a panel with ``--pool mean``) counts from one half up."""
    from convoscope.analysis import label_value

    try:
        value = label_value(criteria.get(verdict.criterion), verdict.value)
    except ValueError as error:
        raise ConfigError(f"verdict on {verdict.item_id!r} by {verdict.rater}: {error}") from None
    if isinstance(value, bool | int | float):
        return value >= 0.5
    return False


def _issue_criteria(issue_types: tuple[str, ...]) -> dict[str, Any]:
    from convoscope.criteria import load_suite

    return {c.name: c for c in load_suite("dialogue-issues").criteria if c.name in issue_types}


def candidates(items: Iterable[Item], verdicts: list[Verdict], *, rater: str | None = None,
               issue_types: tuple[str, ...] = DEFAULT_ISSUES, overall: str = "overall") -> list[Candidate]:
    """One candidate per dialogue from its issue and overall verdicts by one rater."""
    chosen = pick_rater(verdicts, rater) if verdicts else None
    by_item: dict[str, dict[str, Verdict]] = defaultdict(dict)
    for verdict in verdicts:
        if verdict.rater == chosen:
            by_item[verdict.item_id][verdict.criterion] = verdict
    found: list[Candidate] = []
    criteria = _issue_criteria(issue_types)
    for item in items:
        mine = by_item.get(item.id, {})
        issues = tuple(name for name in issue_types if name in mine and _present(mine[name], criteria))
        score = mine[overall].value if overall in mine else None
        given = item.meta.get("synth")
        synth = given if isinstance(given, dict) else {}
        found.append(Candidate(
            id=item.id, language=item.language or "unknown", user=str(synth.get("user", "unknown")),
            chatbot=item.system or "unknown", issues=issues,
            overall=round(score) if isinstance(score, int | float) and not isinstance(score, bool) else None,
            language_mix_only=issues == ("uninterpretable",) and _mixes_languages(item, mine),
            filtered=not synth.get("filter", {}).get("passed", True)))
    return found


def _mixes_languages(item: Item, verdicts: dict[str, Verdict]) -> bool:
    """The uninterpretable flag is about mixed languages: the judge's reason says so, or the
    chatbot's side is not in the dialogue's language."""
    reason = " ".join(filter(None, (verdicts["uninterpretable"].reason, verdicts["uninterpretable"].raw)))
    if _MIXING_WORDS.search(reason):
        return True
    if not item.language:
        return False
    return not check_user_language(item.context, item.language, speaker="chatbot").passed


CleanPick = Literal["random", "best"]


def curate(items: list[Item], verdicts: list[Verdict], *, per_language: int = 100, seed: int = 0,
           rater: str | None = None, issue_types: tuple[str, ...] = DEFAULT_ISSUES,
           overall: str = "overall", clean_pick: CleanPick = "random",
           clean_min_overall: int | None = None) -> tuple[list[Item], list[LanguageSummary]]:
    """The balanced benchmark (items, with ``meta.curation``) and a summary per language.

    ``clean_pick``: "random" draws each pair's issue-free dialogue among those scoring at least
    ``clean_min_overall`` (default: the top of the overall scale), as seed 001 does; "best" takes
    one with the best overall score. A pair with no issue-free dialogue that qualifies is listed in
    the summary's ``pairs_without_clean_dialogue``."""
    if per_language < 1:
        raise ConfigError("per_language must be at least 1")
    bar = _clean_bar(clean_pick, clean_min_overall, overall)
    by_id = {item.id: item for item in items}
    if verdicts and not by_id.keys() & {verdict.item_id for verdict in verdicts}:
        raise ConfigError("no verdict is about any of these dialogues (item ids differ): judge this "
                         "dialogues file with 'convoscope judge ... --suite dialogue-issues'")
    pool = candidates(items, verdicts, rater=rater, issue_types=issue_types, overall=overall)
    chosen: list[Item] = []
    summaries: list[LanguageSummary] = []
    for language in sorted({candidate.language for candidate in pool}):
        mine = [candidate for candidate in pool if candidate.language == language]
        rng = random.Random(f"{seed}:{language}")
        picks, summary = _curate_language(language, mine, per_language, rng, issue_types, bar)
        summaries.append(summary)
        for candidate, stage, relaxed in picks:
            item = by_id[candidate.id]
            note = {"stage": stage, "issues": list(candidate.issues), "overall": candidate.overall,
                    "relaxed": relaxed}
            chosen.append(item.model_copy(update={"meta": {**item.meta, "curation": note}}))
    return chosen, summaries


def _clean_bar(clean_pick: str, clean_min_overall: int | None, overall: str) -> int | None:
    """The overall score an issue-free pick must reach (None: the best of each pair is taken)."""
    if clean_pick not in ("random", "best"):
        raise ConfigError(f"clean_pick must be 'random' or 'best', not {clean_pick!r}")
    if clean_pick == "best":
        return None
    from convoscope.criteria import load_suite

    criterion = next((c for c in load_suite("dialogue-issues").criteria if c.name == overall), None)
    low, high = (criterion.scale.minimum, criterion.scale.maximum) if criterion else (None, None)
    if clean_min_overall is None:
        if high is None:
            raise ConfigError(f"the scale of {overall!r} has no top: give clean_min_overall")
        return int(high)
    if low is not None and high is not None and not low <= clean_min_overall <= high:
        raise ConfigError(f"clean_min_overall must be between {low:g} and {high:g} (the scale of "
                          f"{overall!r}), not {clean_min_overall}")
    return clean_min_overall


def _clean_picks(eligible: list[Candidate], size: int, rng: random.Random, bar: int | None
                 ) -> tuple[list[tuple[Candidate, str, list[str]]], list[str]]:
    """Stage 1: one issue-free dialogue per user x chatbot pair, and the pairs that had none."""
    picks: list[tuple[Candidate, str, list[str]]] = []
    missing: list[str] = []
    for user, chatbot in sorted({(c.user, c.chatbot) for c in eligible}):
        clean = [c for c in eligible if (c.user, c.chatbot) == (user, chatbot) and not c.issues]
        if bar is not None:
            clean = [c for c in clean if (c.overall or 0) >= bar]
        if not clean:
            missing.append(f"{user} x {chatbot}")
            continue
        if len(picks) < size:
            if bar is None:
                best = max(c.overall or 0 for c in clean)
                picks.append((rng.choice([c for c in clean if c.overall == best]), "clean-top", []))
            else:
                picks.append((rng.choice(clean), "clean-random", []))
    return picks, missing


def _curate_language(language: str, pool: list[Candidate], size: int, rng: random.Random,
                     issue_types: tuple[str, ...], bar: int | None
                     ) -> tuple[list[tuple[Candidate, str, list[str]]], LanguageSummary]:
    excluded: Counter[str] = Counter()
    eligible: list[Candidate] = []
    for candidate in sorted(pool, key=lambda c: c.id):
        reason = ("filtered" if candidate.filtered else "no_overall" if candidate.overall is None
                  else "language_mix_only" if candidate.language_mix_only else None)
        if reason:
            excluded[reason] += 1
        else:
            eligible.append(candidate)
    picks, missing = _clean_picks(eligible, size, rng, bar)
    taken = {pick.id for pick, _, _ in picks}
    rotation = [issue for issue in issue_types if any(issue in c.issues for c in eligible)]
    relaxed: Counter[str] = Counter()
    while len(picks) < size:
        stage, options = _next_options(rotation, eligible, taken)
        if not options:
            break
        pick, dropped = balanced_pick(options, [p[0] for p in picks], rng)
        picks.append((pick, stage, dropped))
        taken.add(pick.id)
        relaxed.update(dropped)
    chosen = [p[0] for p in picks]
    summary = LanguageSummary(
        language=language, selected=len(chosen), pool=len(eligible), excluded=dict(excluded),
        by_chatbot=dict(sorted(Counter(c.chatbot for c in chosen).items())),
        by_overall={str(k): v for k, v in sorted(Counter(c.overall for c in chosen).items())},
        by_issue={issue: sum(issue in c.issues for c in chosen) for issue in issue_types},
        issue_free=sum(not c.issues for c in chosen), pairs_without_clean_dialogue=tuple(missing),
        relaxed=dict(relaxed))
    return picks, summary


def _next_options(rotation: list[str], eligible: list[Candidate],
                  taken: set[str]) -> tuple[str, list[Candidate]]:
    """The next issue in the rotation that still has candidates (rotating it to the back)."""
    while rotation:
        issue = rotation.pop(0)
        options = [c for c in eligible if c.id not in taken and issue in c.issues]
        if options:
            rotation.append(issue)
            return f"issue:{issue}", options
    return "issue-free", [c for c in eligible if c.id not in taken and not c.issues]


def balanced_pick(options: list[Candidate], chosen: list[Candidate],
                  rng: random.Random) -> tuple[Candidate, list[str]]:
    """The option whose overall score and chatbot are least represented in ``chosen``, and which
    requirement had to be dropped to find one: when no option fits both, the score balance is kept
    and the chatbot requirement dropped (``["chatbot"]``)."""
    scores = Counter(c.overall for c in chosen)
    bots = Counter(c.chatbot for c in chosen)
    low_score = min(scores[c.overall] for c in options)
    low_bot = min(bots[c.chatbot] for c in options)
    fits_score = [c for c in options if scores[c.overall] == low_score]
    both = [c for c in fits_score if bots[c.chatbot] == low_bot]
    if both:
        return rng.choice(both), []
    return rng.choice(fits_score), ["chatbot"]
