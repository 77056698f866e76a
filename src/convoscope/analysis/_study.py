"""One call for everything ``convoscope metaeval`` reports: :func:`metaeval_study`.

The rows of :func:`metaeval`, and beside them the judge-against-judge tests, the system-level
correlations, the per-annotation-set averages, and the exports (CSV, Markdown, LaTeX, HTML).
The CLI parses its flags, calls this, and renders the result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from convoscope.analysis._compare import (
    DEFAULT_DIALOGUE,
    JudgeComparison,
    SetAverage,
    compare_judges,
    dialogue_level,
    per_rater_average,
)
from convoscope.analysis._export import LAYOUTS, Layout, paper_table, to_csv, to_markdown
from convoscope.analysis._export_latex import to_latex
from convoscope.analysis._labels import map_labels
from convoscope.analysis._metaeval import MetaevalRow, is_human, metaeval
from convoscope.analysis._multitest import CORRECTIONS, Correction, permutations_for
from convoscope.analysis._study_system import (
    SystemComparison,
    SystemRanking,
    SystemRow,
    system_comparisons,
    system_level,
    system_rankings,
)
from convoscope.analysis._system_level import Resample
from convoscope.errors import ConfigError

View = Literal["turn", "dialogue"]
HumanSets = Literal["pooled", "each"]
TABLE_WRITERS: dict[str, Callable[..., str]] = {".csv": to_csv, ".md": to_markdown, ".tex": to_latex}
PARTS = ("rows", "comparisons", "systems", "system_comparisons", "rankings", "per_set",
         "self_consistency")


@dataclass(frozen=True)
class MetaevalStudy:
    """Everything computed for one meta-evaluation; empty tuples for parts not asked for.
    ``alpha`` and ``correction`` are how every table marks significance."""

    rows: tuple[MetaevalRow, ...]
    comparisons: tuple[JudgeComparison, ...] = ()
    systems: tuple[SystemRow, ...] = ()
    per_set: tuple[SetAverage, ...] = ()
    judge_ratings: tuple[Any, ...] = field(default=(), repr=False)
    human_ratings: tuple[Any, ...] | None = field(default=None, repr=False)
    system_comparisons: tuple[SystemComparison, ...] = ()
    rankings: tuple[SystemRanking, ...] = ()
    alpha: float = 0.05
    correction: str = "holm"
    # Judges asked several times (``--repeats``): how far each agrees with itself per criterion
    # (convoscope.runs.SelfConsistency). Its agreement with people is in ``rows``, pooled.
    self_consistency: tuple[Any, ...] = ()
    permutations: int = 0  # permutations each test used: grown with the table (permutations_for)

    @property
    def computed(self) -> bool:
        """Whether any statistic could be computed at all."""
        return any(row.spearman or row.kappa is not None or row.binary or row.auc is not None
                   for row in self.rows) or any(s.f1_pos is not None for s in self.per_set)

    def records(self) -> list[dict[str, Any]]:
        return paper_table(self.rows, self.comparisons, alpha=self.alpha,
                           correction=self.correction)  # type: ignore[arg-type]

    def table(self, suffix: str, *, layout: Layout = "resize") -> str:
        """The criterion x judge table as ``.csv``, ``.md`` or ``.tex`` text (``layout``: how a
        LaTeX table fits a column — ``resize``, ``narrow`` or ``full``)."""
        writer = TABLE_WRITERS.get(suffix.lower())
        if writer is None:
            raise ConfigError(f"table format {suffix!r} is not one of {sorted(TABLE_WRITERS)}")
        if layout not in LAYOUTS:
            raise ConfigError(f"layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
        options: dict[str, Any] = {"alpha": self.alpha, "correction": self.correction}
        if writer is to_latex:
            options["layout"] = layout
        return writer(self.records(), **options) if writer is not to_csv else writer(self.records())

    def write_table(self, path: str | Path, *, layout: Layout = "resize") -> list[Path]:
        """The table at ``path``; with the system level, its table beside it (``<stem>-systems``).
        Returns the paths written."""
        from convoscope.analysis._export_system import SYSTEM_WRITERS, system_records

        path = Path(path)
        path.write_text(self.table(path.suffix, layout=layout), encoding="utf-8")
        written = [path]
        if self.systems:
            systems = path.with_name(f"{path.stem}-systems{path.suffix}")
            systems.write_text(SYSTEM_WRITERS[path.suffix.lower()](system_records(self)), encoding="utf-8")
            written.append(systems)
        return written

    def report_html(self, *, title: str = "Meta-evaluation") -> str:
        from convoscope.analysis._report import metaeval_report

        return metaeval_report(self, title=title)

    def write_figures(self, directory: str | Path) -> list[Path]:
        """Every figure of the report as SVG and PDF files in ``directory`` (created)."""
        from convoscope.analysis._report import write_figures

        return write_figures(self, Path(directory))

    def to_pandas(self, part: str = "rows") -> Any:
        """One part of the study as a DataFrame: ``rows`` (the criterion x judge table, every
        number and p-value), ``comparisons``, ``systems``, ``system_comparisons``, ``rankings``
        ``per_set`` or ``self_consistency``."""
        import pandas as pd

        from convoscope.analysis._flat import flat_records

        if part not in PARTS:
            raise ConfigError(f"part must be one of {', '.join(PARTS)}, not {part!r}")
        return pd.DataFrame(flat_records(self, part))

    def as_dict(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "correction": self.correction,
                "rows": [row.as_dict() for row in self.rows],
                "comparisons": [c.as_dict() for c in self.comparisons],
                "systems": [s.as_dict() for s in self.systems],
                "system_comparisons": [c.as_dict() for c in self.system_comparisons],
                "rankings": [r.as_dict() for r in self.rankings],
                "per_set": [p.as_dict() for p in self.per_set],
                "self_consistency": [c.as_dict() for c in self.self_consistency]}


def metaeval_study(
    judge_ratings: Iterable[Any],
    human_ratings: Iterable[Any] | None = None,
    *,
    criteria: list[str] | None = None,
    definitions: Mapping[str, Any] | None = None,
    view: View = "turn",
    dialogue_pattern: str = DEFAULT_DIALOGUE,
    human_sets: HumanSets = "pooled",
    compare: bool = True,
    system: bool = False,
    system_resample: Resample = "both",
    inputs: Mapping[str, str] | None = None,
    permutations: int = 1000,
    n_resamples: int = 2000,
    seed: int | None = 0,
    alpha: float = 0.05,
    correction: Correction = "holm",
    **options: Any,
) -> MetaevalStudy:
    """Run :func:`metaeval` and the comparisons around it.

    ``judge_ratings`` / ``human_ratings``: ratings, verdicts, or a DataFrame of them (columns
    ``item_id`` — or ``item`` —, ``criterion``, ``rater``, ``value``, e.g. ``RunResult.to_pandas()``).
    ``definitions`` maps criterion names to :class:`convoscope.criteria.Criterion`, so human
    labels such as "present" / "absent" become the 1 / 0 judges store (:func:`label_value`);
    without it, the common binary words are mapped for criteria the judges scored with numbers.
    ``view="dialogue"`` averages turn ratings per dialogue first (``dialogue_pattern``: a regular
    expression whose first group is the dialogue in the item id). ``human_sets="each"`` adds the
    per-annotation-set averages of GPT-ABCEval. ``system=True`` adds the system level
    (``system_resample``: ``both``, ``systems`` or ``items``; ``inputs`` maps item ids to shared
    inputs). Significance marks use level ``alpha`` after ``correction`` (``holm``, ``bh``,
    ``by`` or ``none``) over the table. Other keywords go to :func:`metaeval` (``ties``,
    ``level``, ``positive``, ``score``, ``alt_epsilon``, ``confidence``).

    Example: ``metaeval_study(verdicts, humans, system=True).write_table("table.tex")``.
    """
    if correction not in CORRECTIONS:
        raise ConfigError(f"correction must be one of {', '.join(CORRECTIONS)}, not {correction!r}")
    judges, humans = _prepare(judge_ratings, human_ratings, definitions)
    judges, consistency = _repeats_apart(judges)
    if view == "dialogue":
        judges = dialogue_level(judges, dialogue_of=dialogue_pattern)
        humans = None if humans is None else dialogue_level(humans, dialogue_of=dialogue_pattern)
    elif view != "turn":
        raise ConfigError(f"view must be 'turn' or 'dialogue', got {view!r}")
    rows = metaeval(judges, humans, criteria=criteria, n_resamples=n_resamples, seed=seed, alpha=alpha,
                    **options)
    judged = {row.judge for row in rows}
    # Each judge that is not the best on its criterion is one test of the family the table
    # corrects over; the permutation count grows with it so a corrected p can reach alpha.
    permutations = permutations_for(permutations, _family_size(rows), alpha)
    comparisons = compare_judges(judges, humans, criteria=criteria, n_resamples=n_resamples, seed=seed,
                                 permutations=permutations, ties=options.get("ties", "low")) \
        if compare and len(judged) > 1 else []
    parts = _system_parts(judges, humans, criteria, system_resample, inputs, n_resamples,
                          permutations, seed, alpha, correction, len(judged) > 1) if system else ([], [], [])
    per_set = per_rater_average(judges, humans, criteria=criteria,
                                positive=options.get("positive") or 1) if human_sets == "each" else []
    return MetaevalStudy(tuple(rows), tuple(comparisons), tuple(parts[0]), tuple(per_set),
                         tuple(judges), None if humans is None else tuple(humans), tuple(parts[1]),
                         tuple(parts[2]), alpha, correction, tuple(consistency), permutations)


def _family_size(rows: list[MetaevalRow]) -> int:
    """Tests in the table's family: per criterion, every judge but the best is compared with it."""
    judges: dict[str, set[str]] = {}
    for row in rows:
        if row.group is None:
            judges.setdefault(row.criterion, set()).add(row.judge)
    return sum(max(len(names) - 1, 0) for names in judges.values())


