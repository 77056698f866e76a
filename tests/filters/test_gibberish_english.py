"""English rules one by one (seed 000, appendix A.1), on the bundled corpus word list so the
results do not depend on whether wordfreq is installed."""


import pytest

from convoscope.filters import GibberishThresholds, detect
from convoscope.filters._english import (
    english_symbols,
    longest_class_run,
    tokenize,
)

CORPUS = GibberishThresholds(en_dictionary="corpus")


def en(text, **overrides):
    return detect(text, lang="en", thresholds=CORPUS.model_copy(update=overrides))


def test_preprocessing_keeps_only_lower_case_letters_and_single_spaces():
    assert english_symbols("Hello,  WORLD!! 123 don't") == " hello world dont "
    assert english_symbols("Café naïve") == " cafe naive "
    assert tokenize("I don't know, it's OK") == ("i", "don't", "know", "it's", "ok")


@pytest.mark.parametrize(("word", "run"), [("strengths", 5), ("queue", 4), ("rhythm", 6), ("", 0)])
def test_class_run_counts_vowels_or_consonants_in_a_row(word, run):
    assert longest_class_run(word) == run


def test_clean_sentence_passes_every_rule():
    result = en("The staff were friendly and the food came out fast.")
    assert not result.gibberish and result.reasons == ()
    assert result.log_likelihood > -4.0 and result.valid_word_ratio == 1.0


def test_markov_rule_fires_below_the_threshold_and_moves_with_it():
    result = en("xqzvkjw")
    assert "low_likelihood" in result.reasons and result.log_likelihood < -4.0
    lenient = en("xqzvkjw", en_min_log_likelihood=result.log_likelihood - 0.01)
    assert "low_likelihood" not in lenient.reasons


def test_class_run_rule_fires_only_past_the_threshold():
    eleven = "bcdfghjklmn"  # 11 consonants
    assert "char_class_run" in en(eleven).reasons
    assert "char_class_run" not in en(eleven, en_max_class_run=11).reasons
    assert en("bcdfghjklm").longest_class_run == 10


def test_valid_word_ratio_rule():
    result = en("the glorbix fnarp zuvvel")  # one word in four
    assert result.valid_word_ratio == pytest.approx(0.25)
    assert "few_valid_words" in result.reasons
    assert "few_valid_words" not in en("the glorbix fnarp zuvvel", en_min_valid_word_ratio=0.25).reasons


@pytest.mark.parametrize("text", ["lol", "brb", "idk", "haha", "hahahaha", "lmaooo", "XD", "tbh ngl"])
def test_slang_and_laughter_are_kept(text):
    result = en(text)
    assert not result.gibberish, result
    assert "slang" in result.notes


def test_slang_exception_needs_one_statistic_to_pass():
    # "lol" is slang, but with three unreadable tokens both the likelihood and the ratio fail.
    result = en("lol xqzkv wqpzx fgkjq")
    assert result.gibberish and {"low_likelihood", "few_valid_words"} <= set(result.reasons)


@pytest.mark.parametrize("text", ["sooooooooooooo good", "yesssssssssssss", "nooooooooooooo way"])
def test_elongations_are_kept_even_past_the_run_threshold(text):
    result = en(text)
    assert not result.gibberish, result


def test_repetitive_low_information_elongation_is_not_an_exception():
    # Squeezing "aaaa..." gives "a": one letter, no information, so no elongation exception.
    result = en("aaaaaaaaaaaaaaaaa")
    assert result.gibberish and "char_class_run" in result.reasons and "elongation" not in result.notes


@pytest.mark.parametrize("text", ["asdfghjkl", "qwertyuiop", "jkljkljkl", "zxcvbnm", "sdfsdf sdfsdf"])
def test_keyboard_mashes_are_flagged(text):
    assert en(text).gibberish


def test_single_letters_are_not_dictionary_words():
    assert en("d f g h").valid_word_ratio == 0.0
    assert en("i").valid_word_ratio == 1.0


def test_wordfreq_dictionary_knows_modern_words():
    pytest.importorskip("wordfreq")
    result = detect("burger fries wifi", lang="en", thresholds=GibberishThresholds(en_dictionary="wordfreq"))
    assert result.valid_word_ratio == 1.0 and not result.gibberish


def test_no_letters_and_numbers():
    assert en("???").reasons == ("no_letters",)
    assert en("42").notes == ("numeric",) and not en("42").gibberish
