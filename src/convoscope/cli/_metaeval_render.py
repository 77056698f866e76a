"""The terminal tables of ``convoscope agree`` and ``convoscope metaeval``.

Every table wraps its cells rather than cutting them (names from the data are keys a reader
needs whole); ``--wide`` prints them at full width instead. Names are ``Text``, never markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

COMPACT: dict[str, Any] = dict(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False,
                               collapse_padding=True, show_edge=False)


class FittedTable(Table):
    """A table that never splits a number: when even its narrowest layout (every column at its
    longest word) is wider than the console, each row is printed as a block of "header: value"
    lines instead of folding words — so "[+0.09, +0.12]" is never cut into "[+0.0" and "9,"."""

    def __rich_console__(self, console: Any, options: Any) -> Any:
        # Narrowest layout without splitting a word: each column at its longest word, plus the
        # padding and rule between columns (3 characters, counted generously).
        narrowest = sum(max([widest_word(column.header), *(widest_word(c) for c in column._cells)])
                        for column in self.columns) + 3 * max(len(self.columns) - 1, 0)
        if narrowest <= options.max_width or not self.row_count:
            yield from super().__rich_console__(console, options)
            return
        if self.title is not None:
            yield self.title
        for row in range(self.row_count):
            yield Text("\n").join(Text.assemble((f"{column.header}: ", "bold"), _as_text(column._cells[row]))
                                  for column in self.columns)
            yield Text("")
        if self.caption is not None:
            yield self.caption


def widest_word(cell: Any) -> int:
    """The longest run of non-space characters in a cell: the narrowest it can be without a split."""
    return max((len(word) for word in str(cell).split()), default=0)


def _as_text(cell: Any) -> Text:
    return cell if isinstance(cell, Text) else Text(str(cell))


def wrapped_table(title: str, headers: Sequence[str], *, keys: int = 1, caption: str | None = None) -> Table:
    """A compact table whose cells wrap instead of being cut: the first ``keys`` columns (names
    from the data) are left-aligned; no cell is ever shortened with an ellipsis, and no number is
    split (too narrow a console gets one block per row, :class:`FittedTable`)."""
    table = FittedTable(title=Text(title), caption=caption, **COMPACT)
    for index, header in enumerate(headers):
        table.add_column(header, justify="left" if index < keys else "right", overflow="fold")
    return table


def fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def interval(result: Any, digits: int = 2) -> str:
    if result is None:
        return "–"
    return f"{result.estimate:.3f} [{result.low:.{digits}f}, {result.high:.{digits}f}]"


def difference(result: Any) -> str:
    """A bootstrap interval of a difference, signed."""
    if result is None:
        return "–"
    return f"{result.estimate:+.3f} [{result.low:+.2f}, {result.high:+.2f}]"


def p_value(test: Any) -> str:
    if test is None:
        return "–"
    return "<.001" if test.pvalue < 0.001 else f"{test.pvalue:.3f}"


def agreement_table(rows: list[Any], by: str | None) -> Table:
    headers = ["criterion", *([by] if by else []), "level", "items", "raters", "agree", "Fleiss κ [CI]",
               "α [CI]", "Cohen κ [CI]", "pair ρ", "LOO ρ", "strong", "strong κ", "idk"]
    table = wrapped_table("Inter-annotator agreement", headers, keys=3 if by else 2)
    for row in rows:
        strong = row.strong
        table.add_row(
            Text(row.criterion), *([Text(row.group or "–")] if by else []), row.level, str(row.n_items),
            str(row.n_raters), percent(row.percent_agreement),
            _with_ci(row.fleiss_kappa, row.fleiss_ci), _with_ci(row.krippendorff_alpha, row.alpha_ci),
            _with_ci(row.mean_cohen_kappa, row.cohen_ci), fmt(row.pairwise_spearman), fmt(row.loo_spearman),
            percent(strong.percent_agreement if strong else None), fmt(strong.kappa if strong else None),
            str(strong.n_removed) if strong else "–")
    return table


def _with_ci(value: float | None, result: Any) -> str:
    if value is None:
        return "–"
    return fmt(value) if result is None else f"{value:.3f} [{result.low:.2f}, {result.high:.2f}]"


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def agreement_legend(rows: list[Any], resamples: int) -> str:
    weights = {row.level: row.cohen_weights for row in rows}
    kappa = ", ".join(f"{level}: {weight or 'unweighted'}" for level, weight in weights.items())
    return (f"level: the level of measurement of α and the κ weights (default: ordinal for numbers, nominal "
            f"for labels; --level). Cohen κ: mean over rater pairs ({kappa}). "
            + (f"[CI]: 95% percentile bootstrap over items ({resamples} resamples). " if resamples else "")
            + "pair ρ: mean Spearman over rater pairs; LOO ρ: each rater against the mean of the others "
              "(3+ raters); strong: items where a rater said \"I don't know\" removed (idk: how many).")


def metaeval_tables(rows: Sequence[Any]) -> list[Table]:
    """One table per criterion and group: judges as rows, the human ceiling in the caption."""
    sections: dict[tuple[str, str | None], list[Any]] = {}
    for row in rows:
        sections.setdefault((row.criterion, row.group), []).append(row)
    tables = []
    for (criterion, group), section in sections.items():
        binary = any(row.binary or row.auc is not None for row in section)
        # Nominal labels are categories: a correlation of their codes is not printed at all.
        ordered = section[0].humans.alpha_level != "nominal"
        headers = ["judge", "n", *(["Spearman ρ", "Kendall τ", "Pearson r"] if ordered else []), "Cohen κ",
                   *(["F1+", "F1−", "AUC"] if binary else []), "alt-test ω (ρ)"]
        table = wrapped_table(f"{criterion}" + (f" · {group}" if group else ""), headers,
                              caption=_ceiling(section[0].humans))
        for row in section:
            kappa = interval(row.kappa_ci) if row.kappa_ci else fmt(row.kappa)
            if row.kappa is not None and row.kappa_weights != "quadratic":
                kappa += " (unweighted)"
            scores = row.binary
            f1s = [fmt(scores.f1_pos if scores else None), fmt(scores.f1_neg if scores else None),
                   fmt(row.auc)] if binary else []
            correlations = [interval(row.spearman), interval(row.kendall), interval(row.pearson)] \
                if ordered else []
            table.add_row(Text(row.judge), str(row.n_items), *correlations, kappa, *f1s, _alt(row.alt_test))
        tables.append(table)
    return tables


def _ceiling(humans: Any) -> str:
    alpha = interval(humans.alpha_ci) if humans.alpha_ci else fmt(humans.alpha)
    loo = fmt(humans.loo_spearman) if humans.note is None else f"– ({humans.note})"
    return f"humans: {humans.n_humans}, α {alpha} ({humans.alpha_level}), leave-one-out ρ {loo}"


def _alt(result: Any) -> str:
    if result is None:
        return "–"
    decision = result.decision
    text = f"{result.winning_rate:.2f} ({result.advantage_probability:.2f}) {decision.word}, {result.scoring}"
    return text + (f" ({result.level})" if result.level else "") + (
        f" — {decision.reason}" if decision.outcome == "cannot_tell" else "")


def metaeval_legend(confidence: float, alpha: float, correction: str, ties: str,
                    epsilon: float | None) -> str:
    from convoscope.analysis._multitest import CORRECTION_NAMES

    alt = ("alt-test ω (ρ): the alternative annotator test (Calderon et al. 2025): the share of people the "
           f"judge can replace at ε = {epsilon:g} (Benjamini–Yekutieli, α = {alpha:g}; passes at ω ≥ .5 "
           "with three or more annotators, cannot tell with two) and its advantage probability, then the "
           "scoring the labels' level chose (accuracy for nominal labels however coded, −RMSE for ordered "
           "numbers). " if epsilon is not None else "")
    return (f"Correlations are with the mean human score, [{confidence:.0%} bootstrap interval]; Cohen κ is "
            f"with the human majority (quadratic weights for numbers; ties: {ties}), with its interval. "
            "F1+ / F1− score the positive and the negative class of binary criteria, AUC ranks their "
            "items by score. baseline: rows have no threshold, so no κ or F1. " + alt
            + f"p-values across judges are {CORRECTION_NAMES[correction]}-adjusted in the exported tables "
              f"(α = {alpha:g}). The humans' own agreement, under each table, is the ceiling.")


def comparison_table(comparisons: Sequence[Any]) -> Table:
    headers = ["criterion", "A", "B", "n", "ρ A", "ρ B", "Williams p", "Steiger p", "perm. p",
               "ρ A − ρ B [bootstrap]", "McNemar p"]
    table = wrapped_table("Judge against judge (Spearman ρ with the human mean; raw p-values)", headers,
                          keys=3)
    for c in comparisons:
        williams = c.williams
        table.add_row(Text(c.criterion), Text(c.judge_a), Text(c.judge_b), str(c.n_items),
                      fmt(williams.r_a if williams else None), fmt(williams.r_b if williams else None),
                      p_value(williams), p_value(c.steiger), p_value(c.permutation), difference(c.bootstrap),
                      p_value(c.mcnemar))
    return table


def system_tables(study: Any) -> list[Table]:
    tables = []
    if study.systems:
        resample = study.systems[0].resample
        table = wrapped_table(f"System level (system means; {resample})",
                              ["criterion", "judge", "systems", "Pearson r", "Spearman ρ", "pairwise acc.",
                               "outliers", "r without (most influential)"], keys=2)
        for row in study.systems:
            found = row.pairwise_accuracy
            accuracy = "–" if found is None else f"{found.accuracy:.3f} ({found.agreeing}/{found.n_pairs})"
            table.add_row(Text(row.criterion), Text(row.judge), str(row.n_systems), interval(row.pearson),
                          interval(row.spearman), accuracy, Text(", ".join(row.outliers) or "–"),
                          Text("–" if row.weakest is None else f"{row.weakest[1]:.3f} ({row.weakest[0]})"))
        tables.append(table)
    if study.system_comparisons:
        table = wrapped_table("Judge against judge at system level (Pearson r of system means)",
                              ["criterion", "A", "B", "systems", "Williams p", "r A − r B [bootstrap]",
                               "perm. p"], keys=3)
        for c in study.system_comparisons:
            table.add_row(Text(c.criterion), Text(c.judge_a), Text(c.judge_b), str(c.n_systems),
                          p_value(c.williams), difference(c.bootstrap), p_value(c.permutation))
        tables.append(table)
    tables.extend(_ranking_table(ranking) for ranking in study.rankings)
    return tables


def _ranking_table(ranking: Any) -> Table:
    test = ranking.significance
    groups = test.clusters if test else ()
    clusters = {name: index + 1 for index, group in enumerate(groups) for name in group}
    caption = None if test is None else (
        f"cluster: every system is rated higher than every system of the clusters below it (one-sided "
        f"Mann–Whitney U, Wilcoxon signed-rank on shared inputs; {test.correction}, α = {test.alpha:g})")
    table = wrapped_table(f"People's ranking of the systems: {ranking.criterion}",
                          ["system", "items", "mean", "rank", "rank interval", "cluster"], caption=caption)
    items = dict(zip(test.systems, test.n_items, strict=True)) if test else {}
    for rank in ranking.ranks:
        table.add_row(Text(rank.system), str(items.get(rank.system, "–")), f"{rank.mean:.3f}",
                      f"{rank.rank:g}", f"[{rank.low:g}, {rank.high:g}]", str(clusters.get(rank.system, "–")))
    return table


def per_set_table(per_set: Sequence[Any]) -> Table:
    table = wrapped_table("Against each human rater alone, averaged (per annotation set)",
                          ["criterion", "judge", "sets", "F1+", "F1−", "accuracy", "Spearman ρ"], keys=2)
    for row in per_set:
        table.add_row(Text(row.criterion), Text(row.judge), str(row.n_sets), fmt(row.f1_pos),
                      fmt(row.f1_neg), fmt(row.accuracy), fmt(row.spearman))
    return table


def bias_table(reports: list[Any]) -> Table:
    table = wrapped_table("Judge bias against people (residual = judge − people, both standardised)",
                          ["judge", "criterion", "n", "length ρ (p)", "per language: mean residual",
                           "self-preference"], keys=2)
    for report in reports:
        length = "–" if report.length is None else f"{report.length.rho:+.2f} ({report.length.pvalue:.2g})"
        languages = ", ".join(f"{name} {gap.mean_residual:+.2f}" for name, gap in report.languages.items())
        own = report.self_preference
        table.add_row(Text(report.judge), Text(report.criterion), str(report.n), length, Text(languages),
                      "–" if own is None else f"{own.mean_residual:+.2f} (n {own.n})")
    return table


def self_consistency_table(found: Sequence[Any]) -> Table:
    """Judges asked several times: how far each agrees with itself (noise, apart from bias)."""
    table = wrapped_table("Self-consistency over repeats", ["judge", "criterion", "repeats", "items",
                                                           "pairs agreeing", "modal share",
                                                           "α (repeats as raters)"], keys=2)
    for row in found:
        table.add_row(Text(row.judge), Text(row.criterion), str(row.repeats), str(row.items),
                      fmt(row.pairwise), fmt(row.agreement), fmt(row.alpha))
    return table
