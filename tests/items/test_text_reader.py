"""One text reader for every input file (issue 26, observation 5): encodings named by the user,
byte-order marks, any line end, NUL bytes refused with file and line, and a hint naming an
encoding that reads a file that is not UTF-8."""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from installed import package_dir

from convoscope.cli._gibberish import gibberish
from convoscope.cli._survey import survey_group
from convoscope.errors import LocatedError
from convoscope.filters import read_answers
from convoscope.items import ItemError, TextEncodingError, open_text, read_items, read_text
from convoscope.survey import SurveyColumns, read_survey

SRC = package_dir()
KOREAN = "id,question,answer\nk1,호텔은 어땠나요?,직원들이 친절했어요\nk2,호텔은 어땠나요?,방이 깨끗했어요\n"


def test_a_korean_windows_survey_export_reads_with_its_encoding(tmp_path: Path) -> None:
    path = tmp_path / "answers.csv"
    path.write_bytes(KOREAN.encode("cp949"))
    with pytest.raises(TextEncodingError) as caught:
        read_survey(path)
    assert (caught.value.path, caught.value.line) == (str(path), 2)
    assert "it reads as cp949 (Korean Windows)" in str(caught.value)
    answers = read_survey(path, SurveyColumns(answer="answer"), encoding="cp949").items
    assert [item.response for item in answers] == ["직원들이 친절했어요", "방이 깨끗했어요"]


def test_survey_score_and_gibberish_take_an_encoding_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "answers.csv"
    path.write_bytes(KOREAN.encode("cp949"))
    runner = CliRunner()
    refused = runner.invoke(gibberish, [str(path), "--column", "answer"])
    assert refused.exit_code == 2
    assert re.search(r"answers\.csv, line 2: not utf-8 text .*cp949.*\(--encoding\)",
                     " ".join(refused.output.split()))
    flags = tmp_path / "flags.jsonl"
    read = runner.invoke(gibberish, [str(path), "--column", "answer", "--encoding", "cp949",
                                "--out", str(flags)])
    assert read.exit_code == 0, read.output
    rows = [json.loads(line) for line in flags.read_text(encoding="utf-8").splitlines()]
    assert [row["text"] for row in rows] == ["직원들이 친절했어요", "방이 깨끗했어요"]
    assert "--encoding" in runner.invoke(survey_group, ["score", "--help"]).output


def test_a_latin1_answers_file_is_named_as_western_windows(tmp_path: Path) -> None:
    path = tmp_path / "answers.txt"
    path.write_bytes("fine\nreally good caf\xe9\n".encode("latin-1"))
    with pytest.raises(TextEncodingError, match=r"line 2: not utf-8 text \(byte 0xe9.*cp1252"):
        read_answers(path)
    assert read_answers(path, encoding="latin-1")[1].text == "really good café"


@pytest.mark.parametrize("reader", ["items", "survey", "answers"])
def test_a_nul_byte_is_refused_with_file_and_line(tmp_path: Path, reader: str) -> None:
    path = tmp_path / "answers.csv"
    path.write_bytes(b"id,question,response\r\n1,Q?,fine\r\n2,Q?,go\x00od\r\n")
    read = {"items": read_items, "survey": read_survey,
            "answers": lambda p: read_answers(p, column="response")}[reader]
    with pytest.raises(ItemError, match=r"answers\.csv, line 3: a NUL byte") as caught:
        read(path)
    assert caught.value.line == 3


def test_utf16_from_excel_is_read_by_its_byte_order_mark(tmp_path: Path) -> None:
    # Excel's "Unicode text" export: UTF-16 little-endian with a byte-order mark, tab-separated.
    path = tmp_path / "answers.tsv"
    path.write_bytes(codecs.BOM_UTF16_LE + "id\tanswer\r\n1\t맛있어요\r\n".encode("utf-16-le"))
    assert [item.response for item in read_survey(path).items] == ["맛있어요"]
    assert read_answers(path, column="answer")[0].text == "맛있어요"


def test_bom_and_crlf_and_a_quoted_line_break_keep_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "answers.csv"
    text = 'id,answer\r\n1,"two\r\nlines"\r\n2,ok\r\n3,"a,b",extra\r\n'
    path.write_bytes(codecs.BOM_UTF8 + text.encode("utf-8"))
    with pytest.raises(LocatedError, match=r"answers\.csv, line 5: 3 fields where the header has 2"):
        read_survey(path)
    path.write_bytes(codecs.BOM_UTF8 + text.rsplit("3,", 1)[0].encode("utf-8"))
    export = read_survey(path)
    assert [(item.id, item.meta["line"]) for item in export.items] == [("1", 2), ("2", 4)]
    assert export.items[0].response == "two\r\nlines"


def test_jsonl_lines_count_with_old_mac_line_ends(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_bytes(b'{"id": "1", "response": "a"}\r{"id": "2", "response": "b"}\r{"id": 3\r')
    with pytest.raises(ItemError, match=r"items\.jsonl, line 3: not valid JSON"):
        read_items(path)


def test_open_text_reads_lazily_and_read_text_whole(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"first\r\nsecond\nthird\rfourth")
    with open_text(path) as lines:
        assert list(lines) == ["first\r\n", "second\n", "third\r", "fourth"]
    assert read_text(path) == "first\r\nsecond\nthird\rfourth"
    with pytest.raises(ItemError, match="unknown text encoding 'klingon'"):
        read_text(path, encoding="klingon")


# The modules that read files people bring (survey exports, answers, labels, verdict imports).
EXPORT_READERS = ("items/_io.py", "survey/_read.py", "survey/_output.py", "filters/_io.py",
                  "campaigns/_import.py")


def test_every_export_reader_reads_through_the_one_reader() -> None:
    # The decoder used to be copied into filters/_io.py and survey/_read.py, and campaign imports
    # read with a bare read_text(encoding="utf-8"); only items/_text.py decodes bytes now.
    decoders = re.compile(r"\.decode\(|utf-8-sig|\.open\(encoding=|read_text\(encoding=")
    offenders = [name for name in EXPORT_READERS if decoders.search((SRC / name).read_text("utf-8"))]
    assert offenders == []
