"""``assert_judged``: fail a test when the judged quality is below a bar."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from convoscope.criteria import Criterion
from convoscope.items import Item


class JudgedQualityError(AssertionError):
    """The judged quality is below the bar (or could not be judged)."""


def assert_judged(items: Sequence[Item] | str | Path, criterion: str | Criterion, *,
                  at_least: float | None = None, share: float | None = None, label: str | None = None,
                  judge: Any = "embedded", store: str | Path | None = None, max_unscored: float = 0.1,
                  **options: Any) -> Any:
    """Judge ``items`` on ``criterion`` and assert the mean score is ``at_least`` (or, with
    ``label``, that the share of that label is at least ``share``). Returns the RunResult.

    ``judge``: a model spec or several (a panel); ``store``: where verdicts and the response cache
    live (default ``convoscope-test.db`` in the working folder — under pytest use the
    ``convoscope_store`` fixture). Failing shows the lowest-scored items with their reasons.
    """
    from convoscope.criteria import select_criteria
    from convoscope.items import read_items
    from convoscope.runs import GateRule, check_gates, resolve_gates
    from convoscope.runs import judge as run

    if (at_least is None) == (label is None or share is None):
        raise ValueError("give at_least=MEAN, or label=LABEL with share=SHARE")
    chosen = criterion if isinstance(criterion, Criterion) else select_criteria(names=[criterion])[0]
    rule = GateRule(chosen.name, share if label is not None else at_least, label)  # type: ignore[arg-type]
    (rule,) = resolve_gates([rule], [chosen])  # an unknown label fails before any model call
    listed = read_items(items) if isinstance(items, str | Path) else list(items)
    result = run(listed, [chosen], judge, store=store or "convoscope-test.db", **options)
    outstanding = result.summary.outstanding
    if outstanding.get("model_error") or outstanding.get("missing"):
        raise JudgedQualityError(f"{chosen.name}: the judge failed on {sum(outstanding.values())} "
                                 "items (model_error): run again once the endpoint answers")
    if result.summary.unscored_fraction > max_unscored:
        raise JudgedQualityError(f"{chosen.name}: {result.summary.unscored_fraction:.0%} of the verdicts "
                                 f"are unscored, more than max_unscored={max_unscored:g}")
    (gate,) = check_gates(result.verdicts, [rule])
    if not gate.passed:
        observed = "nothing scored" if gate.observed is None else f"{gate.observed:.3f}"
        raise JudgedQualityError(f"{rule}: judged {observed} over {gate.n} items\n" + _worst(result.verdicts))
    return result


def _worst(verdicts: Sequence[Any], count: int = 5) -> str:
    scored = [v for v in verdicts if isinstance(v.value, int | float)]
    lines = [f"  {v.item_id}: {v.value} — {(v.reason or '').strip()[:120]}"
             for v in sorted(scored, key=lambda v: v.value)[:count]]
    return "lowest:\n" + "\n".join(lines) if lines else ""
