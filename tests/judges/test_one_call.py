"""One call for all dialogue-issue labels: a single model request per dialogue, each criterion
read from its part of the answer, and the mode visible in the rater. The model is a fake that
answers from the request's schema (unit level)."""

import json

import pytest

from convoscope.criteria import load_suite
from convoscope.items import Item
from convoscope.judges import JointJudge, joint_request
from convoscope.models import Generation
from convoscope.runs import build_judge, judge_items
from convoscope.store import Store

ISSUES = load_suite("dialogue-issues").criteria


class FakeSchemaModel:
    """A fake model: answers "present" for repetitive, 2 for overall, "absent" otherwise, and
    leaves out any criterion named in ``skip``. Records every request."""

    name = "fake"

    def __init__(self, skip=()):
        self.requests, self.skip = [], set(skip)

    async def generate(self, request):
        self.requests.append(request)
        answer = {}
        for name in request.json_schema["required"]:
            if name in self.skip:
                continue
            score = 2 if name == "overall" else ("present" if name == "repetitive" else "absent")
            answer[name] = {"reason": f"looked at {name}", "score": score}
        return Generation(text=json.dumps(answer), model=self.name, prompt_tokens=900, completion_tokens=60)

    async def aclose(self):
        pass


DIALOGUES = [Item(id=f"d{i}", system="bot", context=({"speaker": "user", "text": "hi"},
                                                       {"speaker": "bot", "text": "hi hi hi"}))
             for i in range(3)]


def test_the_request_holds_every_rubric_and_a_schema_per_criterion():
    request = joint_request(ISSUES, DIALOGUES[0])
    system = request.messages[0].content
    assert all(f"Criterion: {criterion.name}" in system for criterion in ISSUES)
    assert request.json_schema["required"] == [criterion.name for criterion in ISSUES]
    assert request.messages[1].content.rstrip().endswith("as JSON:")


async def test_one_model_call_per_dialogue_for_nine_criteria(tmp_path):
    model = FakeSchemaModel()
    judge = JointJudge(model, ISSUES)
    summary = await judge_items(DIALOGUES, list(ISSUES), judge, store=Store(tmp_path / "s.db"), concurrency=4)
    assert len(model.requests) == 3 and summary.model_calls == 3 and summary.verdicts == 27
    assert summary.cache_hits == 0  # the other 8 verdicts of a dialogue share its call: not cache hits
    verdicts = Store(tmp_path / "s.db").verdicts(summary.run_id)
    assert {v.rater for v in verdicts} == {"model:fake[one-call]"}
    by_name = {(v.item_id, v.criterion): v for v in verdicts}
    assert by_name[("d0", "repetitive")].value == 1 and by_name[("d0", "unsafe")].value == 0
    assert by_name[("d1", "overall")].value == 2 and by_name[("d1", "overall")].reason == "looked at overall"
    assert sum(v.prompt_tokens for v in verdicts) == 3 * 900  # usage booked once per call


async def test_a_criterion_missing_from_the_answer_is_unscored_alone(tmp_path):
    judge = JointJudge(FakeSchemaModel(skip={"unsafe"}), ISSUES)
    unsafe = await judge(DIALOGUES[0], next(c for c in ISSUES if c.name == "unsafe"))
    repetitive = await judge(DIALOGUES[0], next(c for c in ISSUES if c.name == "repetitive"))
    assert unsafe.value is None and unsafe.unscored_reason == "parse_failure"
    assert repetitive.value == 1


def test_build_judge_refuses_completion_mode_and_mixed_granularity():
    from convoscope.runs import JudgeSpec

    with pytest.raises(ValueError, match="chat mode"):
        build_judge([JudgeSpec("embedded", mode="completion")], one_call=ISSUES)
    kpi = load_suite("kpi").get("follow-up")
    with pytest.raises(ValueError, match="granularity"):
        JointJudge(FakeSchemaModel(), (*ISSUES, kpi))


@pytest.mark.slow
def test_one_call_on_the_embedded_model(tmp_path):
    """The real embedded model answers two labels in one grammar-constrained JSON call."""
    pytest.importorskip("llama_cpp")
    from click.testing import CliRunner

    from convoscope.cli import cli
    from convoscope.cli._app import _register

    _register()
    items = tmp_path / "d.jsonl"
    items.write_text(json.dumps({"id": "d1", "system": "bot", "context": [
        {"speaker": "user", "text": "My dog died yesterday."},
        {"speaker": "bot", "text": "Dogs are mammals. Dogs are mammals."}]}) + "\n")
    out = tmp_path / "v.jsonl"
    result = CliRunner().invoke(cli, ["judge", str(items), "--criterion", "repetitive", "--criterion",
                                      # Room for two reasons (each bounded by the schema's maxLength).
                                      "lacks-empathy", "--one-call", "--max-tokens", "200",
                                      "--store", str(tmp_path / "s.db"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(row["criterion"] for row in rows) == ["lacks-empathy", "repetitive"]
    assert {row["rater"] for row in rows} == {"model:embedded:smollm2[one-call]"}
    assert rows[0]["raw"] == rows[1]["raw"] and [row["cached"] for row in rows] == [False, False]
    assert [row["shared_call"] for row in rows] == [False, True]
    answer = json.loads(rows[0]["raw"])  # the schema holds the model to one object per criterion
    assert set(answer) == {"repetitive", "lacks-empathy"}
    for row in rows:
        assert row["value"] == {"present": 1, "absent": 0}.get(answer[row["criterion"]].get("score"))
