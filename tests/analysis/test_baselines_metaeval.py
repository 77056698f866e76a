"""Baselines as rows of the meta-evaluation: correlations pinned to scipy, AUC to scikit-learn, no
kappa or F1 for them; and ``convoscope metaeval --baseline`` end to end on a tiny sample."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats
from sklearn.metrics import roc_auc_score

from convoscope.analysis import Rating, metaeval
from convoscope.baselines import baseline_ratings, length
from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.items import Item, Turn, write_jsonl

_register()

RESPONSES = [
    "No.", "Yes, I think so.", "I like it a lot, it is great fun.", "Maybe later.",
    "Paris is lovely in the spring, especially along the river.", "Ok.",
    "I have never been there, but I would like to go some day.", "Sure, why not?",
    "That sounds interesting, tell me more about your trip please.", "Hmm.",
    "We went hiking in the mountains last summer and it rained every day.", "Nope, not really.",
]
HUMANS = {  # three people rate overall quality 1-5 and relevance (1 = relevant)
    "human:a": [1, 2, 4, 2, 5, 1, 4, 3, 5, 1, 4, 2],
    "human:b": [2, 2, 4, 1, 5, 1, 5, 2, 4, 2, 5, 2],
    "human:c": [1, 3, 3, 2, 4, 2, 4, 3, 5, 1, 4, 1],
}
RELEVANT = {"human:a": [0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 0], "human:b": [0, 1, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1],
            "human:c": [1, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 0]}
JUDGE = [2, 2, 3, 2, 4, 1, 3, 3, 5, 2, 3, 1]


def _items() -> list[Item]:
    context = (Turn(speaker="A", text="Do you like to travel?"), Turn(speaker="B", text="I do."),
               Turn(speaker="A", text="Where would you like to go next?"))
    return [Item(id=f"i{index}", context=context, response=text, language="en")
            for index, text in enumerate(RESPONSES)]


def _humans() -> list[Rating]:
    rows = [Rating(f"i{i}", "overall", rater, value) for rater, values in HUMANS.items()
            for i, value in enumerate(values)]
    rows += [Rating(f"i{i}", "relevant", rater, value) for rater, values in RELEVANT.items()
             for i, value in enumerate(values)]
    return rows


def _judge() -> list[Rating]:
    return [Rating(f"i{i}", "overall", "model:tiny", value) for i, value in enumerate(JUDGE)] + [
        Rating(f"i{i}", "relevant", "model:tiny", int(value >= 3)) for i, value in enumerate(JUDGE)]


def test_baseline_rows_sit_beside_the_judge_with_correlations_only():
    rows = metaeval([*_judge(), *baseline_ratings(_items(), ["length"], ["overall"])], _humans(),
                    criteria=["overall"], n_resamples=200)
    by_rater = {row.judge: row for row in rows}
    assert set(by_rater) == {"model:tiny", "baseline:length"}
    baseline, judge = by_rater["baseline:length"], by_rater["model:tiny"]
    lengths = [length(text) for text in RESPONSES]
    human_mean = np.mean(list(HUMANS.values()), axis=0)
    assert baseline.spearman.estimate == pytest.approx(stats.spearmanr(lengths, human_mean).statistic)
    assert baseline.kendall.estimate == pytest.approx(stats.kendalltau(lengths, human_mean).statistic)
    assert baseline.pearson.estimate == pytest.approx(stats.pearsonr(lengths, human_mean).statistic)
    assert baseline.kappa is None and baseline.binary is None and baseline.auc is None
    assert judge.kappa is not None  # judges keep their kappa
    assert baseline.humans == judge.humans and baseline.n_items == 12


def test_binary_criterion_gives_auc_to_baselines_and_f1_to_judges():
    baselines = baseline_ratings(_items(), ["length", "tfidf"], ["relevant"])
    rows = {row.judge: row for row in metaeval([*_judge(), *baselines], _humans(), criteria=["relevant"],
                                               n_resamples=100)}
    majority = (np.sum(list(RELEVANT.values()), axis=0) >= 2).astype(int)
    lengths = [length(text) for text in RESPONSES]
    assert rows["baseline:length"].auc == pytest.approx(roc_auc_score(majority, lengths))
    assert rows["baseline:length"].binary is None and rows["baseline:length"].kappa is None
    judge_scores = [int(value >= 3) for value in JUDGE]
    assert rows["model:tiny"].auc == pytest.approx(roc_auc_score(majority, judge_scores))
    assert rows["model:tiny"].binary is not None
    # One context for every item, so TF-IDF similarity still differs by response only.
    assert rows["baseline:tfidf-sim"].auc is not None


def _write_sample(tmp_path):
    items, verdicts, human = tmp_path / "items.jsonl", tmp_path / "verdicts.jsonl", tmp_path / "human.jsonl"
    write_jsonl(_items(), items)
    with verdicts.open("w") as handle:
        for rating in _judge():
            handle.write(json.dumps({"item_id": rating.item_id, "criterion": rating.criterion,
                                     "rater": rating.rater, "value": rating.value}) + "\n")
    with human.open("w") as handle:
        for rating in _humans():
            handle.write(json.dumps({"item_id": rating.item_id, "criterion": rating.criterion,
                                     "rater": rating.rater, "value": rating.value}) + "\n")
    return items, verdicts, human


def _run(*args):
    return CliRunner().invoke(cli, [str(arg) for arg in args], env={"COLUMNS": "300"})


def test_cli_adds_baseline_rows(tmp_path):
    items, verdicts, human = _write_sample(tmp_path)
    out = tmp_path / "metaeval.json"
    result = _run("metaeval", verdicts, "--human", human, "--items", items, "--baseline", "length",
                  "--baseline", "tfidf", "--resamples", "100", "--out", out)
    assert result.exit_code == 0, result.output
    assert "baseline:length" in result.output and "baseline:tfidf-sim" in result.output
    assert "AUC" in result.output  # the binary criterion's table
    rows = json.loads(out.read_text())["rows"]
    assert {(r["criterion"], r["judge"]) for r in rows} == {
        (criterion, rater) for criterion in ("overall", "relevant")
        for rater in ("model:tiny", "baseline:length", "baseline:tfidf-sim")}
    overall = next(r for r in rows if r["criterion"] == "overall" and r["judge"] == "baseline:length")
    human_mean = np.mean(list(HUMANS.values()), axis=0)
    expected = stats.spearmanr([length(text) for text in RESPONSES], human_mean).statistic
    assert overall["spearman"]["estimate"] == pytest.approx(expected)
    assert overall["kappa"] is None


def test_cli_baseline_needs_items_and_bad_items_name_the_line(tmp_path):
    items, verdicts, human = _write_sample(tmp_path)
    result = _run("metaeval", verdicts, "--human", human, "--baseline", "length")
    assert result.exit_code == 2 and "--baseline needs --items" in result.output
    broken = tmp_path / "broken.jsonl"
    broken.write_text(items.read_text().splitlines()[0] + '\n{"id": "x", "response": 5}\n')
    result = _run("metaeval", verdicts, "--human", human, "--items", broken, "--baseline", "length")
    assert result.exit_code == 2
    assert f"{broken}, line 2, field 'response'" in result.output


@pytest.mark.slow
def test_cli_embedding_baseline_with_the_real_model(tmp_path):
    pytest.importorskip("llama_cpp")
    items, verdicts, human = _write_sample(tmp_path)
    out = tmp_path / "metaeval.json"
    result = _run("metaeval", verdicts, "--human", human, "--items", items, "--baseline", "embedding",
                  "--criterion", "overall", "--resamples", "50", "--out", out)
    assert result.exit_code == 0, result.output
    (row,) = [r for r in json.loads(out.read_text())["rows"] if r["judge"] == "baseline:embedding-sim"]
    assert row["n_items"] == 12 and -1.0 <= row["spearman"]["estimate"] <= 1.0
