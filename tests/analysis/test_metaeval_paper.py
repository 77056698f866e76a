"""`convoscope metaeval` for a paper: judges compared with significance, system level, per
annotation set, dialogue level, tables to paste and an HTML report with figures (issue 15)."""

import csv
import io
import json
import re

import numpy as np
import pytest
from click.testing import CliRunner
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from convoscope.analysis import (
    Rating,
    binary_scores,
    compare_judges,
    per_rater_average,
    spearman,
    system_correlation,
    williams_test,
)
from convoscope.cli import cli
from convoscope.cli._app import _register

_register()


def _run(*args):
    return CliRunner().invoke(cli, [str(arg) for arg in args], env={"COLUMNS": "300"})


def _study(tmp_path, *, n_items=60, systems=5, labels=False):
    """Two judges (one close to people, one noisy) and three humans on a 1-5 scale (or present /
    absent labels), items spread over ``systems`` systems; written as verdict and human files."""
    rng = np.random.default_rng(7)
    truth = rng.integers(1, 6, n_items)
    verdicts, humans = [], ["id,annotator,criterion,label,system"]
    for item in range(n_items):
        system = f"bot-{item % systems}"
        for judge, noise in (("model:close", 0.6), ("model:noisy", 2.5)):
            value = int(np.clip(round(truth[item] + rng.normal(0, noise)), 1, 5))
            if labels:
                value = int(value >= 3)
            verdicts.append({"item_id": f"i{item}", "criterion": "overall", "rater": judge, "value": value,
                             "system": system})
        for person in ("a", "b", "c"):
            value = int(np.clip(truth[item] + rng.integers(-1, 2), 1, 5))
            shown = ("present" if value >= 3 else "absent") if labels else str(value)
            humans.append(f"i{item},{person},overall,{shown},{system}")
    verdict_path, human_path = tmp_path / "verdicts.jsonl", tmp_path / "humans.csv"
    verdict_path.write_text("".join(json.dumps(v) + "\n" for v in verdicts))
    human_path.write_text("\n".join(humans) + "\n")
    return verdict_path, human_path


def _judge_values(path, judge):
    return {v["item_id"]: v["value"] for v in map(json.loads, path.open()) if v["rater"] == judge}


HUMAN_OPTIONS = ["--item-col", "id", "--rater-col", "annotator", "--value-col", "label"]


def test_present_absent_human_labels_are_compared_with_stored_ones_and_zeros(tmp_path):
    verdicts, humans = _study(tmp_path, labels=True)
    out = tmp_path / "m.json"
    result = _run("metaeval", verdicts, "--human", humans, *HUMAN_OPTIONS, "--resamples", "50", "--out", out)
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())["rows"]
    assert all(row["binary"] is not None for row in rows)
    # The same F1 as mapping the words by hand.
    people = {}
    for record in csv.DictReader(humans.open()):
        people.setdefault(record["id"], []).append(1 if record["label"] == "present" else 0)
    judged = _judge_values(verdicts, "model:close")
    items = sorted(people)
    majority = [int(sum(people[i]) * 2 > len(people[i])) for i in items]
    expected = binary_scores(majority, [judged[i] for i in items])
    close = next(row for row in rows if row["judge"] == "model:close")
    assert close["binary"]["f1_pos"] == pytest.approx(expected.f1_pos)


