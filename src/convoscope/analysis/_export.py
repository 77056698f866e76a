"""A criterion x judge table to paste into a paper: CSV and Markdown (LaTeX: ``_export_latex``).

One row per criterion (and group) and judge: Spearman, Kendall and Pearson with their bootstrap
intervals, Cohen's kappa with its interval, F1 of both classes, accuracy and AUC, the
alternative annotator test, and the judge's comparison with the best judge on the criterion:

- ``†``: the judge's Spearman rho with the human mean is lower than the best judge's, Williams'
  t, adjusted p < ``alpha`` (the best judge itself is never marked);
- ``‡``: on a binary criterion, the judge matches the human majority less often than the most
  accurate judge, McNemar's test, adjusted p < ``alpha``.

Every table has many tests: the p-values of each kind (Williams, permutation, McNemar) form one
family over the whole table and are adjusted by ``correction`` (Holm by default; see
:func:`adjust_pvalues`), and the legend names it with ``alpha``. The permutation test's p-value
(paired, Spearman rho) is shown beside Williams'.

Names of judges and criteria are data: CSV cells that a spreadsheet would run as a formula are
prefixed with a quote, Markdown pipes and LaTeX specials are escaped.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from convoscope.analysis._multitest import CORRECTION_NAMES, Correction, adjust_pvalues

DAGGER, DOUBLE_DAGGER = "†", "‡"
Layout = Literal["resize", "narrow", "full"]
LAYOUTS = ("resize", "narrow", "full")
COLUMNS = ("criterion", "group", "judge", "n", "spearman", "spearman_low", "spearman_high", "kendall",
           "kendall_low", "kendall_high", "pearson", "pearson_low", "pearson_high", "kappa", "kappa_low",
           "kappa_high", "f1_pos", "f1_neg", "accuracy", "auc", "versus", "williams_p", "williams_p_adjusted",
           "permutation_p", "permutation_p_adjusted", "mcnemar_p", "mcnemar_p_adjusted", "alt_winning_rate",
           "alt_advantage", "alt_passed", "mark")


def paper_table(rows: Iterable[Any], comparisons: Iterable[Any] = (), *, alpha: float = 0.05,
                correction: Correction = "holm") -> list[dict[str, Any]]:
    """Flat records (one per :class:`MetaevalRow`) with the p-values and marks described in the
    module."""
    rows = list(rows)
    tests = _tests_against_best(rows, list(comparisons), correction)
    records = []
    for row in rows:
        record: dict[str, Any] = {"criterion": row.criterion, "group": row.group, "judge": row.judge,
                                  "n": row.n_items}
        for name in ("spearman", "kendall", "pearson"):
            _interval_fields(record, name, getattr(row, name))
        kappa_ci = getattr(row, "kappa_ci", None)
        record.update(kappa=row.kappa, kappa_low=kappa_ci.low if kappa_ci else None,
                      kappa_high=kappa_ci.high if kappa_ci else None)
        binary, alt = row.binary, getattr(row, "alt_test", None)
        record.update(f1_pos=binary.f1_pos if binary else None, f1_neg=binary.f1_neg if binary else None,
                      accuracy=binary.accuracy if binary else None, auc=row.auc,
                      alt_winning_rate=alt.winning_rate if alt else None,
                      alt_advantage=alt.advantage_probability if alt else None,
                      alt_passed=alt.passed if alt and alt.decision.told else None)
        found = tests.get((row.criterion, row.group, row.judge), {})
        record.update({key: found.get(key) for key in COLUMNS[20:27]})
        record["mark"] = _mark(found, alpha)
        records.append(record)
    return records


def _interval_fields(record: dict[str, Any], name: str, result: Any) -> None:
    record[name] = None if result is None else result.estimate
    record[f"{name}_low"] = None if result is None else result.low
    record[f"{name}_high"] = None if result is None else result.high


def _mark(found: dict[str, Any], alpha: float) -> str:
    mark = ""
    if found.get("williams_worse") and (found.get("williams_p_adjusted") or 1.0) < alpha:
        mark += DAGGER
    if found.get("mcnemar_worse") and (found.get("mcnemar_p_adjusted") or 1.0) < alpha:
        mark += DOUBLE_DAGGER
    return mark


def _tests_against_best(rows: list[Any], comparisons: list[Any],
                        correction: Correction) -> dict[tuple[Any, ...], dict[str, Any]]:
    """For every judge that is not the best on its criterion: the raw and adjusted p-values of its
    comparison with the best judge (by Spearman rho; by accuracy for McNemar)."""
    found: dict[tuple[Any, ...], dict[str, Any]] = {}
    overall = [row for row in rows if row.group is None]
    for criterion in dict.fromkeys(row.criterion for row in overall):
        section = [row for row in overall if row.criterion == criterion]
        ranked = [row for row in section if row.spearman is not None]
        best = max(ranked, key=lambda row: row.spearman.estimate).judge if ranked else None
        accurate = [row for row in section if row.binary is not None]
        most = max(accurate, key=lambda row: row.binary.accuracy).judge if accurate else None
        for comparison in (c for c in comparisons if c.criterion == criterion):
            other = _other(comparison, best)
            if other is not None:
                entry = found.setdefault((criterion, None, other), {})
                entry["versus"] = best
                entry["williams_p"] = comparison.williams.pvalue if comparison.williams else None
                entry["williams_worse"] = (comparison.williams is not None
                                           and _worse_correlation(comparison, best))
                entry["permutation_p"] = comparison.permutation.pvalue if comparison.permutation else None
            other = _other(comparison, most)
            if other is not None and comparison.mcnemar is not None:
                entry = found.setdefault((criterion, None, other), {})
                entry["mcnemar_p"] = comparison.mcnemar.pvalue
                entry["mcnemar_worse"] = _worse_accuracy(comparison, most)
    for kind in ("williams", "permutation", "mcnemar"):
        keys = [key for key, entry in found.items() if entry.get(f"{kind}_p") is not None]
        adjusted = adjust_pvalues([found[key][f"{kind}_p"] for key in keys], method=correction)
        for key, value in zip(keys, adjusted, strict=True):
            found[key][f"{kind}_p_adjusted"] = float(value)
    return found


def _other(comparison: Any, leader: str | None) -> str | None:
    if leader == comparison.judge_a:
        return comparison.judge_b
    if leader == comparison.judge_b:
        return comparison.judge_a
    return None


def _worse_correlation(comparison: Any, leader: Any) -> bool:
    test = comparison.williams
    leader_r, other_r = (test.r_a, test.r_b) if leader == comparison.judge_a else (test.r_b, test.r_a)
    return bool(other_r < leader_r)


def _worse_accuracy(comparison: Any, leader: Any) -> bool:
    test = comparison.mcnemar
    leader_only, other_only = (test.only_a, test.only_b) if leader == comparison.judge_a \
        else (test.only_b, test.only_a)
    return bool(other_only < leader_only)


def _number(value: Any, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _p(value: Any) -> str:
    if value is None:
        return "–"
    return "<.001" if value < 0.001 else f"{value:.3f}".lstrip("0")


def _display(record: dict[str, Any], digits: int = 3) -> list[str]:
    def interval(name: str, places: int = digits, bounds: int = digits - 1) -> str:
        if record[name] is None:
            return "–"
        if record[name + "_low"] is None:
            return f"{record[name]:.{places}f}"
        return (f"{record[name]:.{places}f} [{record[name + '_low']:.{bounds}f}, "
                f"{record[name + '_high']:.{bounds}f}]")

    mark = record["mark"]
    williams, permuted = record.get("williams_p_adjusted"), record.get("permutation_p_adjusted")
    versus = "–" if williams is None and permuted is None else f"{_p(williams)} / {_p(permuted)}"
    alt = "–" if record.get("alt_winning_rate") is None else \
        f"{record['alt_winning_rate']:.2f}" + {True: " ✓", False: "", None: " ?"}[record["alt_passed"]]
    spearman = interval("spearman") + (DAGGER if DAGGER in mark else "")
    accuracy = _number(record["accuracy"], digits) + (DOUBLE_DAGGER if DOUBLE_DAGGER in mark else "")
    name = record["criterion"] + (f" · {record['group']}" if record["group"] else "")
    return [name, record["judge"], str(record["n"]), spearman, interval("kendall"), interval("pearson"),
            interval("kappa"), _number(record["f1_pos"], digits) or "–",
            _number(record["f1_neg"], digits) or "–", accuracy or "–", _number(record["auc"], digits) or "–",
            versus, alt]


HEADERS = ["criterion", "judge", "n", "Spearman ρ", "Kendall τ", "Pearson r", "Cohen κ", "F1+", "F1−",
           "accuracy", "AUC", "p vs best (W / perm.)", "alt-test ω"]


def legend(alpha: float = 0.05, correction: Correction = "holm") -> str:
    """What the marks and p-values mean, with the level and the correction stated."""
    adjusted = f"{CORRECTION_NAMES[correction]}-adjusted" if correction != "none" else "unadjusted"
    return (f"Intervals: percentile bootstrap over items. {DAGGER}: Spearman ρ below the best judge's on the "
            f"criterion (Williams' t, {adjusted} p < {alpha:g}); {DOUBLE_DAGGER}: accuracy below the most "
            f"accurate judge's (McNemar, {adjusted} p < {alpha:g}). p vs best (W / perm.): {adjusted} "
            f"p-values of Williams' test and of a paired permutation test of Spearman ρ against the best "
            f"judge, each family over the table; α = {alpha:g}. alt-test ω: the judge's winning rate in the "
            f"alternative annotator test (✓: passes, ω ≥ .5; ?: cannot tell, fewer than three "
            f"annotators; Calderon et al. 2025).")


LEGEND = legend()


def to_csv(records: Sequence[dict[str, Any]], *, columns: Sequence[str] = COLUMNS) -> str:
    """Every column in full precision, one row per record; formula-like text cells are quoted."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({key: _safe_cell(record.get(key)) for key in columns})
    return buffer.getvalue()


def _safe_cell(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return "" if value is None else value


def to_markdown(records: Sequence[dict[str, Any]], *, digits: int = 3, alpha: float = 0.05,
                correction: Correction = "holm") -> str:
    """A GitHub-flavoured Markdown table with intervals, p-values and marks, and its legend."""
    def cell(text: str) -> str:
        return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "|".join(["---"] * 2 + ["---:"] * 11) + "|"]
    lines += ["| " + " | ".join(cell(text) for text in _display(record, digits)) + " |" for record in records]
    return "\n".join(lines) + f"\n\n{legend(alpha, correction)}\n"
