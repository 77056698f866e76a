"""Resume and growth cost nothing per verdict already done (issue 39, observation 2).

A run that resumes or grows used to read every finished chunk's verdicts back from the store and
write them to ``--out`` again. Now a ``--out`` that the last run left complete is appended to: the
finished chunks are counted, not read. What is counted here is what the store is asked for (a spy
on ``Store.verdicts_by_key``, the one way a run reads verdicts back) and what is rendered (a spy
on the judge's ``request``), never time. Real ``convoscope judge`` commands against the canned
proxy (a real HTTP server on 127.0.0.1 answering every call with a valid completion).
"""

import asyncio
import json
import sqlite3
import threading

import pytest
from click.testing import CliRunner
from short_rubric import CRITERIA
from test_run_semantics import CRITERION, ScriptedModel

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.items import ItemStream, RecordStream
from convoscope.judges import RubricJudge, Verdict
from convoscope.runs import run_judge
from convoscope.runs._out import VerdictFile
from convoscope.store import Store

_register()


def _write(path, start, stop, *, mode="a"):
    with path.open(mode) as handle:
        for i in range(start, stop):
            handle.write(json.dumps({"id": f"i{i}", "response": f"Answer {i}: more trains."}) + "\n")


def _judge(tmp_path, base_url, *extra, items="items.jsonl", out="out.jsonl", criteria="criteria.yaml"):
    return ["judge", str(tmp_path / items), "--criteria-file", str(tmp_path / criteria),
            "--store", str(tmp_path / "store.db"), "--judge", f"openai:canned@{base_url}",
            "--mode", "completion", "--no-cache", "--concurrency", "2", "--chunk-size", "2",
            "--out", str(tmp_path / out), *extra]


def _out(tmp_path):
    return [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]


def _run_verdicts(tmp_path):
    """The store's verdicts of the (one) run, as --out writes them (in run order)."""
    with sqlite3.connect(tmp_path / "store.db") as connection:
        (run_id,) = connection.execute("select run_id from runs").fetchone()
    stored = Store(tmp_path / "store.db").verdicts(run_id)
    return [json.loads(verdict.model_dump_json()) for verdict in stored]


class Spies:
    def __init__(self, monkeypatch):
        self.keys_read, self.rendered = 0, []
        read, render = Store.verdicts_by_key, RubricJudge.request

        def verdicts_by_key(store, keys, **options):
            self.keys_read += len(keys)
            return read(store, keys, **options)

        def request(judge, item, criterion):
            self.rendered.append(item.id)
            return render(judge, item, criterion)

        monkeypatch.setattr(Store, "verdicts_by_key", verdicts_by_key)
        monkeypatch.setattr(RubricJudge, "request", request)


def test_growth_reads_no_finished_verdict_back_and_renders_only_the_new_items(tmp_path, canned_proxy,
                                                                              monkeypatch):
    # Before: the second run read all 20 finished verdicts back from the store (keys_read 23:
    # 20 old, 3 new) to write --out again from its first line.
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    _write(tmp_path / "items.jsonl", 0, 20)
    first = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url))
    assert first.exit_code == 0, first.output
    _write(tmp_path / "items.jsonl", 20, 23)
    spies = Spies(monkeypatch)
    second = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url))
    assert second.exit_code == 0, second.output
    assert spies.rendered == ["i20", "i21", "i22"]
    assert spies.keys_read == 3  # the new chunks' own lookups, nothing of the 20 finished
    assert sorted(record["item_id"] for record in _out(tmp_path)) == sorted(f"i{i}" for i in range(23))
    assert _same(_out(tmp_path), _run_verdicts(tmp_path))


def test_a_grown_last_chunk_adds_its_new_item_once(tmp_path, canned_proxy):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    _write(tmp_path / "items.jsonl", 0, 5)  # the last chunk holds one item
    assert CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url)).exit_code == 0
    _write(tmp_path / "items.jsonl", 5, 6)  # and now two: it is judged again, its first item found
    second = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url))
    assert second.exit_code == 0, second.output
    assert sorted(record["item_id"] for record in _out(tmp_path)) == [f"i{i}" for i in range(6)]
    assert _same(_out(tmp_path), _run_verdicts(tmp_path))
    assert "Wrote 6 verdicts" in " ".join(second.output.split())


