"""Judges written in Python (issue 27, observation 1): a function or a class is a judge on the
same contract as model judges — in ``cs.judge``, panels, pairwise runs and the meta-evaluation;
failures of user code are verdicts, never a crashed run; runs resume by name and version."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

import convoscope as cs
from convoscope.errors import ConfigError
from convoscope.judges import PythonJudge, Unscored, load_judge, make_judge, python_judge
from convoscope.models import ModelError

ROOT = Path(__file__).parents[2]
ITEMS = [cs.Item(id="a", response="Thank you, the refund arrived today."),
         cs.Item(id="b", response="ok"),
         cs.Item(id="c", response="Many thanks for the quick reply and the clear steps.")]
GRATEFUL = cs.Criterion(name="grateful", question="Does the response thank?", definition="Thanks.",
                        scale=cs.Scale(kind="binary", labels=("thanks", "no-thanks")))
DETAIL = cs.Criterion(name="detail", question="How detailed?", definition="Detail.",
                      scale=cs.Scale(kind="range", minimum=1, maximum=5))
MOOD = cs.Criterion(name="mood", question="What mood?", definition="Mood.",
                    scale=cs.Scale(kind="labels", labels=("warm", "cold")))


@python_judge(name="thanks", version="1")
def says_thanks(item, criterion):
    return int("thank" in (item.response or "").lower())


def _judge(tmp_path, judge, criteria=(GRATEFUL,), items=ITEMS, **options):
    return cs.judge(items, list(criteria), judge, store=tmp_path / "run.db", cache_path=None, **options)


def test_a_regex_function_judges_through_cs_judge(tmp_path):
    # Before: cs.judge took model-spec strings only; a rule had to import the unexported
    # runs.judge_items.
    result = _judge(tmp_path, says_thanks)
    assert [(v.item_id, v.value, v.rater) for v in result.verdicts] == [
        ("a", 1, "python:thanks"), ("b", 0, "python:thanks"), ("c", 1, "python:thanks")]
    assert result.summary.model_calls == 0 and result.exit_code() == 0
    assert all(v.rater_kind is cs.RaterKind.PYTHON for v in result.verdicts)


@pytest.mark.parametrize(("returned", "criterion", "expected"), [
    (3, DETAIL, {"value": 3}),
    (True, GRATEFUL, {"value": 1}),
    ("thanks", GRATEFUL, {"value": 1}),
    ("WARM", MOOD, {"value": "warm"}),
    (3.6, DETAIL, {"value": 4, "expected_value": 3.6}),
    (2.0, DETAIL, {"value": 2, "expected_value": None}),
    ((4, "names two steps"), DETAIL, {"value": 4, "reason": "names two steps"}),
    (Unscored("no reply to read"), DETAIL, {"value": None, "unscored_reason": "not_applicable",
                                            "reason": "no reply to read"}),
    (Unscored("cannot tell", reason="idk"), DETAIL, {"value": None, "unscored_reason": "idk"}),
    (cs.Verdict(item_id="?", criterion="?", rater="?", value=5, reason="mine", options=("x",)), DETAIL,
     {"value": 5, "reason": "mine", "options": ("x",), "item_id": "a", "criterion": "detail",
      "rater": "python:fixed"}),
])
async def test_every_documented_return_form_becomes_a_verdict(returned, criterion, expected):
    judge = make_judge(lambda item, criterion: returned, name="fixed")
    verdict = await judge(ITEMS[0], criterion)
    assert {key: getattr(verdict, key) for key in expected} == expected


@pytest.mark.parametrize(("returned", "problem"), [
    (9, "returned 9, which is not on the scale (detail: one of 1, 2, 3, 4, 5)"),
    (7.5, "returned 7.5, which is not on the scale"),
    ("warm", "returned 'warm', which is not on the scale"),
    (None, "returned None"),
    ([1, 2], "returned [1, 2], which is not on the scale"),
    (cs.Verdict(item_id="a", criterion="detail", rater="x", value=0), "whose value 0 is not on the scale"),
])
async def test_a_broken_contract_is_an_unscored_judge_error_saying_what_came_back(returned, problem):
    verdict = await make_judge(lambda item, criterion: returned, name="broken")(ITEMS[0], DETAIL)
    assert verdict.value is None and verdict.unscored_reason == "judge_error"
    assert problem in verdict.raw


def test_user_code_that_raises_is_a_verdict_with_the_tracebacks_last_line_not_a_crash(tmp_path):
    @python_judge(name="fragile")
    def fragile(item, criterion):
        if item.id == "b":
            raise KeyError("no such field: tone")
        return 1

    result = _judge(tmp_path, fragile)
    by_item = {v.item_id: v for v in result.verdicts}
    assert by_item["a"].value == by_item["c"].value == 1
    failed = by_item["b"]
    assert failed.unscored_reason == "judge_error" and failed.value is None
    assert failed.raw.startswith("KeyError: 'no such field: tone' (at test_python_judges.py:")
    assert "in fragile)" in failed.raw
    assert result.exit_code() == 4  # 1 of 3 unscored is over the default --max-unscored of 0.1


async def test_a_model_error_from_user_code_is_transient_and_retried_on_the_next_run(tmp_path):
    calls: list[str] = []

    @python_judge(name="house-client")
    async def house_client(item, criterion):
        calls.append(item.id)
        if len(calls) == 1:
            raise ModelError("house endpoint: HTTP 503")
        return 1

    options = {"store": tmp_path / "r.db", "cache_path": None}
    first = await cs.judge_async(ITEMS[:1], [GRATEFUL], house_client, **options)
    assert first.verdicts[0].unscored_reason == "model_error" and first.exit_code() == 3
    again = await cs.judge_async(ITEMS[:1], [GRATEFUL], house_client, **options)
    assert again.verdicts[0].value == 1 and again.summary.retried == 1 and calls == ["a", "a"]


def test_sync_code_runs_in_a_worker_thread_and_async_code_on_the_loop(tmp_path):
    threads: dict[str, bool] = {}

    @python_judge(name="sync-one")
    def sync_one(item, criterion):
        threads["sync"] = threading.current_thread() is threading.main_thread()
        return 1

    @python_judge(name="async-one")
    async def async_one(item, criterion):
        threads["async"] = threading.current_thread() is threading.main_thread()
        return 1

    _judge(tmp_path, [sync_one, async_one], items=ITEMS[:1])
    assert threads == {"sync": False, "async": True}


def test_a_run_resumes_by_the_judges_declared_name_and_version(tmp_path):
    calls: list[str] = []

    def count(item, criterion):
        calls.append(item.id)
        return 1

    first = _judge(tmp_path, make_judge(count, name="counter", version="1"))
    again = _judge(tmp_path, make_judge(count, name="counter", version="1"))
    assert again.summary.resumed == 3 and len(calls) == 3 and again.verdicts == first.verdicts
    bumped = _judge(tmp_path, make_judge(count, name="counter", version="2"))
    assert bumped.summary.resumed == 0 and len(calls) == 6
    other_params = _judge(tmp_path, make_judge(count, name="counter", version="2", strict=True))
    assert other_params.summary.resumed == 0


def test_parameters_are_passed_on_each_call_and_kept_in_the_identity():
    def mentions(item, criterion, *, word):
        return int(word in item.response.lower())

    judge = make_judge(mentions, name="mentions", version="3", word="refund")
    assert judge.identity() == {"kind": "python", "name": "mentions", "version": "3",
                                "params": {"word": "refund"}, "init": {}}
    assert make_judge(judge, word="thank").params == {"word": "thank"}


def test_a_judge_class_records_its_settings_in_the_identity():
    @python_judge(name="length", version="2")
    class Length:
        def __init__(self, words_per_point=5):
            self.words_per_point = words_per_point

        async def __call__(self, item, criterion):
            return min(5, 1 + len(item.response.split()) // self.words_per_point)

    judge = Length(words_per_point=2)
    assert isinstance(judge, PythonJudge) and judge.rater == "python:length"
    assert judge.identity()["init"] == {"words_per_point": 2} and Length().identity()["init"] == {
        "words_per_point": 5}


def test_python_specs_name_a_module_attribute_and_say_clearly_what_is_missing():
    judge = load_judge("python:test_python_judges:says_thanks")
    assert judge is says_thanks
    with pytest.raises(ConfigError, match="cannot import 'no_such_module'"):
        load_judge("python:no_such_module:judge")
    with pytest.raises(ConfigError, match="has no 'nope'"):
        load_judge("python:test_python_judges:nope")
    with pytest.raises(ConfigError, match="no convoscope.judges entry point 'not-installed'"):
        load_judge("python:not-installed")
    with pytest.raises(ConfigError, match="a persona is told to a model"):
        cs.judge(ITEMS, [GRATEFUL], cs.JudgeSpec("python:test_python_judges:says_thanks", persona="x"))


def test_a_python_judge_compares_pairs_by_its_scores(tmp_path):
    from convoscope.pairwise import judge_pairs

    context = (cs.Turn(speaker="user", text="How do I reset my password?"),)
    answers = (("terse", "Settings."), ("helpful", "Open Settings, then Security, then Reset it."))
    items = [cs.Item(id=f"c1-{system}", system=system, context=context, response=text,
                     meta={"context_id": "c1"}) for system, text in answers]
    words = make_judge(lambda item, criterion: min(5, len(item.response.split())), name="words")
    report = judge_pairs(items, DETAIL, [words], store=tmp_path / "pairs.db", n_resamples=50)
    (verdict,) = report.verdicts
    assert (verdict.value, verdict.rater, verdict.criterion) == ("helpful", "python:words", "pairwise:detail")
    assert verdict.reason == "helpful: 5 | terse: 1"
    with pytest.raises(ConfigError, match="compares pairs by their scores"):
        judge_pairs(items, MOOD, [words], store=tmp_path / "pairs.db")


def test_python_judge_verdicts_go_straight_into_the_meta_evaluation(tmp_path):
    from scipy.stats import spearmanr

    texts = ["no", "fine thanks", "the room was clean", "great staff and a quiet clean room",
             "great staff, a quiet clean room and a generous breakfast every day"]
    items = [cs.Item(id=f"i{n}", response=text) for n, text in enumerate(texts)]
    people = [cs.Verdict(item_id=f"i{n}", criterion="detail", rater="human:ann", value=value)
              for n, value in enumerate([1, 2, 2, 4, 5])]
    words = make_judge(lambda item, criterion: min(5, 1 + len(item.response.split()) // 3), name="words")
    result = _judge(tmp_path, words, criteria=(DETAIL,), items=items)
    (row,) = cs.metaeval(result.verdicts, people, n_resamples=200)
    assert row.judge == "python:words" and row.n_items == 5
    judged = [v.value for v in sorted(result.verdicts, key=lambda v: v.item_id)]
    assert row.spearman.estimate == pytest.approx(spearmanr(judged, [1, 2, 2, 4, 5]).statistic)


def _documented_example() -> str:
    text = (ROOT / "docs" / "python-judges.md").read_text(encoding="utf-8")
    return re.search(r"<!-- example: panel -->\n```python\n(.*?)```", text, re.DOTALL).group(1)


@pytest.mark.slow
def test_the_documented_panel_of_a_python_judge_and_the_embedded_model_runs(tmp_path, monkeypatch):
    pytest.importorskip("llama_cpp")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    code = _documented_example()
    assert len([line for line in code.splitlines() if line.strip()]) <= 10
    cell: dict = {}
    exec(compile(code, "python-judges.md", "exec"), cell)
    result = cell["result"]
    raters = {verdict.rater for verdict in result.member_verdicts}
    assert raters == {"python:specifics", "model:embedded:smollm2[completion]"}
    assert len(result.verdicts) == 8 and all(v.rater == "panel:mean" for v in result.verdicts)
    assert all(v.value is not None for v in result.member_verdicts if v.rater == "python:specifics")
