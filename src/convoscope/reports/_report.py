"""Build the HTML report of a verdict file: the sections its criteria call for, with judges and
people side by side wherever both rated."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from convoscope.criteria import Criterion
from convoscope.errors import ConfigError
from convoscope.items import Item
from convoscope.judges import Verdict
from convoscope.reports._candidates import candidates_section
from convoscope.reports._generic import generic_section, overview_section
from convoscope.reports._inputs import ReportInputs, Sections, detect_sections, known_criteria
from convoscope.reports._issues import issues_section
from convoscope.reports._kpis import kpi_section


def render_report(verdicts: Sequence[Verdict], *, items: Sequence[Item] = (),
                  criteria: Sequence[Criterion] = (), title: str = "convoscope report",
                  source_name: str = "", viewer_url: str | None = None) -> str:
    """The report as one self-contained HTML page.

    ``items`` (optional) adds the dialogue text to the examples; ``criteria`` (optional) tells
    the report about your own criteria (built-in suites are known already). ``viewer_url``
    (where ``convoscope view`` serves the same verdicts) links each heat-map cell to the viewer.
    """
    return _render(_inputs(verdicts, items, criteria), title=title, source_name=source_name,
                   viewer_url=viewer_url)[0]


def _inputs(verdicts: Sequence[Verdict], items: Sequence[Item],
            criteria: Sequence[Criterion]) -> ReportInputs:
    if not verdicts:
        raise ConfigError("no verdicts to report on")
    return ReportInputs(verdicts, known_criteria(criteria), {item.id: item for item in items})


def _render(inputs: ReportInputs, *, title: str, source_name: str,
            viewer_url: str | None = None) -> tuple[str, Sections]:
    from convoscope.html import render

    sections = detect_sections(inputs)
    contents = [(anchor, label) for anchor, label, present in (
        ("dialogue-issues", "Dialogue issues", sections.issues),
        ("response-candidates", "Response candidates", sections.candidates),
        ("kpis", "KPIs", sections.kpis), ("scores", "Scores", sections.generic)) if present]
    page = render(
        "reports/report.html", title=title, contents=contents,
        overview=overview_section(inputs, source_name),
        issues=(issues_section(inputs, sections.issues, sections.overall, viewer_url)
                if sections.issues else None),
        candidates=candidates_section(inputs, sections.candidates) if sections.candidates else None,
        kpis=kpi_section(inputs, sections.kpis) if sections.kpis else None,
        scores=generic_section(inputs, sections.generic) if sections.generic else None)
    return page, sections


def write_report(verdict_paths: Sequence[str | Path], out: str | Path, *,
                 items_path: str | Path | None = None, criteria_paths: Sequence[str | Path] = (),
                 title: str | None = None, viewer_url: str | None = None) -> Sections:
    """Read verdict files (and optionally the items and criteria files), write the HTML report
    to ``out`` and return which sections it holds. Several files are combined, e.g. a judge's
    verdicts and people's."""
    from convoscope.criteria import load_criteria
    from convoscope.items import read_items
    from convoscope.judges import read_verdicts

    if not verdict_paths:
        raise ConfigError("name at least one verdict file")
    verdicts = [verdict for path in verdict_paths for verdict in read_verdicts(path)]
    items = read_items(items_path) if items_path is not None else []
    criteria = [criterion for path in criteria_paths for criterion in load_criteria(path)]
    names = ", ".join(str(path) for path in verdict_paths)
    html_text, sections = _render(_inputs(verdicts, items, criteria), source_name=names,
                                  title=title or f"convoscope report: {Path(verdict_paths[0]).name}",
                                  viewer_url=viewer_url)
    Path(out).write_text(html_text, encoding="utf-8")
    return sections
