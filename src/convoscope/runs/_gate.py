"""Quality gates for CI: a release passes only when the judged quality is high enough.

A rule is ``CRITERION=VALUE`` (the mean of the scored verdicts must reach VALUE) or
``CRITERION:LABEL=SHARE`` (the share of scored verdicts with that label must reach SHARE, e.g.
``follow-up:yes=0.9``). Rules read the run's final verdicts (the panel's pooled ones).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from convoscope.errors import ConfigError

EXIT_BELOW_GATE = 5


@dataclass(frozen=True)
class GateRule:
    criterion: str
    threshold: float
    label: str | None = None

    def __str__(self) -> str:
        return f"{self.criterion}{':' + self.label if self.label else ''}={self.threshold:g}"


@dataclass(frozen=True)
class GateResult:
    rule: GateRule
    observed: float | None  # None: no scored verdict on the criterion
    n: int

    @property
    def passed(self) -> bool:
        return self.observed is not None and self.observed >= self.rule.threshold


def parse_gate(text: str) -> GateRule:
    """``overall=3.5`` or ``follow-up:yes=0.9``."""
    target, separator, value = text.rpartition("=")
    if not separator or not target:
        raise ConfigError(f"a gate is CRITERION=VALUE or CRITERION:LABEL=SHARE, not {text!r}")
    try:
        threshold = float(value)
    except ValueError:
        raise ConfigError(f"the gate {text!r} needs a number after '='") from None
    criterion, _, label = target.partition(":")
    if label and not 0 <= threshold <= 1:
        raise ConfigError(f"the gate {text!r} asks for a share: give a number from 0 to 1")
    return GateRule(criterion, threshold, label or None)


def check_gates(verdicts: Iterable[Any], rules: Sequence[GateRule]) -> list[GateResult]:
    """The observed mean or share for every rule."""
    rows = [v for v in verdicts if v.value is not None]
    known = {v.criterion for v in rows}
    results = []
    for rule in rules:
        if rule.criterion not in known and not any(c.endswith(f":{rule.criterion}") for c in known):
            raise ConfigError(f"the gate {rule} names a criterion the run did not score; scored: "
                              f"{', '.join(sorted(known)) or 'none'}")
        values = [v.value for v in rows if v.criterion == rule.criterion
                  or v.criterion.endswith(f":{rule.criterion}")]
        if rule.label is not None:
            observed = sum(str(value) == rule.label for value in values) / len(values) if values else None
        else:
            numbers = [float(value) for value in values if isinstance(value, int | float)]
            observed = sum(numbers) / len(numbers) if numbers else None
        results.append(GateResult(rule, observed, len(values)))
    return results
