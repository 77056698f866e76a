"""Per-language statistics of simulated dialogues (the columns of seed 001, table 3, and more).

Read from the items ``synth dialogues`` writes, so they can be computed for any file later:
dialogues kept and filtered, turns, utterance length (characters for Chinese and Japanese, words
otherwise; all turns and user turns alone), MTLD per dialogue averaged, the judge's acceptance
rate and regenerations per user turn, and model calls and tokens. The opening turn is shared by
all chatbots of a context, so its cost is counted once.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from statistics import fmean
from typing import Any

from pydantic import BaseModel, ConfigDict

from convoscope.errors import ConfigError
from convoscope.items import Item
from convoscope.synth._mtld import counts_characters, mtld, tokens, utterance_length


class LanguageStats(BaseModel):
    """One row of the statistics table. NaN where there is nothing to average."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    language: str
    dialogues: int
    filtered: int
    avg_turns: float
    avg_utterance_length: float
    avg_user_utterance_length: float
    length_unit: str
    mtld: float
    judge_acceptance: float
    regenerations_per_turn: float
    model_calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int


def synth_stats(items: Iterable[Item], *, include_filtered: bool = False) -> list[LanguageStats]:
    """Statistics per language over the items of one or more ``synth dialogues`` files.

    Filtered dialogues are counted in ``filtered`` and their model usage is included (it was
    spent); the text statistics use kept dialogues only unless ``include_filtered``.
    """
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        groups[item.language or "unknown"].append(item)
    return [_language_row(language, group, include_filtered) for language, group in sorted(groups.items())]


def _synth(item: Item) -> dict[str, Any]:
    synth = item.meta.get("synth")
    if not isinstance(synth, dict):
        raise ConfigError(f"item {item.id!r} has no meta.synth: not written by 'convoscope synth dialogues'")
    return synth


def _language_row(language: str, items: list[Item], include_filtered: bool) -> LanguageStats:
    kept = [item for item in items if _synth(item)["filter"]["passed"]]
    texts = items if include_filtered else kept
    lengths = [utterance_length(turn.text, language) for item in texts for turn in item.context]
    user_lengths = [utterance_length(turn.text, language) for item in texts for turn in item.context
                    if turn.speaker == "user"]
    diversity = [mtld(words) for item in texts
                 if (words := [w for turn in item.context for w in tokens(turn.text, language)])]
    attempts = [attempt for item in items for log in _synth(item)["user_turns"]
                for attempt in log["attempts"] if attempt["checked_by"] == "judge"]
    logs = [log for item in items for log in _synth(item)["user_turns"]]
    usage = _usage(items)
    return LanguageStats(
        language=language, dialogues=len(kept), filtered=len(items) - len(kept),
        avg_turns=_mean([len(item.context) for item in texts]),
        avg_utterance_length=_mean(lengths), avg_user_utterance_length=_mean(user_lengths),
        length_unit="characters" if counts_characters(language) else "words",
        mtld=_mean(diversity),
        judge_acceptance=_mean([1.0 if attempt["accepted"] else 0.0 for attempt in attempts]),
        regenerations_per_turn=_mean([len(log["attempts"]) - 1 for log in logs]),
        model_calls=usage["calls"], cache_hits=usage["cache_hits"],
        prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"])


def _usage(items: list[Item]) -> dict[str, int]:
    totals = dict.fromkeys(("calls", "cache_hits", "prompt_tokens", "completion_tokens"), 0)
    openings: set[str | None] = set()
    for item in items:
        synth = _synth(item)
        roles = [synth["usage"]]
        opening = synth.get("opening") or {}
        if opening.get("key") not in openings:
            openings.add(opening.get("key"))
            roles.append(opening.get("usage") or {})
        for by_role in roles:
            for entry in by_role.values():
                for name in totals:
                    totals[name] += int(entry.get(name, 0))
    return totals


def _mean(values: list[float] | list[int]) -> float:
    return fmean(values) if values else math.nan


def stats_table(rows: list[LanguageStats]) -> str:
    """A Markdown table of the statistics, for reports and benchmark output."""
    header = ("| language | dialogues | filtered | avg turns | avg utt. len | avg user utt. len | unit "
              "| MTLD | judge accept | regen / turn | calls | cache hits | prompt tok | completion tok |")
    lines = [header, "|" + "---|" * 14]
    for row in rows:
        lines.append(
            f"| {row.language} | {row.dialogues} | {row.filtered} | {row.avg_turns:.2f} | "
            f"{row.avg_utterance_length:.1f} | {row.avg_user_utterance_length:.1f} | {row.length_unit} | "
            f"{row.mtld:.1f} | {row.judge_acceptance:.2f} | {row.regenerations_per_turn:.2f} | "
            f"{row.model_calls} | {row.cache_hits} | {row.prompt_tokens} | {row.completion_tokens} |")
    return "\n".join(lines)
