"""``convoscope metaeval --report FILE.html``: the tables and the figures a reader looks at, in
one self-contained page (inline SVG; no network, no JavaScript).

Figures are drawn by matplotlib with the Agg backend (the ``plots`` extra): per criterion, each
judge's scores against the human mean (jittered when both sides are on whole-number scales, so
ties do not hide each other), the confusion matrix against the human majority, a heat map of
Spearman's rho between every pair of raters, and on binary criteria the ROC curve with the
threshold at the equal error rate. SVG text is drawn as paths, so no name from the data reaches
the page as markup; the tables go through the autoescaping Jinja2 layer.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from convoscope.analysis._correlation import spearman
from convoscope.analysis._detection import equal_error_rate, roc_curve
from convoscope.analysis._export import HEADERS, LEGEND, _display, paper_table
from convoscope.analysis._metaeval import _one, _split
from convoscope.analysis._pooling import majority_vote, mean_pool
from convoscope.analysis._tables import RaterMatrix

MAX_JUDGES = 6  # figures per criterion stay readable
MAX_HEATMAP_RATERS = 12


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _svg(figure: Any) -> Any:
    from markupsafe import Markup

    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    _pyplot().close(figure)
    text = buffer.getvalue()
    return Markup(text[text.index("<svg"):])  # drop the XML prolog; text is drawn as paths


def _whole(values: np.ndarray) -> bool:
    present = values[~np.isnan(values)]
    return present.size > 0 and bool(np.all(present == np.round(present)))


def scatter(judge: str, scores: np.ndarray, human_mean: np.ndarray, *, seed: int = 0) -> Any:
    """Judge score against the human mean per item; jittered for ordinal scales."""
    plt = _pyplot()
    keep = ~(np.isnan(scores) | np.isnan(human_mean))
    x, y = scores[keep], human_mean[keep]
    if _whole(x):
        x = x + np.random.default_rng(seed).uniform(-0.15, 0.15, len(x))
    figure, axes = plt.subplots(figsize=(3.6, 3.2))
    axes.scatter(x, y, s=10, alpha=0.5)
    axes.set_xlabel(f"{judge} (jittered)" if _whole(scores[keep]) else judge, fontsize=8)
    axes.set_ylabel("human mean", fontsize=8)
    return _svg(figure)


def confusion(judge: str, scores: np.ndarray, majority: np.ndarray) -> Any | None:
    """Counts of (human majority, judge) values, for whole-number scales of up to 11 levels."""
    keep = ~(np.isnan(scores) | np.isnan(majority))
    if not keep.any() or not (_whole(scores[keep]) and _whole(majority[keep])):
        return None
    levels = np.unique(np.concatenate([scores[keep], majority[keep]]))
    if len(levels) > 11:
        return None
    index = {value: i for i, value in enumerate(levels.tolist())}
    counts = np.zeros((len(levels), len(levels)), dtype=int)
    for human, judged in zip(majority[keep].tolist(), scores[keep].tolist(), strict=True):
        counts[index[human], index[judged]] += 1
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(3.2, 3.0))
    axes.imshow(counts, cmap="Blues")
    labels = [f"{value:g}" for value in levels]
    axes.set_xticks(range(len(levels)), labels, fontsize=7)
    axes.set_yticks(range(len(levels)), labels, fontsize=7)
    for (row, column), count in np.ndenumerate(counts):
        axes.text(column, row, str(count), ha="center", va="center", fontsize=7,
                  color="white" if count > counts.max() / 2 else "black")
    axes.set_xlabel(judge, fontsize=8)
    axes.set_ylabel("human majority", fontsize=8)
    return _svg(figure)


def heatmap(names: Sequence[str], rows: Sequence[np.ndarray]) -> Any:
    """Spearman's rho between every pair of raters on their shared items (blank: undefined)."""
    size = len(names)
    values = np.full((size, size), np.nan)
    for i in range(size):
        for j in range(size):
            try:
                values[i, j] = 1.0 if i == j else spearman(rows[i], rows[j])
            except ValueError:
                continue
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(1.2 + 0.45 * size, 1.0 + 0.45 * size))
    image = axes.imshow(values, cmap="RdBu", vmin=-1, vmax=1)
    axes.set_xticks(range(size), names, rotation=60, ha="right", fontsize=7)
    axes.set_yticks(range(size), names, fontsize=7)
    figure.colorbar(image, ax=axes, shrink=0.8)
    return _svg(figure)


