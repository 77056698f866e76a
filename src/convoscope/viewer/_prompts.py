"""The prompt difference of one item: the prompt each run's judge sent, rendered again from what
the run recorded (its judge's mode and persona, the criterion it read, the item), and diffed.

A rubric judge's prompt is a function of the criterion, the item, the mode and the persona
(``convoscope.judges.render_messages`` / ``render_completion_prompt``), so it can be rendered
again without the model. Other judges (Python functions, baselines, panels) send no rubric
prompt of their own; then the page says so instead of guessing.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from convoscope.viewer._runs import RunInfo


@dataclass(frozen=True)
class PromptDifference:
    """``lines``: a unified diff (empty when the prompts are the same); ``note``: why there is none."""

    lines: tuple[str, ...] = ()
    note: str = ""
    same: bool = False


def prompt_difference(a: RunInfo, b: RunInfo, item: Any, criterion: str,
                      criteria: dict[str, Any]) -> PromptDifference:
    """The difference between the prompts runs ``a`` and ``b`` sent for ``item`` on ``criterion``."""
    if item is None:
        return PromptDifference(note="the item's text is not loaded (an archive with items, or --items)")
    first, why_a = _prompt(a, item, criterion, criteria)
    second, why_b = _prompt(b, item, criterion, criteria)
    if first is None or second is None:
        return PromptDifference(note=f"A: {why_a}" if first is None else f"B: {why_b}")
    if first == second:
        if criterion in a.criteria and criterion in b.criteria:
            return PromptDifference(same=True)
        # Rendered from one shared criterion: a wording each run read differently cannot show.
        return PromptDifference(same=True, note="the same as far as known: a run that does not carry its "
                                "criteria file (an archive exported with --criteria-file does) was rendered "
                                "with the criteria given to view")
    lines = difflib.unified_diff(first.splitlines(), second.splitlines(), "A", "B", lineterm="", n=1)
    return PromptDifference(lines=tuple(lines))


def _prompt(run: RunInfo, item: Any, name: str, criteria: dict[str, Any]) -> tuple[str | None, str]:
    from convoscope.judges import render_completion_prompt, render_messages

    judge = run.spec.get("judge")
    if not isinstance(judge, dict):
        return None, "the run recorded no judge (a verdict file or an old run)"
    if judge.get("kind") != "rubric":
        return None, f"a {judge.get('kind') or 'custom'} judge sends no rubric prompt"
    criterion = run.criteria.get(name) or criteria.get(name)
    if criterion is None:
        return None, f"criterion {name} is not loaded (an archive with its criteria, or --criteria-file)"
    persona = judge.get("persona")
    try:
        if judge.get("mode") == "completion":
            return render_completion_prompt(criterion, item, persona=persona), ""
        messages = render_messages(criterion, item, persona=persona)
    except (ValueError, KeyError) as error:  # an item the criterion cannot be asked of
        return None, str(error)
    return "\n".join(f"[{message.role}]\n{message.content}" for message in messages), ""
