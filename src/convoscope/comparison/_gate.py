"""``--fail-if`` conditions: a comparison that CI can act on."""

from __future__ import annotations

import re
from dataclasses import dataclass

from convoscope.comparison._compare import Comparison, CriterionChange
from convoscope.errors import ConfigError

_CONDITION = re.compile(
    r"^(?P<kind>worse|better|changed|flips|significant)"
    r":(?P<criterion>[^<>=]+?)(?:\s*>\s*(?P<threshold>[0-9.]+))?$"
)


@dataclass(frozen=True)
class Condition:
    """``worse:C>T``: the mean of C fell by more than T (B − A < −T); ``better:C>T`` rose by more
    than T; ``changed:C>T``: |B − A| > T; ``flips:C>T``: more than a share T of the items changed
    value; ``significant:C``: the adjusted p-value of C's paired test is below ``alpha``. ``*``
    stands for every criterion."""

    kind: str
    criterion: str
    threshold: float

    @classmethod
    def parse(cls, text: str) -> Condition:
        found = _CONDITION.match(text.strip())
        if not found:
            raise ConfigError(
                f"--fail-if {text!r}: expected KIND:CRITERION>THRESHOLD with KIND one of worse, "
                "better, changed, flips (or significant:CRITERION), e.g. worse:effort>0.1"
            )
        kind, threshold = found["kind"], found["threshold"]
        if kind != "significant" and threshold is None:
            raise ConfigError(
                f"--fail-if {text!r}: {kind} needs a threshold, e.g. {kind}:{found['criterion']}>0.1"
            )
        return cls(kind, found["criterion"].strip(), float(threshold or 0.0))

    def failures(self, comparison: Comparison, *, alpha: float = 0.05) -> list[str]:
        rows = comparison.criteria if self.criterion == "*" else [comparison.criterion(self.criterion)]
        return [
            f"{self.kind}:{row.criterion} ({self._figure(row)})" for row in rows if self._holds(row, alpha)
        ]

    def _holds(self, row: CriterionChange, alpha: float) -> bool:
        if self.kind == "flips":
            return row.changed_share > self.threshold
        if self.kind == "significant":
            return row.pvalue_adjusted < alpha
        if row.change is None:  # labels have no mean: a change is a share of items
            return self.kind == "changed" and row.changed_share > self.threshold
        return {"worse": -row.change, "better": row.change, "changed": abs(row.change)}[
            self.kind
        ] > self.threshold

    def _figure(self, row: CriterionChange) -> str:
        if self.kind == "flips" or row.change is None:
            return f"{row.changed_share:.1%} of {row.n_items} items changed"
        if self.kind == "significant":
            return f"adjusted p = {row.pvalue_adjusted:.3g}"
        return f"mean change {row.change:+.3f}, threshold {self.threshold:g}"
