"""The fast paths (issue 13, observation 5: English throughput under half of gibberish-detector's)
must give exactly the figures of the reference computation: cached token rows against
``english_signals`` + ``mean_log_likelihood_of_words``, the ASCII script shortcut against
``count_scripts``, and answers judged once per batch against one call per answer."""

import csv
import random
import re
from pathlib import Path

import pytest

from convoscope.filters import GibberishResult, GibberishThresholds, _english, detect, detect_many
from convoscope.filters._english import (
    TOKEN,
    TokenScorer,
    ascii_tokens,
    english_signals,
    english_stats,
    fold,
)
from convoscope.filters._general import _SENTENCE_END
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


# The batch path for plain-ASCII answers (H12): ``detect_many`` judges them without building a
# result per step and without validating the result again; ``detect`` keeps the general path,
# which is the reference here.

BATCH_EXTRA = [
    "It's fine. asdf qwer zxcv.", "Good.\nasdkjh qwlekj", "Yes. No. Maybe so.", "ok", "OK!!", "lol",
    "wow!!! sooo goooood lmaooo", "zzzzzzzzzz", "ghjk ghjk ghjk", "Muito bom, gostei bastante",
    "Das Essen war sehr gut", "bcdfghjklmnpqrstvwxz", "aeiouaeiouaeiou", "x", "I", "1st 2nd 3rd",
    "e.g. i.e. etc.", "rock'n'roll 'quoted' a''b '", "tab\tseparated\twords", "...", "123", "  ",
    "The fries were great. Qwpoeiruty zmxncbv alskdjfh.", "hello-world foo_bar", "Hello?\x1cWorld",
]


def batch_lines() -> list[str]:
    return english_lines() + BATCH_EXTRA


@pytest.mark.parametrize("options", [
    {}, {"language_id": "off"}, {"segments": False}, {"en_dictionary": "corpus"},
    {"en_min_log_likelihood": -3.0, "en_max_class_run": 4, "en_min_valid_word_ratio": 0.8,
     "en_sure_word_ratio": 0.5},
])
@pytest.mark.parametrize("lang", ["auto", "en"])
def test_the_batch_path_gives_the_general_paths_results(options, lang):
    thresholds = GibberishThresholds(**options)
    texts = batch_lines()
    batch = detect_many(texts, lang=lang, thresholds=thresholds)
    for text, result in zip(texts, batch, strict=True):
        reference = detect(text, lang=lang, thresholds=thresholds)
        assert result == reference, text
        assert result.model_dump() == reference.model_dump()
        assert result.model_fields_set == reference.model_fields_set
        assert list(result.__dict__) == list(reference.__dict__)


def test_results_built_without_validation_are_valid_results():
    for result in detect_many(batch_lines()):
        assert GibberishResult.model_validate(result.model_dump()) == result
    first, second = detect_many(["The food was good", "The staff were nice"])
    copied = first.model_copy(update={"segment": "x"})
    assert "segment" in copied.model_fields_set
    assert "segment" not in first.model_fields_set | second.model_fields_set  # the shared set is intact


def test_ascii_tokens_are_the_regex_tokens_of_the_folded_text():
    rng = random.Random(13)
    pool = "abzAZ' .,-_0\n\t\x1c\x7f`"
    everything = "".join(map(chr, range(128)))
    texts = [text for text in batch_lines() if text.isascii()]
    texts += ["".join(rng.choice(pool) for _ in range(rng.randint(0, 14))) for _ in range(20_000)]
    texts += [everything, everything[::-1]]
    for text in texts:
        assert [token.decode() for token in ascii_tokens(text)] == TOKEN.findall(fold(text)), text


def test_sentence_split_is_the_original_split():
    original = re.compile(r"(?<=[.!?;。！？])\s+|\s*\n+\s*")
    rng = random.Random(5)
    pool = "ab .!?;\n\t\r 。가\x0b\x1c"
    texts = batch_lines()
    texts += ["".join(rng.choice(pool) for _ in range(rng.randint(0, 12))) for _ in range(20_000)]
    for text in texts:
        assert _SENTENCE_END.split(text.strip()) == original.split(text.strip()), text


def test_word_log_likelihood_sums_the_same_transitions():
    for model in (bigram_model("en"), BigramModel("abnrde ", ((1, 2, 3, 4, 5, 6, 7),) * 7)):
        log_probs = model._log_probs
        for word in ("banana", "bread", "xyz", "a", "zebra", "qq"):
            padded = f" {word} "
            expected = sum(log_probs[a][b] for a, b in zip(padded, padded[1:], strict=False)
                           if a in log_probs and b in log_probs)
            assert model.word_log_likelihood_uncached(word) == expected
            assert model.word_log_likelihood(word) == expected


def test_token_scorer_paths_agree(monkeypatch):
    is_word = word_checker("corpus", 2.5)
    slang = GibberishThresholds().en_slang
    model = bigram_model("en")
    texts = [text for text in batch_lines() if text.isascii()]
    reference = [english_stats(text, is_word, slang, model) for text in texts]
    by_bytes = TokenScorer(is_word, slang, model, byte_keys=True)
    assert [by_bytes.stats(ascii_tokens(text)) for text in texts] == reference
    monkeypatch.setattr(_english, "_TABLE_LIMIT", 5)  # a full table: rows computed line by line
    full = TokenScorer(is_word, slang, model)
    assert [full.stats(TOKEN.findall(fold(text))) for text in texts] == reference
    long_line = "the cat sat " * 11_000 + "qwrtpsdfg"  # over 2**15 tokens: not packed
    assert full.stats(TOKEN.findall(long_line)) == english_signals_stats(long_line, is_word, slang, model)


def english_signals_stats(text, is_word, slang, model):
    signals = english_signals(text, is_word, slang)
    return (len(signals.tokens), signals.valid_word_ratio, "slang" in signals.kinds,
            "elongated" in signals.kinds, signals.longest_class_run,
            model.mean_log_likelihood_of_words(signals.words))


def test_answers_left_to_the_identifier_are_scored_from_the_fast_paths_table():
    """An ASCII answer (or sentence) the fast path leaves to py3langid is scored again on the
    general path from the same byte-keyed token table, warm, not from a second table keyed by
    str that starts cold (issue 39: the identified sentences of 50,000 lines filled it anew)."""
    from convoscope.filters._english import token_scorer

    thresholds = GibberishThresholds(en_dictionary="corpus", en_min_word_zipf=2.75)
    is_word = word_checker(thresholds.en_dictionary, thresholds.en_min_word_zipf)
    by_str = token_scorer(is_word, thresholds.en_slang, bigram_model("en"))
    by_bytes = token_scorer(is_word, thresholds.en_slang, bigram_model("en"), byte_keys=True)
    texts = ["Adorei o lanche", "Qwrtzp xkcdvbn fhgjt", "Tom Brady rocks. Zxcvbnm qwerty."]
    results = detect_many(texts, thresholds=thresholds)
    assert len(by_str.packed) == 0 and len(by_bytes.packed) > 0
    assert results == [detect(text, thresholds=thresholds) for text in texts]
