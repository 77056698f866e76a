"""What a run did, and the exit status a CI job can rely on."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from convoscope.judges import RaterKind, Verdict
from convoscope.models import UsageTotals

# Exit statuses of ``convoscope judge`` (and :meth:`RunSummary.exit_code`).
EXIT_OK = 0  # every task has a verdict that is not a transient failure
EXIT_OUTSTANDING = 3  # some task's verdict is still a model_error (or missing): run again
EXIT_TOO_MANY_UNSCORED = 4  # the unscored share of the run's verdicts exceeds --max-unscored
DEFAULT_MAX_UNSCORED = 0.1
# Reasons that are answers, not failures: they never count against --max-unscored (an "I don't
# know", a computed KPI that does not apply, e.g. latency on a turn without timestamps, or a panel
# whose members split evenly: its tie rule says "cannot tell", which is the panel's answer).
_ANSWERS = frozenset({"idk", "not_applicable", "tie"})


@dataclass
class RunSummary:
    """What a run did.

    ``verdicts``/``scored``/``unscored`` count the final verdicts *this* invocation made;
    ``resumed`` the tasks already finished before it; ``retried`` those it did again because
    their verdict was a transient failure (or, on request, unscored); ``done_elsewhere`` the
    tasks another worker finished meanwhile. ``outstanding`` counts the unscored final verdicts
    of the whole run as it stands at the end (``missing``: tasks with no verdict at all), and
    ``members`` each panel member's scored / unscored-by-reason counts in this invocation.
    """

    run_id: str
    store: str
    worker: str = ""
    total_tasks: int = 0
    resumed: int = 0
    retried: int = 0
    done_elsewhere: int = 0
    not_applicable: int = 0
    verdicts: int = 0
    scored: int = 0
    deferred: int = 0  # requests sent to a provider's batch, answered by a later run
    unscored: Counter[str] = field(default_factory=Counter)
    outstanding: Counter[str] = field(default_factory=Counter)
    members: dict[str, Counter[str]] = field(default_factory=dict)
    usage: UsageTotals = field(default_factory=UsageTotals)  # model calls, counted as everywhere
    wall_time_s: float = 0.0
    notes: list[str] = field(default_factory=list)  # e.g. an endpoint that took no structured output
    routes: list[str] = field(default_factory=list)  # "MODEL: how its calls were sent", one per model
    # With repeated judgements: per judge and criterion, how far the judge agrees with itself
    # (see convoscope.runs.SelfConsistency).
    self_consistency: list[dict[str, Any]] = field(default_factory=list)

    def count(self, final: Verdict, members: Sequence[Verdict]) -> None:
        self.verdicts += 1
        if final.value is None:
            self.unscored[final.unscored_reason or "unknown"] += 1
        else:
            self.scored += 1
        for verdict in members:
            tally = self.members.setdefault(verdict.rater, Counter())
            tally["scored" if verdict.value is not None else verdict.unscored_reason or "unknown"] += 1
        for verdict in members or [final]:
            if verdict.rater_kind in (RaterKind.METRIC, RaterKind.PYTHON) or verdict.shared_call:
                continue  # computed from the log or by Python code, or answered by another call
            if verdict.unscored_reason == "model_error" and _deferred(verdict):
                self.deferred += 1  # waiting in a batch: not a call, and not a failure
                continue
            self.usage.record(cached=verdict.cached, failed=verdict.unscored_reason == "model_error",
                              prompt_tokens=verdict.prompt_tokens,
                              completion_tokens=verdict.completion_tokens, cost=verdict.cost)

    @property
    def model_calls(self) -> int:
        return self.usage.calls

    @property
    def failed_calls(self) -> int:
        """Calls that ended in a model_error after every retry."""
        return self.usage.errors

    @property
    def cache_hits(self) -> int:
        return self.usage.cache_hits

    @property
    def prompt_tokens(self) -> int:
        return self.usage.prompt_tokens

    @property
    def completion_tokens(self) -> int:
        return self.usage.completion_tokens

    @property
    def cost(self) -> float:
        return self.usage.cost

    @property
    def unscored_fraction(self) -> float:
        """The share of the run's tasks whose current verdict is unscored (``idk`` excepted)."""
        failing = sum(count for reason, count in self.outstanding.items() if reason not in _ANSWERS)
        return failing / self.total_tasks if self.total_tasks else 0.0

    def exit_code(self, max_unscored: float = DEFAULT_MAX_UNSCORED) -> int:
        """0 all done; 3 work outstanding (model_error or missing verdicts); 4 too many unscored."""
        if self.outstanding.get("model_error") or self.outstanding.get("missing"):
            return EXIT_OUTSTANDING
        if self.unscored_fraction > max_unscored:
            return EXIT_TOO_MANY_UNSCORED
        return EXIT_OK

    def as_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        usage = data.pop("usage")
        data.update(model_calls=usage.calls, failed_calls=usage.errors, cache_hits=usage.cache_hits,
                    prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                    cost=usage.cost)
        data["unscored"] = dict(self.unscored)
        data["outstanding"] = dict(self.outstanding)
        data["members"] = {rater: dict(tally) for rater, tally in self.members.items()}
        return data


def _deferred(verdict: Verdict) -> bool:
    from convoscope.batch._model import DEFERRED  # only on a failed call: batch runs are rare

    return DEFERRED in (verdict.raw or "")
