"""Verdict files are read back from JSONL and CSV with errors naming file, line and field, and
`convoscope report` writes the page (combining several files) or fails with that message."""

import json

import pytest
from click.testing import CliRunner
from verdict_samples import candidate_rows, dialogue_issue_rows, kpi_rows, write_rows

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.items import ItemError, write_csv
from convoscope.judges import read_verdicts

_register()


def test_jsonl_and_csv_give_the_same_verdicts(tmp_path):
    rows = kpi_rows() + candidate_rows()
    from_jsonl = read_verdicts(write_rows(tmp_path / "v.jsonl", rows))
    write_csv(from_jsonl, tmp_path / "v.csv")
    from_csv = read_verdicts(tmp_path / "v.csv")
    assert from_csv == from_jsonl
    assert any(v.relevant is False for v in from_csv) and any(v.options for v in from_csv)


@pytest.mark.parametrize(("text", "line", "field"), [
    ('{"item_id": "a", "criterion": "c", "rater": "model:x", "value": 1}\n{"item_id": "b"}\n', 2,
     "criterion"),
    ('{"item_id": "a", "criterion": "c", "rater": "model:x", "value": 1, "relevant": "maybe"}\n', 1,
     "relevant"),
    ('\n{"item_id": "a", "criterion": "c", "rater": "model:x", "value": 1, "colour": "red"}\n', 2, "colour"),
    ('{"item_id": "a",\n', 1, None),
])
def test_bad_verdict_rows_name_file_line_and_field(tmp_path, text, line, field):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(ItemError) as caught:
        read_verdicts(path)
    assert (caught.value.line, caught.value.field) == (line, field)
    assert str(caught.value).startswith(f"{path}, line {line}")


def test_bad_csv_cell_names_its_column(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("item_id,criterion,rater,value,relevant\na,c,model:x,1,true\nb,c,model:x,0,perhaps\n")
    with pytest.raises(ItemError, match=r"bad.csv, line 3, field 'relevant'"):
        read_verdicts(path)


def test_report_command_combines_judge_and_people_files(tmp_path):
    rows = dialogue_issue_rows()
    judges = write_rows(tmp_path / "judges.jsonl", [r for r in rows if not r["rater"].startswith("human:")])
    people = write_rows(tmp_path / "people.jsonl", [r for r in rows if r["rater"].startswith("human:")])
    out = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", str(judges), str(people), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "sections: dialogue issues" in result.output
    page = out.read_text(encoding="utf-8")
    assert "heatmap-judges" in page and "heatmap-people" in page


def test_report_command_reports_a_bad_line(tmp_path):
    path = write_rows(tmp_path / "v.jsonl", kpi_rows())
    path.write_text(path.read_text() + json.dumps({"item_id": "z", "criterion": "c", "rater": "r",
                                                   "value": [1, 2]}) + "\n")
    result = CliRunner().invoke(cli, ["report", str(path), "--out", str(tmp_path / "r.html")],
                                env={"COLUMNS": "400"})
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "v.jsonl, line 16, field 'value': expected a number, a label or null" in message
    assert not (tmp_path / "r.html").exists()