def _repeats_apart(judges: list[Any]) -> tuple[list[Any], list[Any]]:
    """A judge asked several times (raters ``<judge>~rK``) is compared with people by its pooled
    verdict; its repeats give its self-consistency instead of a row each. Repeats whose pooled
    verdicts are absent (a file of members only) stay as rows."""
    from convoscope.runs._repeats import base_rater, self_consistency

    repeats = [r for r in judges if base_rater(str(r.rater))[1] is not None]
    if not repeats:
        return judges, []
    pooled = {str(r.criterion) for r in judges
              if base_rater(str(r.rater))[1] is None and not is_human(r.rater)}
    kept = [r for r in judges if base_rater(str(r.rater))[1] is None or str(r.criterion) not in pooled]
    return kept, self_consistency(repeats)


def _system_parts(judges: list[Any], humans: list[Any] | None, criteria: list[str] | None,
                  resample: Resample, inputs: Mapping[str, str] | None, n_resamples: int,
                  permutations: int, seed: int | None, alpha: float, correction: Correction,
                  several: bool) -> tuple[list[Any], list[Any], list[Any]]:
    options: dict[str, Any] = dict(criteria=criteria, n_resamples=n_resamples, seed=seed, inputs=inputs)
    rows = system_level(judges, humans, resample=resample, **options)
    compared = system_comparisons(judges, humans, resample=resample, permutations=permutations,
                                  **options) if several else []
    people = humans if humans is not None else [r for r in judges if is_human(r.rater)]
    wanted = criteria or sorted({row.criterion for row in rows})
    rankings = system_rankings(people, alpha=alpha, correction=correction,
                               **{**options, "criteria": wanted})
    return rows, compared, rankings


