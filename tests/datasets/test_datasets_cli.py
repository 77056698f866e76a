"""``convoscope datasets``: list, show, export — and a broken file ends in one line and exit 2."""

import json

import click
import pytest
from click.testing import CliRunner

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.items import read_items
from convoscope.judges._verdict import Verdict

_register()


def run(*args):
    # A wide console, so rich does not wrap the lines the assertions read.
    return CliRunner(env={"COLUMNS": "250"}).invoke(cli, list(args), catch_exceptions=False)


def test_export_round_trip(samples, tmp_path):
    items, human = tmp_path / "items.jsonl", tmp_path / "human.jsonl"
    result = run("datasets", "export", "usr-topicalchat", str(samples / "usr"), "--items", str(items),
                 "--human", str(human))
    assert result.exit_code == 0, result.output
    assert "wrote 6 items" in result.output and "108 human verdicts" in result.output
    loaded = read_items(items)
    assert [item.id for item in loaded][:2] == ["usr-tc:0:original-ground-truth", "usr-tc:0:argmax-decoding"]
    verdicts = [Verdict.model_validate_json(line) for line in human.read_text().splitlines()]
    assert len(verdicts) == 108 and {v.item_id for v in verdicts} == {item.id for item in loaded}
    assert {v.rater for v in verdicts} == {"human:aa", "human:bb", "human:cc", "human:dd"}


def test_export_with_published_labels(samples, tmp_path):
    published = tmp_path / "gpt.jsonl"
    result = run("datasets", "export", "abc-eval", str(samples), "--items", str(tmp_path / "i.jsonl"),
                 "--human", str(tmp_path / "h.jsonl"), "--published", str(published))
    assert result.exit_code == 0, result.output
    assert len(published.read_text().splitlines()) == 60


def test_export_of_a_broken_file_is_one_line_and_exit_2(tmp_path):
    folder = tmp_path / "grade"
    folder.mkdir()
    (folder / "human_judgement.json").write_text(
        '[\n  {"ID": "zero", "Dataset": "d", "DialogModel": "m", "Context": "a", "Response": "b",\n'
        '   "HumanScores": "[1]"}\n]', encoding="utf-8")
    result = run("datasets", "export", "grade", str(tmp_path), "--items", str(tmp_path / "i.jsonl"),
                 "--human", str(tmp_path / "h.jsonl"))
    assert result.exit_code == 2
    assert "human_judgement.json, line 2, field '[0].ID': expected an integer" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "i.jsonl").exists()


def test_export_of_an_unknown_benchmark_is_exit_2(samples, tmp_path):
    result = run("datasets", "export", "nope", str(samples), "--items", str(tmp_path / "i.jsonl"),
                 "--human", str(tmp_path / "h.jsonl"))
    assert result.exit_code == 2 and "unknown benchmark 'nope'" in result.output


def test_list_with_and_without_data(samples, tmp_path):
    plain = run("datasets", "list")
    assert plain.exit_code == 0 and "fed-turn" in plain.output and "maia-dqe-sentence" in plain.output
    (tmp_path / "fed").mkdir()
    (tmp_path / "fed" / "fed_data.json").write_text(
        (samples / "fed" / "fed_data.json").read_text(encoding="utf-8"), encoding="utf-8")
    counted = run("datasets", "list", "--path", str(tmp_path))
    assert counted.exit_code == 0, counted.output
    rows = {cells[0]: cells[1:] for line in counted.output.splitlines()
            if len(cells := [cell.strip() for cell in line.split("│")[1:-1]]) == 6}
    assert rows["fed-turn"][1:] == ["3", "5", "9", "135"]  # items, raters, criteria, human verdicts
    assert rows["fed-dialogue"][1:] == ["2", "5", "11", "110"]
    assert "no benchmark file" in rows["grade"][0]  # the others are missing, and say so


def test_show_prints_criteria_and_notes(samples):
    result = run("datasets", "show", "maia-dqe-dialogue", str(samples))
    assert result.exit_code == 0, result.output
    assert "task-success" in result.output and "note:" in result.output


@pytest.mark.parametrize("name", ["list", "show", "export"])
def test_every_subcommand_documents_an_example(name):
    group = cli.commands["datasets"]
    assert isinstance(group, click.Group)
    result = run("datasets", name, "--help")
    assert "Example:" in result.output and f"convoscope datasets {name}" in result.output


def test_group_help_has_an_example():
    result = run("datasets", "--help")
    assert "Example:" in result.output and "convoscope datasets export" in result.output


def test_exported_human_file_is_plain_jsonl(samples, tmp_path):
    run("datasets", "export", "grade", str(samples), "--items", str(tmp_path / "i.jsonl"),
        "--human", str(tmp_path / "h.jsonl"))
    rows = [json.loads(line) for line in (tmp_path / "h.jsonl").read_text().splitlines()]
    assert len(rows) == 29 and rows[0]["rater"] == "human:1" and rows[0]["criterion"] == "coherence"