def test_metaeval_compares_two_judges_with_williams_and_mcnemar(tmp_path):
    verdicts, humans = _study(tmp_path)
    out = tmp_path / "m.json"
    result = _run("metaeval", verdicts, "--human", humans, *HUMAN_OPTIONS, "--resamples", "50", "--out", out)
    assert result.exit_code == 0, result.output
    assert "Williams" in result.output
    comparison = json.loads(out.read_text())["comparisons"][0]
    assert {comparison["judge_a"], comparison["judge_b"]} == {"model:close", "model:noisy"}
    # The CLI's Williams test equals the library's on the same columns.
    rows = [json.loads(line) for line in verdicts.open()]
    table = {}
    for record in csv.DictReader(humans.open()):
        table.setdefault(record["id"], []).append(float(record["label"]))
    items = sorted(table, key=lambda i: int(i[1:]))
    mean = [np.mean(table[i]) for i in items]
    score = {(r["rater"], r["item_id"]): r["value"] for r in rows}
    expected = williams_test(mean, [score[(comparison["judge_a"], i)] for i in items],
                             [score[(comparison["judge_b"], i)] for i in items], method="spearman")
    assert comparison["williams"][4] == pytest.approx(expected.pvalue)
    assert comparison["williams"][4] < 0.05  # the close judge is closer


def test_metaeval_system_level_correlation_with_interval(tmp_path):
    verdicts, humans = _study(tmp_path)
    out = tmp_path / "m.json"
    result = _run("metaeval", verdicts, "--human", humans, *HUMAN_OPTIONS, "--system-level",
                  "--resamples", "50", "--out", out)
    assert result.exit_code == 0, result.output
    assert "System level" in result.output
    row = next(r for r in json.loads(out.read_text())["systems"] if r["judge"] == "model:close")
    assert row["n_systems"] == 5
    rows = [json.loads(line) for line in verdicts.open()]
    table = {}
    for record in csv.DictReader(humans.open()):
        table.setdefault(record["id"], []).append(float(record["label"]))
    close = {r["item_id"]: r["value"] for r in rows if r["rater"] == "model:close"}
    items = sorted(table)
    expected = system_correlation([close[i] for i in items], [np.mean(table[i]) for i in items],
                                  [f"bot-{int(i[1:]) % 5}" for i in items], method="pearson")
    assert row["pearson"]["estimate"] == pytest.approx(expected.statistic)
    assert row["pearson"]["low"] <= row["pearson"]["estimate"] <= row["pearson"]["high"]


def test_metaeval_scores_each_annotation_set_and_averages(tmp_path):
    verdicts, humans = _study(tmp_path, labels=True)
    out = tmp_path / "m.json"
    result = _run("metaeval", verdicts, "--human", humans, *HUMAN_OPTIONS, "--human-sets", "each",
                  "--resamples", "50", "--out", out)
    assert result.exit_code == 0, result.output
    assert "per annotation set" in result.output
    averaged = {row["judge"]: row for row in json.loads(out.read_text())["per_set"]}
    people = {}
    for record in csv.DictReader(humans.open()):
        people.setdefault(record["annotator"], {})[record["id"]] = int(record["label"] == "present")
    judged = _judge_values(verdicts, "model:close")
    f1s = [binary_scores([labels[i] for i in judged], [judged[i] for i in judged]).f1_pos
           for labels in people.values()]
    assert averaged["model:close"]["f1_pos"] == pytest.approx(np.mean(f1s))


def test_metaeval_dialogue_view_averages_turns(tmp_path):
    verdicts = tmp_path / "v.jsonl"
    humans = tmp_path / "h.csv"
    rng = np.random.default_rng(2)
    lines, people = [], ["id,annotator,criterion,label"]
    for dialogue in range(12):
        for turn in range(4):
            value = int(rng.integers(1, 6))
            lines.append(json.dumps({"item_id": f"d{dialogue}:{turn}", "criterion": "overall",
                                     "rater": "model:j", "value": value}))
            for person in "ab":
                rated = int(np.clip(value + rng.integers(-1, 2), 1, 5))
                people.append(f"d{dialogue}:{turn},{person},overall,{rated}")
    verdicts.write_text("\n".join(lines) + "\n")
    humans.write_text("\n".join(people) + "\n")
    out = tmp_path / "m.json"
    result = _run("metaeval", verdicts, "--human", humans, *HUMAN_OPTIONS, "--view", "dialogue",
                  "--resamples", "50", "--out", out)
    assert result.exit_code == 0, result.output
    row = json.loads(out.read_text())["rows"][0]
    assert row["n_items"] == 12


