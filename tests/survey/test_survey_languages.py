"""Issue 26, observation 1 through 'survey score': a short answer in the export's declared
language is judged, not rejected as gibberish (the issue's own command, on the embedded judge)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

pytestmark = pytest.mark.slow


def test_a_short_portuguese_answer_with_its_language_column_is_not_gibberish(tmp_path: Path) -> None:
    from convoscope.cli._survey import survey_group

    answers = tmp_path / "a.csv"
    answers.write_text("id,question,answer,language\np1,O que achou?,adorei,pt\n"
                       "p2,O que achou?,asdfghjkl,pt\n", encoding="utf-8")
    out = tmp_path / "o.csv"
    result = CliRunner().invoke(survey_group, ["score", str(answers), "--question-col", "question",
                                               "--answer-col", "answer", "--out", str(out),
                                               "--store", str(tmp_path / "s.db"), "--no-cache"])
    assert result.exit_code == 0, result.output
    with out.open(encoding="utf-8") as handle:
        rows = {row["id"]: row for row in csv.DictReader(handle)}
    assert rows["p1"]["gibberish"] == "false" and rows["p1"]["effort"] != ""
    assert rows["p2"]["gibberish"] == "true" and rows["p2"]["decision"] == "reject"
