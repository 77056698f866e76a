"""Quality gates for CI: a release passes only when the judged quality is high enough.

A rule is ``CRITERION=VALUE`` (the mean of the scored verdicts must reach VALUE) or
``CRITERION:LABEL=SHARE`` (the share of scored verdicts with that label must reach SHARE, e.g.
``follow-up:yes=0.9``). Rules read the run's final verdicts (the panel's pooled ones).

A label is what the criterion's scale calls it (``fulfilled``), the value verdicts store (``1``)
or, on a binary scale, ``yes`` / ``no``; :func:`resolve_gates` checks every rule against the
criteria before any model call, so a typo fails at once, not after a paid run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from convoscope.criteria import Criterion
from convoscope.errors import ConfigError

EXIT_BELOW_GATE = 5


@dataclass(frozen=True)
class GateRule:
    """``criterion`` by name (or ``suite:name``); ``label`` as written; ``stored``: the value
    verdicts store for that label, once :func:`resolve_gates` has checked it against the scale."""

    criterion: str
    threshold: float
    label: str | None = None
    stored: int | str | None = None

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


_YES_NO = {"yes": 1, "no": 0, "true": 1, "false": 0}


def resolve_gates(rules: Sequence[GateRule], criteria: Sequence[Criterion]) -> list[GateRule]:
    """Check every rule against the criteria to be judged and give each label its stored value.

    Raises :class:`ConfigError` for a criterion that is not among ``criteria``, a label its scale
    does not have, and a mean asked of a scale with no numbers."""
    return [_resolve(rule, criteria) for rule in rules]


def _resolve(rule: GateRule, criteria: Sequence[Criterion]) -> GateRule:
    found = [c for c in criteria if rule.criterion in (c.name, f"{c.suite}:{c.name}")]
    if not found:
        names = ", ".join(sorted(c.name for c in criteria)) or "none"
        raise ConfigError(f"the gate {rule} names a criterion that is not judged; criteria: {names}")
    scale = found[0].scale
    if rule.label is None:
        if not scale.is_numeric():
            raise ConfigError(f"the gate {rule} asks for a mean, but {found[0].name} has labels "
                              f"({', '.join(scale.labels)}): give CRITERION:LABEL=SHARE")
        return rule
    stored = _stored_value(rule.label, scale)
    if stored is None:
        raise ConfigError(f"the gate {rule}: {rule.label!r} is not on the scale of {found[0].name}; "
                          f"labels: {', '.join(_label_names(scale))}")
    return GateRule(rule.criterion, rule.threshold, rule.label, stored)


def _stored_value(label: str, scale: Any) -> int | str | None:
    wanted = label.strip().casefold()
    if scale.kind == "binary":
        positive, negative = (name.casefold() for name in scale.binary_labels)
        names = {positive: 1, negative: 0, "1": 1, "0": 0, **_YES_NO}
        return names.get(wanted)
    for value in scale.values():
        if str(value).casefold() == wanted:
            return value
    return None


def _label_names(scale: Any) -> list[str]:
    if scale.kind == "binary":
        return [*scale.binary_labels, "yes", "no", "1", "0"]
    return [str(value) for value in scale.values()]


class GateTally:
    """Gate rules checked as verdicts stream past (a long run never holds them all)."""

    def __init__(self, rules: Sequence[GateRule]) -> None:
        self.rules = list(rules)
        self._sums = [0.0] * len(self.rules)  # the mean's sum, or the label's hits
        self._counts = [0] * len(self.rules)  # scored verdicts on the rule's criterion
        self._numbers = [0] * len(self.rules)  # of them, numbers (what a mean is taken of)

    def add(self, verdicts: Iterable[Any]) -> None:
        for verdict in verdicts:
            if verdict.value is None:
                continue
            for at, rule in enumerate(self.rules):
                name = verdict.criterion
                if name != rule.criterion and not name.endswith(f":{rule.criterion}"):
                    continue
                self._counts[at] += 1
                value = verdict.value
                if rule.label is not None:
                    target = rule.stored if rule.stored is not None else rule.label
                    self._sums[at] += value == target or str(value) == str(target)
                elif isinstance(value, int | float):
                    self._sums[at] += float(value)
                    self._numbers[at] += 1

    def results(self) -> list[GateResult]:
        results = []
        for at, rule in enumerate(self.rules):
            base = self._counts[at] if rule.label is not None else self._numbers[at]
            results.append(GateResult(rule, self._sums[at] / base if base else None, self._counts[at]))
        return results


def gate_rules(gates: Sequence[str | GateRule], criteria: Sequence[Criterion]) -> list[GateRule]:
    """Rules written as text (``overall=3.5``) or as :class:`GateRule`, checked against the
    criteria before any model call (:func:`resolve_gates`)."""
    return resolve_gates([parse_gate(gate) if isinstance(gate, str) else gate for gate in gates], criteria)


def watching(tally: GateTally, sink: Any) -> Any:
    """An ``on_verdicts`` hook that feeds the tally the final verdicts, then calls ``sink``."""
    def on_verdicts(finals: list[Any], members: list[Any]) -> None:
        tally.add(finals)
        if sink is not None:
            sink(finals, members)

    return on_verdicts


def check_gates(verdicts: Iterable[Any], rules: Sequence[GateRule]) -> list[GateResult]:
    """The observed mean or share for every rule (rules from :func:`resolve_gates`)."""
    tally = GateTally(rules)
    tally.add(verdicts)
    return tally.results()
