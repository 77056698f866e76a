"""A criterion x judge table to paste into a paper: CSV, Markdown and LaTeX (booktabs).

One row per criterion (and group) and judge: Spearman, Kendall and Pearson with their bootstrap
intervals, Cohen's kappa, F1 of both classes, accuracy and AUC, and a significance mark from the
judge comparisons:

- ``†``: the judge's Spearman rho with the human mean is lower than the best judge's on that
  criterion, Williams' t, p < ``alpha`` (the best judge itself is never marked);
- ``‡``: on a binary criterion, the judge matches the human majority less often than the most
  accurate judge, McNemar's test, p < ``alpha``.

Names of judges and criteria are data: CSV cells that a spreadsheet would run as a formula are
prefixed with a quote, Markdown pipes and LaTeX specials are escaped.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any

DAGGER, DOUBLE_DAGGER = "†", "‡"
_LATEX_SPECIALS = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                   "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
                   "†": r"\textsuperscript{\dag}", "‡": r"\textsuperscript{\ddag}", "ρ": r"$\rho$",
                   "τ": r"$\tau$", "κ": r"$\kappa$", "α": r"$\alpha$", "−": "$-$", "–": "--",
                   "·": r"$\cdot$"}
COLUMNS = ("criterion", "group", "judge", "n", "spearman", "spearman_low", "spearman_high", "kendall",
           "kendall_low", "kendall_high", "pearson", "pearson_low", "pearson_high", "kappa", "f1_pos",
           "f1_neg", "accuracy", "auc", "mark")


def paper_table(rows: Iterable[Any], comparisons: Iterable[Any] = (), *,
                alpha: float = 0.05) -> list[dict[str, Any]]:
    """Flat records (one per :class:`MetaevalRow`) with the marks described in the module."""
    rows = list(rows)
    marks = _marks(rows, list(comparisons), alpha)
    records = []
    for row in rows:
        record: dict[str, Any] = {"criterion": row.criterion, "group": row.group, "judge": row.judge,
                                  "n": row.n_items}
        for name in ("spearman", "kendall", "pearson"):
            result = getattr(row, name)
            record[name] = None if result is None else result.estimate
            record[f"{name}_low"] = None if result is None else result.low
            record[f"{name}_high"] = None if result is None else result.high
        binary = row.binary
        record.update(kappa=row.kappa, f1_pos=binary.f1_pos if binary else None,
                      f1_neg=binary.f1_neg if binary else None, accuracy=binary.accuracy if binary else None,
                      auc=row.auc, mark=marks.get((row.criterion, row.group, row.judge), ""))
        records.append(record)
    return records


def _marks(rows: list[Any], comparisons: list[Any], alpha: float) -> dict[tuple[Any, ...], str]:
    marks: dict[tuple[Any, ...], str] = {}
    overall = [row for row in rows if row.group is None]
    for criterion in dict.fromkeys(row.criterion for row in overall):
        section = [row for row in overall if row.criterion == criterion]
        ranked = [row for row in section if row.spearman is not None]
        best = max(ranked, key=lambda row: row.spearman.estimate).judge if ranked else None
        accurate = [row for row in section if row.binary is not None]
        most = max(accurate, key=lambda row: row.binary.accuracy).judge if accurate else None
        for comparison in comparisons:
            if comparison.criterion != criterion:
                continue
            for leader, test, symbol, field in ((best, comparison.williams, DAGGER, "r"),
                                                (most, comparison.mcnemar, DOUBLE_DAGGER, "m")):
                other = _other(comparison, leader)
                if leader is None or other is None or test is None or test.pvalue >= alpha:
                    continue
                if field == "r" and not _worse_correlation(comparison, leader):
                    continue
                if field == "m" and not _worse_accuracy(comparison, leader):
                    continue
                key = (criterion, None, other)
                marks[key] = marks.get(key, "") + symbol
    return marks


def _other(comparison: Any, leader: str | None) -> str | None:
    if leader == comparison.judge_a:
        return comparison.judge_b
    if leader == comparison.judge_b:
        return comparison.judge_a
    return None


def _worse_correlation(comparison: Any, leader: str) -> bool:
    test = comparison.williams
    leader_r, other_r = (test.r_a, test.r_b) if leader == comparison.judge_a else (test.r_b, test.r_a)
    return other_r < leader_r


def _worse_accuracy(comparison: Any, leader: str) -> bool:
    test = comparison.mcnemar
    leader_only, other_only = (test.only_a, test.only_b) if leader == comparison.judge_a \
        else (test.only_b, test.only_a)
    return other_only < leader_only


def _number(value: Any, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _display(record: dict[str, Any], digits: int) -> list[str]:
    def interval(name: str) -> str:
        if record[name] is None:
            return "–"
        return (f"{record[name]:.{digits}f} [{record[name + '_low']:.{digits - 1}f}, "
                f"{record[name + '_high']:.{digits - 1}f}]")

    mark = record["mark"]
    spearman = interval("spearman") + (mark if DAGGER in mark else "")
    accuracy = _number(record["accuracy"], digits) + (DOUBLE_DAGGER if DOUBLE_DAGGER in mark else "")
    return [record["criterion"] + (f" · {record['group']}" if record["group"] else ""), record["judge"],
            str(record["n"]), spearman, interval("kendall"), interval("pearson"),
            _number(record["kappa"], digits) or "–", _number(record["f1_pos"], digits) or "–",
            _number(record["f1_neg"], digits) or "–", accuracy or "–", _number(record["auc"], digits) or "–"]


HEADERS = ["criterion", "judge", "n", "Spearman ρ", "Kendall τ", "Pearson r", "Cohen κ", "F1+", "F1−",
           "accuracy", "AUC"]
LEGEND = (f"{DAGGER}: Spearman ρ below the best judge's on the criterion (Williams' t, p < α); "
          f"{DOUBLE_DAGGER}: accuracy below the most accurate judge's (McNemar, p < α).")


def to_csv(records: Sequence[dict[str, Any]]) -> str:
    """Every column in full precision, one row per record; formula-like text cells are quoted."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({key: _safe_cell(record.get(key)) for key in COLUMNS})
    return buffer.getvalue()


def _safe_cell(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return "" if value is None else value


def to_markdown(records: Sequence[dict[str, Any]], *, digits: int = 3) -> str:
    """A GitHub-flavoured Markdown table with intervals and marks, and its legend."""
    def cell(text: str) -> str:
        return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "|".join(["---"] * 2 + ["---:"] * 9) + "|"]
    lines += ["| " + " | ".join(cell(text) for text in _display(record, digits)) + " |" for record in records]
    return "\n".join(lines) + f"\n\n{LEGEND}\n"


def latex_escape(text: str) -> str:
    """Text safe inside a LaTeX table cell.

    >>> latex_escape("model:gpt_4 & co")
    'model:gpt\\\\_4 \\\\& co'
    """
    return "".join(_LATEX_SPECIALS.get(char, char) for char in text)


def to_latex(records: Sequence[dict[str, Any]], *, digits: int = 3, caption: str | None = None) -> str:
    """A LaTeX ``table`` with booktabs rules (``\\usepackage{booktabs}``); marks as superscripts."""
    body = [" & ".join(latex_escape(text) for text in _display(record, digits)) + r" \\"
            for record in records]
    head = " & ".join(latex_escape(text) for text in HEADERS) + r" \\"
    lines = [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{ll" + "r" * 9 + "}",
             r"\toprule", head, r"\midrule", *body, r"\bottomrule", r"\end{tabular}",
             r"\caption{" + latex_escape(caption or LEGEND) + "}", r"\end{table}"]
    return "\n".join(lines) + "\n"
