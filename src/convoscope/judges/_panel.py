"""Panels: several judges on the same item, pooled into one verdict."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from convoscope.criteria import Criterion
from convoscope.errors import ConfigError
from convoscope.items import Item
from convoscope.judges._judge import Judge
from convoscope.judges._safety import safety_floor
from convoscope.judges._verdict import UnscoredReason, Verdict

PoolRule = Literal["majority", "mean", "median"]
TieRule = Literal["low", "high", "unscored"]


def pool_values(
    values: list[int | str],
    criterion: Criterion,
    *,
    rule: PoolRule = "majority",
    ties: TieRule = "unscored",
) -> int | float | str | None:
    """Pool scored member values into one.

    ``majority`` (the max-vote of InCA): the most frequent value. When several values share the
    top count, ``ties`` decides: ``unscored`` (the default) returns None, so a split panel takes
    no side; ``low`` takes the one earliest in scale order (for numeric scales the smallest
    number, so a 1-1 split on a binary KPI is "not fulfilled" and on an issue label "absent"),
    ``high`` the latest. Seed 004 pools three LLMs or five people, where a binary vote cannot
    tie; with two judges every disagreement is a tie, and breaking them low by default turned
    every one into "not fulfilled" (issue 38).
    ``mean`` / ``median`` need a numeric scale and return a float (median of an even count is
    the midpoint). Returns None for an empty list.
    """
    if not values:
        return None
    if rule == "majority":
        counts = Counter(values)
        top = max(counts.values())
        tied = [value for value in criterion.scale.values() if counts.get(value) == top]
        if criterion.scale.is_numeric():
            tied.sort()
        if len(tied) == 1:
            return tied[0]
        if ties == "unscored":
            return None
        return tied[0] if ties == "low" else tied[-1]
    if not criterion.scale.is_numeric():
        raise ConfigError(f"'{rule}' pooling needs a numeric scale; {criterion.name} has labels")
    import statistics  # here: its import (fractions, decimal) is a share of every judge's start-up

    numbers = [float(value) for value in values]
    return statistics.fmean(numbers) if rule == "mean" else float(statistics.median(numbers))


@dataclass(frozen=True)
class Panel:
    """Several judges pooled by a rule. Members run concurrently.

    The panel's own verdict carries the pooled value (unscored with ``no_quorum`` when fewer than
    ``quorum`` members scored), summed usage, and the member verdicts' values in
    ``distribution`` (the share of members per value). Member verdicts are returned too, via
    :meth:`judge_all`, so that each judge can be meta-evaluated on its own.
    """

    members: tuple[Judge, ...]
    rule: PoolRule = "majority"
    ties: TieRule = "unscored"
    quorum: int = 1
    name: str | None = None

    def __post_init__(self) -> None:
        if len(self.members) < 2:
            raise ConfigError("a panel needs at least two judges")
        if not 1 <= self.quorum <= len(self.members):
            raise ConfigError(f"quorum must be between 1 and {len(self.members)}")

    @property
    def rater(self) -> str:
        return f"panel:{self.name or self.rule}"

    def identity(self) -> dict[str, Any]:
        return {"kind": "panel", "rule": self.rule, "ties": self.ties, "quorum": self.quorum,
                "members": [member.identity() for member in self.members]}

    async def __call__(self, item: Item, criterion: Criterion) -> Verdict:
        pooled, _ = await self.judge_all(item, criterion)
        return pooled

    def task_key(self, item: Item, criterion: Criterion,
                 member_keys: Sequence[str] | None = None) -> str:
        """A hash of the pooling rule and the members' keys (each a hash of what it is asked)."""
        from convoscope.judges._judge import _digest, judge_key

        keys = list(member_keys) if member_keys is not None else [
            judge_key(member, item, criterion) for member in self.members]
        return _digest({"panel": {"rule": self.rule, "ties": self.ties, "quorum": self.quorum,
                                  "name": self.name}, "members": keys})

    async def judge_all(self, item: Item, criterion: Criterion,
                        requests: Sequence[Any] | None = None) -> tuple[Verdict, list[Verdict]]:
        """The pooled verdict and each member's verdict. ``requests``: the members' rendered
        requests (None where a member renders none), so that nothing is rendered twice."""
        calls = []
        for index, judge in enumerate(self.members):
            request = requests[index] if requests is not None else None
            calls.append(judge(item, criterion, request=request) if request is not None  # type: ignore[call-arg]
                         else judge(item, criterion))
        members = list(await asyncio.gather(*calls))
        return self.pool(item, criterion, members), members

    def pool(self, item: Item, criterion: Criterion, members: list[Verdict]) -> Verdict:
        """Pool the members. A member that failed (``model_error``) makes the pooled verdict a
        ``model_error`` too: a panel short of a judge is unfinished work, not a smaller panel."""
        scored = [verdict.value for verdict in members if verdict.value is not None]
        value = None
        reason: UnscoredReason | None = None
        expected = None
        failed = [verdict for verdict in members if verdict.transient]
        if failed:
            reason = "model_error"
        elif len(scored) >= self.quorum:
            pooled = pool_values(scored, criterion, rule=self.rule, ties=self.ties)
            value, expected = _split_pooled(pooled, criterion)
            reason = "tie" if value is None else None
        else:
            reason = "no_quorum"
        shares = Counter(str(v) for v in scored)
        tie_note = _tie_note(self.rule, self.ties, scored) if reason in (None, "tie") else ""
        pooled_verdict = Verdict(
            item_id=item.id, criterion=criterion.name, rater=self.rater, value=value,
            unscored_reason=reason, expected_value=expected, relevant=_majority_flag(members),
            distribution={key: count / len(scored) for key, count in shares.items()} or None,
            reason=f"{len(scored)} of {len(members)} judges scored: "
            + ", ".join(f"{v.rater}={v.value if v.value is not None else v.unscored_reason}"
                        for v in members) + tie_note,
            raw="; ".join(f"{v.rater}: {v.raw}" for v in failed) or None,
            prompt_tokens=sum(v.prompt_tokens for v in members),
            completion_tokens=sum(v.completion_tokens for v in members),
            cost=sum(v.cost or 0.0 for v in members) or None,
            latency_s=max((v.latency_s or 0.0) for v in members),
            cached=all(v.cached for v in members),
            language=item.language, system=item.system,
        )
        # The safety rules are a floor under the pool, whatever the rule and the personas.
        return safety_floor(pooled_verdict, item, criterion)


