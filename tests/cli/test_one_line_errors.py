"""Expected failures of `convoscope judge` end in one line and exit 2, before any model call
(issue 11, observation 8)."""

import sqlite3

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from rich.console import Console

from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.cli._common import fail_on

_register()


def judge(tmp_path, *args):
    items = tmp_path / "items.jsonl"
    if not items.exists():
        items.write_text('{"id": "1", "question": "How was it?", "response": "fine"}\n')
    return CliRunner().invoke(cli, ["judge", str(items), "--criterion", "survey/effort",
                                    "--store", str(tmp_path / "s.db"), *args])


def one_error_line(result):
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def test_a_locked_store_ends_in_one_line(tmp_path):
    path = tmp_path / "s.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")  # another process writing to the store
    engine = sa.create_engine(f"sqlite:///{path}", connect_args={"timeout": 0.1})
    console = Console(record=True, width=80)
    try:
        with pytest.raises(SystemExit) as exit_, fail_on(console), engine.begin() as connection:
            connection.execute(sa.text("INSERT INTO t VALUES (1)"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        engine.dispose()
    lines = console.export_text().strip().splitlines()
    assert exit_.value.code == 2 and len(lines) == 1
    assert "database is locked" in lines[0] and "another process" in lines[0]


def test_a_store_that_is_not_a_database_ends_in_one_line(tmp_path):
    (tmp_path / "s.db").write_text("these are my notes, not a database\n")
    line = one_error_line(judge(tmp_path))
    assert "s.db" in line and "not a SQLite database" in line


def test_out_into_a_missing_folder_fails_before_the_run(tmp_path):
    line = one_error_line(judge(tmp_path, "--out", str(tmp_path / "nowhere" / "v.jsonl")))
    assert "v.jsonl: the folder" in line and "does not exist" in line
    assert not (tmp_path / "s.db").exists()  # not even the store was opened


def test_out_onto_the_items_file_or_the_store_is_refused(tmp_path):
    line = one_error_line(judge(tmp_path, "--out", str(tmp_path / "items.jsonl")))
    assert "is also an input file" in line
    line = one_error_line(judge(tmp_path, "--out", str(tmp_path / "s.db")))  # not created yet
    assert "is also an input file" in line


def test_a_cp949_csv_names_file_and_line_and_suggests_encoding(tmp_path):
    items = tmp_path / "items.csv"
    items.write_bytes("id,question,response\n1,어땠나요?,좋았어요\n".encode("cp949"))
    result = CliRunner().invoke(cli, ["judge", str(items), "--criterion", "survey/effort",
                                      "--store", str(tmp_path / "s.db")])
    line = one_error_line(result)
    assert "items.csv, line 2: not utf-8 text" in line and "--encoding" in line
    # With the encoding named the file is read; the run then stops at the (missing) out folder.
    result = CliRunner().invoke(cli, ["judge", str(items), "--criterion", "survey/effort", "--encoding",
                                      "cp949", "--store", str(tmp_path / "s.db"),
                                      "--out", str(tmp_path / "no" / "v.csv")])
    assert "does not exist" in one_error_line(result)


def test_deeply_nested_items_end_in_one_line(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "1", "meta": {"x": ' + "[" * 50000 + "]" * 50000 + "}}\n")
    line = one_error_line(judge(tmp_path))
    assert "items.jsonl, line 1, field 'meta': nested more than 64 levels deep" in line
