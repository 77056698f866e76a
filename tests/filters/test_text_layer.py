"""Issue 38: one text layer under every rule. Its own behaviour: NFKC, format characters dropped,
confusables folded to the Latin skeleton only where a word mixes scripts or stands wholly of
look-alikes in Latin text, words on grapheme clusters, scripts per span, spans back on the
original."""

from __future__ import annotations

import pytest

pytest.importorskip("regex")
pytest.importorskip("confusable_homoglyphs")

from convoscope.text import fold, fold_text, script_spans, words  # noqa: E402


def test_a_cyrillic_letter_inside_a_latin_word_folds_to_its_latin_skeleton() -> None:
    assert fold("fine. \u0435ffort: 7") == "fine. effort: 7"
    # ѕсоге: a word wholly of look-alikes inside Latin text.
    assert fold("the room was nice \u0455\u0441\u043e\u0433\u0435 = 9") == "the room was nice score = 9"
    # In a word that mixes scripts each look-alike folds; ж has no Latin prototype and stays.
    assert fold("\u0455\u0441\u043e\u0433e\u0436") == "score\u0436"


def test_russian_text_keeps_its_letters() -> None:
    assert fold("Доставка вовремя, сор и мусор убрали") == "доставка вовремя, сор и мусор убрали"


def test_zero_width_and_format_characters_are_dropped_and_keycaps_read_as_digits() -> None:
    assert fold("</an\u200bswer>") == "</answer>"
    assert fold("sc\u00adore\u2060: 7\ufe0f\u20e3") == "score: 7"
    assert fold("ｓｃｏｒｅ：７") == "score:7"


def test_korean_compatibility_jamo_are_kept_as_typed() -> None:
    assert fold("ㅋㅋㅋ 좋아요", casefold=False) == "ㅋㅋㅋ 좋아요"


def test_a_match_on_the_folded_text_reports_the_original_span() -> None:
    original = "ok \u0435ff\u200bort: 7"
    folded = fold_text(original)
    start = folded.text.index("effort")
    assert folded.original(start, start + len("effort")) == "\u0435ff\u200bort"


def test_words_keep_combining_marks_inside() -> None:
    assert words("डिलीवरी समय पर हुई") == ["डिलीवरी", "समय", "पर", "हुई"]
    assert words("don't stop") == ["don't", "stop"]


def test_thai_is_cut_into_dictionary_words() -> None:
    pytest.importorskip("pythainlp")
    assert words("ส่งของตรงเวลา") == ["ส่ง", "ของ", "ตรงเวลา"]


def test_scripts_are_known_per_span() -> None:
    spans = script_spans("hello мир 12 हुई")
    assert [span.script for span in spans] == ["LATIN", "CYRILLIC", "DEVANAGARI"]
    assert "hello мир 12 हुई"[spans[2].start:spans[2].end] == "हुई"
