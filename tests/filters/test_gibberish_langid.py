"""Script-based language choice, mixed text, other scripts, empty answers."""

import pytest

from convoscope.filters import GibberishThresholds, detect, detect_language


@pytest.mark.parametrize(("text", "lang"), [
    ("The fries were great", "en"),
    ("감자튀김이 맛있어요", "ko"),
    ("ㅋㅋㅋ", "ko"),
    ("iPhone 좋아요", "ko"),  # Hangul counted in jamo: 9 against 6 Latin letters
    ("good 좋", "en"),
    ("Привет, как дела?", "other"),
    ("美味しかったです", "other"),
    ("", "none"),
    ("12345", "none"),
    ("!!! 👍", "none"),
])
def test_detect_language(text, lang):
    assert detect_language(text) == lang


def test_other_scripts_are_never_flagged():
    result = detect("Очень вкусно")
    assert result.lang in ("ru", "other") and not result.gibberish
    assert result.notes == ("unsupported_language",)


def test_mixed_script_is_noted_and_judged_by_the_majority_script():
    result = detect("burger 맛있어요")  # 10 jamo against 6 Latin letters
    assert result.lang == "ko" and "mixed_script" in result.notes and not result.gibberish


def test_forcing_a_language_flags_answers_in_another_script():
    result = detect("맛있어요", lang="en")
    assert result.lang == "en" and result.gibberish and result.reasons == ("wrong_script",)


def test_empty_answers_follow_the_setting():
    assert detect("   ").reasons == ("empty",) and detect("").gibberish
    lenient = detect("", thresholds=GibberishThresholds(empty_is_gibberish=False))
    assert not lenient.gibberish and lenient.reasons == ()


def test_punctuation_only_is_gibberish_but_numbers_are_answers():
    assert detect("?!?!").reasons == ("no_letters",)
    assert not detect("10/10").gibberish


def test_thresholds_are_frozen_and_validated():
    thresholds = GibberishThresholds()
    with pytest.raises(ValueError):
        thresholds.en_max_class_run = 3
    with pytest.raises(ValueError):
        GibberishThresholds(en_min_valid_word_ratio=1.5)
    with pytest.raises(ValueError):
        GibberishThresholds(en_max_run=3)  # unknown names are rejected, not ignored
