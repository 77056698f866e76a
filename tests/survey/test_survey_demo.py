"""The README demo with the offline default gets decisions that mean something (issue 26,
observation 3: with the plain thresholds the embedded judge accepted 0 of the demo's 10 answers
and 0 of 18 'accept' answers of a held-out set)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from convoscope.cli._survey import survey_group
from convoscope.survey import shipped_model
from convoscope.survey._shipped import prompt_fingerprint

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "survey_answers.csv"


def test_the_shipped_model_was_fitted_on_the_prompts_the_judge_sends_today() -> None:
    # When this fails the embedded judge's prompts changed (a rubric, the quoting, the few-shot
    # examples): refit with `python benchmarks/survey_labelled.py --write-shipped judge+length`.
    assert shipped_model().prompt_fingerprint == prompt_fingerprint()


@pytest.mark.slow
def test_the_demo_accepts_the_good_answers_and_rejects_the_weak_ones(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    out = tmp_path / "scored.csv"
    result = CliRunner().invoke(survey_group, [
        "score", str(EXAMPLE), "--question-col", "question", "--answer-col", "answer",
        "--out", str(out), "--store", str(tmp_path / "store.db")])
    assert result.exit_code == 0, result.output
    assert "the model shipped with convoscope" in " ".join(result.output.split())
    with out.open(encoding="utf-8", newline="") as handle:
        decided = {row["id"]: row["decision"] for row in csv.DictReader(handle)}
    # The two detailed, on-topic answers are accepted; gibberish and the one-word or evasive
    # answers ("fine", "lol idk", "그냥 그래요") are not.
    assert decided["en1"] == decided["ko4"] == "accept"
    assert decided["en3"] == decided["ko3"] == "reject"
    assert all(decided[key] != "accept" for key in ("en2", "en6", "ko2"))