def test_an_out_file_changed_since_the_last_run_is_written_again_from_the_store(tmp_path, canned_proxy,
                                                                                 monkeypatch):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    _write(tmp_path / "items.jsonl", 0, 6)
    assert CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url)).exit_code == 0
    (tmp_path / "out.jsonl").write_text(_out_text(tmp_path)[:-1])  # a reader cut a line short
    spies = Spies(monkeypatch)
    again = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url))
    assert again.exit_code == 0, again.output
    assert spies.rendered == []
    assert _same(_out(tmp_path), _run_verdicts(tmp_path))


def test_a_rejudged_chunk_of_the_file_makes_the_run_write_it_again(tmp_path, canned_proxy):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    _write(tmp_path / "items.jsonl", 0, 6)
    assert CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url)).exit_code == 0
    with sqlite3.connect(tmp_path / "store.db") as connection:  # chunk 1 failed: judged again
        connection.execute("update verdicts set unscored_reason = 'model_error', value = null "
                           "where item_id = 'i2'")
        connection.execute("update run_chunks set state = 'failed' where chunk = 1")
    again = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url))
    assert again.exit_code == 0, again.output
    assert sorted(record["item_id"] for record in _out(tmp_path)) == [f"i{i}" for i in range(6)]
    assert _same(_out(tmp_path), _run_verdicts(tmp_path))


def test_without_out_a_resume_reads_nothing_back(tmp_path, canned_proxy, monkeypatch):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    _write(tmp_path / "items.jsonl", 0, 8)
    command = _judge(tmp_path, canned_proxy.base_url)[:-2]
    assert CliRunner().invoke(cli, command).exit_code == 0
    spies = Spies(monkeypatch)
    again = CliRunner().invoke(cli, command)
    assert again.exit_code == 0, again.output
    assert spies.keys_read == 0 and spies.rendered == []


def test_gates_still_see_every_verdict_of_a_resumed_run(tmp_path, canned_proxy):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    _write(tmp_path / "items.jsonl", 0, 6)
    assert CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url)).exit_code == 0
    _write(tmp_path / "items.jsonl", 6, 7)
    gated = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url, "--fail-under", "clarity=1"))
    assert gated.exit_code == 0, gated.output
    assert "over 7 verdicts" in " ".join(gated.output.split())
    assert _same(_out(tmp_path), _run_verdicts(tmp_path))


def _same(written, stored):
    """The same verdicts, each once (--out is in the order they were committed)."""
    def key(record):
        return json.dumps(record, sort_keys=True)

    return sorted(written, key=key) == sorted(stored, key=key)


def _out_text(tmp_path):
    return (tmp_path / "out.jsonl").read_text()


class PausingStream(ItemStream):
    """An item stream that waits before handing out chunk ``at`` (a stop can come there)."""

    def __init__(self, path, at):
        super().__init__(path, chunk_size=2)
        self.at, self.reached, self.go_on = at, threading.Event(), threading.Event()

    def chunks(self):
        for raw in super().chunks():
            if raw.index == self.at:
                self.reached.set()
                self.go_on.wait(10)
            yield raw

    def skip(self, prefix):
        return False  # every chunk read, as when the file's start changed (no done prefix)


async def test_a_stop_while_finished_chunks_are_skipped_adds_none_of_them_again(tmp_path):
    # Before: the stop handed the sink every chunk it had not reached, those the file held too.
    path, out = tmp_path / "items.jsonl", tmp_path / "out.jsonl"
    _write(path, 0, 8)
    store, model = Store(tmp_path / "s.db"), ScriptedModel()

    def opened():
        return VerdictFile(out, lambda append: RecordStream(out, fields=list(Verdict.model_fields),
                                                            model=Verdict, append=append))

    first = opened()
    result = await run_judge(ItemStream(path, chunk_size=2), [CRITERION], RubricJudge(model), store=store,
                             on_verdicts=first, collect=False)
    first.close()
    second, stream = opened(), PausingStream(path, at=2)
    running = asyncio.ensure_future(run_judge(stream, [CRITERION], RubricJudge(model), store=store,
                                              on_verdicts=second, collect=False))
    assert await asyncio.to_thread(stream.reached.wait, 10)
    running.cancel()
    stream.go_on.set()
    with pytest.raises(asyncio.CancelledError):
        await running
    second.close()
    written = [json.loads(line)["item_id"] for line in out.read_text().splitlines()]
    assert sorted(written) == [f"i{i}" for i in range(8)]  # each once
    assert len(model.prompts) == 8  # nothing judged twice
    assert sorted(v.item_id for v in store.verdicts(result.run_id)) == sorted(written)
