"""Decisions that use every signal and a judge scored against labels in one command (issue 26,
observations 3 and 4). Scored CSVs here are written by hand, as ``survey score`` writes them, so
no model runs; the statistics are pinned to scipy and scikit-learn."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from convoscope.cli._survey import survey_group
from convoscope.errors import ConfigError
from convoscope.runs import JudgeSpec
from convoscope.survey import (
    COLUMNS,
    DIMENSION_MAXIMA,
    DIMENSIONS,
    ScoredAnswer,
    answer_features,
    decision_model,
    evaluate_labelled,
    fit_labelled,
    parse_features,
    read_scored_features,
    shipped_model,
    write_scored_csv,
)

LABELS = ("accept", "hold", "reject")


def _answers(n: int = 48, seed: int = 5) -> tuple[list[ScoredAnswer], list[dict[str, str]]]:
    """Answers whose dimension scores are noise but whose length tracks the label."""
    rng = np.random.default_rng(seed)
    answers, labels = [], []
    for index in range(n):
        label = LABELS[index % 3]
        words = {"accept": 14, "hold": 5, "reject": 2}[label] + int(rng.integers(0, 3))
        text = " ".join(f"w{i}" for i in range(words))
        scores = {name: int(rng.integers(0, DIMENSION_MAXIMA[name] + 1)) for name in DIMENSIONS}
        overall = sum(scores[d] / DIMENSION_MAXIMA[d] for d in DIMENSIONS) / 3
        answers.append(ScoredAnswer(
            id=f"a{index}", question="Why?", answer=text, language="en", gibberish=False,
            scores=scores, overall=round(overall, 4), decision="accept" if overall >= 0.5 else "reject",
            decision_reason="test", features=answer_features(text, "Why?", gibberish=False)))
        labels.append({"id": f"a{index}", "label": label, "overall": str({"accept": 4, "hold": 2,
                                                                           "reject": 0}[label]),
                       **{name: str(min(DIMENSION_MAXIMA[name], words // 3)) for name in DIMENSIONS}})
    return answers, labels


def _files(tmp_path: Path, extra_labels: list[dict[str, str]] = ()) -> tuple[Path, Path]:
    answers, labels = _answers()
    scored, expert = tmp_path / "scored.csv", tmp_path / "labels.csv"
    write_scored_csv(answers, scored)
    with expert.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(labels[0]))
        writer.writeheader()
        writer.writerows([*labels, *extra_labels])
    return scored, expert


def test_the_scored_csv_carries_the_judge_free_features(tmp_path: Path) -> None:
    scored, _ = _files(tmp_path)
    with scored.open(encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle))
    assert tuple(header) == COLUMNS and "feature_log_words" in header
    read = read_scored_features(scored)
    first = _answers()[0][0]
    assert read.text["a0"]["log_words"] == pytest.approx(math.log1p(len(first.answer.split())), abs=1e-4)


def test_features_of_one_answer() -> None:
    found = answer_features("good good good", "Was it good?", gibberish=False)
    assert found["log_words"] == pytest.approx(math.log(4))
    assert found["distinct_ratio"] == pytest.approx(1 / 3)
    assert 0 < found["tfidf"] <= 1 and found["gibberish"] == 0.0
    assert answer_features("", "Q?", gibberish=True) == {
        "log_words": 0.0, "distinct_ratio": 0.0, "tfidf": 0.0, "gibberish": 1.0}
    # Korean words are separated by spaces; each Han character counts as a word.
    texts = ("직원들이 친절했어요", "很好吃")
    korean, chinese = (answer_features(text, None, gibberish=False) for text in texts)
    assert korean["log_words"] == pytest.approx(math.log(3))
    assert chinese["log_words"] == pytest.approx(math.log(4))


def test_feature_names_and_sets() -> None:
    assert parse_features("judge+length") == (*DIMENSIONS, "log_words")
    assert parse_features("length,effort") == ("effort", "log_words")
    with pytest.raises(ConfigError, match="unknown feature 'colour'"):
        parse_features("judge,colour")


def test_fit_weighs_length_beside_the_judge_and_compares_every_set(tmp_path: Path) -> None:
    # Observation 3: survey fit could not combine the dimensions with length. Here the judge is
    # noise and length carries the label, which the comparison must show.
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    scored, expert = _files(tmp_path)
    fitted, lines = fit_labelled(scored, expert, aggregate="ridge", features=parse_features("judge+length"))
    assert fitted.dimensions == (*DIMENSIONS, "log_words") and "log_words" in lines[0]
    rows = {row.name: row for row in fitted.compared}
    assert {"judge (Sum)", "judge", "length", "judge+length", "text", "all"} <= set(rows)
    assert rows["length"].auc_cv > 0.95 > rows["judge"].auc_cv
    assert rows["judge+length"].auc_cv > rows["judge (Sum)"].auc_cv
    # One positive weight on one feature ranks answers as the feature does.
    answers, labels = _answers()
    accepted = [row["label"] == "accept" for row in labels]
    reference = sklearn_metrics.roc_auc_score(accepted, [a.features["log_words"] for a in answers])
    assert rows["length"].auc_in_sample == pytest.approx(reference)
    weights = dict(zip(fitted.dimensions, fitted.weights, strict=True))
    assert weights["log_words"] > 0
    # The fitted model predicts from the same named inputs the scored CSV holds.
    first = answers[0]
    values = {**{d: first.scores[d] / DIMENSION_MAXIMA[d] for d in DIMENSIONS}, **first.features}
    assert 0.0 <= fitted.predict(values) <= 1.0


def test_survey_fit_prints_the_comparison_of_feature_sets(tmp_path: Path) -> None:
    scored, expert = _files(tmp_path)
    fitted = tmp_path / "fitted.json"
    result = CliRunner().invoke(survey_group, ["fit", str(scored), "--labels", str(expert),
                                               "--features", "judge+length", "--out", str(fitted)])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "inputs: effort, relevance, completeness, log_words" in flat and "Feature sets" in flat
    saved = json.loads(fitted.read_text(encoding="utf-8"))
    assert saved["aggregate"] == "ridge"
    # The AUCs come with their intervals and their paired difference, from the out-of-fold scores
    # the model now keeps (issue 38).
    assert saved["n_accepted"] + saved["n_not_accepted"] == saved["labelled"]
    assert len(saved["out_of_fold"]) == saved["labelled"]
    assert flat.count("95% interval") == 3 and "answer length alone" in flat and "DeLong" in flat
    with pytest.raises(ConfigError, match="weighs log_words, which this answer does not have"):
        fit_labelled(scored, expert, aggregate="ridge", features=("log_words",))[0].predict({"effort": 1.0})


def test_the_sum_cannot_weigh_other_features(tmp_path: Path) -> None:
    scored, expert = _files(tmp_path)
    with pytest.raises(ConfigError, match="needs the ridge aggregate"):
        fit_labelled(scored, expert, aggregate="sum", features=parse_features("judge+length"))


def test_fit_refuses_label_ids_it_cannot_find(tmp_path: Path) -> None:
    # Observation 4: survey fit silently dropped label ids that are not in the scored file.
    strangers = [{"id": f"x{i}", "label": "accept", "overall": "4", "effort": "5", "relevance": "4",
                  "completeness": "4"} for i in range(3)]
    scored, expert = _files(tmp_path, strangers)
    with pytest.raises(ConfigError, match=r"labels\.csv: 3 of 51 labelled ids are not in .*'x0', 'x1', 'x2'"):
        fit_labelled(scored, expert)
    result = CliRunner().invoke(survey_group, ["fit", str(scored), "--labels", str(expert),
                                               "--out", str(tmp_path / "fitted.json")])
    assert result.exit_code == 2 and "3 of 51 labelled ids" in " ".join(result.output.split())


def test_evaluate_scores_dimensions_and_decision_in_one_call(tmp_path: Path) -> None:
    stats = pytest.importorskip("scipy.stats")
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    scored, expert = _files(tmp_path)
    answers, labels = _answers()
    evaluation = evaluate_labelled(scored, expert)
    assert evaluation.labelled == 48 and evaluation.gibberish == 0
    rows = {row.name: row for row in evaluation.dimensions}
    judge = [a.scores["effort"] for a in answers]
    truth = [int(row["effort"]) for row in labels]
    assert rows["effort"].spearman == pytest.approx(stats.spearmanr(judge, truth).statistic)
    assert rows["effort"].kendall == pytest.approx(stats.kendalltau(judge, truth).statistic)
    assert rows["effort"].weighted_kappa == pytest.approx(
        sklearn_metrics.cohen_kappa_score(judge, truth, weights="quadratic", labels=list(range(8))))
    decision = evaluation.decision
    made = [a.decision for a in answers]
    expected = [row["label"] for row in labels]
    assert decision is not None and decision.n == 48
    assert decision.table["accept"]["reject"] == sum(
        t == "accept" and m == "reject" for t, m in zip(expected, made, strict=True))
    assert decision.accuracy == pytest.approx(sklearn_metrics.accuracy_score(expected, made))
    assert decision.kappa == pytest.approx(sklearn_metrics.cohen_kappa_score(expected, made))
    assert decision.auc == pytest.approx(sklearn_metrics.roc_auc_score(
        [label == "accept" for label in expected], [a.overall for a in answers]))


def test_evaluate_refuses_unknown_ids_with_their_count(tmp_path: Path) -> None:
    strangers = [{"id": "ghost", "label": "reject", "overall": "0", "effort": "0", "relevance": "0",
                  "completeness": "0"}]
    scored, expert = _files(tmp_path, strangers)
    runner = CliRunner()
    result = runner.invoke(survey_group, ["evaluate", str(scored), "--labels", str(expert)])
    assert result.exit_code == 2
    assert "1 of 49 labelled ids are not in" in " ".join(result.output.split())
    scored, expert = _files(tmp_path)
    out = tmp_path / "evaluation.json"
    result = runner.invoke(survey_group, ["evaluate", str(scored), "--labels", str(expert),
                                          "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "accuracy" in result.output and "accept precision" in result.output
    assert json.loads(out.read_text(encoding="utf-8"))["labelled"] == 48


def test_evaluate_needs_something_to_compare(tmp_path: Path) -> None:
    scored, _ = _files(tmp_path)
    labels = tmp_path / "ids.csv"
    labels.write_text("id,comment\na0,fine\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="nothing to compare"):
        evaluate_labelled(scored, labels)


def test_the_shipped_model_says_where_it_comes_from_and_whom_it_fits() -> None:
    model = shipped_model()
    assert model.fitted_for.startswith("embedded judge") and "benchmarks/data/survey_labelled" in model.source
    assert model.labelled == 140 and model.aggregate == "ridge"
    assert {"judge (Sum)", "length", "judge+length"} <= {row.name for row in model.compared}
    assert model.reject_below <= model.accept_at
    fitted, line = decision_model(None, [JudgeSpec("embedded")])
    assert fitted == model and "shipped with convoscope" in line and "140 answers" in line
    assert decision_model(None, [JudgeSpec("openai:qwen@http://127.0.0.1:1/v1")])[0] is None
    assert decision_model(None, [JudgeSpec("embedded", persona="strict")])[0] is None
    assert decision_model(None, [JudgeSpec("embedded")], thresholds_given=True)[0] is None
    assert decision_model("none", [JudgeSpec("embedded")])[0] is None
    with pytest.raises(ConfigError, match="fitted on the embedded judge's scores"):
        decision_model("shipped", [JudgeSpec("openai:qwen@http://127.0.0.1:1/v1")])
