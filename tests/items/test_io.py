import json

import pytest

from convoscope.items import ColumnMap, Item, ItemError, read_items, write_csv, write_jsonl


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_jsonl_round_trip(tmp_path):
    source = write(tmp_path / "items.jsonl", "\n".join([
        json.dumps({"id": 1, "question": "Q?", "response": "R", "language": "en"}),
        "",
        json.dumps({"id": "b", "context": [{"speaker": "u", "text": "hi"}], "meta": {"k": 1}}),
    ]))
    items = read_items(source)
    assert [item.id for item in items] == ["1", "b"]
    assert items[1].is_dialogue and items[1].context[0].text == "hi"
    out = tmp_path / "out.jsonl"
    assert write_jsonl(items, out) == 2
    assert read_items(out) == items


@pytest.mark.parametrize(
    ("text", "line", "field", "words"),
    [
        ('{"id": "a", "response": "x"}\n{"response": "y"}\n', 2, "id", "required"),
        ('{"id": "a"}\n{"id": "a"}\n', 2, "id", "duplicate id 'a' (first on line 1)"),
        ('{"id": "a", "colour": 3}\n', 1, "colour", "unknown field"),
        ('{"id": "a", "context": [{"speaker": "u"}]}\n', 1, "context.0.text", "required"),
        ('{"id": "a"}\n{not json}\n', 2, None, "not valid JSON"),
        ('["a"]\n', 1, None, "JSON object"),
    ],
)
def test_bad_jsonl_names_file_line_and_field(tmp_path, text, line, field, words):
    path = write(tmp_path / "bad.jsonl", text)
    with pytest.raises(ItemError) as caught:
        read_items(path)
    error = caught.value
    assert (error.line, error.field) == (line, field)
    assert str(path) in str(error) and f"line {line}" in str(error) and words in str(error)


def test_csv_with_column_mapping_and_meta(tmp_path):
    path = write(tmp_path / "answers.csv",
                 'rid,answer,q,wave\n7,"Two\nlines",Why?,3\n8,ok,Why?,4\n')
    items = read_items(path, columns=ColumnMap(id="rid", response="answer", question="q"))
    assert items[0] == Item(id="7", question="Why?", response="Two\nlines", meta={"wave": "3"})


@pytest.mark.parametrize(("row", "fields"), [
    ("en4,Which feature do you use most, and why?,The calendar", 4),  # unquoted comma
    ("en5,Why?", 2),
])
def test_csv_row_with_the_wrong_number_of_fields_is_refused(tmp_path, row, fields):
    path = write(tmp_path / "answers.csv", f'id,question,response\nen1,"Why, then?",ok\n{row}\n')
    with pytest.raises(ItemError) as caught:
        read_items(path)
    assert caught.value.line == 3
    assert f"{fields} fields where the header has 3" in str(caught.value)
    assert str(path) in str(caught.value)


def test_csv_error_reports_physical_line(tmp_path):
    path = write(tmp_path / "a.csv", 'id,response\n1,"multi\nline"\n,missing id\n')
    with pytest.raises(ItemError) as caught:
        read_items(path)
    assert caught.value.line == 4 and caught.value.field == "id"


def test_csv_context_as_speaker_lines(tmp_path):
    path = write(tmp_path / "c.csv", 'id,context,response\n1,"user: hi\nbot: hello",fine\n')
    (item,) = read_items(path)
    assert [(t.speaker, t.text) for t in item.context] == [("user", "hi"), ("bot", "hello")]


def test_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.table({"id": ["a", "b"], "response": ["x", None], "score": [1, 2]})
    pq.write_table(table, tmp_path / "i.parquet")
    items = read_items(tmp_path / "i.parquet")
    assert items[0].response == "x" and items[1].response is None
    assert items[1].meta == {"score": 2}


def test_unknown_suffix_and_missing_file(tmp_path):
    with pytest.raises(ItemError, match="file not found"):
        read_items(tmp_path / "nope.jsonl")
    with pytest.raises(ItemError, match="unknown file type"):
        read_items(write(tmp_path / "x.txt", "hi"))


def test_write_csv_encodes_nested(tmp_path):
    out = tmp_path / "v.csv"
    write_csv([{"a": 1, "b": ["x"]}, {"a": 2, "c": {"k": 1}}], out)
    assert out.read_text().splitlines() == ["a,b,c", '1,"[""x""]",', '2,,"{""k"": 1}"']
