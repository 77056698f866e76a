"""The plain-words verdict: sentences chosen by rules on the card's own numbers, never by a model.

Each sentence is a :class:`Finding` naming the :class:`CardThresholds` field it tested, so the
paragraph can be checked against the thresholds printed beside it. A claim ("usable for ...")
carries its :class:`~convoscope.analysis.Decision`: pass, fail, or cannot tell — because ...
"""

from __future__ import annotations

from convoscope.analysis import Decision, SystemRow
from convoscope.analysis._decision import cannot_tell, decide
from convoscope.card._model import Agreement, CardThresholds, Finding, JudgeReport


def findings(report: JudgeReport, thresholds: CardThresholds) -> tuple[Finding, ...]:
    """Every finding on ``report``: per criterion (and language), then the warnings."""
    found: list[Finding] = []
    overall = [a for a in report.agreement if a.language is None]
    for agreement in overall:
        found.append(_item_level(agreement, thresholds))
        found.extend(_above_ceiling(agreement, thresholds))
        found.extend(_system_level(report, agreement.criterion, thresholds))
        if found[-1].good or any(f.good for f in found if f.criterion == agreement.criterion):
            found.extend(_languages(report, agreement, thresholds))
    found.extend(_warnings(report, thresholds))
    return tuple(found)


def paragraph(report: JudgeReport, found: tuple[Finding, ...]) -> str:
    """One paragraph: what the judge is usable for, what not, and the warnings."""
    if not found:
        return f"{report.judge}: nothing could be measured against people."
    good = [f.text for f in found if f.good]
    bad = [f.text for f in found if not f.good and not f.cannot_tell]
    unsure = [f.text for f in found if f.cannot_tell]
    parts = ["Usable " + "; ".join(good) + "." if good else "Usable for nothing measured here."]
    if bad:
        text = "; ".join(bad)
        parts.append(text[0].upper() + text[1:] + ".")
    if unsure:
        parts.append("Cannot tell: " + "; ".join(unsure) + ".")
    return f"{report.judge}: " + " ".join(parts)


def _rho(agreement: Agreement) -> float | None:
    return agreement.judge.spearman.estimate if agreement.judge.spearman else None


ITEM_RULE = ("score items when at least min_items are rated by both, ρ's interval excludes 0, ρ ≥ "
             "item_rho, and ρ beats the best cheap baseline by baseline_margin")


def _item_level(agreement: Agreement, limits: CardThresholds) -> Finding:
    name, row = agreement.criterion, agreement.judge
    rho = _rho(agreement)
    numbers = dict(items=row.n_items, rho=rho, low=row.spearman.low if row.spearman else None)
    if row.n_items < limits.min_items:
        return Finding("min_items", f"too few rated items on {name} to say ({row.n_items}, "
                       f"fewer than {limits.min_items})", name,
                       decision=cannot_tell(ITEM_RULE, f"{row.n_items} items rated by both", **numbers))
    if rho is None or row.spearman is None:
        return Finding("item_rho", f"no correlation with people could be computed on {name}", name,
                       decision=cannot_tell(ITEM_RULE, "no correlation could be computed", **numbers))
    failed = decide(False, ITEM_RULE, **numbers)
    best = agreement.best_baseline
    if best is not None and best.spearman is not None and \
            rho < best.spearman.estimate + limits.baseline_margin:
        return Finding("baseline_margin", f"no better than {best.judge.split(':', 1)[-1]} on {name} "
                       f"(ρ {rho:.2f} vs {best.spearman.estimate:.2f})", name, decision=failed)
    if row.spearman.low <= 0:
        return Finding("item_rho", f"no measurable agreement with people on {name} "
                       f"(ρ {rho:.2f}, interval reaches {row.spearman.low:.2f})", name, decision=failed)
    if rho < limits.item_rho:
        return Finding("item_rho", f"not for scoring items on {name} (ρ {rho:.2f}, below {limits.item_rho})",
                       name, decision=failed)
    replaces = " (can replace an annotator)" if agreement.replaces_annotator == "yes" else ""
    return Finding("item_rho", f"for scoring items on {name}{replaces} (ρ {rho:.2f})", name, good=True,
                   decision=decide(True, ITEM_RULE, **numbers))


SYSTEM_RULE = ("rank systems when there are at least min_systems of them, system ρ ≥ system_rho, its "
               "interval lies above weak_rho, and no outlier system is flagged unless r without it "
               "still reaches system_rho")


def system_decision(row: SystemRow, limits: CardThresholds) -> Decision:
    """May the judge rank systems? The rule in :data:`SYSTEM_RULE`, on one system-level row."""
    interval = row.spearman
    numbers = dict(systems=row.n_systems, rho=interval.estimate if interval else None,
                   low=interval.low if interval else None, outliers=", ".join(row.outliers) or None,
                   r_without_outliers=row.pearson_without_outliers)
    if interval is None:
        return cannot_tell(SYSTEM_RULE, "no system-level correlation could be computed", **numbers)
    if row.n_systems < limits.min_systems:
        return cannot_tell(SYSTEM_RULE, f"{row.n_systems} systems, fewer than {limits.min_systems}: "
                           "too few to tell a ranking from chance", **numbers)
    if row.outliers and row.pearson_without_outliers is None:
        return cannot_tell(SYSTEM_RULE, f"outlier system(s) {', '.join(row.outliers)} flagged and no "
                           "correlation without them", **numbers)
    without = row.pearson_without_outliers if row.outliers else None
    passed = interval.estimate >= limits.system_rho and interval.low > limits.weak_rho and (
        without is None or without >= limits.system_rho)
    return decide(passed, SYSTEM_RULE, **numbers)


