"""`convoscope route`, `calibrate` and `estimate` on a verdict table with judges and people."""

import csv
import json

from click.testing import CliRunner

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.estimate import Calibration

from .test_estimate_verdicts import JUDGE, _table

_register()


def _run(*args):
    return CliRunner().invoke(cli, [str(arg) for arg in args], env={"COLUMNS": "300"})


def _write(path, verdicts):
    path.write_text("".join(v.model_dump_json() + "\n" for v in verdicts), encoding="utf-8")
    return path


def _split(tmp_path):
    rows, _ = _table()
    judge = _write(tmp_path / "judge.jsonl", [v for v in rows if not v.rater.startswith("human:")])
    people = _write(tmp_path / "people.jsonl", [v for v in rows if v.rater.startswith("human:")])
    return judge, people


def test_route_writes_reasons_and_the_random_sample(tmp_path):
    judge, _ = _split(tmp_path)
    out = tmp_path / "route.jsonl"
    result = _run("route", judge, "--random", 25, "--out", out)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sum("random" in row["reasons"] for row in rows) == 25
    assert "25 in the random sample" in result.output


def test_calibrate_then_estimate_names_the_calibration(tmp_path):
    judge, people = _split(tmp_path)
    calibration = tmp_path / "calibration.json"
    mapped = tmp_path / "calibrated.jsonl"
    sample = tmp_path / "sample.txt"  # calibrated on the other rated items (issue 25, observation 1)
    sample.write_text("".join(f"bot-{s}-{i}\n" for s in "ab" for i in range(30)))
    result = _run("calibrate", judge, people, "--criterion", "overall", "--judge", JUDGE, "--exclude", sample,
                  "--levels", "0-4", "--score", "value", "--out", calibration, "--write-calibrated", mapped)
    assert result.exit_code == 0, result.output
    calibrated = [json.loads(line) for line in mapped.read_text().splitlines()]
    assert len(calibrated) == 600
    assert {row["rater"] for row in calibrated} == {f"{JUDGE}|calibrated:isotonic:{JUDGE}->overall"}
    assert all(0 <= row["value"] <= 4 for row in calibrated)
    assert "before" in result.output and "after" in result.output
    loaded = Calibration.from_dict(json.loads(calibration.read_text()))
    assert loaded.scale == (0.0, 4.0)
    out = tmp_path / "estimates.csv"
    result = _run("estimate", judge, people, "--criterion", "overall", "--judge", JUDGE,
                  "--calibration", calibration, "--random-sample", sample, "--score", "value", "--out", out)
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(out.open()))
    assert [row["group"] for row in rows] == ["system=bot-a", "system=bot-b"]
    assert {row["calibration"] for row in rows} == {loaded.name}
    assert float(rows[0]["estimate"]) > float(rows[1]["estimate"])  # bot-a is better by design


def test_estimate_without_a_random_sample_says_every_rated_item_was_taken(tmp_path):
    judge, people = _split(tmp_path)
    result = _run("estimate", judge, people, "--criterion", "overall", "--judge", JUDGE, "--score", "value")
    assert result.exit_code == 0, result.output
    assert "Every human-rated item was taken as the random sample" in result.output


def test_estimate_with_a_random_sample_file_uses_only_those_labels(tmp_path):
    judge, people = _split(tmp_path)
    sample = tmp_path / "sample.txt"
    sample.write_text("\n".join(f"bot-a-{i}" for i in range(20)) + "\n")
    out = tmp_path / "estimates.csv"
    result = _run("estimate", judge, people, "--criterion", "overall", "--judge", JUDGE,
                  "--random-sample", sample, "--score", "value", "--out", out)
    assert result.exit_code == 0, result.output
    rows = {row["group"]: row for row in csv.DictReader(out.open())}
    assert rows["system=bot-a"]["n_human"] == "20"
    assert "system=bot-b" not in rows
    assert "Not estimated: system=bot-b: 0 human-labelled" in result.output


def test_estimate_for_an_unknown_judge_is_a_one_line_error(tmp_path):
    judge, people = _split(tmp_path)
    result = _run("estimate", judge, people, "--criterion", "overall", "--judge", "model:nobody")
    assert result.exit_code == 2
    assert "judges present: model:scripted-judge" in result.output


def test_bias_reports_length_and_language_from_the_items_file(tmp_path):
    from convoscope import Item
    from convoscope.items import write_jsonl

    from .test_bias import JUDGE as BIASED
    from .test_bias import _table as biased_table

    rows, lengths = biased_table(length_bias=0.08)
    verdicts = _write(tmp_path / "all.jsonl", rows)
    items = tmp_path / "items.jsonl"
    write_jsonl([Item(id=item, response=" ".join(["word"] * words))
                 for item, words in lengths.items()], items)
    result = _run("bias", verdicts, "--criterion", "overall", "--judge", BIASED, "--items", items,
                  "--own-family", "gpt-bot")
    assert result.exit_code == 0, result.output
    assert "length: Spearman(residual, words) +0." in result.output
    assert "language ko" in result.output and "self-preference" in result.output


def test_route_writes_the_chosen_items_with_their_reasons_for_a_campaign(tmp_path):
    from convoscope import Item
    from convoscope.items import read_items, write_jsonl

    judge, people = _split(tmp_path)
    rows, _ = _table()
    items = tmp_path / "items.jsonl"
    write_jsonl([Item(id=item_id, response="r", system=item_id.rsplit("-", 1)[0])
                 for item_id in dict.fromkeys(v.item_id for v in rows)], items)
    chosen = tmp_path / "for-people.jsonl"
    result = _run("route", judge, "--random", 30, "--out", tmp_path / "route.jsonl", "--items", items,
                  "--write-items", chosen)
    assert result.exit_code == 0, result.output
    written = read_items(chosen)
    assert sum(item.meta["random_sample"] for item in written) == 30
    assert all(item.meta["selected_because"] for item in written)
    # the same file names the random sample for the estimate
    out = tmp_path / "estimates.csv"
    result = _run("estimate", judge, people, "--criterion", "overall", "--judge", JUDGE,
                  "--random-sample", chosen, "--score", "value", "--min-labels", 2, "--out", out)
    labelled = sum(int(row["n_human"]) for row in csv.DictReader(out.open()))
    sampled = {item.id for item in written if item.meta["random_sample"]}
    people_rated = {f"bot-{s}-{i}" for s in "ab" for i in range(60)}
    assert labelled == len(sampled & people_rated)
    assert result.exit_code == 0, result.output


def test_route_write_items_needs_the_items(tmp_path):
    judge, _ = _split(tmp_path)
    result = _run("route", judge, "--random", 3, "--out", tmp_path / "r.jsonl", "--write-items",
                  tmp_path / "i.jsonl")
    assert result.exit_code == 2 and "--write-items needs --items" in result.output
