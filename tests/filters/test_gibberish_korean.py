"""Korean rules one by one (seed 000, appendix A.2)."""

import pytest

from convoscope.filters import GibberishThresholds, detect, to_jamo
from convoscope.filters._korean import set_aside_chat_forms

NO_ANALYSER = GibberishThresholds(ko_morphemes="off")


def ko(text, **overrides):
    return detect(text, lang="ko", thresholds=NO_ANALYSER.model_copy(update=overrides))


def test_jamo_decomposition_by_unicode_arithmetic():
    # 한 = ᄒ + ᅡ + ᆫ ; 가 has no final consonant; a bare ㄱ becomes an initial, ㅏ a vowel.
    assert to_jamo("한") == " \u1112\u1161\u11ab "
    assert to_jamo("가") == " \u1100\u1161 "
    assert to_jamo("ㄱㅏ") == " \u1100\u1161 "
    assert to_jamo("ㄳ") == " \u11aa "  # a cluster exists only as a final
    assert to_jamo("맛 good!") == " \u1106\u1161\u11ba "


def test_clean_answer_passes_every_rule():
    result = ko("가격이 저렴해서 좋았어요")
    assert not result.gibberish and result.reasons == ()
    assert result.complete_syllable_ratio == 1.0 and result.distinct_jamo >= 4
    assert result.log_likelihood > -3.5


def test_markov_rule_and_its_threshold():
    result = ko("뷁쀍퓒")
    assert "low_likelihood" in result.reasons
    assert "low_likelihood" not in ko("뷁쀍퓒", ko_min_log_likelihood=result.log_likelihood - 0.01).reasons


def test_complete_syllable_ratio_rule():
    result = ko("ㅁ너ㅏ옴너ㅏㅣㅇ")  # 3 syllables, 5 bare jamo
    assert result.complete_syllable_ratio == pytest.approx(3 / 8)
    assert "incomplete_syllables" in result.reasons
    assert "incomplete_syllables" not in ko("ㅁ너ㅏ옴너ㅏㅣㅇ", ko_min_complete_syllable_ratio=0.3).reasons


def test_distinct_jamo_rule():
    result = ko("아아아아아")
    assert result.distinct_jamo == 2 and "few_distinct_jamo" in result.reasons
    assert "few_distinct_jamo" not in ko("아아아아아", ko_min_distinct_jamo=2).reasons


def test_numbers_with_counters_are_not_repetitive_noise():
    assert not ko("3번").gibberish and not ko("5점").gibberish


@pytest.mark.parametrize("text", ["ㅋㅋ", "ㅋㅋㅋㅋㅋ", "ㅎㅎ", "ㅠㅠ", "ㅇㅇ",
                                  "ㅇㅋ", "ㄴㄴ", "네", "넵", "하하하"])
def test_whitelist(text):
    result = ko(text)
    assert not result.gibberish and result.notes == ("whitelisted",)


def test_whitelist_is_a_parameter():
    assert ko("ㅇㅋ", ko_whitelist=frozenset()).gibberish


def test_chat_markers_attached_to_words_are_set_aside():
    assert set_aside_chat_forms("맛있어요ㅋㅋㅋ ㅠㅠ", frozenset()) == ("맛있어요", True)
    result = ko("ㅋㅋㅋ 재밌었어요")
    assert not result.gibberish and result.complete_syllable_ratio == 1.0


@pytest.mark.parametrize("text", ["ㅁㄴㅇㄹ", "ㅂㅈㄷㄱ쇼ㅕㅑㅐㅔ", "ㅁㄴㅇㄹ ㅁㄴㅇㄹ",
                                  "ㅏㅓㅏㅓㅏㅓ", "뷁뷁뷁", "퓨퓨퓨퓨"])
def test_two_set_keyboard_mashes_are_flagged(text):
    assert ko(text).gibberish


def test_without_the_analyser_the_morpheme_check_is_skipped_and_said_so():
    result = ko("좋아요")
    assert result.morpheme_found is None and "morpheme_check_skipped" in result.notes


def test_missing_analyser_is_a_clear_error_when_required(monkeypatch):
    from convoscope.filters import _resources

    monkeypatch.setattr(_resources, "kiwi_available", lambda: False)
    with pytest.raises(ValueError, match="kiwipiepy"):
        detect("좋아요", thresholds=GibberishThresholds(ko_morphemes="kiwi"))


def test_morpheme_rule_with_kiwi():
    pytest.importorskip("kiwipiepy")
    with_kiwi = GibberishThresholds(ko_morphemes="kiwi")
    clean = detect("맛있어요", thresholds=with_kiwi)
    assert clean.morpheme_found is True and not clean.gibberish
    # Complete, varied, plausible jamo, but no known word: only the analyser catches it.
    nonsense = detect("아러아러", thresholds=with_kiwi)
    cheap_rules = detect("아러아러", thresholds=NO_ANALYSER)
    assert not cheap_rules.gibberish
    assert nonsense.morpheme_found is False and nonsense.reasons == ("no_morpheme",)