def _system_level(report: JudgeReport, criterion: str, limits: CardThresholds) -> list[Finding]:
    rows = [row for row in report.systems if row.criterion == criterion and row.spearman is not None]
    if not rows:
        return []
    row, interval = rows[0], rows[0].spearman
    assert interval is not None
    decision = system_decision(row, limits)
    figures = f"system ρ {interval.estimate:.2f} [{interval.low:.2f}, {interval.high:.2f}], " \
              f"{row.n_systems} systems"
    if row.outliers and row.pearson_without_outliers is not None:
        figures += f"; r without {', '.join(row.outliers)} {row.pearson_without_outliers:.2f}"
    elif row.weakest is not None:
        figures += f"; r without {row.weakest[0]}, the most influential, {row.weakest[1]:.2f}"
    if decision.passed:
        return [Finding("system_rho", f"for ranking systems on {criterion} ({figures})", criterion,
                        good=True, decision=decision)]
    if decision.outcome == "cannot_tell":
        return [Finding("min_systems", f"whether it ranks systems on {criterion} ({decision.reason}; "
                        f"{figures})", criterion, decision=decision)]
    return [Finding("system_rho", f"not for ranking systems on {criterion} ({figures})", criterion,
                    decision=decision)]


def _above_ceiling(agreement: Agreement, limits: CardThresholds) -> list[Finding]:
    """A judge that agrees with people better than people agree with each other: the items may
    have leaked into its training or prompt, or the ceiling is poorly measured. Like for like
    (``analysis._ceiling``): the judge and each person against the mean of the other people, so
    a judge that is just one more person is flagged at most at the test's level."""
    check = agreement.judge.ceiling_check
    if check is None or not check.above(limits.ceiling_margin):
        return []
    assert check.difference is not None  # above() needs it
    return [Finding("ceiling_margin", f"above the people's own agreement on {agreement.criterion} (against "
                    f"the others' mean, as each person is: ρ {check.judge_loo:.2f} over the people's "
                    f"{check.people_loo:.2f}, difference interval from {check.difference.low:.2f}): "
                    f"check for leakage or a bad ceiling", agreement.criterion)]


def _languages(report: JudgeReport, overall: Agreement, limits: CardThresholds) -> list[Finding]:
    found = []
    for agreement in report.agreement:
        if agreement.criterion != overall.criterion or agreement.language is None:
            continue
        verdict = _item_level(agreement, limits)
        language = agreement.language
        if not verdict.good:
            found.append(Finding(verdict.rule, f"not in {language}: {verdict.text}", overall.criterion,
                                 language))
    return found


def _warnings(report: JudgeReport, limits: CardThresholds) -> list[Finding]:
    found: list[Finding] = []
    manipulation = report.manipulation
    if manipulation is not None and manipulation.share is not None and \
            manipulation.share > limits.max_manipulation_share:
        found.append(Finding("max_manipulation_share", f"fooled by answers that address or imitate the "
                             f"grader ({manipulation.above} of {manipulation.pairs} probes scored above "
                             f"their clean answer)"))
    for criterion, flips in report.position:
        if flips.rate > limits.max_position_flips:
            found.append(Finding("max_position_flips", f"swayed by the order of a pair on {criterion} ("
                                 f"{flips.flips} of {flips.pairs} pairs flipped)", criterion))
    share = report.unscored_share
    if share is not None and share > limits.max_unscored_share:
        found.append(Finding("max_unscored_share", f"leaves {share:.0%} of its verdicts unscored"))
    for consistency in report.consistency:
        if consistency.pairwise < limits.min_self_agreement:
            found.append(Finding("min_self_agreement", f"inconsistent with itself on {consistency.criterion}"
                                 f" (pairs of repeats agree on {consistency.pairwise:.0%} of items)",
                                 consistency.criterion))
    for bias in report.bias:
        found.extend(_leans(bias, limits))
    return found


def _leans(bias: object, limits: CardThresholds) -> list[Finding]:
    from convoscope.estimate import BiasReport

    assert isinstance(bias, BiasReport)
    found = []
    if bias.length and abs(bias.length.rho) > limits.max_length_rho and bias.length.pvalue < limits.alpha:
        way = "longer" if bias.length.rho > 0 else "shorter"
        found.append(Finding("max_length_rho", f"favours {way} answers than people do on {bias.criterion} "
                             f"(residual ρ {bias.length.rho:.2f})", bias.criterion))
    for language, gap in bias.languages.items() if len(bias.languages) > 1 else ():
        if abs(gap.mean_residual) > limits.max_language_gap and gap.pvalue is not None and \
                gap.pvalue < limits.alpha:
            way = "above" if gap.mean_residual > 0 else "below"
            found.append(Finding("max_language_gap", f"scores {language} {abs(gap.mean_residual):.2f} SD "
                                 f"{way} people on {bias.criterion}", bias.criterion, language))
    own = bias.self_preference
    if own is not None and own.mean_residual > limits.max_self_preference and own.pvalue is not None \
            and own.pvalue < limits.alpha:
        found.append(Finding("max_self_preference", f"favours its own family's systems on {bias.criterion} "
                             f"(+{own.mean_residual:.2f} SD)", bias.criterion))
    return found
