"""`convoscope judge --kpi` with computed KPIs: no model is needed, the verdict file holds the
metric verdicts, and a bad timestamp stops the command with file, line and field."""

import json

from click.testing import CliRunner

from convoscope.cli import cli
from convoscope.cli._app import _register

_register()


def write_turns(path, second_response_time):
    rows = [
        {"id": "q1", "context": [{"speaker": "user", "text": "Where is the jack?"}],
         "response": "Under the boot floor, on the left.", "system": "bot",
         "meta": {"timestamps": ["2024-05-01T09:00:00Z", "2024-05-01T09:00:01.2Z"]}},
        {"id": "q2", "context": [{"speaker": "user", "text": "And the spare wheel?"}],
         "response": "Beside it.", "system": "bot",
         "meta": {"timestamps": ["2024-05-01T09:01:00Z", second_response_time]}},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_metric_kpis_run_without_a_model(tmp_path):
    items = write_turns(tmp_path / "qa.jsonl", "2024-05-01T09:01:03Z")
    out = tmp_path / "verdicts.jsonl"
    result = CliRunner().invoke(cli, ["judge", str(items), "--kpi", "low-latency", "--kpi", "answer-length",
                                      "--store", str(tmp_path / "s.db"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    latency = {row["item_id"]: row["value"] for row in rows if row["criterion"] == "low-latency"}
    assert latency == {"q1": 1, "q2": 0}
    assert {row["rater"] for row in rows} == {"metric:latency", "metric:answer_length"}


def test_bad_timestamp_names_file_line_and_field(tmp_path):
    items = write_turns(tmp_path / "qa.jsonl", "09:01 or so")
    result = CliRunner().invoke(cli, ["judge", str(items), "--suite", "kpi", "--kpi", "low-latency",
                                      "--store", str(tmp_path / "s.db")], env={"COLUMNS": "400"})
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert "qa.jsonl, line 2, field 'meta.timestamps.1'" in message and "ISO-8601" in message
    assert not (tmp_path / "s.db").exists()  # stopped before the store or any model was touched


def test_unknown_kpi_is_a_usage_error(tmp_path):
    items = write_turns(tmp_path / "qa.jsonl", "2024-05-01T09:01:03Z")
    result = CliRunner().invoke(cli, ["judge", str(items), "--kpi", "telepathy"])
    assert result.exit_code == 2 and "telepathy" in result.output
