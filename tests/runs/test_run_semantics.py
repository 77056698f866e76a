"""Failure semantics, prompt-covering keys, ties, provenance and the RunResult, at unit level with
a scripted model (named as such); the same behaviour against the real llama.cpp server behind the
fault-injecting proxy is in test_endpoint_runs.py."""

import asyncio
import json

import pytest
import sqlalchemy as sa

from convoscope.criteria import Criterion, Scale
from convoscope.items import Item
from convoscope.judges import Panel, RubricJudge
from convoscope.models import Generation, ModelError, register_backend
from convoscope.runs import (
    EXIT_OK,
    EXIT_OUTSTANDING,
    EXIT_TOO_MANY_UNSCORED,
    RunResult,
    judge,
    judge_async,
    judge_items,
    run_judge,
)
from convoscope.store import Store

CRITERION = Criterion(name="quality", question="Good?", definition="Overall quality.",
                      scale=Scale(kind="range", minimum=1, maximum=5))


class ScriptedModel:
    """A scripted model (unit tests only): answers ``{"score": score}``; ``down`` makes every call
    a ModelError (an endpoint that is down), ``garble`` answers text that is no verdict."""

    def __init__(self, name="scripted", score=2, down=False, garble=False):
        self._name, self.score, self.down, self.garble = name, score, down, garble
        self.prompts: list[str] = []

    @property
    def name(self):
        return self._name

    async def generate(self, request):
        prompt = "\n".join(message.content for message in request.messages)
        self.prompts.append(prompt)
        if self.down:
            raise ModelError(f"{self._name}: HTTP 500 (injected)")
        text = "no verdict here" if self.garble else json.dumps({"score": self.score})
        return Generation(text=text, model=self._name, served_model=f"{self._name}-2026-01",
                          seed=0, temperature=0.0, prompt_tokens=10, completion_tokens=3)

    async def aclose(self):
        pass


def corpus(n=4, knowledge="The museum opens at 9."):
    return [Item(id=f"i{i}", question="When does it open?", response=f"At nine ({i}).",
                 meta={"knowledge": knowledge}) for i in range(n)]


async def test_model_error_is_retried_on_the_next_run(tmp_path):
    store = Store(tmp_path / "s.db")
    model = ScriptedModel(down=True)
    first = await run_judge(corpus(), [CRITERION], RubricJudge(model), store=store)
    assert first.summary.unscored == {"model_error": 4}
    assert first.summary.outstanding == {"model_error": 4} and first.exit_code() == EXIT_OUTSTANDING
    model.down = False
    again = await run_judge(corpus(), [CRITERION], RubricJudge(model), store=store)
    assert again.run_id == first.run_id
    assert (again.summary.resumed, again.summary.retried, again.summary.scored) == (0, 4, 4)
    assert again.summary.outstanding == {} and again.exit_code() == EXIT_OK
    assert len(model.prompts) == 8  # 4 failed calls, then exactly the 4 retries
    assert [v.value for v in again.verdicts] == [2, 2, 2, 2]
    with store.engine.connect() as connection:  # one current row per task, the try counted
        rows = connection.execute(sa.text("select attempts from verdicts")).fetchall()
    assert sorted(rows) == [(2,)] * 4
    third = await run_judge(corpus(), [CRITERION], RubricJudge(model), store=store)
    assert third.summary.resumed == 4 and len(model.prompts) == 8  # done is done


async def test_unscored_is_retried_only_on_request(tmp_path):
    store = Store(tmp_path / "s.db")
    model = ScriptedModel(garble=True)
    first = await run_judge(corpus(), [CRITERION], RubricJudge(model), store=store)
    assert first.summary.outstanding == {"parse_failure": 4}
    assert first.exit_code() == EXIT_TOO_MANY_UNSCORED and first.exit_code(max_unscored=1.0) == EXIT_OK
    model.garble = False
    plain = await run_judge(corpus(), [CRITERION], RubricJudge(model), store=store)
    assert plain.summary.resumed == 4 and len(model.prompts) == 4
    asked = await run_judge(corpus(), [CRITERION], RubricJudge(model), store=store, retry_unscored=True)
    assert (asked.summary.retried, asked.summary.scored) == (4, 4) and asked.exit_code() == EXIT_OK


async def test_panel_with_a_dead_member_is_not_scored(tmp_path):
    store = Store(tmp_path / "s.db")
    alive, dead = ScriptedModel("alive"), ScriptedModel("dead", down=True)
    panel = Panel((RubricJudge(alive), RubricJudge(dead)))
    result = await run_judge(corpus(3), [CRITERION], panel, store=store)
    assert result.summary.scored == 0 and result.summary.unscored == {"model_error": 3}
    assert result.exit_code() == EXIT_OUTSTANDING
    assert result.summary.members == {"model:alive": {"scored": 3}, "model:dead": {"model_error": 3}}
    dead.down = False
    healed = await run_judge(corpus(3), [CRITERION], Panel((RubricJudge(alive), RubricJudge(dead))),
                             store=store)
    assert healed.summary.scored == 3 and healed.exit_code() == EXIT_OK
    assert len(dead.prompts) == 6 and len(alive.prompts) == 6  # the panel task is redone whole


