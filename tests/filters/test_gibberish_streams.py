"""`convoscope gibberish` streams (issue 39, observation 8): answers are read as they are judged
and each chunk's flags are written before the next chunk is read, so memory does not grow with
the file. Checked by counting, not timing: how much input has been taken when output appears."""

import io
import json

from click.testing import CliRunner

from convoscope.cli import _gibberish, cli
from convoscope.cli._app import _register
from convoscope.errors import LocatedError
from convoscope.filters import Answer, detect_many, flag_answers, iter_answers

_register()

LINES = ["The fries were great", "asdfghjkl", "really good service", "qwrtzp xkcdv", "no"]


class _Recording(io.StringIO):
    """A handle that notes how many answers had been taken when it was first written to."""

    def __init__(self, taken):
        super().__init__()
        self.taken, self.taken_at_first_write = taken, None

    def write(self, text):
        if self.taken_at_first_write is None:
            self.taken_at_first_write = self.taken[0]
        return super().write(text)


def test_flags_are_written_before_the_input_is_exhausted():
    taken = [0]

    def answers():
        for number in range(1, 5001):
            taken[0] = number
            yield Answer(line=number, text=f"{LINES[number % 5]} {number}")

    handle = _Recording(taken)
    summary = flag_answers(answers(), handle, judge=lambda batch: detect_many([a.text for a in batch]),
                           chunk=500)
    assert handle.taken_at_first_write == 500  # one chunk in, its flags out, then the next chunk
    rows = [json.loads(line) for line in handle.getvalue().splitlines()]
    assert [row["line"] for row in rows] == list(range(1, 5001)) and summary.total == 5000


def test_the_command_writes_flags_while_it_is_still_reading(tmp_path, monkeypatch):
    answers = tmp_path / "answers.txt"
    answers.write_text("\n".join(f"{LINES[n % 5]} {n}" for n in range(4500)) + "\n", encoding="utf-8")
    out = tmp_path / "flags.jsonl"
    written_when_read = {}

    def watched(*args, **kwargs):
        for answer in iter_answers(*args, **kwargs):
            if answer.line == 4499:  # near the end of the input: flags must be on disk already
                written_when_read["bytes"] = out.stat().st_size
            yield answer

    monkeypatch.setattr(_gibberish, "iter_answers", watched)
    result = CliRunner().invoke(cli, ["gibberish", str(answers), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert written_when_read["bytes"] > 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 4500


def test_answers_are_read_lazily_so_a_bad_line_is_met_only_when_reached(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text('{"a": "fine"}\n{"a": "good"}\nnot json\n', encoding="utf-8")
    stream = iter_answers(path, column="a")
    assert [next(stream).text, next(stream).text] == ["fine", "good"]
    try:
        next(stream)
    except LocatedError as error:
        assert "line 3" in str(error)
    else:
        raise AssertionError("the bad third line was not reported")


def test_plain_text_read_a_block_at_a_time_gives_each_line_and_break_as_splitlines(tmp_path):
    """Plain text is split a block of lines at a time (issue 39: less work per line); the answers
    are those of splitting each line, for every kind of line break and across blocks."""
    from convoscope.filters import _io

    pieces = ["one\n", "\n", "two\r\n", "three\r", "\r", "four\x0cfive\n", "six\u2028seven\n"] * 400
    text = "".join(pieces) + "last without a break"
    path = tmp_path / "answers.txt"
    path.write_bytes(text.encode("utf-8"))
    read = list(iter_answers(path))
    expected = text.splitlines()
    assert [a.text for a in read] == expected and [a.line for a in read] == list(range(1, len(expected) + 1))
    assert len(pieces) > 2 * _io._BLOCK_LINES


def test_a_bad_plain_text_line_is_reported_after_every_answer_before_it(tmp_path):
    path = tmp_path / "answers.txt"
    path.write_bytes(b"fine\ngood\n" * 700 + b"bad \x00 byte\nnever read\n")
    stream = iter_answers(path)
    taken = []
    try:
        for answer in stream:
            taken.append(answer.line)
    except LocatedError as error:
        assert "line 1401" in str(error)
    else:
        raise AssertionError("the NUL byte on line 1401 was not reported")
    assert taken == list(range(1, 1401))


def test_the_command_writes_every_chunk_before_a_bad_line(tmp_path):
    answers, out = tmp_path / "answers.txt", tmp_path / "flags.jsonl"
    answers.write_bytes(b"The fries were great\n" * 2010 + b"bad \x00 byte\n")
    result = CliRunner().invoke(cli, ["gibberish", str(answers), "--out", str(out)])
    assert result.exit_code != 0 and "line 2011" in result.output
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2000