def _tie_note(rule: PoolRule, ties: TieRule, scored: list[Any]) -> str:
    """The tie rule, stated in the pooled verdict's reason whenever it decided."""
    if rule != "majority" or not _tied(scored):
        return ""
    if ties == "unscored":
        return "; a tie, left unscored (--ties unscored: the panel takes no side)"
    side = "first" if ties == "low" else "last"
    return f"; a tie, broken {ties} (the {side} value in scale order)"


def _tied(values: list[Any]) -> bool:
    counts = Counter(values).most_common()
    return len(counts) > 1 and counts[0][1] == counts[1][1]


def _majority_flag(members: list[Verdict]) -> bool | None:
    """The members' relevance flags pooled by majority; a tie counts as relevant (KPIs)."""
    flags = [verdict.relevant for verdict in members if verdict.relevant is not None]
    return sum(flags) * 2 >= len(flags) if flags else None


def _split_pooled(pooled: int | float | str | None, criterion: Criterion) -> tuple[Any, float | None]:
    """A mean or median may fall between scale values: keep it exact in ``expected_value`` and
    store the nearest scale value (halves round up) in ``value``."""
    if pooled is None or isinstance(pooled, str) or isinstance(pooled, int):
        return pooled, None
    nearest = int(pooled + 0.5) if pooled >= 0 else -int(-pooled + 0.5)
    return nearest, pooled
