"""Bad input on first contact: one line naming the file, line and field (exit 2) before any model
call, and secrets never written anywhere (issue 22, observation 6).

The judge points at a port where nothing listens: a command that reached the model would record
a model_error and exit 3, so exit 2 with the message proves the problem was found first.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner
from patience import PATIENT_ARGS

from convoscope.cli import cli
from convoscope.cli._app import _register

_register()
DEAD = "openai:m@http://127.0.0.1:9/v1"


def judge(*args: str):
    return CliRunner().invoke(cli, ["judge", *args, "--judge", DEAD, "--criterion", "survey/effort"],
                              env={"COLUMNS": "300"})


def one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.fixture
def items(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps({"id": "a", "response": "Fine."}) + "\n")
    return path


def test_an_out_path_that_cannot_be_created_is_refused_before_the_run(items, tmp_path):
    # Before: os.access said yes to root, the write failed after every model call (a traceback).
    result = judge(str(items), "--out", "/sys/kernel/out.jsonl", "--store", str(tmp_path / "s.db"))
    line = one_error_line(result)
    assert "/sys/kernel/out.jsonl: cannot be written" in line
    assert not (tmp_path / "s.db").exists()


def test_a_parquet_file_that_is_not_parquet_names_the_file(tmp_path):
    fake = tmp_path / "items.parquet"
    fake.write_text("id,response\na,hello\n")
    line = one_error_line(judge(str(fake), "--store", str(tmp_path / "s.db")))
    assert f"{fake}: not a readable Parquet file" in line


def test_a_json_error_names_the_column(tmp_path):
    bad = tmp_path / "items.jsonl"
    bad.write_text('{"id": "a", "response": "fine"}\n{"id": "b", "response": "tab\tinside"}\n')
    line = one_error_line(judge(str(bad), "--store", str(tmp_path / "s.db")))
    assert f"{bad}, line 2: not valid JSON at column 29: Invalid control character" in line


def test_nul_bytes_in_a_csv_are_refused_with_line_and_field(tmp_path):
    bad = tmp_path / "items.csv"
    bad.write_bytes(b"id,response\na,fine\nb,bro\x00ken\n")
    line = one_error_line(judge(str(bad), "--store", str(tmp_path / "s.db")))
    assert f"{bad}, line 3: a NUL byte" in line  # the one text reader refuses it, before any parsing


@pytest.mark.parametrize(("content", "where"), [
    ("", "line 1: the file is empty"), ("\n\n", "line 2: no items"),
    ("id,response\n", "line 1: a header but no rows")])
def test_an_items_file_without_items_names_a_line(tmp_path, content, where):
    suffix = ".csv" if content.startswith("id") else ".jsonl"
    empty = tmp_path / f"items{suffix}"
    empty.write_text(content)
    assert where in one_error_line(judge(str(empty), "--store", str(tmp_path / "s.db")))


def test_a_store_that_is_not_a_database_names_its_path(items, tmp_path):
    store = tmp_path / "notes.db"
    store.write_text("these are my notes, not a database\n" * 100)
    line = one_error_line(judge(str(items), "--store", str(store)))
    assert f"{store}: cannot be used as a verdict store: not a SQLite database" in line


def test_a_cache_that_is_not_a_database_names_its_path(items, tmp_path):
    cache = tmp_path / "notes.cache.db"
    cache.write_text("not a cache\n" * 100)
    line = one_error_line(judge(str(items), "--store", str(tmp_path / "s.db"), "--cache", str(cache)))
    assert f"{cache}: cannot be used as a response cache" in line


@pytest.mark.slow
def test_credentials_in_an_endpoint_url_are_used_but_never_stored_or_printed(tmp_path, items, llama_server):
    base_url, alias = llama_server
    secret_url = base_url.replace("http://", "http://tok:SECRET-42@")
    out = tmp_path / "v.jsonl"
    result = CliRunner().invoke(cli, [
        "judge", str(items), "--criterion", "survey/effort", "--judge", f"openai:{alias}@{secret_url}",
        "--mode", "completion", "--store", str(tmp_path / "s.db"), "--out", str(out), *PATIENT_ARGS],
        env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "SECRET-42" not in result.output
    for written in (tmp_path / "s.db", tmp_path / "s.cache.db", out):
        assert b"SECRET-42" not in written.read_bytes(), written
    with sqlite3.connect(tmp_path / "s.db") as connection:
        (rater,) = connection.execute("select rater from verdicts").fetchone()
    assert rater == f"model:openai:{alias}@{base_url}[completion]"