async def test_changed_knowledge_is_new_work(tmp_path):
    store = Store(tmp_path / "s.db")
    model = ScriptedModel()
    await judge_items(corpus(), [CRITERION], RubricJudge(model), store=store)
    same = await judge_items(corpus(), [CRITERION], RubricJudge(model), store=store)
    assert same.resumed == 4 and len(model.prompts) == 4
    changed = await judge_items(corpus(knowledge="The museum opens at 10."), [CRITERION],
                                RubricJudge(model), store=store)
    assert changed.resumed == 0 and changed.verdicts == 4 and len(model.prompts) == 8
    assert "10" in model.prompts[-1]


@pytest.mark.parametrize("field", ["persona", "documents"])
async def test_any_rendered_meta_field_is_part_of_the_key(tmp_path, field):
    store = Store(tmp_path / "s.db")
    model = ScriptedModel()
    items = [Item(id="a", response="Hello.", meta={field: "first"})]
    await judge_items(items, [CRITERION], RubricJudge(model), store=store)
    other = [Item(id="a", response="Hello.", meta={field: "second"})]
    summary = await judge_items(other, [CRITERION], RubricJudge(model), store=store)
    assert summary.resumed == 0 and len(model.prompts) == 2


async def test_one_one_panel_split_under_ties_unscored_is_a_tie(tmp_path):
    store = Store(tmp_path / "s.db")
    panel = Panel((RubricJudge(ScriptedModel("a", score=1)), RubricJudge(ScriptedModel("b", score=2))),
                  ties="unscored")
    result = await run_judge(corpus(2), [CRITERION], panel, store=store)
    assert {v.unscored_reason for v in result.verdicts} == {"tie"}


async def test_every_verdict_records_run_model_version_seed_temperature(tmp_path):
    from convoscope import __version__

    store = Store(tmp_path / "s.db")
    result = await run_judge(corpus(2), [CRITERION], RubricJudge(ScriptedModel()), store=store)
    for verdict in [*result.verdicts, *store.verdicts(result.run_id)]:
        assert verdict.run_id == result.run_id and verdict.convoscope_version == __version__
        assert (verdict.served_model, verdict.seed, verdict.temperature) == ("scripted-2026-01", 0, 0.0)


async def test_verdicts_are_committed_in_groups_not_one_by_one(tmp_path):
    store = Store(tmp_path / "s.db")
    commits = []
    sa.event.listen(store.engine, "commit", lambda connection: commits.append(1))
    summary = await judge_items(corpus(300), [CRITERION], RubricJudge(ScriptedModel()), store=store,
                                concurrency=32)
    assert summary.verdicts == 300 and len(store.verdicts(summary.run_id)) == 300
    assert len(commits) < 100  # one per verdict before (300); claims + grouped writes now


def _scripted_backend(rest, **options):
    return ScriptedModel(f"scripted:{rest}", score=int(rest or 3))


register_backend("scripted", _scripted_backend)


def test_judge_returns_a_run_result_with_sensible_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = judge(corpus(3), [CRITERION], ["scripted:3", "scripted:4"], ties="high")
    assert isinstance(result, RunResult) and (tmp_path / "convoscope.db").exists()
    assert (tmp_path / "convoscope.cache.db").exists()  # the cache sits beside the store
    assert [v.value for v in result.verdicts] == [4, 4, 4]
    matrix = result.matrix("quality")
    assert matrix.raters == ("model:scripted:3", "model:scripted:4", "panel:majority")
    assert matrix.items == ("i0", "i1", "i2") and matrix.values.tolist()[0] == [3.0, 3.0, 3.0]
    frame = result.to_pandas()
    assert list(frame["value"]) == [4, 4, 4] and set(frame["run_id"]) == {result.run_id}
    again = judge(corpus(3), [CRITERION], ["scripted:3", "scripted:4"], ties="high")
    assert again.summary.resumed == 3 and again.verdicts == result.verdicts


def test_judge_works_inside_a_running_event_loop(tmp_path):
    async def notebook_cell():  # Jupyter runs cells inside a loop: asyncio.run would refuse
        return judge(corpus(2), [CRITERION], "scripted:2", store=tmp_path / "nb.db")

    result = asyncio.run(notebook_cell())
    assert [v.value for v in result.verdicts] == [2, 2]


async def test_judge_async_is_the_core_and_takes_a_store_url_or_path(tmp_path):
    result = await judge_async(corpus(2), [CRITERION], "scripted:5", store=str(tmp_path / "x.db"),
                               cache_path=None)
    assert [v.value for v in result.verdicts] == [5, 5] and not (tmp_path / "x.cache.db").exists()


async def test_an_interrupted_run_keeps_every_verdict_it_made(tmp_path):
    """Ctrl-C cancels the run's task: the writer thread still commits everything judged."""
    store = Store(tmp_path / "s.db")

    class SlowScriptedModel(ScriptedModel):
        answered = 0

        async def generate(self, request):
            await asyncio.sleep(0.002)
            generation = await super().generate(request)
            SlowScriptedModel.answered += 1
            return generation

    run = asyncio.ensure_future(judge_items(corpus(2000), [CRITERION], RubricJudge(SlowScriptedModel()),
                                            store=store, concurrency=16))
    while SlowScriptedModel.answered < 300:
        await asyncio.sleep(0.005)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert 300 <= len(store.verdicts()) == SlowScriptedModel.answered < 2000
    with store.engine.connect() as connection:  # and no lease is left held
        held = connection.execute(sa.text("select count(*) from run_chunks where owner is not null")).scalar()
    assert held == 0
