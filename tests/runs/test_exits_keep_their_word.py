"""Exits that keep their word (issue 39): a duplicate id is refused on every run, not only the
first (observation 3); bad settings are refused before anything is created (observation 7).

The command-line checks run real ``convoscope judge`` commands against the canned proxy (a real
HTTP server on 127.0.0.1 answering every call with a valid completion): what is checked is what the
run stores and how it exits, not what a model says."""

import json
import sqlite3

import pytest
from click.testing import CliRunner
from short_rubric import CRITERIA

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.items import ItemError, ItemStream

_register()


def _write(tmp_path, ids):
    (tmp_path / "criteria.yaml").write_text(CRITERIA)
    with (tmp_path / "items.jsonl").open("w") as handle:
        for item_id in ids:
            handle.write(json.dumps({"id": item_id, "response": f"Answer {item_id}: more trains."}) + "\n")


def _judge(tmp_path, base_url, *extra):
    return ["judge", str(tmp_path / "items.jsonl"), "--criteria-file", str(tmp_path / "criteria.yaml"),
            "--store", str(tmp_path / "store.db"), "--judge", f"openai:canned@{base_url}",
            "--mode", "completion", "--no-cache", "--concurrency", "1", "--chunk-size", "2", *extra]


def _stored(tmp_path):
    with sqlite3.connect(tmp_path / "store.db") as connection:
        return sorted(row[0] for row in connection.execute("select item_id from verdicts"))


def test_a_duplicate_id_is_refused_again_when_the_same_command_runs_twice(tmp_path, canned_proxy):
    # Before: the first run stopped with exit 2 at the duplicate; the second skipped the finished
    # chunk holding the first 'a' without reading its ids, exited 0 and stored 'a' twice.
    _write(tmp_path, ["a", "b", "c", "d", "a", "e"])
    command = _judge(tmp_path, canned_proxy.base_url)
    first = CliRunner().invoke(cli, command)
    assert first.exit_code == 2, first.output
    assert "line 5, field 'id': duplicate id 'a' (first on line 1)" in first.output
    kept = _stored(tmp_path)
    assert kept and "e" not in kept
    canned_proxy.hold_after(0)  # no answer this time: what is stored can only come from the first run
    try:
        second = CliRunner().invoke(cli, command)
    finally:
        canned_proxy.release()
    assert second.exit_code == 2, second.output
    assert "line 5, field 'id': duplicate id 'a' (first on line 1)" in second.output
    assert _stored(tmp_path) == kept  # nothing new stored


def test_the_ids_of_a_chunk_can_be_checked_without_parsing_it_and_are_not_counted_twice(tmp_path):
    _write(tmp_path, ["a", "b", "c", "d"])
    fine = ItemStream(tmp_path / "items.jsonl", chunk_size=2).chunks()
    first = next(fine)
    first.check_ids()
    assert [item.id for item in first.items()] == ["a", "b"]  # parsed after its ids were checked
    assert [item.id for item in next(fine).items()] == ["c", "d"]
    _write(tmp_path, ["a", "b", "c", "a"])
    bad = ItemStream(tmp_path / "items.jsonl", chunk_size=2).chunks()
    next(bad).check_ids()
    with pytest.raises(ItemError, match=r"line 4, field 'id': duplicate id 'a' \(first on line 1\)"):
        next(bad).check_ids()


@pytest.mark.parametrize("setting", [("--concurrency", "0"), ("--concurrency", "-3"), ("--max-tokens", "0"),
                                     ("--rpm", "0"), ("--tpm", "-1"), ("--timeout", "0"),
                                     ("--deadline", "-5"), ("--quorum", "0"), ("--max-retries", "-1"),
                                     ("--context-length", "0"), ("--limit", "0")])
def test_a_setting_out_of_range_is_refused_before_anything_is_created(tmp_path, canned_proxy, setting):
    # Before: --concurrency 0, --concurrency -3 and --max-tokens 0 exited 0.
    _write(tmp_path, ["a", "b"])
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url, "--out", str(out), *setting))
    assert result.exit_code == 2, result.output
    assert setting[0] in result.output
    assert not out.exists() and not (tmp_path / "store.db").exists()
    assert canned_proxy.requests == []


@pytest.mark.parametrize("setting", [{"concurrency": 0}, {"max_tokens": 0}, {"rpm": -1.0}, {"lease_s": 0},
                                     {"repeats": 0}, {"temperature": -0.1}, {"concurrency": 2.5}])
def test_the_python_entry_refuses_the_same_settings_before_opening_the_store(tmp_path, setting):
    import convoscope as cs
    from convoscope.errors import ConfigError

    _write(tmp_path, ["a"])
    with pytest.raises(ConfigError, match=next(iter(setting))):
        cs.judge(tmp_path / "items.jsonl", cs.suite("kpi")[:1], "openai:x@http://127.0.0.1:9/v1",
                 store=tmp_path / "store.db", **setting)
    assert not (tmp_path / "store.db").exists()


def test_a_store_that_is_not_a_database_leaves_no_out_file(tmp_path, canned_proxy):
    # Before: exit 2, and an empty out.jsonl left behind.
    _write(tmp_path, ["a", "b"])
    (tmp_path / "store.db").write_text("not a database, only text\n" * 100)
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url, "--out", str(out)))
    assert result.exit_code == 2, result.output
    assert "store.db" in result.output
    assert not out.exists()
    assert canned_proxy.requests == []


def test_summary_json_gives_orchestrators_the_counts_and_the_exit_status(tmp_path, canned_proxy):
    _write(tmp_path, ["a", "b", "c"])
    summary = tmp_path / "summary.json"
    result = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url, "--summary-json", str(summary)))
    assert result.exit_code == 0, result.output
    written = json.loads(summary.read_text())
    assert written["exit_status"] == 0
    assert (written["total_tasks"], written["verdicts"], written["model_calls"]) == (3, 3, 3)
    assert written["outstanding"] == {} and written["gates"] == []
    again = CliRunner().invoke(cli, _judge(tmp_path, canned_proxy.base_url, "--summary-json", str(summary),
                                           "--fail-under", "clarity=3.5"))
    written = json.loads(summary.read_text())
    assert again.exit_code == written["exit_status"] == 5, again.output
    assert written["resumed"] == 3 and written["gates"][0]["passed"] is False
