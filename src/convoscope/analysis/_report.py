"""``convoscope metaeval --report FILE.html`` and ``--figures DIR``: the tables and the figures a
reader looks at — one self-contained page (inline SVG; no network, no JavaScript), or every
figure as an SVG and a PDF file for a paper.

Figures are drawn by matplotlib with the Agg backend (the ``plots`` extra): per criterion, each
judge's scores against the human mean (jittered when both sides are on whole-number scales, so
ties do not hide each other), the confusion matrix against the human majority, a heat map of
Spearman's rho between every pair of raters with the value written in each cell, and on binary
criteria the ROC curve with the threshold at the equal error rate. SVG text is drawn as paths,
so no name from the data reaches the page as markup; the tables go through the autoescaping
Jinja2 layer. File names are made from the criterion and judge names with every character
outside ``A-Za-z0-9._-`` replaced.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from convoscope.analysis._correlation import spearman
from convoscope.analysis._detection import equal_error_rate, roc_curve
from convoscope.analysis._export import HEADERS, _display, legend
from convoscope.analysis._metaeval import _one, _split
from convoscope.analysis._pooling import majority_vote, mean_pool

MAX_JUDGES = 6  # figures per criterion stay readable
MAX_HEATMAP_RATERS = 12
Figure = tuple[str, str, str, Callable[[], Any]]  # criterion, file stem, caption, drawing


def figures_unavailable() -> str | None:
    """Why figures cannot be drawn (matplotlib, the ``plots`` extra, is not installed), or None.
    The report is then written without them and says so; the tables need no extra."""
    from convoscope.errors import MissingExtra

    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return str(MissingExtra("matplotlib", "plots", "drawing figures"))
    return None


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
    return figure


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
    return figure


def correlation_matrix(rows: Sequence[np.ndarray]) -> np.ndarray:
    """Spearman's rho between every pair of rows on their shared items (NaN: undefined)."""
    size = len(rows)
    values = np.full((size, size), np.nan)
    for i in range(size):
        for j in range(size):
            try:
                values[i, j] = 1.0 if i == j else spearman(rows[i], rows[j])
            except ValueError:
                continue
    return values


def heatmap(names: Sequence[str], rows: Sequence[np.ndarray]) -> Any:
    """Spearman's rho between every pair of raters, the value written in each cell (blank:
    undefined)."""
    values = correlation_matrix(rows)
    size = len(names)
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(1.4 + 0.55 * size, 1.1 + 0.5 * size))
    image = axes.imshow(values, cmap="RdBu", vmin=-1, vmax=1)
    axes.set_xticks(range(size), names, rotation=60, ha="right", fontsize=7)
    axes.set_yticks(range(size), names, fontsize=7)
    for (row, column), value in np.ndenumerate(values):
        if np.isfinite(value):
            axes.text(column, row, f"{value:.2f}", ha="center", va="center", fontsize=6,
                      color="white" if abs(value) > 0.6 else "black")
    figure.colorbar(image, ax=axes, shrink=0.8)
    return figure


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
    return figure


def _criterion_figures(criterion: str, judges: Any, humans: Any) -> Iterator[Figure]:
    if not (judges.numeric and humans.numeric):
        return
    human_mean, majority = mean_pool(humans.values), majority_vote(humans.values)
    binary = set(np.unique(majority[~np.isnan(majority)]).tolist())
    for judge in judges.raters[:MAX_JUDGES]:
        scores = judges.row(judge)
        yield (criterion, f"scatter-{judge}", f"{judge} against the human mean",
               partial(scatter, judge, scores, human_mean))
        yield (criterion, f"confusion-{judge}", f"{judge} against the human majority",
               partial(confusion, judge, scores, majority))
        if len(binary) == 2:
            yield (criterion, f"roc-{judge}", f"ROC of {judge}",
                   partial(roc, judge, scores, majority, max(binary)))
    names = [*judges.raters[:MAX_JUDGES], "human mean", *humans.raters[:MAX_HEATMAP_RATERS - MAX_JUDGES]]
    rows = [*(judges.row(j) for j in judges.raters[:MAX_JUDGES]), human_mean,
            *(humans.row(h) for h in humans.raters[:MAX_HEATMAP_RATERS - MAX_JUDGES])]
    yield criterion, "heatmap", "Spearman ρ between raters", partial(heatmap, names, rows)


def figures(study: Any) -> Iterator[Figure]:
    """Every figure of a study, criterion by criterion, drawn when called."""
    judges, humans = _split(study.judge_ratings, study.human_ratings)
    for criterion in dict.fromkeys(row.criterion for row in study.rows):
        human = _one(humans, criterion, "value")
        judged = _one(judges, criterion, "value").select(items=human.items)
        yield from _criterion_figures(criterion, judged, human)
    if study.systems:
        from convoscope.analysis._report_system import system_figures

        yield from system_figures(study, judges, humans)