def _prepare(judge_ratings: Iterable[Any], human_ratings: Iterable[Any] | None,
             definitions: Mapping[str, Any] | None) -> tuple[list[Any], list[Any] | None]:
    from convoscope.analysis._frame import as_ratings

    judges = as_ratings(judge_ratings)
    humans = None if human_ratings is None else as_ratings(human_ratings)
    numeric = _numeric_criteria([r for r in judges if not is_human(r.rater)])
    wanted = dict(definitions or {})

    def mapped(ratings: list[Any]) -> list[Any]:
        by_criterion = [r for r in ratings if str(r.criterion) in wanted or str(r.criterion) in numeric]
        others = [r for r in ratings if not (str(r.criterion) in wanted or str(r.criterion) in numeric)]
        return map_labels(by_criterion, wanted) + others

    if humans is None:
        people = [r for r in judges if is_human(r.rater)]
        return [r for r in judges if not is_human(r.rater)] + mapped(people), None
    return judges, mapped(humans)


def _numeric_criteria(ratings: list[Any]) -> set[str]:
    kinds: dict[str, set[bool]] = {}
    for rating in ratings:
        if rating.value is not None:
            kinds.setdefault(str(rating.criterion), set()).add(isinstance(rating.value, int | float))
    return {criterion for criterion, seen in kinds.items() if seen == {True}}
