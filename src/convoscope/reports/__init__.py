"""Reports: one self-contained HTML page from a verdict file, with the sections its criteria
call for (dialogue issues, response candidates, KPIs, other scores)."""

from convoscope.reports._inputs import ReportInputs, Sections, detect_sections
from convoscope.reports._report import render_report, write_report
from convoscope.reports._votes import majority, source_of

__all__ = [
    "ReportInputs",
    "Sections",
    "detect_sections",
    "majority",
    "render_report",
    "source_of",
    "write_report",
]
