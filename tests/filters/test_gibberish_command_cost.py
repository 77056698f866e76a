"""`convoscope gibberish` at gibberish-detector's cost (issue 39, observation 8): the command
imports only what judging answers needs, and its writer gives, byte for byte, the lines pydantic's
serialiser gives. Checked by what is imported and what is written, not by timing."""

import io
import json
import math
import subprocess
import sys

import pytest

from convoscope.filters import Answer, GibberishResult, detect_many
from convoscope.filters._io import flag_record, iter_answers, write_flags

# Run in a fresh interpreter: which modules a command imports is a property of a process.
_PROBE = """
import sys
from convoscope.cli import main
sys.argv = ["convoscope", "gibberish", sys.argv[1], "--out", sys.argv[2]]
try:
    main()
except SystemExit as stop:
    assert not stop.code, stop.code
print(" ".join(name for name in ("wordfreq", "ftfy", "langcodes", "convoscope.models", "httpx")
               if name in sys.modules))
"""


def test_the_gibberish_command_imports_neither_wordfreq_nor_the_model_clients(tmp_path):
    pytest.importorskip("wordfreq")
    answers = tmp_path / "answers.txt"
    # English, a mash, and short answers in other languages, whose word lists are read.
    answers.write_text("The fries were great\nasdfghjkl\nadorei\nlecker\n", encoding="utf-8")
    out = tmp_path / "flags.jsonl"
    found = subprocess.run([sys.executable, "-c", _PROBE, str(answers), str(out)], capture_output=True,
                           text=True, check=True, cwd=tmp_path)
    assert found.stdout.split() == []
    flags = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [flag["lang"] for flag in flags][2:] == ["pt", "de"]  # the word lists were read


def _dumped(answers, results):
    return "".join(json.dumps(flag_record(a, r), ensure_ascii=False) + "\n"
                   for a, r in zip(answers, results, strict=True))


def test_the_writer_gives_the_lines_of_pydantics_serialiser_for_every_kind_of_result():
    texts = ["The fries were great", "asdfghjkl", "", "123", "!!!", "감자튀김이 맛있어요", "ㅋㅋㅋㅋ",
             "adorei", "C'est très bon", "草", "Das Essen war lecker", "qwrtzp xkcdv. Good food.",
             'quote " and \\ back\tslash', "emoji 😀 ok", "İstanbul güzel"]
    results = detect_many(texts)
    answers = [Answer(line=n, text=t) for n, t in enumerate(texts, start=1)]
    # Values the rules never produce but a caller's result may hold: pydantic writes an infinite
    # float as null and an int in a float field as 1.0; json would write -Infinity and 1.
    odd = [GibberishResult.model_construct(text="x", lang="en", gibberish=True, log_likelihood=-math.inf),
           GibberishResult.model_construct(text="y", lang="en", gibberish=False, valid_word_ratio=1),
           GibberishResult.model_construct(text="z", lang="en", gibberish=False,
                                           language_probability=math.nan)]
    answers += [Answer(line=90 + n, text=r.text) for n, r in enumerate(odd)]
    results += odd
    written = io.StringIO()
    write_flags(answers, results, written)
    assert written.getvalue() == _dumped(answers, results)


def test_answers_read_from_a_plain_text_file_equal_validated_answers(tmp_path):
    path = tmp_path / "answers.txt"
    path.write_text("one\n\ntwo words\n", encoding="utf-8")
    read = list(iter_answers(path))
    expected = [Answer(line=1, text="one"), Answer(line=2, text=""), Answer(line=3, text="two words")]
    assert read == expected
    assert [a.model_fields_set for a in read] == [a.model_fields_set for a in expected]
    assert [a.model_dump_json() for a in read] == [a.model_dump_json() for a in expected]
