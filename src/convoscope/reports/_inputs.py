"""What a report is built from: the verdicts, the criteria they name, and optionally the items
(for dialogue text in the examples). Also decides which sections a verdict file calls for."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from convoscope.criteria import Criterion
from convoscope.items import Item
from convoscope.judges import RaterKind, Verdict
from convoscope.reports._votes import CriterionVotes, group_votes


def builtin_suite_names(suite: str) -> list[str]:
    from convoscope.criteria import load_suite

    return [criterion.name for criterion in load_suite(suite).criteria]


@dataclass
class ReportInputs:
    """Verdicts plus what is known about their criteria and items."""

    verdicts: Sequence[Verdict]
    criteria: dict[str, Criterion] = field(default_factory=dict)
    items: dict[str, Item] = field(default_factory=dict)
    votes: dict[str, CriterionVotes] = field(init=False)

    def __post_init__(self) -> None:
        self.votes = group_votes(self.verdicts)


def known_criteria(extra: Sequence[Criterion] = ()) -> dict[str, Criterion]:
    """Name -> criterion: the user's criteria first, then every built-in suite (first one wins)."""
    from convoscope.criteria import list_suites, load_suite

    known: dict[str, Criterion] = {}
    for criterion in extra:
        known.setdefault(criterion.name, criterion)
    for suite in list_suites():
        for criterion in load_suite(suite).criteria:
            known.setdefault(criterion.name, criterion)
    return known


@dataclass(frozen=True)
class Sections:
    """Criterion names assigned to each report section, in file order."""

    issues: tuple[str, ...]
    overall: str | None
    candidates: tuple[str, ...]
    kpis: tuple[str, ...]
    generic: tuple[str, ...]

    def names(self) -> list[str]:
        """The sections present, as shown to users."""
        found = (("dialogue issues", self.issues), ("response candidates", self.candidates),
                 ("KPIs", self.kpis), ("scores", self.generic))
        return [name for name, criteria in found if criteria]


def detect_sections(inputs: ReportInputs) -> Sections:
    """Dialogue issues, response candidates and KPIs are recognised by the built-in suites'
    criterion names; KPIs also by a relevance flag or a computed metric; the rest is generic."""
    names = list(inputs.votes)
    issue_names = set(builtin_suite_names("dialogue-issues")) - {"overall"}
    candidate_names = set(builtin_suite_names("response-candidates"))
    kpi_names = set(builtin_suite_names("kpi"))
    issues = tuple(name for name in names if name in issue_names)
    candidates = tuple(name for name in names if name in candidate_names)
    kpis = tuple(name for name in names if name not in issue_names | candidate_names
                 and (name in kpi_names or _looks_like_kpi(inputs, name)))
    overall = "overall" if issues and "overall" in names else None
    taken = set(issues) | set(candidates) | set(kpis) | {overall}
    generic = tuple(name for name in names if name not in taken)
    return Sections(issues, overall, candidates, kpis, generic)


def _looks_like_kpi(inputs: ReportInputs, name: str) -> bool:
    criterion = inputs.criteria.get(name)
    if criterion is not None and (criterion.ask_relevance or not criterion.judged_by_model):
        return True
    return any(v.criterion == name and (v.relevant is not None or v.rater_kind is RaterKind.METRIC)
               for v in inputs.verdicts)
