"""Runs that stream and grow (issue 23, observations 1, 2 and 5): the input is read chunk by chunk
while judging goes on, a file that gained items costs only the new ones, verdicts reach --out as
they are committed, progress shows in logs, and SIGTERM stops a run as Ctrl-C does.

Unit checks use a scripted model (named as such); the command-line checks run the real llama.cpp
server behind the fault-injecting proxy.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner
from faultproxy import Fault
from patience import PATIENT_ARGS, PATIENT_S
from short_rubric import CRITERIA
from test_run_semantics import CRITERION, ScriptedModel

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.items import Item, ItemStream
from convoscope.judges import RubricJudge
from convoscope.runs import run_judge
from convoscope.store import Store

_register()


def write_items(path, start, stop):
    with path.open("a") as handle:
        for i in range(start, stop):
            handle.write(json.dumps({"id": f"i{i}", "question": "Why?", "response": f"Because {i}."}) + "\n")


class RegisteredAtFirstCall(ScriptedModel):
    """A scripted model that notes how many task keys the run had registered at its first call."""

    def __init__(self, store):
        super().__init__()
        self.store, self.registered = store, None

    async def generate(self, request):
        if self.registered is None:
            with self.store.engine.connect() as connection:
                self.registered = connection.exec_driver_sql("select count(*) from run_tasks").scalar()
        return await super().generate(request)


async def test_the_first_call_comes_before_the_input_is_read_to_its_end(tmp_path):
    # Before: every task of the input was planned, rendered and registered before the first call.
    path = tmp_path / "items.jsonl"
    write_items(path, 0, 5000)
    store = Store(tmp_path / "s.db")
    model = RegisteredAtFirstCall(store)
    result = await run_judge(ItemStream(path, chunk_size=100), [CRITERION], RubricJudge(model),
                             store=store, concurrency=4, collect=False)
    assert result.summary.verdicts == result.summary.total_tasks == 5000
    assert model.registered <= 300  # a few chunks of 100 ahead of judging, not 5,000
    assert result.verdicts == ()  # collect=False: nothing held


async def test_a_file_that_gained_items_costs_only_the_new_ones_and_stores_each_once(tmp_path):
    # Before: "resumed 0", 3 cache hits, 3 + 4 rows in two runs (the run id hashed the item set).
    path = tmp_path / "answers.jsonl"
    write_items(path, 0, 3)
    store, model = Store(tmp_path / "s.db"), ScriptedModel()
    first = await run_judge(ItemStream(path), [CRITERION], RubricJudge(model), store=store)
    write_items(path, 3, 4)
    second = await run_judge(ItemStream(path), [CRITERION], RubricJudge(model), store=store)
    assert len(model.prompts) == 4  # three, then only the new one
    assert second.summary.resumed == 3 and second.summary.verdicts == 1
    assert [v.item_id for v in second.verdicts] == ["i0", "i1", "i2", "i3"]  # the items asked about
    assert second.run_id == first.run_id  # the same command on the same (grown) file: the same run
    with store.engine.connect() as connection:
        assert connection.exec_driver_sql("select count(*) from verdicts").scalar() == 4


async def test_the_same_request_from_another_run_is_not_judged_again(tmp_path):
    store, model = Store(tmp_path / "s.db"), ScriptedModel()
    items = [Item(id=f"a{i}", response=f"Fine {i}.") for i in range(6)]
    await run_judge(items[:4], [CRITERION], RubricJudge(model), store=store)
    other = await run_judge(items[2:], [CRITERION], RubricJudge(model), store=store)  # another run
    assert len(model.prompts) == 6 and other.summary.resumed == 2
    assert {v.item_id for v in other.verdicts} == {"a2", "a3", "a4", "a5"}
    assert [v.item_id for v in store.verdicts(other.run_id)] == ["a2", "a3", "a4", "a5"]


async def test_a_resumed_run_skips_finished_chunks_without_rendering_them(tmp_path, monkeypatch):
    path = tmp_path / "items.jsonl"
    write_items(path, 0, 1000)
    store, model = Store(tmp_path / "s.db"), ScriptedModel()
    await run_judge(ItemStream(path, chunk_size=100), [CRITERION], RubricJudge(model), store=store,
                    collect=False)
    write_items(path, 1000, 1050)
    rendered = []
    original = RubricJudge.request
    monkeypatch.setattr(RubricJudge, "request", lambda self, item, c: rendered.append(item.id) or
                        original(self, item, c))
    again = await run_judge(ItemStream(path, chunk_size=100), [CRITERION], RubricJudge(model), store=store,
                            collect=False)
    assert again.summary.resumed == 1000 and again.summary.verdicts == 50
    assert rendered == [f"i{i}" for i in range(1000, 1050)]  # the finished chunks were never parsed


def _judge_args(tmp_path, base_url, *extra):
    return ["judge", str(tmp_path / "items.jsonl"), "--criteria-file", str(tmp_path / "criteria.yaml"),
            "--store", str(tmp_path / "s.db"), "--judge", f"openai:smollm2@{base_url}",
            "--mode", "completion", "--concurrency", "1", "--chunk-size", "2", *PATIENT_ARGS, *extra]


@pytest.mark.slow
def test_out_grows_while_the_run_goes_on_and_sigterm_flushes_and_exits_3(tmp_path, fault_proxy):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    write_items(tmp_path / "items.jsonl", 0, 12)
    out = tmp_path / "v.jsonl"
    fault_proxy.always(Fault.slow(0.7))  # every answer late: the run takes several seconds
    command = [sys.executable, "-m", "convoscope", *_judge_args(tmp_path, fault_proxy.base_url,
                                                                "--no-cache", "--out", str(out))]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    deadline = time.monotonic() + PATIENT_S
    while (not out.exists() or len(out.read_text().splitlines()) < 3) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() is None  # three verdicts in --out, and the run is still going
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=PATIENT_S)
    fault_proxy.always(None)
    assert process.returncode == 3, stderr[-2000:]
    assert "Stopped (SIGTERM)" in stderr
    asked = {entry.body["prompt"] for entry in fault_proxy.requests
             if entry.body.get("prompt", "").endswith("Score:")}
    with sqlite3.connect(tmp_path / "s.db") as connection:
        stored = connection.execute("select count(*) from verdicts").fetchone()[0]
    # Before: ~40 answered calls had no stored verdict after kill -TERM. Now every task asked is
    # stored but the one in flight when the signal came (concurrency 1), and --out has them all.
    assert len(asked) - 1 <= stored < 12 and stored == len(out.read_text().splitlines())


def test_progress_is_a_plain_line_when_not_on_a_terminal(tmp_path, fault_proxy):
    # Before: nothing at all when stdout was not a terminal (a 10,000-item run logged one line).
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    write_items(tmp_path / "items.jsonl", 0, 6)
    fault_proxy.always(Fault.slow(0.4))
    result = CliRunner().invoke(cli, _judge_args(tmp_path, fault_proxy.base_url, "--no-cache",
                                                 "--progress-every", "0.3"), env={"COLUMNS": "200"})
    fault_proxy.always(None)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("judging: ")]
    assert len(lines) >= 2 and lines[-1].startswith("judging: 6/6 tasks")
