"""The JSON cursor and the error locator: every malformed value is reported by file, line, field."""

import json

import pytest

from convoscope.datasets._source import At, Malformed, field_label, find_files, line_of, parse
from convoscope.items import ItemError


def test_line_of_finds_nested_values_in_indented_json():
    text = json.dumps([{"a": [1, 2, {"b": "x"}]}, {"c": 3}], indent=1)
    lines = text.splitlines()
    assert lines[line_of(text, (0, "a", 2, "b")) - 1].strip() == '"b": "x"'
    assert lines[line_of(text, (1, "c")) - 1].strip() == '"c": 3'
    assert line_of(text, ()) == 1


def test_line_of_falls_back_to_the_deepest_existing_parent():
    text = '[\n  {\n    "a": 1\n  }\n]'
    assert line_of(text, (0, "missing")) == 2


def test_line_of_counts_crlf_lines_and_single_line_files():
    text = '[\r\n {"a": 1},\r\n {"a": "bad"}\r\n]'
    assert line_of(text, (1, "a")) == 3
    assert line_of('[{"a": 1}, {"a": 2}]', (1, "a")) == 1


def test_field_label_reads_like_a_path():
    assert field_label((3, "annotations", "Overall", 1)) == "[3].annotations.Overall[1]"
    assert field_label(("(1,2)_bot", 0, "user")) == "(1,2)_bot[0].user"
    assert field_label(()) is None


def test_cursor_type_checks_name_the_problem():
    root = At({"n": 5.0, "s": "x", "b": True, "l": [1]})
    assert root["n"].integer() == 5  # integral floats are integers
    with pytest.raises(Malformed, match="expected an integer, got boolean true"):
        root["b"].integer()
    with pytest.raises(Malformed, match="expected text"):
        root["n"].text()
    with pytest.raises(Malformed) as missing:
        root["absent"]
    assert missing.value.path == ("absent",) and missing.value.problem == "missing"
    assert root.get("absent") is None


def test_parse_turns_a_malformed_value_into_an_item_error(tmp_path):
    file = tmp_path / "data.json"
    file.write_text('[\n  {"score": 1},\n  {"score": "high"}\n]', encoding="utf-8")
    with pytest.raises(ItemError) as caught:
        parse(file, lambda root: [entry["score"].integer() for entry in root.each()])
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(file), 3, "[1].score")
    assert "expected an integer, got text 'high'" in str(caught.value)


def test_invalid_json_names_the_decoder_line(tmp_path):
    file = tmp_path / "data.json"
    file.write_text('[\n  {"a": 1},\n  {"a": }\n]', encoding="utf-8")
    with pytest.raises(ItemError, match="line 3") as caught:
        parse(file, lambda root: root)
    assert "not valid JSON" in caught.value.problem


def test_find_files_accepts_file_folder_or_collection_root(samples):
    direct = samples / "grade" / "human_judgement.json"
    assert find_files(direct, "grade", ("*.json",)) == [direct]
    assert find_files(samples / "grade", "grade", ("human_judgement.json",)) == [direct]
    assert find_files(samples, "grade", ("human_judgement.json",)) == [direct]


def test_find_files_says_what_it_looked_for(tmp_path):
    with pytest.raises(ItemError, match=r"no benchmark file \(fed_data.json\) here or in 'fed/'"):
        find_files(tmp_path, "fed", ("fed_data.json",))
    with pytest.raises(ItemError, match="not found"):
        find_files(tmp_path / "nowhere", "fed", ("fed_data.json",))
