"""Runs compute metric KPIs beside judged ones, judge KPIs only on the turns marked for them, and
keep every panel member's verdict and relevance flag beside the pooled one. The model here is a
fake (unit level); tests/reports/test_report_slow.py runs the real embedded model."""

import json

import pytest

from convoscope.criteria import load_suite
from convoscope.items import Item, ItemError
from convoscope.judges import Panel, RubricJudge
from convoscope.models import Generation
from convoscope.runs import applies, judge_items
from convoscope.store import Store

KPI = load_suite("kpi")
FOLLOW_UP, LATENCY, LENGTH = KPI.get("follow-up"), KPI.get("low-latency"), KPI.get("answer-length")


class FakePersonaModel:
    """A fake model: a judge whose persona says 'strict' answers "not fulfilled", others
    "fulfilled"; every answer marks the KPI relevant. Counts its calls."""

    name = "fake"

    def __init__(self):
        self.calls = 0

    async def generate(self, request):
        self.calls += 1
        strict = "strict" in request.messages[0].content
        answer = {"reason": "checked", "relevant": True,
                  "score": "not fulfilled" if strict else "fulfilled"}
        return Generation(text=json.dumps(answer), model=self.name, prompt_tokens=10, completion_tokens=5)

    async def aclose(self):
        pass


def turns():
    context = ({"speaker": "user", "text": "How do I heat the seat?"},
               {"speaker": "assistant", "text": "Press the seat icon."},
               {"speaker": "user", "text": "And the back seats?"})
    return [
        Item(id="t1", context=context, response="The rear buttons are on the console.", system="bot",
             meta={"kpis": ["follow-up"], "timestamps": [0, 1, 10, 11.5]}),
        Item(id="t2", context=context[:1], response="Press the icon.", system="bot",
             meta={"kpis": "question-answering", "request_time": "2024-05-01T09:00:00Z",
                   "response_time": "2024-05-01T09:00:04Z"}),
        Item(id="t3", context=context[:1], response="Press the icon.", system="bot"),  # unmarked
    ]


def test_kpis_apply_only_to_marked_turns_and_metrics_to_every_response():
    t1, t2, t3 = turns()
    assert applies(FOLLOW_UP, t1) and not applies(FOLLOW_UP, t2) and applies(FOLLOW_UP, t3)
    assert all(applies(LATENCY, item) and applies(LENGTH, item) for item in (t1, t2, t3))
    assert not applies(LATENCY, Item(id="d", context=({"speaker": "a", "text": "hi"},)))
    assert applies(FOLLOW_UP, t1.model_copy(update={"meta": {"kpis": ["kpi:follow-up"]}}))


async def test_panel_of_personas_with_metrics_in_one_run(tmp_path):
    store = Store(tmp_path / "s.db")
    model = FakePersonaModel()
    panel = Panel((RubricJudge(model, persona="a brand ambassador", persona_name="brand"),
                   RubricJudge(model, persona="a strict rater", persona_name="strict")),
                  rule="majority", ties="low")
    summary = await judge_items(turns(), [FOLLOW_UP, LATENCY, LENGTH], panel, store=store)
    # follow-up on t1 and t3 (t2 is marked for another KPI); latency and length on all three.
    assert (summary.total_tasks, summary.not_applicable) == (8, 1)
    assert model.calls == summary.model_calls == 4  # metrics make no model call
    rows = {(v.item_id, v.criterion, v.rater): v for v in store.verdicts(summary.run_id)}
    members = [rows[("t1", "follow-up", rater)] for rater in ("model:fake#brand", "model:fake#strict")]
    pooled = rows[("t1", "follow-up", "panel:majority")]
    assert [m.value for m in members] == [1, 0] and all(m.relevant is True for m in members)
    assert pooled.value == 0  # a 1-1 tie pooled with ties=low is "not fulfilled"
    assert pooled.relevant is True  # the members' relevance flags, pooled by majority
    assert ("t2", "follow-up", "panel:majority") not in rows
    assert rows[("t1", "low-latency", "metric:latency")].value == 1  # 1.5 s
    assert rows[("t2", "low-latency", "metric:latency")].value == 0  # 4 s
    assert rows[("t3", "low-latency", "metric:latency")].unscored_reason == "not_applicable"
    assert rows[("t2", "answer-length", "metric:answer_length")].value == 1
    again = await judge_items(turns(), [FOLLOW_UP, LATENCY, LENGTH], panel, store=store)
    assert again.resumed == 8 and model.calls == 4


async def test_bad_timestamp_stops_the_run_before_any_model_call(tmp_path):
    model = FakePersonaModel()
    bad = turns()[0].model_copy(update={"meta": {"timestamps": [0, 1, 10, "later"]}})
    with pytest.raises(ItemError, match=r"item 't1', field 'meta\.timestamps\.3'"):
        await judge_items([bad], [FOLLOW_UP, LATENCY], RubricJudge(model), store=Store(tmp_path / "s.db"))
    assert model.calls == 0


@pytest.mark.parametrize(("flags", "pooled"), [
    ((True, False), True),  # a tie keeps the turn relevant
    ((False, False, True), False),
    ((True, None), True),
    ((None, None), None),
])
def test_panel_pools_relevance_flags_by_majority(flags, pooled):
    from convoscope.judges import Verdict

    model = FakePersonaModel()
    panel = Panel(tuple(RubricJudge(model, persona=f"p{i}") for i in range(len(flags))))
    item = turns()[0]
    members = [Verdict(item_id="t1", criterion="follow-up", rater=f"model:m#{i}", value=1, relevant=flag)
               for i, flag in enumerate(flags)]
    assert panel.pool(item, FOLLOW_UP, members).relevant is pooled
