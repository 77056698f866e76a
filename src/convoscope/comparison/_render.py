"""A comparison as Markdown, plain console text or a self-contained HTML page."""

from __future__ import annotations

import difflib
import json

from convoscope.comparison._compare import Comparison, CriterionChange


def _number(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _p(value: float) -> str:
    return f"{value:.3g}" if value >= 0.001 else f"{value:.1e}"


def _change(row: CriterionChange) -> str:
    if row.change is None:
        return f"{row.changed_share:.1%} changed label"
    return f"{row.change:+.3f} [{row.change_low:+.3f}, {row.change_high:+.3f}]"


def summary_rows(comparison: Comparison) -> list[list[str]]:
    """The table every renderer prints: one row per criterion."""
    return [
        [
            row.criterion,
            row.level,
            str(row.n_items),
            _number(row.mean_a),
            _number(row.mean_b),
            _change(row),
            row.test,
            _p(row.pvalue),
            _p(row.pvalue_adjusted),
            f"{row.agreement_name} {_number(row.agreement)}",
            f"{row.changed} ({row.changed_share:.0%})",
        ]
        for row in comparison.criteria
    ]


HEADERS = [
    "criterion",
    "level",
    "items",
    "mean A",
    "mean B",
    "change B − A (CI)",
    "paired test",
    "p",
    "p adj.",
    "A–B agreement",
    "changed",
]


def spec_difference(comparison: Comparison) -> list[str]:
    """What the two runs asked differently, from what each recorded (judge, criteria, options)."""
    first = json.dumps(comparison.spec_a, indent=1, sort_keys=True, default=str).splitlines()
    second = json.dumps(comparison.spec_b, indent=1, sort_keys=True, default=str).splitlines()
    if not comparison.spec_a or not comparison.spec_b:
        return []
    return [line for line in difflib.unified_diff(first, second, "A", "B", lineterm="", n=0)]


def to_markdown(comparison: Comparison, *, flips: int = 10) -> str:
    lines = [
        f"# {comparison.label_a} (A) → {comparison.label_b} (B)",
        "",
        f"p-values adjusted across {len(comparison.criteria)} criteria by {comparison.correction}; "
        f"intervals {comparison.confidence:.0%} (paired t).",
        "",
        "| " + " | ".join(HEADERS) + " |",
        "|" + "---|" * len(HEADERS),
    ]
    lines += [
        "| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in summary_rows(comparison)
    ]
    for row in comparison.criteria:
        if row.human and row.human.note:
            lines += [
                "",
                f"**{row.criterion}, against people**: cannot tell which run agrees better "
                f"({row.human.note}).",
            ]
        elif row.human:
            lines += [
                "",
                f"**{row.criterion}, against people** ({row.human.method}, {row.human.n_items} items): "
                f"A {row.human.r_a:.3f}, B {row.human.r_b:.3f}; Williams t = {row.human.statistic:.2f}, "
                f"p = {_p(row.human.pvalue)}",
            ]
        for title, groups in (("system", row.by_system), ("language", row.by_language)):
            if groups:
                lines += [
                    "",
                    f"**{row.criterion} by {title}**",
                    "",
                    f"| {title} | items | mean A | mean B | changed |",
                    "|---|---|---|---|---|",
                ]
                lines += [
                    f"| {g.group} | {g.n_items} | {_number(g.mean_a)} | {_number(g.mean_b)} | "
                    f"{g.changed_share:.0%} |"
                    for g in groups
                ]
        if row.flips and flips:
            lines += [
                "",
                f"**{row.criterion}: items that changed most**",
                "",
                "| item | A | B | reason A | reason B |",
                "|---|---|---|---|---|",
            ]
            lines += [
                f"| {_cell(f.item_id)} | {f.value_a} | {f.value_b} | {_cell(f.reason_a)} "
                f"| {_cell(f.reason_b)} |"
                for f in row.flips[:flips]
            ]
            lines += _prompt_lines(row, flips)
    difference = spec_difference(comparison)
    if difference:
        lines += ["", "**What the runs asked differently**", "", "```diff", *difference, "```"]
    lines += ["", *[f"- {note}" for note in comparison.notes]] if comparison.notes else []
    return "\n".join(lines) + "\n"


def _prompt_lines(row: CriterionChange, flips: int) -> list[str]:
    """Per shown flip, how the prompts the two runs sent differ (a diff), or what is known."""
    shown = [f for f in row.flips[:flips] if f.prompt_diff or f.prompt_note]
    if not shown:
        return []
    lines = ["", f"**{row.criterion}: the prompts each run sent, per item (A → B)**"]
    for flip in shown:
        head = f"{_cell(flip.item_id)} ({flip.value_a} → {flip.value_b}):"
        lines += ["", f"{head} {_cell(flip.prompt_note, 400)}" if flip.prompt_note else head]
        if flip.prompt_diff:
            fence = "`" * max(3, 1 + _longest_backticks(flip.prompt_diff))
            lines += ["", fence + "diff", *flip.prompt_diff, fence]
    return lines


def _longest_backticks(lines: tuple[str, ...]) -> int:
    """The longest run of backticks in ``lines``: the fence around them must be longer."""
    longest = 0
    for line in lines:
        run = 0
        for character in line:
            run = run + 1 if character == "`" else 0
            longest = max(longest, run)
    return longest


def _cell(text: str | None, width: int = 120) -> str:
    """Untrusted text in a Markdown cell: one line, pipes escaped, cut."""
    flat = " ".join((text or "").split()).replace("|", "\\|")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def to_html(comparison: Comparison, *, flips: int = 25) -> str:
    from convoscope.html import render

    return render(
        "compare/comparison.html",
        comparison=comparison,
        headers=HEADERS,
        rows=summary_rows(comparison),
        flips=flips,
        difference=spec_difference(comparison),
    )
