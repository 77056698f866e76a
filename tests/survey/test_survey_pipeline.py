"""The survey pipeline end to end with the embedded judge (a handful of answers: it is slow),
plus the offline parts: decisions, follow-ups, the report and reading scored files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from convoscope.cli._survey import survey_group
from convoscope.store import Store
from convoscope.survey import (
    COLUMNS,
    FittedModel,
    ScoredAnswer,
    SurveyResult,
    decide,
    follow_up_for,
    read_labels,
    read_scored_features,
    render_survey_report,
)

ANSWERS = """id,q,a
a1,What did you like <b>most</b> about the hotel?,"The staff upgraded our room & breakfast was great."
a2,What did you like <b>most</b> about the hotel?,asdfghjkl qwertyuiop zxcvbnm
a3,호텔에서 좋았던 점은 무엇인가요?,직원들이 친절했어요
"""


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    """One real embedded run shared by the tests below (each judgement takes ~0.5 s)."""
    folder = tmp_path_factory.mktemp("survey")
    (folder / "answers.csv").write_text(ANSWERS, encoding="utf-8")
    result = CliRunner().invoke(survey_group, [
        "score", str(folder / "answers.csv"), "--question-col", "q", "--answer-col", "a",
        "--out", str(folder / "scored.csv"), "--report", str(folder / "report.html"),
        "--store", str(folder / "store.db"), "--baseline", "length", "--baseline", "tfidf"])
    assert result.exit_code == 0, result.output
    return folder


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return {row["id"]: row for row in csv.DictReader(handle)}


def test_score_writes_every_column_and_rejects_gibberish_with_reason(scored: Path) -> None:
    rows = _rows(scored / "scored.csv")
    assert list(rows) == ["a1", "a2", "a3"]
    assert tuple(rows["a1"]) == (*COLUMNS, "baseline_length", "baseline_tfidf")
    assert rows["a2"]["gibberish"] == "true" and rows["a2"]["decision"] == "reject"
    assert rows["a2"]["gibberish_reasons"] and "not judged" in rows["a2"]["decision_reason"]
    assert rows["a2"]["effort"] == "" and rows["a2"]["follow_up_source"] == "template:gibberish"
    for key in ("a1", "a3"):
        row = rows[key]
        assert row["gibberish"] == "false" and row["decision"] in ("accept", "hold", "reject")
        assert 0 <= int(row["effort"]) <= 7 and 0 <= int(row["relevance"]) <= 4
        assert 0 <= float(row["overall"]) <= 1
        if row["decision"] != "accept":
            assert row["follow_up_source"] == f"template:{row['weakest']}"


def test_baselines_sit_beside_the_judged_scores(scored: Path) -> None:
    rows = _rows(scored / "scored.csv")
    # words of the answer ("&" is not one); Korean words are separated by spaces
    assert float(rows["a1"]["baseline_length"]) == 8
    assert float(rows["a3"]["baseline_length"]) == 2
    similarity = {key: float(row["baseline_tfidf"]) for key, row in rows.items()}
    assert all(0.0 <= value <= 1.0 for value in similarity.values())
    assert similarity["a2"] == 0.0  # the keyboard mash shares no word with its question
    assert similarity["a3"] > 0.0  # 좋았던 / 직원 share syllables with the question


def test_gibberish_answers_never_reach_the_model(scored: Path) -> None:
    store = Store(str(scored / "store.db"))
    verdicts = store.verdicts()
    assert {v.item_id for v in verdicts} == {"a1", "a3"}
    assert len(verdicts) == 6  # two answers x three dimensions


def test_report_is_self_contained_and_escaped(scored: Path) -> None:
    page = (scored / "report.html").read_text(encoding="utf-8")
    assert "<b>most</b>" not in page and "&lt;b&gt;most&lt;/b&gt;" in page
    assert "직원들이 친절했어요" in page and '<meta charset="utf-8">' in page
    assert "http://" not in page and "https://" not in page
    decisions = [row["decision"] for row in _rows(scored / "scored.csv").values()]
    assert f"{decisions.count('accept')} accepted" in page
    assert f"{decisions.count('reject')} rejected" in page
    assert '<th onclick="sortBy(9)">baseline length</th>' in page  # after overall, before decision
    assert "Offline judge." in page  # the embedded model judged: the page says what that is worth


def test_model_file_applies_weights_without_judging_again(scored: Path) -> None:
    # Constant weights make the expected overall exact whatever the tiny model said.
    fitted = FittedModel(aggregate="ridge", weights=(0.0, 0.0, 0.0), intercept=0.8,
                         accept_at=0.72, reject_below=0.68)
    (scored / "fitted.json").write_text(fitted.model_dump_json(), encoding="utf-8")
    result = CliRunner().invoke(survey_group, [
        "score", str(scored / "answers.csv"), "--question-col", "q", "--answer-col", "a",
        "--out", str(scored / "refit.csv"), "--store", str(scored / "store.db"),
        "--model", str(scored / "fitted.json")])
    assert result.exit_code == 0, result.output
    assert len(Store(str(scored / "store.db")).verdicts()) == 6  # resumed: nothing judged again
    rows = _rows(scored / "refit.csv")
    for key in ("a1", "a3"):
        assert float(rows[key]["overall"]) == pytest.approx(0.8)
        assert rows[key]["decision"] == "accept"
    assert rows["a2"]["decision"] == "reject"


def test_broken_row_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "broken.csv"
    path.write_text("id,q,a\n1,Q?,a fine answer\n,Q?,no id here\n", encoding="utf-8")
    result = CliRunner().invoke(survey_group, ["score", str(path), "--question-col", "q",
                                      "--answer-col", "a", "--store", str(tmp_path / "s.db")])
    assert result.exit_code == 2
    assert "broken.csv" in result.output and "line 3" in result.output and "'id'" in result.output


def test_fit_command_writes_weights_and_threshold(tmp_path: Path) -> None:
    header = ",".join(COLUMNS)
    lines = [header]
    labels = ["id,label"]
    for index, (effort, relevance, completeness, label) in enumerate([
            (7, 4, 4, "accept"), (6, 4, 3, "accept"), (5, 3, 4, "accept"), (2, 1, 1, "reject"),
            (1, 2, 1, "reject"), (3, 2, 2, "hold"), (0, 0, 0, "reject"), (6, 3, 3, "accept")]):
        row = {key: "" for key in COLUMNS} | {"id": f"r{index}", "gibberish": "false",
                                               "effort": effort, "relevance": relevance,
                                               "completeness": completeness}
        lines.append(",".join(str(row[key]) for key in COLUMNS))
        labels.append(f"r{index},{label}")
    (tmp_path / "scored.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "expert.csv").write_text("\n".join(labels) + "\n", encoding="utf-8")
    out = tmp_path / "fitted.json"
    result = CliRunner().invoke(survey_group, ["fit", str(tmp_path / "scored.csv"), "--labels",
                                      str(tmp_path / "expert.csv"), "--out", str(out),
                                      "--aggregate", "ridge"])
    assert result.exit_code == 0, result.output
    saved = json.loads(out.read_text())
    assert saved["auc_in_sample"] == 1.0 and saved["aggregate"] == "ridge" and len(saved["weights"]) == 3
    assert saved["labelled"] == 8 and saved["alpha"] > 0 and saved["auc_cv"] is not None
    # The ROC is printed with the chosen point marked, and the CV figure sits beside in-sample.
    assert "accept (EER)" in result.output and "cross-validated" in result.output


def test_reading_errors_name_file_line_and_field(tmp_path: Path) -> None:
    labels = tmp_path / "expert.csv"
    labels.write_text("id,label\nr1,accept\nr2,maybe\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"expert.csv: line 3: field label: .*'maybe'"):
        read_labels(labels)
    scored = tmp_path / "scored.csv"
    scored.write_text("id,gibberish,effort,relevance,completeness\nr1,false,x,1,1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"scored.csv: line 2: field effort"):
        read_scored_features(scored)
    scored.write_text("id,answer\nr1,hi\n", encoding="utf-8")
    with pytest.raises(ValueError, match="missing column"):
        read_scored_features(scored)


def test_decide_holds_between_the_reject_and_accept_edges() -> None:
    assert decide(0.56, accept_at=0.55, reject_below=0.45)[0] == "accept"
    assert decide(0.55, accept_at=0.55, reject_below=0.45)[0] == "accept"
    assert decide(0.5, accept_at=0.55, reject_below=0.45)[0] == "hold"
    assert decide(0.45, accept_at=0.55, reject_below=0.45)[0] == "hold"
    assert decide(0.44, accept_at=0.55, reject_below=0.45)[0] == "reject"
    assert decide(0.5, accept_at=0.5, reject_below=0.5)[0] == "accept"  # no band: two classes
    assert decide(None, accept_at=0.5, reject_below=0.5) == ("hold", "not every dimension was scored")


def test_follow_up_templates_follow_the_weakest_dimension_and_language() -> None:
    english, source = follow_up_for("completeness", "en")
    assert source == "template:completeness" and "question" in english
    korean, _ = follow_up_for("effort", "ko")
    assert any("\uac00" <= char <= "\ud7a3" for char in korean)
    assert follow_up_for(None, None)[1] == "template:general"
    assert follow_up_for("gibberish", "en") == (follow_up_for(None, "en")[0], "template:gibberish")


def test_report_renders_without_labels_or_answers() -> None:
    page = render_survey_report(SurveyResult(answers=(), aggregation="sum", accept_at=0.55,
                                             reject_below=0.45))
    assert "0 answers" in page
    answer = ScoredAnswer(id="x", question="<q>", answer="<script>alert(1)</script>",
                          language="en", gibberish=True, gibberish_reasons=("low_likelihood",),
                          decision="reject", decision_reason="gibberish")
    page = render_survey_report(SurveyResult(answers=(answer,), aggregation="sum", accept_at=0.55,
                                      reject_below=0.45))
    assert "<script>alert" not in page and "&lt;script&gt;" in page


@pytest.mark.parametrize("path", [(), ("score",), ("fit",)])
def test_every_survey_command_documents_an_example(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(survey_group, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example" in result.output
    assert f"convoscope {' '.join(('survey', *path))}" in result.output


def test_llm_synthesis_judges_overall_once_per_clean_answer(scored: Path) -> None:
    result = CliRunner().invoke(survey_group, [
        "score", str(scored / "answers.csv"), "--question-col", "q", "--answer-col", "a",
        "--aggregate", "llm", "--out", str(scored / "llm.csv"), "--store", str(scored / "store.db")])
    assert result.exit_code == 0, result.output
    overall = [v for v in Store(str(scored / "store.db")).verdicts() if v.criterion.endswith("overall")]
    assert sorted(v.item_id for v in overall) == ["a1", "a3"]
    # The synthesis prompt carried the three dimension scores as an earlier turn.
    rows = _rows(scored / "llm.csv")
    for key in ("a1", "a3"):
        value = rows[key]["overall"]
        # The synthesis' expected score (token probabilities) over 4, clipped to 0-1.
        assert value == "" or 0.0 <= float(value) <= 1.0


class _StubModel:
    """Stands in for a capable model: records prompts, answers with a fixed question."""

    def __init__(self, reply: str | Exception) -> None:
        self.reply, self.prompts = reply, []

    @property
    def name(self) -> str:
        return "stub"

    async def generate(self, request):  # type: ignore[no-untyped-def]
        from convoscope.models import Generation

        self.prompts.append(request.messages[0].content)
        if isinstance(self.reply, Exception):
            raise self.reply
        return Generation(text=self.reply, model="stub")

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize("reply", ["Which dish did you enjoy most, and why?\\nextra line", None])
def test_a_capable_model_writes_follow_ups_and_failures_fall_back(reply) -> None:
    import asyncio

    from convoscope.models import ModelError
    from convoscope.survey._score import _written_follow_ups

    weak = ScoredAnswer(id="w", question="What did you like?", answer="food", language="en",
                        gibberish=False, scores={"effort": 1, "relevance": 4, "completeness": 2},
                        reasons={"effort": "one word"}, overall=0.3, decision="reject",
                        decision_reason="low", weakest="effort", follow_up="template question",
                        follow_up_source="template:effort")
    model = _StubModel(reply.replace("\\n", "\n") if reply else ModelError("down"))
    answers, used = asyncio.run(_written_follow_ups((weak,), [], model, None))
    assert used == 1 and "food" in model.prompts[0] and "effort (one word)" in model.prompts[0]
    if reply:
        assert answers[0].follow_up == "Which dish did you enjoy most, and why?"
        assert answers[0].follow_up_source == "model:stub"
    else:
        assert answers[0].follow_up == follow_up_for("effort", "en")[0]
        assert answers[0].follow_up_source.startswith("template:effort (model failed: down")


def test_running_the_same_command_again_resumes_without_a_model_call(scored: Path) -> None:
    result = CliRunner().invoke(survey_group, [
        "score", str(scored / "answers.csv"), "--question-col", "q", "--answer-col", "a",
        "--report", str(scored / "again.html"), "--store", str(scored / "store.db")])
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip()
            for line in result.output.splitlines() if line.count("│") == 3}
    assert rows["model calls"] == "0"
    assert rows["cache hits / resumed"] == "0 / 6"  # two clean answers x three dimensions
    assert "resumed from the store: 6" in (scored / "again.html").read_text(encoding="utf-8")