def test_metaeval_writes_csv_markdown_and_latex_tables(tmp_path):
    verdicts, humans = _study(tmp_path)
    paths = [tmp_path / name for name in ("t.csv", "t.md", "t.tex")]
    result = _run("metaeval", verdicts, "--human", humans, *HUMAN_OPTIONS, "--resamples", "50",
                  *[arg for path in paths for arg in ("--table", path)])
    assert result.exit_code == 0, result.output
    records = list(csv.DictReader(io.StringIO(paths[0].read_text())))
    assert {r["judge"] for r in records} == {"model:close", "model:noisy"}
    noisy = next(r for r in records if r["judge"] == "model:noisy")
    assert "†" in noisy["mark"]  # significantly below the close judge
    assert float(noisy["spearman_low"]) <= float(noisy["spearman"]) <= float(noisy["spearman_high"])
    markdown = paths[1].read_text()
    assert markdown.startswith("| criterion | judge |") and "†" in markdown
    latex = paths[2].read_text()
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert rule in latex
    assert "model:noisy" in latex and r"\textsuperscript{\dag}" in latex


def test_metaeval_html_report_has_inline_svg_figures(tmp_path):
    verdicts, humans = _study(tmp_path, labels=True)
    report = tmp_path / "report.html"
    result = _run("metaeval", verdicts, "--human", humans, *HUMAN_OPTIONS, "--resamples", "50",
                  "--report", report)
    assert result.exit_code == 0, result.output
    page = report.read_text()
    assert page.startswith("<!doctype html>")
    assert page.count("<svg") >= 5  # scatter, confusion, ROC per judge, and the heat map
    assert "ROC of model:close" in page and "Spearman ρ between raters" in page
    # Offline: nothing is fetched (no script, no external image, style or font).
    assert "<script" not in page and not re.search(r'(src|href)="https?:', page) and "@import" not in page


def test_report_escapes_judge_names(tmp_path):
    verdicts, humans = _study(tmp_path)
    text = verdicts.read_text().replace("model:noisy", "model:<script>x</script>")
    verdicts.write_text(text)
    report = tmp_path / "report.html"
    result = _run("metaeval", verdicts, "--human", humans, *HUMAN_OPTIONS, "--resamples", "20",
                  "--report", report)
    assert result.exit_code == 0, result.output
    page = report.read_text()
    assert "<script>x</script>" not in page and "&lt;script&gt;" in page


def test_compare_judges_mcnemar_is_statsmodels():
    rng = np.random.default_rng(4)
    truth = rng.integers(0, 2, 80)
    ratings = []
    for item in range(80):
        for person in "ab":
            ratings.append(Rating(f"i{item}", "flag", f"human:{person}", int(truth[item])))
        for judge, right in (("model:a", 0.8), ("model:b", 0.6)):
            value = truth[item] if rng.random() < right else 1 - truth[item]
            ratings.append(Rating(f"i{item}", "flag", judge, int(value)))
    result = compare_judges(ratings, n_resamples=20)[0]
    a_right = np.array([r.value == truth[int(r.item_id[1:])] for r in ratings if r.rater == "model:a"])
    b_right = np.array([r.value == truth[int(r.item_id[1:])] for r in ratings if r.rater == "model:b"])
    table = [[np.sum(a_right & b_right), np.sum(a_right & ~b_right)],
             [np.sum(~a_right & b_right), np.sum(~a_right & ~b_right)]]
    theirs = sm_mcnemar(table, exact=result.mcnemar.exact, correction=True)
    assert result.mcnemar.pvalue == pytest.approx(theirs.pvalue)
    per_set = per_rater_average(ratings)
    assert {row.judge for row in per_set} == {"model:a", "model:b"}
    assert spearman([1, 2, 3], [1, 2, 3]) == 1.0
