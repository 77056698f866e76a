"""The system-means figure for a paper: per criterion and judge, each system's mean judge score
against people's mean, named, with people's own 95 % interval on each mean (Student t over the
system's items) — the human ceiling at system level: a judge cannot be shown better than the
spread of people's own means allows. The title gives system ρ with its interval."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

import numpy as np
from scipy import stats

from convoscope.analysis._pooling import mean_pool

Means = dict[str, tuple[float, float, float]]  # system -> (judge mean, people's mean, half-width)


def system_means(judge_scores: np.ndarray, human_mean: np.ndarray, systems: np.ndarray) -> Means:
    """Per system: the judge's mean, people's mean and the half-width of its 95 % t interval."""
    found: Means = {}
    keep = ~(np.isnan(judge_scores) | np.isnan(human_mean)) & np.array([s is not None for s in systems])
    for name in sorted({str(s) for s in systems[keep]}):
        chosen = keep & (systems.astype(str) == name)
        people = human_mean[chosen]
        half = float(stats.t.ppf(0.975, len(people) - 1) * people.std(ddof=1) / np.sqrt(len(people))) \
            if len(people) > 1 else float("nan")
        found[name] = (float(judge_scores[chosen].mean()), float(people.mean()), half)
    return found


def system_scatter(judge: str, means: Means, title: str) -> Any:
    from convoscope.analysis._report import _pyplot

    plt = _pyplot()
    names = list(means)
    x = np.array([means[n][0] for n in names])
    y = np.array([means[n][1] for n in names])
    half = np.array([means[n][2] for n in names])
    figure, axes = plt.subplots(figsize=(3.6, 3.2))
    axes.errorbar(x, y, yerr=half, fmt="o", ms=4, capsize=2, elinewidth=0.8)
    for name, a, b in zip(names, x, y, strict=True):
        axes.annotate(name, (a, b), fontsize=6, xytext=(3, 3), textcoords="offset points")
    axes.set_xlabel(f"{judge}: system mean", fontsize=8)
    axes.set_ylabel("people: system mean (95% interval)", fontsize=8)
    axes.set_title(title, fontsize=8)
    return figure


def system_figures(study: Any, judges: list[Any], humans: list[Any]) -> Iterator[tuple[str, str, str, Any]]:
    """One system-means figure per system-level row of ``study``."""
    from convoscope.analysis._metaeval import _one

    system_of = {str(r.item_id): str(r.system) for r in [*judges, *humans] if getattr(r, "system", None)}
    for row in study.systems:
        human = _one(humans, row.criterion, "value")
        if not human.numeric:
            continue
        judged = _one(judges, row.criterion, "value").select(items=human.items)
        if row.judge not in judged.raters or not judged.numeric:
            continue
        systems = np.array([system_of.get(item) for item in human.items], dtype=object)
        means = system_means(judged.row(row.judge), mean_pool(human.values), systems)
        rho = row.spearman
        title = "" if rho is None else f"system ρ {rho.estimate:.2f} [{rho.low:.2f}, {rho.high:.2f}]"
        yield (row.criterion, f"systems-{row.judge}", f"{row.judge}: system means against people's",
               partial(system_scatter, row.judge, means, title))
