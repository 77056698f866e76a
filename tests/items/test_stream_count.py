"""The progress total of a JSONL input: counted in blocks, a last line without newline included."""

from __future__ import annotations

from convoscope.items import ItemStream

ROW = '{"id": "%d", "response": "x"}'


def test_the_count_takes_a_last_line_without_its_newline_and_the_limit(tmp_path):
    ended, open_ended = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    ended.write_text("".join(ROW % n + "\n" for n in range(5)))
    open_ended.write_text("\n".join(ROW % n for n in range(5)))
    assert ItemStream(ended).count() == ItemStream(open_ended).count() == 5
    assert ItemStream(ended, limit=3).count() == 3
    assert sum(len(chunk.items()) for chunk in ItemStream(open_ended, chunk_size=2).chunks()) == 5
