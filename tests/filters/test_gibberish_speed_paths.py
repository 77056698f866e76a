"""The fast paths (issue 13, observation 5: English throughput under half of gibberish-detector's)
must give exactly the figures of the reference computation: cached token rows against
``english_signals`` + ``mean_log_likelihood_of_words``, the ASCII script shortcut against
``count_scripts``, and answers judged once per batch against one call per answer."""

import csv
from pathlib import Path

import pytest

from convoscope.filters import GibberishThresholds, detect, detect_many
from convoscope.filters._english import english_signals, english_stats
from convoscope.filters._langid import count_scripts, is_mixed_script, language_of
from convoscope.filters._markov import BigramModel
from convoscope.filters._resources import bigram_model, word_checker

DEV = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "gibberish_en.tsv"
EXTRA = ["I don't know, it's OK", "sooooo gooood lol", "Café naïve résumé", "xqzvkjw asdfgh",
         "strengths rhythm queue", "", "!!!", "hahaha xD", "the the the", "’twas fine’"]


def english_lines() -> list[str]:
    if not DEV.exists():
        return EXTRA
    with open(DEV, encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [row["text"] for row in rows] + EXTRA


@pytest.mark.parametrize("dictionary", ["corpus", "auto"])
def test_cached_token_rows_give_the_reference_english_figures(dictionary):
    thresholds = GibberishThresholds(en_dictionary=dictionary)
    is_word = word_checker(thresholds.en_dictionary, thresholds.en_min_word_zipf)
    model = bigram_model("en")
    for _ in range(2):  # first pass fills the token table, the second reads it
        for text in english_lines():
            reference = english_signals(text, is_word, thresholds.en_slang)
            stats = english_stats(text, is_word, thresholds.en_slang, model)
            assert stats.tokens == len(reference.tokens)
            assert stats.valid_word_ratio == reference.valid_word_ratio
            assert stats.slang == ("slang" in reference.kinds)
            assert stats.elongated == ("elongated" in reference.kinds)
            assert stats.longest_class_run == reference.longest_class_run
            assert stats.log_likelihood == model.mean_log_likelihood_of_words(reference.words)


def test_token_rows_are_kept_apart_per_model():
    is_word = word_checker("corpus", 2.5)
    flat = BigramModel("abnrde ", ((1,) * 7,) * 7)
    slang = GibberishThresholds().en_slang
    text = "banana bread"
    english = english_stats(text, is_word, slang, bigram_model("en")).log_likelihood
    uniform = english_stats(text, is_word, slang, flat).log_likelihood
    assert uniform == pytest.approx(-1.9459, abs=1e-4)  # log(1/7) for every transition
    assert english == bigram_model("en").mean_log_likelihood(" banana bread ")


@pytest.mark.parametrize("text", ["Hello world", "123", "!!!", "a", "   x  ", "?!"])
def test_the_ascii_shortcut_chooses_what_the_script_count_chooses(text):
    counts = count_scripts(text)
    assert not is_mixed_script(counts, minority_share=0.25)
    result = detect(text)
    if language_of(counts) == "none":
        assert result.lang == "none"
    else:
        assert result.lang not in ("none", "ko")


def test_repeated_answers_are_judged_once_with_the_same_verdicts():
    texts = ["no", "good", "asdfgh", "no", "맛있어요", "good", "ㅁㄴㅇㄹ", "맛있어요", "no", ""]
    results = detect_many(texts)
    assert results == [detect(text) for text in texts]
    assert results[0] is results[3] is results[8]  # one judgement, shared (results are frozen)
