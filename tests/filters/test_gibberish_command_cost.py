"""`convoscope gibberish` at gibberish-detector's cost (issue 39, observation 8): the command
imports only what judging answers needs, and its writer gives, byte for byte, the lines pydantic's
serialiser gives. Checked by what is imported and what is written, not by timing."""

import io
import json
import math

import pytest
from gibberish_process import gibberish_then

from convoscope.filters import Answer, GibberishResult, detect_many
from convoscope.filters._io import flag_record, iter_answers, write_flags

# Which modules the command imported: a property of its process.
_SHOW = """
print(" ".join(name for name in ("wordfreq", "ftfy", "langcodes", "convoscope.models", "httpx",
                                 "convoscope.filters._grader", "convoscope.filters._imitation")
               if name in sys.modules))
"""


def test_the_gibberish_command_imports_neither_wordfreq_nor_the_model_clients_nor_the_grader_rules(
        tmp_path):
    pytest.importorskip("wordfreq")
    answers = tmp_path / "answers.txt"
    # English, a mash, and short answers in other languages, whose word lists are read.
    answers.write_text("The fries were great\nasdfghjkl\nadorei\nlecker\n", encoding="utf-8")
    out = tmp_path / "flags.jsonl"
    assert gibberish_then(answers, out, _SHOW, cwd=tmp_path).split() == []
    flags = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [flag["lang"] for flag in flags][2:] == ["pt", "de"]  # the word lists were read


def _dumped(answers, results):
    return "".join(json.dumps(flag_record(a, r), ensure_ascii=False) + "\n"
                   for a, r in zip(answers, results, strict=True))


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")
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
                                           language_probability=math.nan),
           # Names as a list, and a tuple that cannot be hashed: not the template's kind.
           GibberishResult.model_construct(text="l", lang="en", gibberish=True, reasons=["empty"]),
           GibberishResult.model_construct(text="t", lang="en", gibberish=True, notes=(["slang"],)),
           GibberishResult.model_construct(text="f", lang="en", gibberish=False,
                                           complete_syllable_ratio=math.inf, longest_class_run=True)]
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


def test_english_flags_are_written_from_the_template_without_encoding_a_dict(monkeypatch):
    """The writer's template gives pydantic's line for results of every shape the rules build
    (English with and without a segment, Korean with its morpheme flag, identified answers with a
    probability): no line goes through json's encoder of a dict."""
    from convoscope.filters import _io

    texts = ["The fries were great", "The food was great. Asdf jkl qwer.", "asdfghjkl", "감자튀김이 맛있어요",
             "Das Essen war lecker und gut", "adorei", "C'est très bon", "ok", "😀 great"]
    results = detect_many(texts)
    korean = results[3].model_copy(update={"morpheme_found": True})
    results += [korean, korean.model_copy(update={"morpheme_found": False, "distinct_jamo": 7})]
    answers = [Answer(line=n, text=r.text) for n, r in enumerate(results, start=1)]
    encoded = []
    encode = _io._encode_record
    monkeypatch.setattr(_io, "_encode_record", lambda record: encoded.append(record) or encode(record))
    written = io.StringIO()
    write_flags(answers, results, written)
    assert encoded == []
    assert written.getvalue() == _dumped(answers, results)
    assert any(r.segment for r in results) and any(r.language_probability for r in results)


def test_a_result_whose_fields_are_out_of_order_is_written_in_its_own_order(monkeypatch):
    """The template writes the fields in the model's order; a result built another way (its
    fields in another order) is written as before, by encoding its dict."""
    result = detect_many(["The fries were great"])[0]
    shuffled = result.model_copy()
    object.__setattr__(shuffled, "__dict__", dict(reversed(result.__dict__.items())))
    assert tuple(shuffled.__dict__) != tuple(result.__dict__)
    written = io.StringIO()
    write_flags([Answer(line=1, text=result.text)], [shuffled], written)
    record = {"line": 1, **shuffled.__dict__}
    assert written.getvalue() == json.dumps(record, ensure_ascii=False) + "\n"


def test_the_summary_counts_a_chunk_as_result_by_result():
    from convoscope.filters._io import _Tally, summarize

    texts = ["The fries were great", "asdfghjkl", "", "감자튀김이 맛있어요", "ㅁㄴㅇㄹ", "qwrtzp"]
    results = detect_many(texts * 3)
    one_by_one = _Tally()
    for result in results:
        one_by_one.answers[result.lang] += 1
        one_by_one.flagged[result.lang] += result.gibberish
        one_by_one.reasons.update(result.reasons)
    summary = summarize(results)
    assert summary == one_by_one.summary()
    assert list(summary.by_reason) == list(one_by_one.summary().by_reason)