def roc(judge: str, scores: np.ndarray, majority: np.ndarray, positive: Any) -> Any | None:
    """ROC of the judge's scores against the binary human majority, the threshold at the equal
    error rate marked."""
    keep = ~(np.isnan(scores) | np.isnan(majority))
    try:
        curve = roc_curve(majority[keep], scores[keep], positive=positive)
        chosen = equal_error_rate(majority[keep], scores[keep], positive=positive)
    except ValueError:
        return None
    at = int(np.argmin(np.abs(curve.thresholds - chosen.threshold)))
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(3.2, 3.0))
    axes.plot(curve.fpr, curve.tpr, marker=".")  # straight segments between ROC points, as sklearn draws
    axes.plot([0, 1], [0, 1], linestyle=":", color="grey")
    axes.scatter([curve.fpr[at]], [curve.tpr[at]], color="red", zorder=3,
                 label=f"threshold {chosen.threshold:g} (EER {chosen.rate:.2f})")
    axes.legend(fontsize=7, loc="lower right")
    axes.set_xlabel(f"false positive rate ({judge})", fontsize=8)
    axes.set_ylabel("true positive rate", fontsize=8)
    return _svg(figure)


def _section(criterion: str, judges: RaterMatrix, humans: RaterMatrix) -> dict[str, Any]:
    figures: list[dict[str, Any]] = []
    if not (judges.numeric and humans.numeric):
        return {"criterion": criterion, "figures": figures}
    human_mean, majority = mean_pool(humans.values), majority_vote(humans.values)
    binary = set(np.unique(majority[~np.isnan(majority)]).tolist())
    for judge in judges.raters[:MAX_JUDGES]:
        scores = judges.row(judge)
        figures.append({"svg": scatter(judge, scores, human_mean),
                        "caption": f"{judge} against the human mean"})
        matrix = confusion(judge, scores, majority)
        if matrix is not None:
            figures.append({"svg": matrix, "caption": f"{judge} against the human majority"})
        if len(binary) == 2:
            curve = roc(judge, scores, majority, max(binary))
            if curve is not None:
                figures.append({"svg": curve, "caption": f"ROC of {judge}"})
    names = [*judges.raters[:MAX_JUDGES], "human mean", *humans.raters[:MAX_HEATMAP_RATERS - MAX_JUDGES]]
    rows = [*(judges.row(j) for j in judges.raters[:MAX_JUDGES]), human_mean,
            *(humans.row(h) for h in humans.raters[:MAX_HEATMAP_RATERS - MAX_JUDGES])]
    figures.append({"svg": heatmap(names, rows), "caption": "Spearman ρ between raters"})
    return {"criterion": criterion, "figures": figures}


def _format(result: Any, digits: int = 3) -> str:
    return "–" if result is None else f"{result:.{digits}f}"


def metaeval_report(judge_ratings: Iterable[Any], human_ratings: Iterable[Any] | None, rows: Sequence[Any], *,
                    comparisons: Sequence[Any] = (), systems: Sequence[Any] = (),
                    title: str = "Meta-evaluation") -> str:
    """The report page as a string (write it to a ``.html`` file)."""
    from convoscope.html import render

    judges, humans = _split(judge_ratings, human_ratings)
    criteria = list(dict.fromkeys(row.criterion for row in rows))
    sections = []
    for criterion in criteria:
        human = _one(humans, criterion, "value")
        judged = _one(judges, criterion, "value").select(items=human.items)
        sections.append(_section(criterion, judged, human))
    records = paper_table(rows, comparisons)
    return render("metaeval/report.html", title=title, headers=HEADERS, legend=LEGEND,
                  table=[_display(record, 3) for record in records],
                  comparisons=[_comparison_cells(c) for c in comparisons],
                  systems=[_system_cells(s) for s in systems], sections=sections)


def _comparison_cells(c: Any) -> dict[str, Any]:
    test = c.williams
    boot = c.bootstrap
    return {"criterion": c.criterion, "judge_a": c.judge_a, "judge_b": c.judge_b, "n": c.n_items,
            "r_a": _format(test.r_a if test else None), "r_b": _format(test.r_b if test else None),
            "williams": _format(test.pvalue if test else None),
            "steiger": _format(c.steiger.pvalue if c.steiger else None),
            "bootstrap": "–" if boot is None else f"{boot.estimate:+.3f} [{boot.low:+.2f}, {boot.high:+.2f}]",
            "mcnemar": _format(c.mcnemar.pvalue if c.mcnemar else None)}


def _system_cells(s: Any) -> dict[str, Any]:
    def interval(result: Any) -> str:
        return "–" if result is None else f"{result.estimate:.3f} [{result.low:.2f}, {result.high:.2f}]"

    return {"criterion": s.criterion, "judge": s.judge, "n": s.n_systems, "pearson": interval(s.pearson),
            "spearman": interval(s.spearman)}

