"""A decision is a value: the outcome of a stated rule on stated numbers.

Every pass/fail, "usable for", "can replace an annotator" or refusal the library prints is a
:class:`Decision`. It holds the rule as a sentence, the numbers the rule read, and — when the
numbers cannot settle it — ``cannot_tell`` with the reason. Renderers print a decision; they
never decide. Each rule is tested on simulated studies where the right answer is known
(``tests/analysis/test_decisions.py``, ``benchmarks/decisions.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Outcome = Literal["pass", "fail", "cannot_tell"]
OUTCOMES = ("pass", "fail", "cannot_tell")


@dataclass(frozen=True)
class Decision:
    """``outcome`` of ``rule`` on ``numbers`` (name, value pairs, in the order the rule reads
    them); ``reason`` says why the rule could not tell (or, for pass/fail, a caveat)."""

    outcome: Outcome
    rule: str
    numbers: tuple[tuple[str, float | int | str | None], ...] = ()
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"Decision: outcome must be one of {', '.join(OUTCOMES)}, not {self.outcome!r}")
        if self.outcome == "cannot_tell" and not self.reason:
            raise ValueError("Decision: 'cannot_tell' needs the reason")

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"

    @property
    def told(self) -> bool:
        """Did the rule reach pass or fail?"""
        return self.outcome != "cannot_tell"

    def number(self, name: str) -> float | int | str | None:
        return dict(self.numbers).get(name)

    @property
    def word(self) -> str:
        """The outcome in one word for a table cell: passes, fails, cannot tell."""
        return {"pass": "passes", "fail": "fails", "cannot_tell": "cannot tell"}[self.outcome]

    def describe(self) -> str:
        """One line: outcome, the numbers, the rule, and the reason when there is one."""
        shown = ", ".join(f"{name} {_fmt(value)}" for name, value in self.numbers)
        text = f"{self.word} ({shown}; rule: {self.rule})" if shown else f"{self.word} (rule: {self.rule})"
        return text + (f" — {self.reason}" if self.reason else "")


def _fmt(value: float | int | str | None) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool) or isinstance(value, int | str):
        return str(value)
    return "∞" if math.isinf(value) else f"{value:.3g}"


def cannot_tell(rule: str, reason: str, **numbers: float | int | str | None) -> Decision:
    return Decision("cannot_tell", rule, tuple(numbers.items()), reason)


def decide(passed: bool, rule: str, **numbers: float | int | str | None) -> Decision:
    return Decision("pass" if passed else "fail", rule, tuple(numbers.items()))
