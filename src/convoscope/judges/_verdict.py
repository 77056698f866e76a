"""Verdict: one row for every judgement, by a model, a panel or a person."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from convoscope.judges._rater import RaterKind

UnscoredReason = Literal[
    "parse_failure",  # the output could not be read as an answer on the scale
    "refusal",  # the model declined to judge
    "idk",  # the rater answered "I don't know"
    "model_error",  # the backend failed after all retries (transient: a re-run retries it)
    "no_quorum",  # a panel had too few scored members to pool
    "tie",  # a panel's members split evenly and the tie rule leaves it unscored
    "not_applicable",  # the criterion does not apply to this kind of item
    "judge_error",  # a judge written in Python raised, or broke its contract (see ``raw``)
]

# Reasons that say nothing about the item: the work is not done and a re-run does it again.
TRANSIENT: frozenset[str] = frozenset({"model_error"})
# Reasons a re-run retries only when asked (``retry_unscored``): the model answered, unreadably.
RETRYABLE_ON_REQUEST: frozenset[str] = frozenset({"parse_failure", "refusal", "judge_error"})


class Verdict(BaseModel):
    """The result of applying one criterion to one item by one rater.

    ``value`` is None exactly when the verdict is unscored; ``unscored_reason`` then says why and
    ``raw`` keeps what the model said. Humans and models write the same table.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    item_id: str
    criterion: str
    rater: str = Field(description="'<kind>:<name>': 'model:<name>', 'panel:<rule>', 'human:<id>', "
                       "'metric:<name>', 'baseline:<name>' or 'python:<name>' (see :class:`RaterKind`).")
    value: int | str | None
    unscored_reason: UnscoredReason | None = None
    reason: str | None = Field(default=None, description="The rater's explanation.")
    options: tuple[str, ...] = Field(default=(), description="Explanation options chosen.")
    relevant: bool | None = Field(default=None, description="Does the criterion apply? (KPIs)")
    expected_value: float | None = Field(
        default=None, description="Probability-weighted score from token log-probabilities."
    )
    distribution: dict[str, float] | None = Field(
        default=None, description="Probability of each scale value, where the backend gave it."
    )
    raw: str | None = Field(default=None, description="The raw model output.")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    latency_s: float | None = None
    cached: bool = False
    shared_call: bool = Field(default=False, description="Answered by a model call booked on another "
                              "verdict (one-call judging): no call, no tokens of its own.")
    run_id: str | None = None
    served_model: str | None = Field(default=None, description="The model as the server named it "
                                     "in its answer (e.g. a dated version).")
    seed: int | None = None
    temperature: float | None = None
    convoscope_version: str | None = None
    language: str | None = None
    system: str | None = None

    @property
    def scored(self) -> bool:
        return self.value is not None

    @property
    def rater_kind(self) -> RaterKind | None:
        """Model, panel, human, metric or baseline, read from ``rater`` (None when unprefixed)."""
        return RaterKind.of(self.rater)

    @property
    def transient(self) -> bool:
        """Unscored for a reason that says nothing about the item (the work is still to do)."""
        return self.unscored_reason in TRANSIENT
