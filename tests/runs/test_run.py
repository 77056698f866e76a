"""Runs: every task judged once, persisted, resumable. Uses a scripted fake model (unit level);
tests/runs/test_resume_kill.py runs the real embedded model in a subprocess."""

import asyncio
import json

from convoscope.criteria import Criterion, Scale
from convoscope.items import Item
from convoscope.judges import Panel, RubricJudge
from convoscope.models import Generation
from convoscope.runs import judge_items
from convoscope.store import Store

CRITERION = Criterion(name="quality", question="Good?", definition="Overall quality.",
                      scale=Scale(kind="range", minimum=1, maximum=5))
DIALOGUE = Criterion(name="coherent", question="Coherent?", definition="Whole dialogue.",
                     granularity="dialogue", scale=Scale(kind="binary"))


class SimulatedCrash(Exception):
    pass


class FakeScriptedModel:
    """A fake model (unit tests only): answers with a score derived from the prompt length,
    garbage for prompts mentioning 'garble', and raises nothing."""

    def __init__(self, name="fake", delay=0.0, fail_after=None):
        self.calls, self.delay, self.fail_after, self._name = 0, delay, fail_after, name

    @property
    def name(self):
        return self._name

    async def generate(self, request):
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise SimulatedCrash  # a crash in the middle of a run (Ctrl-C is tested for real elsewhere)
        await asyncio.sleep(self.delay)
        prompt = request.messages[-1].content
        text = "garbled" if "garble" in prompt else json.dumps({"score": 1})
        return Generation(text=text, model=self.name, prompt_tokens=len(prompt), completion_tokens=5)

    async def aclose(self):
        pass


def items(n):
    return [Item(id=str(i), response=f"answer {'x' * i}") for i in range(n)]


async def test_run_writes_each_verdict_and_resumes(tmp_path):
    store = Store(tmp_path / "s.db")
    model = FakeScriptedModel()
    judge = RubricJudge(model)
    dialogue = Item(id="d", context=({"speaker": "a", "text": "hi"},))
    corpus = [*items(5), Item(id="g", response="garble"), dialogue]
    summary = await judge_items(corpus, [CRITERION, DIALOGUE], judge, store=store, concurrency=3)
    # 6 responses x 2 criteria + 1 dialogue on the dialogue criterion; "quality" needs a response.
    assert (summary.total_tasks, summary.not_applicable) == (13, 1)
    assert summary.verdicts == 13 and summary.unscored == {"parse_failure": 2}
    assert summary.model_calls == model.calls == 13
    assert len(store.verdicts(summary.run_id)) == 13
    again = await judge_items(corpus, [CRITERION, DIALOGUE], judge, store=store)
    assert again.run_id == summary.run_id and again.resumed == 13 and again.verdicts == 0
    assert model.calls == 13 and len(store.verdicts(summary.run_id)) == 13


async def test_interrupted_run_loses_nothing_and_duplicates_nothing(tmp_path):
    store = Store(tmp_path / "s.db")
    corpus = items(10)
    flaky = RubricJudge(FakeScriptedModel(fail_after=4))
    try:
        await judge_items(corpus, [CRITERION], flaky, store=store, concurrency=1)
    except SimulatedCrash:
        pass
    written = store.verdicts()
    assert len(written) == 4
    steady = RubricJudge(FakeScriptedModel())
    summary = await judge_items(corpus, [CRITERION], steady, store=store, concurrency=2)
    assert summary.resumed == 4 and summary.verdicts == 6
    final = store.verdicts(summary.run_id)
    assert sorted(v.item_id for v in final) == sorted(i.id for i in corpus)


async def test_panel_run_stores_members_and_pooled(tmp_path):
    store = Store(tmp_path / "s.db")
    panel = Panel((RubricJudge(FakeScriptedModel("a")), RubricJudge(FakeScriptedModel("b"))))
    summary = await judge_items(items(3), [CRITERION], panel, store=store)
    raters = sorted({v.rater for v in store.verdicts(summary.run_id)})
    assert raters == ["model:a", "model:b", "panel:majority"]
    assert summary.verdicts == 3 and summary.model_calls == 6
