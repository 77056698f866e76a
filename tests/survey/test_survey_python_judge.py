"""Issue 38, observation 5 (last part): `survey score` takes Python judges and panels like
`convoscope judge` does, and the Python API takes a `@python_judge` without crashing.

The judge below is a rule written for the test: it scores each dimension by the answer's length
(twelve words or more is the top of the scale), so the right decision for each answer is known
in advance under the plain thresholds (accept at 0.55, reject below 0.45)."""

from __future__ import annotations

import asyncio
import csv
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import convoscope as cs
from convoscope.cli._survey import survey_group
from convoscope.errors import ConfigError
from convoscope.items import Item
from convoscope.runs import JudgeSpec
from convoscope.store import Store
from convoscope.survey import decision_model, score_survey_async, shipped_model

# words -> the share of the scale the rule gives: 13 words 1.0, 6 words 0.5, 2 words 0.17
EXPECTED = {"long": "accept", "middle": "hold", "short": "reject"}
ANSWERS = {
    "long": "The staff were friendly and the room was clean and quiet every night",
    "middle": "The breakfast was good and fresh",
    "short": "Nothing really",
}

JUDGE_MODULE = '''
import convoscope as cs


def _share(item, criterion, words):
    top = max(criterion.scale.values())
    return top * min(1.0, len((item.response or "").split()) / words)


@cs.python_judge(name="by-length", version="1")
def by_length(item, criterion):
    return _share(item, criterion, 12)


@cs.python_judge(name="by-length-strict", version="1")
def by_length_strict(item, criterion):
    return _share(item, criterion, 24)
'''


@pytest.fixture
def judge_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A judge module written into tmp_path and put on sys.path (as PYTHONPATH would)."""
    name = f"survey_rules_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(JUDGE_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def _answers(tmp_path: Path) -> Path:
    path = tmp_path / "answers.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "question", "answer"])
        for key, text in ANSWERS.items():
            writer.writerow([key, "What did you like about the hotel?", text])
    return path


def _decisions(path: Path) -> dict[str, str]:
    with path.open(encoding="utf-8") as handle:
        return {row["id"]: row["decision"] for row in csv.DictReader(handle)}


def test_survey_score_takes_a_python_judge_on_the_command_line(tmp_path, judge_module) -> None:
    out = tmp_path / "scored.csv"
    result = CliRunner().invoke(survey_group, [
        "score", str(_answers(tmp_path)), "--judge", f"python:{judge_module}:by_length",
        "--store", str(tmp_path / "s.db"), "--no-cache", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert _decisions(out) == EXPECTED
    # The default decision for a judge that is not the embedded one is the plain thresholds,
    # and the line says why the shipped model was not used.
    assert "plain thresholds" in result.output and "embedded judge's scores" in result.output


def test_survey_score_pools_a_panel_of_python_judges(tmp_path, judge_module) -> None:
    out = tmp_path / "scored.csv"
    result = CliRunner().invoke(survey_group, [
        "score", str(_answers(tmp_path)), "--judge", f"python:{judge_module}:by_length",
        "--judge", f"python:{judge_module}:by_length_strict", "--pool", "mean",
        "--store", str(tmp_path / "s.db"), "--no-cache", "--out", str(out)])
    assert result.exit_code == 0, result.output
    # Mean of the two rules: long 0.77 (accept), middle 0.375 (reject), short 0.125 (reject).
    assert _decisions(out) == {"long": "accept", "middle": "reject", "short": "reject"}


def test_the_python_api_takes_a_python_judge(tmp_path) -> None:
    @cs.python_judge(name="by-length-api", version="1")
    def by_length(item, criterion):
        return max(criterion.scale.values()) * min(1.0, len((item.response or "").split()) / 12)

    items = [Item(id=key, question="What did you like about the hotel?", response=text)
             for key, text in ANSWERS.items()]
    result = asyncio.run(score_survey_async(items, [by_length], store=Store(tmp_path / "s.db"),
                                            cache_path=None))
    assert {a.id: a.decision for a in result.answers} == EXPECTED
    assert result.judges == ("python:by-length-api",)
    assert result.fitted is None  # never the weights fitted on the embedded judge's scores
    with pytest.raises(ConfigError, match="fitted on the embedded judge's scores"):
        asyncio.run(score_survey_async(items, [by_length], store=Store(tmp_path / "s.db"),
                                       cache_path=None, fitted=shipped_model()))


def test_the_shipped_model_is_refused_for_a_judge_it_was_not_fitted_on() -> None:
    with pytest.raises(ConfigError, match="fitted on the embedded judge's scores"):
        decision_model("shipped", [JudgeSpec("python:rules:by_length")])
    fitted, line = decision_model(None, [JudgeSpec("python:rules:by_length")])
    assert fitted is None and "plain thresholds" in line and "python:rules:by_length" in line
