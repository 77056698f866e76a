"""A done prefix is skipped unread (issue 39, observation 2).

A run that finished the first chunks of a JSON-lines file records where they end in the file, a
hash of those bytes and markers of their ids; the next run over the same file hashes those bytes
and starts reading after them. Before, a resume read, fingerprinted and id-checked every line it
had finished (about 5 µs a line). Counted here: the records the run reads from the file (a spy on
``ItemStream._records``), never time. Duplicates between new items and the prefix are still
refused, on every run, with the file, the line and the field.
"""

import json
import sqlite3

import pytest
from click.testing import CliRunner
from short_rubric import CRITERIA
from test_run_semantics import CRITERION, ScriptedModel

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.items import ItemStream
from convoscope.items._prefix import prefix_end
from convoscope.judges import RubricJudge
from convoscope.runs import run_judge
from convoscope.store import Store

_register()


def _write(path, ids, *, mode="a", end="\n"):
    with path.open(mode, newline="") as handle:
        for item_id in ids:
            handle.write(json.dumps({"id": item_id, "response": f"Answer {item_id}: more trains."}) + end)


class ReadCount:
    """How many records every stream reads from its input (a spy on ``ItemStream._records``)."""

    def __init__(self, monkeypatch):
        self.records = 0
        records = ItemStream._records

        def counted(stream, *args, **kwargs):
            for record in records(stream, *args, **kwargs):
                self.records += 1
                yield record

        monkeypatch.setattr(ItemStream, "_records", counted)


async def test_a_resume_reads_only_the_lines_beyond_the_finished_chunks(tmp_path, monkeypatch):
    # Before: the second run read all 2,100 records (each line hashed, each id checked) to judge 100.
    path, store, model = tmp_path / "items.jsonl", Store(tmp_path / "s.db"), ScriptedModel()
    _write(path, [f"i{i}" for i in range(2000)])
    first = await run_judge(ItemStream(path, chunk_size=100), [CRITERION], RubricJudge(model),
                            store=store, collect=False)
    assert first.summary.total_tasks == 2000
    _write(path, [f"i{i}" for i in range(2000, 2100)])
    reads, model.prompts = ReadCount(monkeypatch), []
    second = await run_judge(ItemStream(path, chunk_size=100), [CRITERION], RubricJudge(model),
                             store=store, collect=False)
    assert reads.records == 100
    assert len(model.prompts) == 100
    assert (second.summary.total_tasks, second.summary.resumed) == (2100, 2000)  # every verdict counted
    stored = sorted(verdict.item_id for verdict in store.verdicts(first.run_id))
    assert stored == sorted(f"i{i}" for i in range(2100))


async def test_a_changed_start_of_the_file_is_read_again_in_full(tmp_path, monkeypatch):
    path, store, model = tmp_path / "items.jsonl", Store(tmp_path / "s.db"), ScriptedModel()
    _write(path, [f"i{i}" for i in range(8)])
    judge = RubricJudge(model)
    await run_judge(ItemStream(path, chunk_size=2), [CRITERION], judge, store=store, collect=False)
    path.write_text(path.read_text().replace("Answer i1:", "Answer i1 (edited):"))
    reads, model.prompts = ReadCount(monkeypatch), []
    await run_judge(ItemStream(path, chunk_size=2), [CRITERION], judge, store=store, collect=False)
    assert reads.records == 8
    assert len(model.prompts) == 1  # the edited item alone
    _write(path, ["i8", "i9"])  # and the record of the edited file replaced the stale one
    reads, model.prompts = ReadCount(monkeypatch), []
    await run_judge(ItemStream(path, chunk_size=2), [CRITERION], judge, store=store, collect=False)
    assert (reads.records, len(model.prompts)) == (2, 2)


def _judge(tmp_path, base_url):
    return ["judge", str(tmp_path / "items.jsonl"), "--criteria-file", str(tmp_path / "criteria.yaml"),
            "--store", str(tmp_path / "store.db"), "--judge", f"openai:canned@{base_url}",
            "--mode", "completion", "--no-cache", "--concurrency", "1", "--chunk-size", "2",
            "--out", str(tmp_path / "out.jsonl")]


def _stored(tmp_path):
    with sqlite3.connect(tmp_path / "store.db") as connection:
        return sorted(row[0] for row in connection.execute("select item_id from verdicts"))


def test_a_new_item_reusing_an_id_of_the_skipped_prefix_is_refused_on_every_run(tmp_path, canned_proxy,
                                                                                monkeypatch):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    path = tmp_path / "items.jsonl"
    # Windows line ends and a blank line inside the prefix: the lines are counted as an editor does.
    _write(path, ["a", "b"], end="\r\n")
    path.open("a", newline="").write("\r\n")
    _write(path, ["c", "d"], end="\r\n")
    assert CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url)).exit_code == 0
    _write(path, ["e", "b"], end="\r\n")
    kept = _stored(tmp_path)
    for _ in range(2):  # the second run finds the same prefix and refuses the same line
        reads = ReadCount(monkeypatch)
        refused = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url))
        assert refused.exit_code == 2, refused.output
        assert "items.jsonl, line 7, field 'id': duplicate id 'b' (first on line 2)" in refused.output
        assert reads.records < 2 * 7  # the new lines, then the file once more to name the first line
        assert _stored(tmp_path) == kept  # nothing new stored


def test_a_bad_row_after_the_skipped_prefix_is_named_by_its_line(tmp_path, canned_proxy, monkeypatch):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    path = tmp_path / "items.jsonl"
    path.write_bytes(b"\xef\xbb\xbf")  # Excel's byte-order mark, before the first line
    _write(path, ["a", "b", "c", "d"])
    assert CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url)).exit_code == 0
    _write(path, ["e"])
    path.open("a").write('{"id": "f", "response": \n')
    reads = ReadCount(monkeypatch)
    refused = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url))
    assert refused.exit_code == 2, refused.output
    assert "items.jsonl, line 6" in refused.output
    assert reads.records == 2 + 2  # the first chunk, checked at the start of every command; the new lines


@pytest.mark.parametrize(("text", "lines", "expected"), [
    (b"a\nb\nc\n", 2, 4), (b"a\r\nb\r\nc\r\n", 2, 6), (b"a\n\nb\n", 3, 5),
    (b"a\rb\nc\n", 1, None),  # a lone \r ends a line too: not counted by \n, so no prefix
    (b"a\nb", 2, None),  # the second line is not ended (yet)
])
def test_the_end_of_a_prefix_is_found_after_its_last_line_break(tmp_path, text, lines, expected):
    path = tmp_path / "items.jsonl"
    path.write_bytes(text)
    found = prefix_end(path, lines)
    assert (found[0] if found else None) == expected
