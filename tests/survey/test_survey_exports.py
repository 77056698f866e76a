"""Issue 13, observation 4: real survey exports.

Qualtrics' two extra header rows are recognised and skipped (and the output says so),
``--skip-rows`` handles other tools, the line number is the id when there is no id column, every
named column must exist, ``--out`` may not overwrite an input, and the report has its own
default name."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from convoscope.cli._survey import survey_group
from convoscope.errors import LocatedError
from convoscope.survey import SurveyColumns, read_survey

QUALTRICS = (
    'StartDate,EndDate,ResponseId,Q1\n'
    'Start Date,End Date,Response ID,What did you like most about the hotel?\n'
    '{"ImportId":"startDate"},{"ImportId":"endDate"},{"ImportId":"_recordId"},{"ImportId":"QID1_TEXT"}\n'
    '2026-11-01,2026-11-01,R_1abc,asdfghjkl qwerty\n'
    '2026-11-01,2026-11-01,R_2def,zxcvbnm zxcvbnm zxcvbnm\n'
)


def test_qualtrics_header_rows_are_recognised_skipped_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "qualtrics.csv"
    path.write_text(QUALTRICS, encoding="utf-8")
    export = read_survey(path, SurveyColumns(answer="Q1"))
    assert [item.id for item in export.items] == ["R_1abc", "R_2def"]
    assert all("What did you like" not in (item.response or "") for item in export.items)
    assert any("Qualtrics" in note and "2, 3" in note for note in export.notes)


def test_skip_rows_skips_a_fixed_number_of_rows(tmp_path: Path) -> None:
    path = tmp_path / "other.csv"
    path.write_text("id,a\nx,Question text row\n1,first answer\n2,second answer\n", encoding="utf-8")
    export = read_survey(path, SurveyColumns(answer="a"), skip_rows=1)
    assert [item.id for item in export.items] == ["1", "2"]
    assert "skipped 1 row" in export.notes[0]


def test_the_line_number_is_the_id_when_there_is_no_id_column(tmp_path: Path) -> None:
    path = tmp_path / "noid.csv"
    path.write_text('question,answer\nQ?,one\nQ?,"two\nlines"\nQ?,three\n', encoding="utf-8")
    export = read_survey(path)
    assert [item.id for item in export.items] == ["2", "3", "5"]
    assert "line number" in export.notes[0]


@pytest.mark.parametrize("columns", [SurveyColumns(answer="a", question="q_missing"),
                                     SurveyColumns(answer="a", id="rid"),
                                     SurveyColumns(answer="missing")])
def test_every_named_column_must_exist(tmp_path: Path, columns: SurveyColumns) -> None:
    path = tmp_path / "answers.csv"
    path.write_text("id,q,a\n1,Q?,fine\n", encoding="utf-8")
    with pytest.raises(LocatedError, match=r"answers.csv, line 1, field '.*': no .* column named"):
        read_survey(path, columns)


def test_out_equal_to_the_input_is_refused_and_the_input_survives(tmp_path: Path) -> None:
    path = tmp_path / "answers.csv"
    path.write_text("id,q,a\n1,Q?,asdfghjkl\n", encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    result = CliRunner().invoke(survey_group, ["score", str(path), "--answer-col", "a",
                                               "--out", str(path), "--store", str(tmp_path / "s.db")])
    assert result.exit_code == 2 and "refusing to overwrite an input" in result.output
    assert path.read_text(encoding="utf-8") == before


def test_a_missing_named_column_stops_the_command_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "answers.csv"
    path.write_text("id,q,a\n1,Q?,asdfghjkl\n", encoding="utf-8")
    result = CliRunner().invoke(survey_group, ["score", str(path), "--answer-col", "a",
                                               "--question-col", "question_text",
                                               "--store", str(tmp_path / "s.db")])
    assert result.exit_code == 2 and "question_text" in result.output


def test_qualtrics_export_scores_only_real_answers_and_the_report_has_its_own_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every answer here is gibberish, so no model is called: the test stays fast.
    path = tmp_path / "qualtrics.csv"
    path.write_text(QUALTRICS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(survey_group, ["score", str(path), "--answer-col", "Q1", "--out",
                                               "scored.csv", "--report", "--store", "s.db"])
    assert result.exit_code == 0, result.output
    assert "Qualtrics" in result.output
    assert (tmp_path / "survey-report.html").exists() and not (tmp_path / "report.html").exists()
    with open(tmp_path / "scored.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["id"] for row in rows] == ["R_1abc", "R_2def"]
    assert {row["decision"] for row in rows} == {"reject"}
