"""A one-call judge keeps an item's shared answer only until every criterion has read it
(issue 12, observation 3: a never-emptied dict inside a frozen judge). The model is a scripted
fake that answers from the request's schema (unit level)."""

from __future__ import annotations

import gc
import json
import weakref

from convoscope.criteria import load_suite
from convoscope.items import Item
from convoscope.judges import JointJudge
from convoscope.models import Generation
from convoscope.runs import judge_items
from convoscope.store import Store

ISSUES = load_suite("dialogue-issues").criteria


class ScriptedSchemaModel:
    """Answers "absent" (2 for overall) for every criterion; keeps a weak reference to each
    answer so a test can see whether anything still holds it."""

    name = "scripted"

    def __init__(self) -> None:
        self.calls = 0
        self.answers: list[weakref.ref[Generation]] = []

    async def generate(self, request):
        self.calls += 1
        answer = {name: {"reason": "fine", "score": 2 if name == "overall" else "absent"}
                  for name in request.json_schema["required"]}
        generation = Generation(text=json.dumps(answer), model=self.name)
        self.answers.append(weakref.ref(generation))
        return generation

    async def aclose(self) -> None:
        pass


def dialogue(number: int) -> Item:
    return Item(id=f"d{number}", context=({"speaker": "user", "text": "hi"},
                                          {"speaker": "bot", "text": "hello"}))


async def test_the_one_call_judge_holds_no_answer_after_a_run(tmp_path):
    model = ScriptedSchemaModel()
    judge = JointJudge(model, ISSUES)
    summary = await judge_items([dialogue(n) for n in range(5)], list(ISSUES), judge,
                                store=Store(tmp_path / "s.db"), concurrency=3)
    assert model.calls == 5 and summary.verdicts == 5 * len(ISSUES)
    gc.collect()
    assert [ref() for ref in model.answers] == [None] * 5  # the judge kept none of them


async def test_an_item_judged_again_is_asked_again_not_served_a_stale_answer():
    model = ScriptedSchemaModel()
    judge = JointJudge(model, ISSUES)
    item = dialogue(0)
    first = [await judge(item, criterion) for criterion in ISSUES]
    again = [await judge(item, criterion) for criterion in ISSUES]
    assert model.calls == 2  # e.g. a retry in the same process gets a fresh call
    assert [v.value for v in first] == [v.value for v in again]
    assert sum(not v.shared_call for v in again) == 1  # the new call is booked once
