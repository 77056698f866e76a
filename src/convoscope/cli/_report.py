"""``convoscope report``: one self-contained HTML page from verdict files."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from convoscope.cli._common import fail_on

EXAMPLE = """
\b
Examples:
  convoscope report verdicts.jsonl --out report.html
  convoscope report verdicts.jsonl humans.jsonl --items dialogues.jsonl --out report.html
  convoscope report kpi-verdicts.jsonl --criteria-file my-kpis.yaml --out kpis.html
"""


@click.command("report", epilog=EXAMPLE)
@click.argument("verdict_paths", metavar="VERDICTS...", nargs=-1, required=True,
                type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("report.html"),
              show_default=True, help="Where to write the HTML page.")
@click.option("--items", "items_path", type=click.Path(dir_okay=False, path_type=Path),
              help="The judged items (.jsonl, .csv, …): adds dialogue text to the examples.")
@click.option("--criteria-file", "criteria_files", multiple=True, type=click.Path(exists=True),
              help="Your own criteria in YAML, so the report knows their scales. Repeatable.")
@click.option("--title", help="Page title (default: from the first file name).")
@click.option("--viewer", "viewer_url", metavar="URL", help="Where `convoscope view` serves the same "
              "verdicts (e.g. http://127.0.0.1:8765): each heat-map cell links there, filtered.")
def report_command(verdict_paths: tuple[Path, ...], out: Path, items_path: Path | None,
                   criteria_files: tuple[str, ...], title: str | None, viewer_url: str | None) -> None:
    """Write an HTML report of VERDICTS (.jsonl or .csv, as `convoscope judge --out` writes them).

    The report finds which criteria the files hold and renders the matching sections: dialogue
    issues (heatmap of issue rates per chatbot and language, overall score per chatbot, flagged
    dialogues one click away), response candidates (positive rate by majority and by all votes,
    why answers were negative), KPIs (relevance and fulfilment per judge and pooled, panel
    agreement, computed latency and length) and mean scores for any other criterion. Verdicts
    of people (rater human:…) and of judges are shown side by side. Give several files to
    combine, e.g. a judge's verdicts and your annotators'.
    """
    from convoscope.reports import write_report

    console = Console(stderr=True)
    with fail_on(console):
        sections = write_report(list(verdict_paths), out, items_path=items_path,
                                 criteria_paths=list(criteria_files), title=title, viewer_url=viewer_url)
        found = ", ".join(sections.names()) or "none"
        console.print(f"Wrote {out} (sections: {found})")


COMMANDS = [report_command]
