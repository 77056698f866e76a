"""One call for everything ``convoscope metaeval`` reports: :func:`metaeval_study`.

The rows of :func:`metaeval`, and beside them the judge-against-judge tests, the system-level
correlations, the per-annotation-set averages, and the exports (CSV, Markdown, LaTeX, HTML).
The CLI parses its flags, calls this, and renders the result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from convoscope.analysis._compare import (
    DEFAULT_DIALOGUE,
    JudgeComparison,
    SetAverage,
    SystemRow,
    compare_judges,
    dialogue_level,
    per_rater_average,
    system_level,
)
from convoscope.analysis._export import paper_table, to_csv, to_latex, to_markdown
from convoscope.analysis._labels import map_labels
from convoscope.analysis._metaeval import MetaevalRow, is_human, metaeval
from convoscope.errors import ConfigError

View = Literal["turn", "dialogue"]
HumanSets = Literal["pooled", "each"]
TABLE_WRITERS = {".csv": to_csv, ".md": to_markdown, ".tex": to_latex}


@dataclass(frozen=True)
class MetaevalStudy:
    """Everything computed for one meta-evaluation; empty tuples for parts not asked for."""

    rows: tuple[MetaevalRow, ...]
    comparisons: tuple[JudgeComparison, ...] = ()
    systems: tuple[SystemRow, ...] = ()
    per_set: tuple[SetAverage, ...] = ()
    judge_ratings: tuple[Any, ...] = field(default=(), repr=False)
    human_ratings: tuple[Any, ...] | None = field(default=None, repr=False)

    @property
    def computed(self) -> bool:
        """Whether any statistic could be computed at all."""
        return any(row.spearman or row.kappa is not None or row.binary or row.auc is not None
                   for row in self.rows) or any(s.f1_pos is not None for s in self.per_set)

    def records(self) -> list[dict[str, Any]]:
        return paper_table(self.rows, self.comparisons)

    def table(self, suffix: str) -> str:
        """The criterion x judge table as ``.csv``, ``.md`` or ``.tex`` text."""
        writer = TABLE_WRITERS.get(suffix.lower())
        if writer is None:
            raise ConfigError(f"table format {suffix!r} is not one of {sorted(TABLE_WRITERS)}")
        return writer(self.records())

    def write_table(self, path: str | Path) -> None:
        path = Path(path)
        path.write_text(self.table(path.suffix), encoding="utf-8")

    def report_html(self, *, title: str = "Meta-evaluation") -> str:
        from convoscope.analysis._report import metaeval_report

        return metaeval_report(self.judge_ratings, self.human_ratings, self.rows,
                               comparisons=self.comparisons, systems=self.systems, title=title)

    def as_dict(self) -> dict[str, Any]:
        return {"rows": [row.as_dict() for row in self.rows],
                "comparisons": [c.as_dict() for c in self.comparisons],
                "systems": [s.as_dict() for s in self.systems],
                "per_set": [p.as_dict() for p in self.per_set]}


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
    permutations: int = 0,
    n_resamples: int = 2000,
    seed: int | None = 0,
    **options: Any,
) -> MetaevalStudy:
    """Run :func:`metaeval` and the comparisons around it.

    ``definitions`` maps criterion names to :class:`convoscope.criteria.Criterion`, so human
    labels such as "present" / "absent" become the 1 / 0 judges store (:func:`label_value`);
    without it, the common binary words are mapped for criteria the judges scored with numbers.
    ``view="dialogue"`` averages turn ratings per dialogue first (``dialogue_pattern``: a regular
    expression whose first group is the dialogue in the item id). ``human_sets="each"`` adds the
    per-annotation-set averages of GPT-ABCEval. Other keywords go to :func:`metaeval`.

    Example: ``metaeval_study(verdicts, humans, system=True).write_table("table.tex")``.
    """
    judges, humans = _prepare(judge_ratings, human_ratings, definitions)
    if view == "dialogue":
        judges = dialogue_level(judges, dialogue_of=dialogue_pattern)
        humans = None if humans is None else dialogue_level(humans, dialogue_of=dialogue_pattern)
    elif view != "turn":
        raise ConfigError(f"view must be 'turn' or 'dialogue', got {view!r}")
    rows = metaeval(judges, humans, criteria=criteria, n_resamples=n_resamples, seed=seed, **options)
    judged = {row.judge for row in rows}
    comparisons = compare_judges(judges, humans, criteria=criteria, n_resamples=n_resamples, seed=seed,
                                 permutations=permutations) if compare and len(judged) > 1 else []
    systems = system_level(judges, humans, criteria=criteria, n_resamples=min(n_resamples, 1000),
                           seed=seed) if system else []
    per_set = per_rater_average(judges, humans, criteria=criteria,
                                positive=options.get("positive") or 1) if human_sets == "each" else []
    return MetaevalStudy(tuple(rows), tuple(comparisons), tuple(systems), tuple(per_set),
                         tuple(judges), None if humans is None else tuple(humans))


def _prepare(judge_ratings: Iterable[Any], human_ratings: Iterable[Any] | None,
             definitions: Mapping[str, Any] | None) -> tuple[list[Any], list[Any] | None]:
    judges = list(judge_ratings)
    humans = None if human_ratings is None else list(human_ratings)
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
