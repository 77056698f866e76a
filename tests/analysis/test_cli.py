"""`convoscope agree` and `convoscope metaeval` on the sample files."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from convoscope.analysis import (
    agreement_table,
    fleiss_kappa,
    krippendorff_alpha,
    metaeval,
    read_ratings,
)
from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.items import ColumnMap

_register()
SAMPLES = Path(__file__).parent / "samples"
HUMAN_OPTIONS = ["--item-col", "id", "--rater-col", "annotator", "--value-col", "label"]


def _run(*args):
    # A wide console keeps rich from wrapping the one-line messages the tests look for.
    return CliRunner().invoke(cli, [str(arg) for arg in args], env={"COLUMNS": "300"})


def test_agree_prints_and_writes_json(tmp_path):
    out = tmp_path / "agree.json"
    result = _run("agree", SAMPLES / "humans.csv", *HUMAN_OPTIONS, "--level", "ordinal", "--out", out)
    assert result.exit_code == 0, result.output
    assert "Inter-annotator agreement" in result.output and "overall" in result.output
    data = json.loads(out.read_text())
    rows = {row["criterion"]: row for row in data["rows"]}
    assert set(rows) == {"overall", "relevant"}
    columns = ColumnMap(id="id", rater="annotator", value="label")
    expected = agreement_table(read_ratings(SAMPLES / "humans.csv", columns=columns), level="ordinal")
    assert rows["overall"]["krippendorff_alpha"] == expected[0].krippendorff_alpha
    assert rows["overall"]["strong"]["n_removed"] == 1  # one "I don't know" in the sample
    assert rows["overall"]["n_raters"] == 3 and rows["overall"]["n_items"] == 16
    assert rows["overall"]["cohen_weights"] == "linear"


def test_agree_without_criterion_column_uses_the_value_column_name(tmp_path):
    path = tmp_path / "annotations.csv"
    path.write_text("id,annotator,label\n" + "".join(
        f"{i},{a},{'pos' if (i + (a == 'y')) % 3 else 'neg'}\n" for i in range(12) for a in "xyz"))
    out = tmp_path / "a.json"
    result = _run("agree", path, "--item-col", "id", "--rater-col", "annotator", "--value-col", "label",
                  "--out", out)
    assert result.exit_code == 0, result.output
    (row,) = json.loads(out.read_text())["rows"]
    assert row["criterion"] == "label"
    matrix = [[("pos" if (i + (a == "y")) % 3 else "neg") for i in range(12)] for a in "xyz"]
    assert row["fleiss_kappa"] == fleiss_kappa(matrix)
    assert row["krippendorff_alpha"] == krippendorff_alpha(matrix)


def test_metaeval_prints_and_writes_json(tmp_path):
    out = tmp_path / "metaeval.json"
    result = _run("metaeval", SAMPLES / "verdicts.jsonl", "--human", SAMPLES / "humans.csv",
                  *HUMAN_OPTIONS, "--criterion", "overall", "--by", "language", "--resamples", "200",
                  "--out", out)
    assert result.exit_code == 0, result.output
    assert "model:good" in result.output and "Spearman" in result.output
    rows = json.loads(out.read_text())["rows"]
    assert [(r["group"], r["judge"]) for r in rows] == [
        (None, "model:good"), (None, "model:noisy"), ("en", "model:good"), ("en", "model:noisy"),
        ("ko", "model:good"), ("ko", "model:noisy")]
    judged = read_ratings(SAMPLES / "verdicts.jsonl")
    humans = read_ratings(SAMPLES / "humans.csv", columns=ColumnMap(id="id", rater="annotator",
                                                                         value="label"))
    expected = metaeval(judged, humans, criteria=["overall"], by="language", n_resamples=200)
    assert rows[0]["spearman"]["low"] == expected[0].spearman.low
    assert rows[1]["n_items"] == 15  # one parse failure


def test_metaeval_binary_criterion_shows_f1(tmp_path):
    result = _run("metaeval", SAMPLES / "verdicts.jsonl", "--human", SAMPLES / "humans.csv",
                  *HUMAN_OPTIONS, "--criterion", "relevant", "--resamples", "100")
    assert result.exit_code == 0, result.output
    assert "F1+" in result.output and "F1−" in result.output


def test_errors_are_one_line_with_exit_code_2(tmp_path):
    bad = tmp_path / "humans.csv"
    bad.write_text("id,annotator,criterion,label\nq00,ann1,overall,3\nq01,,overall,4\n")
    result = _run("agree", bad, *HUMAN_OPTIONS)
    assert result.exit_code == 2
    assert f"{bad}, line 3, field 'annotator': is empty" in result.output
    result = _run("metaeval", SAMPLES / "verdicts.jsonl", "--human", SAMPLES / "humans.csv",
                  *HUMAN_OPTIONS, "--criterion", "fluency")
    assert result.exit_code == 2
    assert "criterion 'fluency' has no ratings" in result.output
    result = _run("metaeval", tmp_path / "missing.jsonl")
    assert result.exit_code == 2 and "file not found" in result.output


def test_metaeval_reports_each_judges_bias_against_people(tmp_path):
    """Issue 18: bias diagnostics come with every meta-evaluation, equal to the library's."""
    from convoscope.estimate import study_bias

    out = tmp_path / "metaeval.json"
    result = _run("metaeval", SAMPLES / "verdicts.jsonl", "--human", SAMPLES / "humans.csv",
                  *HUMAN_OPTIONS, "--criterion", "overall", "--resamples", "100", "--out", out)
    assert result.exit_code == 0, result.output
    assert "Judge bias against people" in result.output
    bias = json.loads(out.read_text())["bias"]
    judged = read_ratings(SAMPLES / "verdicts.jsonl")
    humans = read_ratings(SAMPLES / "humans.csv", columns=ColumnMap(id="id", rater="annotator",
                                                                         value="label"))
    expected = study_bias(judged, humans, criteria=["overall"], score="value")
    assert [(b["judge"], b["n"]) for b in bias] == [(r.judge, r.n) for r in expected]
    assert {b["judge"] for b in bias} == {"model:good", "model:noisy"}
    english = expected[0].languages["en"].mean_residual
    assert bias[0]["languages"]["en"]["mean_residual"] == pytest.approx(english)


def test_judge_and_criterion_names_are_printed_as_written(tmp_path):
    """Observed: a completion-mode judge, model:embedded:smollm2[completion], was printed as
    model:embedded:smollm2 — Rich read "[completion]" as markup and dropped it."""
    from convoscope.judges import Verdict

    rows = []
    for item in range(12):
        truth = item % 3
        rows += [Verdict(item_id=f"i{item}", criterion="fit [draft]", rater=f"human:p{n}", value=truth)
                 for n in range(2)]
        rows.append(Verdict(item_id=f"i{item}", criterion="fit [draft]",
                            rater="model:embedded:smollm2[completion]", value=(truth + item % 2) % 3))
    path = tmp_path / "verdicts.jsonl"
    path.write_text("".join(row.model_dump_json() + "\n" for row in rows))
    result = _run("metaeval", path, "--resamples", 50)
    assert result.exit_code == 0, result.output
    assert "model:embedded:smollm2[completion]" in result.output and "fit [draft]" in result.output
    agreed = _run("agree", path)
    assert agreed.exit_code == 0 and "fit [draft]" in agreed.output, agreed.output
