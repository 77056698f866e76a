"""The system-level table for a paper: ``metaeval --system-level --table t.csv|t.tex`` also writes
``t-systems.csv|.tex`` — per criterion and judge, the number of systems, Pearson r and Spearman ρ
of system means with their intervals, the pairwise ranking accuracy, the Williams p against the
best judge at system level (raw), the outlier systems and r without the most influential system.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from convoscope.analysis._export import to_csv
from convoscope.analysis._export_latex import fit_to_width, judge_keys, judge_legend, latex_escape

SYSTEM_COLUMNS = ("criterion", "judge", "n_systems", "pearson", "pearson_low", "pearson_high", "spearman",
                  "spearman_low", "spearman_high", "pairwise_accuracy", "williams_p_vs_best", "versus",
                  "outliers", "most_influential", "pearson_without_most_influential")
SYSTEM_HEADERS = ("criterion", "judge", "systems", "Pearson r", "Spearman ρ", "pairwise acc.",
                  "Williams p vs best", "outliers", "r without (most influential)")


def system_records(study: Any) -> list[dict[str, Any]]:
    """One record per system-level row, with the Williams p against the criterion's best judge."""
    records = []
    for row in study.systems:
        best = max((r for r in study.systems if r.criterion == row.criterion and r.pearson is not None),
                   key=lambda r: r.pearson.estimate, default=None)
        versus = best.judge if best is not None and best.judge != row.judge else None
        test = next((c for c in study.system_comparisons if c.criterion == row.criterion
                     and {c.judge_a, c.judge_b} == {row.judge, versus}), None) if versus else None
        record: dict[str, Any] = {"criterion": row.criterion, "judge": row.judge, "n_systems": row.n_systems}
        for name in ("pearson", "spearman"):
            found = getattr(row, name)
            record.update({name: found.estimate if found else None,
                           f"{name}_low": found.low if found else None,
                           f"{name}_high": found.high if found else None})
        record.update(pairwise_accuracy=row.pairwise_accuracy.accuracy if row.pairwise_accuracy else None,
                      williams_p_vs_best=test.williams.pvalue if test and test.williams else None,
                      versus=versus, outliers=", ".join(row.outliers),
                      most_influential=row.weakest[0] if row.weakest else None,
                      pearson_without_most_influential=row.weakest[1] if row.weakest else None)
        records.append(record)
    return records


def systems_csv(records: Sequence[dict[str, Any]]) -> str:
    return to_csv(records, columns=SYSTEM_COLUMNS)


def _cells(record: dict[str, Any]) -> list[str]:
    def interval(name: str) -> str:
        if record[name] is None:
            return "–"
        return f"{record[name]:.2f} [{record[name + '_low']:.2f}, {record[name + '_high']:.2f}]"

    def number(value: float | None, text: str) -> str:
        return "–" if value is None else text.format(value)

    weakest = "–" if record["most_influential"] is None else \
        f"{record['pearson_without_most_influential']:.2f} ({record['most_influential']})"
    return [record["criterion"], record["judge"], str(record["n_systems"]), interval("pearson"),
            interval("spearman"), number(record["pairwise_accuracy"], "{:.2f}"),
            number(record["williams_p_vs_best"], "{:.3f}"), record["outliers"] or "–", weakest]


def systems_markdown(records: Sequence[dict[str, Any]]) -> str:
    lines = ["| " + " | ".join(SYSTEM_HEADERS) + " |", "|" + "---|" * len(SYSTEM_HEADERS)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in _cells(r)) + " |" for r in records]
    return "\n".join(lines) + "\n"


def _latex_rows(record: dict[str, Any], judges: dict[str, str]) -> list[str]:
    """A judge's row (its short name from ``judges`` if any) and, under it, the intervals and the
    system left out."""
    def interval(name: str) -> tuple[str, str]:
        if record[name] is None:
            return "–", ""
        return f"{record[name]:.2f}", f"[{record[name + '_low']:.2f}, {record[name + '_high']:.2f}]"

    cells = _cells(record)
    without = ("–", "") if record["most_influential"] is None else \
        (f"{record['pearson_without_most_influential']:.2f}", f"(without {record['most_influential']})")
    top = [judges.get(cells[1], cells[1]), cells[2], interval("pearson")[0], interval("spearman")[0],
           *cells[5:8], without[0]]
    under = ["", "", interval("pearson")[1], interval("spearman")[1], "", "", "", without[1]]
    rows = [" & ".join(latex_escape(cell) for cell in top) + r" \\"]
    return rows + ([" & ".join(latex_escape(cell) for cell in under) + r" \\"] if any(under) else [])


def systems_latex(records: Sequence[dict[str, Any]]) -> str:
    """A two-column-page ``table*`` (booktabs) at ``\\footnotesize``, one heading row per criterion
    and the intervals under their values, shrunk only when wider than the page and never below 7/8
    of its size (``fit_to_width``)."""
    head = [("judge", "systems", "Pearson", "Spearman", "pairwise", "Williams p", "outliers", "r without"),
            ("", "", "r", "ρ", "acc.", "vs best", "", "most infl.")]
    body = [" & ".join(latex_escape(text) for text in line) + r" \\" for line in head] + [r"\midrule"]
    heading, judges = None, judge_keys([record["judge"] for record in records])
    for record in records:
        if record["criterion"] != heading:
            body += [r"\addlinespace"] if heading is not None else []
            body.append(rf"\multicolumn{{8}}{{@{{}}l}}{{\emph{{{latex_escape(record['criterion'])}}}}} \\")
            heading = record["criterion"]
        body += _latex_rows(record, judges)
    tabular = [r"\begin{tabular}{@{}lrrrrrlr@{}}", r"\toprule", *body, r"\bottomrule", r"\end{tabular}"]
    return "\n".join([r"% needs \usepackage{booktabs,graphicx}", r"\begin{table*}[t]", r"\centering",
                      r"\footnotesize", r"\setlength{\tabcolsep}{4pt}", *fit_to_width(tabular, r"\textwidth"),
                      r"\caption{System level: correlations of system means with people's, percentile "
                      r"intervals under each; Williams p (raw) against the best judge; outliers by the "
                      r"Bonferroni outlier test; r without the most influential system."
                      + (judge_legend(judges) if judges else "") + "}",
                      r"\end{table*}"]) + "\n"


SYSTEM_WRITERS = {".csv": systems_csv, ".md": systems_markdown, ".tex": systems_latex}
