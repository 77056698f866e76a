"""What the status, the report, the terminal and the answers say (issue 37, observation 5): "other"
needs words, a negative answer with no explanation is not "note only", people who left are shown
as left with why, the terminal status fits 80 columns, and `invite` uses the port `serve` used."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from campaign_helpers import write_campaign
from click.testing import CliRunner
from leavers import BLOCK_REASON, study_with_leavers

from convoscope.campaigns import AnswerError, Submission, invite, open_campaign, render_campaign_report
from convoscope.cli._campaign import campaign_group

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_other_without_words_is_refused(tmp_path: Path) -> None:
    """Observed: "other" was accepted with no words although the option asks for them."""
    directory = write_campaign(tmp_path / "study")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("enabled: true", "enabled: false"))
    [person] = invite(directory, 1)
    campaign = open_campaign(directory)
    task = campaign.work(person.id).task
    assert task is not None
    for note in ("", "   "):
        with pytest.raises(AnswerError, match="\"other\" needs a note saying what applies"):
            campaign.submit(person.id, task, Submission(answer="0", options=("other",), reason=note))
    assert campaign.answers() == []
    stored = campaign.submit(person.id, task, Submission(answer="0", options=("other",),
                                                         reason="It answers a question nobody asked."))
    assert stored.options == ("other",) and stored.reason == "It answers a question nobody asked."
    # An option that asks for no words still needs none.
    task = campaign.work(person.id).task
    assert task is not None
    option = "incoherence" if task.criterion == "appropriateness" else "genericness"
    assert campaign.submit(person.id, task, Submission(answer="0", options=(option,))).reason is None


def test_people_who_left_are_shown_as_left_with_why(tmp_path: Path) -> None:
    """Observed: the eligibility screen-out showed as "not decided · active", and "7 qualified"
    counted 3 blocked people."""
    campaign, who = study_with_leavers(tmp_path / "study")
    status = campaign.status()
    people = {a.annotator: a for a in status.annotators}
    standing = {role: people[person].standing for role, person in who.items()}
    assert standing == {"reference": "active", "blocked": f"left: blocked ({BLOCK_REASON})",
                        "stays": "active",
                        "failed": "left: did not qualify",
                        "screened": "left: screened out (eligibility question 'first_language')"}
    decided = {role: people[person].qualified_text(True) for role, person in who.items()}
    assert decided["reference"] == "reference annotator" and decided["screened"] == "not reached"
    assert decided["blocked"].startswith("yes") and decided["stays"].startswith("yes")
    assert decided["failed"].startswith("no")
    assert (status.passed, status.qualified, status.qualified_then_blocked, status.left) == (2, 1, 1, 3)
    assert status.qualified_text == "1 qualified (1 more qualified, then were blocked)"
    html = render_campaign_report(campaign)
    assert "2 of the 3 who finished the qualification batch (1 of them blocked since)" in html
    assert "left: screened out (eligibility question &#39;first_language&#39;)" in html


def test_terminal_status_has_a_row_per_person_and_fits_80_columns(tmp_path: Path) -> None:
    """Observed: `campaign status` had no per-person table and cut its headers at 80 columns."""
    campaign, who = study_with_leavers(tmp_path / "study")
    result = CliRunner().invoke(campaign_group, ["status", str(campaign.directory)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in result.output  # nothing cut: a narrow cell wraps onto more lines of its row
    for header in ("Fleiss", "Cohen", "strong", "flagged", "person", "qualified", "standing"):
        assert re.search(rf"\b{header}\b", result.output), header
    rows = _rows(lines, list(who.values()))
    assert set(rows) == set(who.values())  # one row per person
    expected = {"blocked": ("yes", f"left: blocked ({BLOCK_REASON})"),
                "failed": ("no", "left: did not qualify"),
                "screened": ("not reached", "left: screened out (eligibility question 'first_language')"),
                "stays": ("yes", "active"), "reference": ("reference annotator", "active")}
    for role, (decided, standing) in expected.items():
        cells = rows[who[role]].split(" | ")
        assert cells[5].startswith(_squeezed(decided)) and cells[6] == _squeezed(standing), (role, cells)


def _rows(lines: list[str], people: list[str]) -> dict[str, str]:
    """Each person's row of the people table, read cell by cell (a cell may wrap onto more lines
    of its row), with whitespace removed so that a wrapped word reads as one."""
    at = next(i for i, line in enumerate(lines) if {"person", "standing"} <= set(line.split()))
    header = lines[at]
    starts = [re.search(rf"\b{name}\b", header).start() for name in header.split()]  # type: ignore[union-attr]
    rows: dict[str, list[list[str]]] = {}
    current = None
    for line in lines[at + 1:]:
        if not line.strip() or set(line.strip()) <= set("─━═-"):
            continue
        cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
        if cells[0] in people:
            current = cells[0]
            rows[current] = [[cell] for cell in cells]
        elif cells[0] or current is None:
            break  # past the table (its caption)
        else:
            for column, cell in zip(rows[current], cells, strict=True):
                column.append(cell)
    return {person: " | ".join("".join(column).replace(" ", "") for column in columns)
            for person, columns in rows.items()}


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_invite_prints_links_to_the_port_serve_uses(tmp_path: Path) -> None:
    """Observed: `invite` printed :8080 links whatever port `serve` used; and the README served a
    `benchmark.jsonl` nobody has. The README's commands, run as written but on a free port, from a
    folder holding a copy of examples/."""
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    runner = CliRunner()
    with _working_in(tmp_path):
        assert runner.invoke(campaign_group, ["init", "my-study/"]).exit_code == 0
        before = runner.invoke(campaign_group, ["invite", "my-study/", "--n", "1"])
    assert before.exit_code == 0 and "http://127.0.0.1:8080/a/" in before.output  # never served: the default
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "COLUMNS": "200",
                   "PYTHONUNBUFFERED": "1"}
    command = ["campaign", "serve", "my-study/", "--items", "examples/campaign_items.jsonl",
               "--db", "study.db", "--port", "0"]  # the README's, on a free port
    server = subprocess.Popen([sys.executable, "-m", "convoscope", *command], cwd=tmp_path, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=environment)
    try:
        assert server.stdout is not None
        printed = ""
        while "annotators:" not in printed and server.poll() is None:  # printed once the server is bound
            printed += server.stdout.readline()
        found = re.search(r"annotators: (http://127\.0\.0\.1:(\d+))/a/", printed)
        assert found, printed
        base, port = found.group(1), found.group(2)
        assert port != "8080" and "items: ../examples/campaign_items.jsonl" in printed
        with _working_in(tmp_path):
            after = runner.invoke(campaign_group, ["invite", "my-study/", "--n", "2"])
            given = runner.invoke(campaign_group, ["invite", "my-study/", "--base-url", "https://study.example.org/"])
        assert after.exit_code == 0, after.output
        links = re.findall(r"(http://\S+)", after.output)
        assert len(links) == 2 and all(link.startswith(f"{base}/a/") for link in links)
        assert all(httpx.get(link, timeout=30).status_code == 200 for link in links)  # they open the study
        assert "https://study.example.org/a/" in given.output  # an address given still wins
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert len(open_campaign(tmp_path / "my-study").batches) == 2  # qualification + 1 main batch


@contextlib.contextmanager
def _working_in(folder: Path) -> Iterator[None]:
    previous = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)