def _stem(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:80] or "figure"


def write_figures(study: Any, directory: Path) -> list[Path]:
    """Every figure as ``<criterion>-<kind>-<judge>.svg`` and ``.pdf`` in ``directory``
    (raises :class:`~convoscope.errors.MissingExtra` without matplotlib)."""
    missing = figures_unavailable()
    if missing is not None:
        from convoscope.errors import MissingExtra

        raise MissingExtra("matplotlib", "plots", "drawing figures")
    plt = _pyplot()
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    used: set[str] = set()
    for criterion, stem, _, draw in figures(study):
        figure = draw()
        if figure is None:
            continue
        name = base = _stem(f"{criterion}-{stem}")
        count = 1
        while name in used:
            count += 1
            name = f"{base}-{count}"
        used.add(name)
        for suffix in (".svg", ".pdf"):
            path = directory / f"{name}{suffix}"
            figure.savefig(path, bbox_inches="tight", metadata={"Date": None} if suffix == ".svg" else None)
            written.append(path)
        plt.close(figure)
    return written


def _format(result: Any, digits: int = 3) -> str:
    return "–" if result is None else f"{result:.{digits}f}"


def _interval(result: Any) -> str:
    return "–" if result is None else f"{result.estimate:.3f} [{result.low:.2f}, {result.high:.2f}]"


def metaeval_report(study: Any, *, title: str = "Meta-evaluation") -> str:
    """The report page of a :class:`MetaevalStudy` as a string (write it to a ``.html`` file)."""
    from convoscope.html import render

    sections: dict[str, list[dict[str, Any]]] = {}
    missing = figures_unavailable()
    for criterion, _, caption, draw in () if missing else figures(study):
        figure = draw()
        if figure is not None:
            sections.setdefault(criterion, []).append({"svg": _svg(figure), "caption": caption})
    return render("metaeval/report.html", title=title, headers=HEADERS, figures_missing=missing,
                  legend=legend(study.alpha, study.correction),
                  table=[_display(record, 3) for record in study.records()],
                  comparisons=[_comparison_cells(c) for c in study.comparisons],
                  systems=[_system_cells(s) for s in study.systems],
                  system_comparisons=[_system_comparison_cells(c) for c in study.system_comparisons],
                  rankings=[_ranking_cells(r) for r in study.rankings],
                  sections=[{"criterion": name, "figures": found} for name, found in sections.items()])


def _comparison_cells(c: Any) -> dict[str, Any]:
    test = c.williams
    boot = c.bootstrap
    return {"criterion": c.criterion, "judge_a": c.judge_a, "judge_b": c.judge_b, "n": c.n_items,
            "r_a": _format(test.r_a if test else None), "r_b": _format(test.r_b if test else None),
            "williams": _format(test.pvalue if test else None),
            "steiger": _format(c.steiger.pvalue if c.steiger else None),
            "permutation": _format(c.permutation.pvalue if c.permutation else None),
            "bootstrap": "–" if boot is None else f"{boot.estimate:+.3f} [{boot.low:+.2f}, {boot.high:+.2f}]",
            "mcnemar": _format(c.mcnemar.pvalue if c.mcnemar else None)}


def _system_cells(s: Any) -> dict[str, Any]:
    found = s.pairwise_accuracy
    return {"criterion": s.criterion, "judge": s.judge, "n": s.n_systems, "pearson": _interval(s.pearson),
            "spearman": _interval(s.spearman), "resample": s.resample,
            "accuracy": "–" if found is None else f"{found.accuracy:.3f} ({found.agreeing}/{found.n_pairs})",
            "outliers": ", ".join(s.outliers) or "–", "notes": "; ".join(s.notes)}


def _system_comparison_cells(c: Any) -> dict[str, Any]:
    return {"criterion": c.criterion, "judge_a": c.judge_a, "judge_b": c.judge_b, "n": c.n_systems,
            "williams": _format(c.williams.pvalue if c.williams else None),
            "bootstrap": "–" if c.bootstrap is None else
            f"{c.bootstrap.estimate:+.3f} [{c.bootstrap.low:+.2f}, {c.bootstrap.high:+.2f}]",
            "permutation": _format(c.permutation.pvalue if c.permutation else None)}


def _ranking_cells(r: Any) -> dict[str, Any]:
    clusters = r.significance.clusters if r.significance else ()
    cluster_of = {name: index + 1 for index, group in enumerate(clusters) for name in group}
    test = r.significance
    stated = "" if test is None else f"{test.correction}, α = {test.alpha:g}"
    return {"criterion": r.criterion, "test": stated,
            "ranks": [{"system": rank.system, "mean": f"{rank.mean:.3f}", "rank": f"{rank.rank:g}",
                       "interval": f"[{rank.low:g}, {rank.high:g}]",
                       "cluster": cluster_of.get(rank.system, "–")} for rank in r.ranks]}
