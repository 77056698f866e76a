"""Campaign imports read through the one text reader (issue 26, observation 5): a verdict CSV
saved by Excel (byte-order mark, CRLF) imports; a NUL byte is refused with file and line."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from campaign_helpers import write_campaign

from convoscope.campaigns import Submission, export_verdicts, import_verdicts, invite, open_campaign
from convoscope.errors import LocatedError


def _answered_export(tmp_path: Path) -> Path:
    directory = write_campaign(tmp_path / "study")
    person = invite(directory, 1)[0]
    campaign = open_campaign(directory)
    while (work := campaign.work(person.id)).task is not None:
        campaign.submit(person.id, work.task, Submission(answer="1", seconds=20.0))
    exported = tmp_path / "answers.csv"
    export_verdicts(campaign, exported, qualification=True)
    return exported


def test_a_verdict_csv_saved_by_excel_imports(tmp_path: Path) -> None:
    exported = _answered_export(tmp_path)
    text = exported.read_bytes().decode("utf-8").replace("\r\n", "\n").replace("\n", "\r\n")
    exported.write_bytes(codecs.BOM_UTF8 + text.encode("utf-8"))
    target = write_campaign(tmp_path / "copy")
    invite(target, 1)
    summary = import_verdicts(open_campaign(target), exported)
    assert summary.rows > 0 and summary.added == summary.rows


def test_a_nul_byte_in_an_import_names_the_line(tmp_path: Path) -> None:
    exported = _answered_export(tmp_path)
    lines = exported.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b",", b",\x00", 1)
    exported.write_bytes(b"".join(lines))
    target = write_campaign(tmp_path / "copy")
    invite(target, 1)
    with pytest.raises(LocatedError, match=r"answers\.csv, line 3: a NUL byte"):
        import_verdicts(open_campaign(target), exported)
