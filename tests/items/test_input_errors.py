"""Bad input files end in one located error; outputs are checked first and written atomically
(issue 11, observation 8)."""

import json
import os

import pytest

from convoscope.errors import LocatedError
from convoscope.items import (
    ItemError,
    TextEncodingError,
    check_output,
    read_items,
    write_jsonl,
    write_records,
)
from convoscope.judges import Verdict, read_verdicts

DEEP = "[" * 100_000 + "]" * 100_000


def test_a_cp949_csv_names_file_and_line_and_suggests_an_encoding(tmp_path):
    path = tmp_path / "answers.csv"
    path.write_bytes("id,response\n1,fine\n2,서비스가 좋았어요\n".encode("cp949"))
    with pytest.raises(TextEncodingError) as caught:
        read_items(path)
    assert (caught.value.path, caught.value.line) == (str(path), 3)
    assert "cp949" in str(caught.value) and str(path) in str(caught.value)
    assert read_items(path, encoding="cp949")[1].response == "서비스가 좋았어요"


def test_a_latin1_jsonl_names_the_line(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_bytes(b'{"id": "1", "response": "ok"}\n{"id": "2", "response": "caf\xe9"}\n')
    with pytest.raises(TextEncodingError, match=r"items.jsonl, line 2: not utf-8 text \(byte 0xe9"):
        read_items(path)
    assert read_items(path, encoding="latin-1")[1].response == "café"


def test_an_unknown_encoding_name_is_a_located_error(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "1"}\n')
    with pytest.raises(ItemError, match="unknown text encoding 'klingon'"):
        read_items(path, encoding="klingon")


def test_deeply_nested_jsonl_is_a_located_error_not_a_recursion_error(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "1", "response": "ok"}\n{"id": "2", "meta": {"x": ' + DEEP + "}}\n")
    with pytest.raises(ItemError) as caught:
        read_items(path)
    assert (caught.value.line, caught.value.field) == (2, "meta")
    assert "nested more than 64 levels" in str(caught.value)


def test_deeply_nested_json_and_csv_context_are_located_errors(tmp_path):
    path = tmp_path / "items.json"
    path.write_text('[\n {"id": "1"},\n {"id": "2",\n  "context": ' + DEEP + "}\n]")
    with pytest.raises(ItemError) as caught:
        read_items(path)
    assert (caught.value.line, caught.value.field) == (4, "context")
    table = tmp_path / "items.csv"
    table.write_text("id,context,response\n1,[],hi\n2," + "[" * 1000 + "]" * 1000 + ",hi\n")
    with pytest.raises(ItemError, match="items.csv, line 3, field 'context': nested more than 64"):
        read_items(table)
    table.write_text(f"id,context,response\n1,{DEEP},hi\n")  # past the csv module's field limit
    with pytest.raises(ItemError, match="items.csv, line 2: not readable as CSV"):
        read_items(table)


def test_ordinary_nesting_and_many_brackets_still_read(tmp_path):
    path = tmp_path / "items.jsonl"
    row = {"id": "1", "response": "ok", "meta": {"tags": [[i] for i in range(200)], "deep": [[[["x"]]]]}}
    path.write_text(json.dumps(row) + "\n")
    assert read_items(path)[0].meta == row["meta"]


def _verdicts():
    return [Verdict(item_id="1", criterion="effort", rater="model:x", value=3,
                    distribution={"3": 0.75, "4": 0.25}, expected_value=3.25),
            Verdict(item_id="1", criterion="appropriateness", rater="model:x", value="positive",
                    options=("genericness",)),
            Verdict(item_id="2", criterion="effort", rater="model:x", value=None,
                    unscored_reason="parse_failure")]


def test_verdicts_written_as_parquet_are_parquet_and_read_back(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "v.parquet"
    assert write_records(_verdicts(), out) == 3
    assert out.read_bytes()[:4] == b"PAR1" and out.read_bytes()[-4:] == b"PAR1"
    table = pq.read_table(out)
    assert table.num_rows == 3 and "distribution" in table.column_names
    assert read_verdicts(out) == _verdicts()


def test_a_failed_write_leaves_the_old_file_and_no_partial_file(tmp_path):
    out = tmp_path / "v.jsonl"
    write_jsonl([{"a": 1}], out)

    def broken():
        yield {"a": 2}
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_jsonl(broken(), out)
    assert out.read_text() == '{"a": 1}\n' and os.listdir(tmp_path) == ["v.jsonl"]


def test_an_output_path_is_checked_before_anything_is_written(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "1"}\n')
    with pytest.raises(LocatedError, match="does not exist"):
        check_output(tmp_path / "missing" / "v.jsonl")
    with pytest.raises(LocatedError, match="also an input"):
        check_output(tmp_path / "." / "items.jsonl", inputs=[items])
    with pytest.raises(LocatedError, match="unknown output type '.xlsx'"):
        check_output(tmp_path / "v.xlsx")
    assert check_output(tmp_path / "v.parquet") == tmp_path / "v.parquet"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into any folder")
def test_an_unwritable_output_folder_is_refused(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o500)
    with pytest.raises(LocatedError, match="cannot be written"):
        check_output(folder / "v.jsonl")
