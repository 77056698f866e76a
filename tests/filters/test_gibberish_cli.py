"""``convoscope gibberish`` round trips on small files of our own, and its input errors."""

import json

import pytest
from click.testing import CliRunner

from convoscope.cli import cli
from convoscope.cli._app import _register

_register()


def run(*args):
    return CliRunner().invoke(cli, ["gibberish", *map(str, args)])


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_text_file_round_trip_keeps_one_row_per_line(tmp_path):
    answers = tmp_path / "answers.txt"
    answers.write_text("The fries were great\nasdfghjkl\n\nㅋㅋ 맛있어요\nㅁㄴㅇㄹ\nlol\n", encoding="utf-8")
    out = tmp_path / "flags.jsonl"
    result = run(answers, "--lang", "auto", "--out", out)
    assert result.exit_code == 0, result.output
    rows = read_jsonl(out)
    assert [row["line"] for row in rows] == [1, 2, 3, 4, 5, 6]
    assert [row["gibberish"] for row in rows] == [False, True, True, False, True, False]
    assert [row["lang"] for row in rows] == ["en", "en", "none", "ko", "ko", "en"]
    assert rows[2]["reasons"] == ["empty"] and rows[3]["text"] == "ㅋㅋ 맛있어요"
    assert {"text", "lang", "gibberish", "reasons", "log_likelihood"} <= set(rows[0])
    assert "50.0%" in result.output  # the summary: 3 of 6 flagged


def test_empty_answers_can_count_as_clean(tmp_path):
    answers = tmp_path / "answers.txt"
    answers.write_text("fine\n\n", encoding="utf-8")
    out = tmp_path / "flags.jsonl"
    assert run(answers, "--empty", "clean", "--out", out).exit_code == 0
    assert [row["gibberish"] for row in read_jsonl(out)] == [False, False]


def test_csv_with_column_and_threshold_override(tmp_path):
    answers = tmp_path / "survey.csv"
    answers.write_text('id,answer\n1,"Too salty, but hot"\n2,qwertyuiop\n3,"multi\nline answer"\n',
                       encoding="utf-8")
    out = tmp_path / "flags.jsonl"
    result = run(answers, "--column", "answer", "--out", out)
    assert result.exit_code == 0, result.output
    rows = read_jsonl(out)
    assert [(row["line"], row["gibberish"]) for row in rows] == [(2, False), (3, True), (4, False)]
    strict = run(answers, "--column", "answer", "--out", out, "--set", "en_min_log_likelihood=-1")
    assert strict.exit_code == 0 and all(row["gibberish"] for row in read_jsonl(out))


def test_jsonl_input_to_stdout(tmp_path):
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"a": "great coffee"}\n\n{"a": "뷁뷁뷁"}\n{"a": 5}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["gibberish", str(answers), "--column", "a"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [(row["line"], row["gibberish"]) for row in rows] == [(1, False), (3, True), (4, False)]


@pytest.mark.parametrize(("name", "content", "args", "message"), [
    ("s.csv", "id,answer\n1,ok\n", ["--column", "text"], "s.csv, line 1, field 'text': no such column"),
    ("s.csv", "id,answer\n1,ok\n2,ok,extra\n", ["--column", "answer"], "s.csv, line 3, field 'answer'"),
    ("s.csv", "id,answer\n", [], "needs --column"),
    ("a.jsonl", '{"a": "ok"}\n{broken\n', ["--column", "a"], "a.jsonl, line 2: not valid JSON"),
    ("a.jsonl", '{"a": "ok"}\n{"b": 1}\n', ["--column", "a"], "a.jsonl, line 2, field 'a': missing"),
    ("a.txt", "ok\n", ["--column", "a"], "applies to CSV/TSV/JSONL"),
    ("a.txt", "ok\n", ["--set", "nonsense=1"], "expected KEY=VALUE"),
])
def test_bad_input_is_one_clear_line_and_exit_code_2(tmp_path, name, content, args, message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    result = run(path, *args)
    assert result.exit_code == 2
    assert message in " ".join(result.output.split()), result.output


def test_non_utf8_file_names_the_line(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("fine\ncaf\xe9\n".encode("latin-1"))
    result = run(path)
    assert result.exit_code == 2 and "line 2" in result.output and "UTF-8" in result.output


def test_missing_file(tmp_path):
    result = run(tmp_path / "nope.txt")
    assert result.exit_code == 2 and "nope.txt" in result.output
