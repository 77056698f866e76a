"""The gibberish filter: thresholds, the per-answer result, and ``detect`` / ``detect_many``.

An answer is gibberish when any rule of its language fires (seed 000, appendix A). Rules report
by name in ``reasons``; exceptions that kept an answer (slang, elongation, whitelist) and checks
that could not run are listed in ``notes``, so every decision can be read back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from convoscope.filters import _resources
from convoscope.filters._english import DEFAULT_SLANG, english_signals, english_symbols
from convoscope.filters._korean import (
    DEFAULT_KO_WHITELIST,
    has_content_morpheme,
    korean_signals,
    korean_symbols,
)
from convoscope.filters._langid import Language, count_scripts, is_mixed_script, language_of

Reason = Literal[
    "empty",  # nothing but whitespace
    "no_letters",  # punctuation or emoji only
    "wrong_script",  # a language was forced and the answer has no letters of its script
    "low_likelihood",  # mean bigram log-likelihood under the language's threshold
    "char_class_run",  # en: too many vowels or consonants in a row
    "few_valid_words",  # en: too small a share of dictionary words, slang or elongations
    "incomplete_syllables",  # ko: too many bare jamo next to complete syllables
    "few_distinct_jamo",  # ko: too few different jamo
    "no_morpheme",  # ko: the analyser found no known content morpheme
]
Note = Literal[
    "slang",  # en: abbreviations, chat words or laughter were present (and counted as words)
    "elongation",  # en: a stretched word (sooo) was read as the word
    "whitelisted",  # ko: the whole answer is chat markers or whitelisted short forms
    "mixed_script",  # Hangul and Latin letters both hold a sizeable share
    "unsupported_language",  # another script: not judged, never flagged
    "numeric",  # digits but no letters: a number is a legitimate answer
    "morpheme_check_skipped",  # ko: the analyser is off or not installed
]
LanguageChoice = Literal["auto", "en", "ko"]


class GibberishThresholds(BaseModel):
    """Every parameter of the filter. Defaults follow seed 000 where it gives a value; log-likelihoods
    are natural-log means per transition."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    en_min_log_likelihood: float = Field(
        default=-4.0,
        description="Seed: mean character-bigram log-likelihood below this is gibberish.")
    en_max_class_run: int = Field(
        default=10, ge=1,
        description="Seed: more vowels, or more consonants, in a row than this is gibberish.")
    en_min_valid_word_ratio: float = Field(
        default=0.4, ge=0, le=1,
        description="Seed: a share of valid words below this is gibberish.")
    en_dictionary: _resources.Dictionary = Field(
        default="auto",
        description="'wordfreq', 'corpus' (bundled list) or 'auto' (wordfreq when installed).")
    en_min_word_zipf: float = Field(
        default=2.5, ge=0, le=8,
        description="Not in the seed: a wordfreq entry counts as a word from this Zipf frequency "
        "(log10 of uses per billion words); lower admits mash-like rarities such as 'asdf'.")
    en_slang: frozenset[str] = Field(
        default=DEFAULT_SLANG,
        description="Chat words kept though a dictionary may lack them; laughter (haha, lolol, "
        "lmao, xd) is matched by pattern.")
    ko_min_log_likelihood: float = Field(
        default=-3.5,
        description="Seed: mean jamo-bigram log-likelihood below this is gibberish.")
    ko_min_complete_syllable_ratio: float = Field(
        default=0.6, ge=0, le=1,
        description="Seed: a share of complete syllables (against bare jamo) below this is gibberish.")
    ko_min_distinct_jamo: int = Field(
        default=4, ge=0,
        description="Seed: fewer different jamo than this is gibberish (not applied when the answer "
        "has digits: '3번').")
    ko_morphemes: _resources.Analyser = Field(
        default="auto",
        description="Morpheme check: 'kiwi', 'off' or 'auto' (kiwi when kiwipiepy is installed).")
    ko_whitelist: frozenset[str] = Field(
        default=DEFAULT_KO_WHITELIST,
        description="Seed: short chat forms always kept (ㅇㅇ, ㅇㅋ, 네); runs of ㅋ ㅎ ㅠ ㅜ are "
        "set aside in any case.")
    empty_is_gibberish: bool = Field(
        default=True,
        description="Flag an empty answer (reason 'empty'): there is nothing to score.")
    mixed_script_share: float = Field(
        default=0.25, gt=0, le=0.5,
        description="Note 'mixed_script' when the smaller of Hangul and Latin holds at least this "
        "share of the letters.")


DEFAULT_THRESHOLDS = GibberishThresholds()


class GibberishResult(BaseModel):
    """The verdict on one answer, with every measurement the rules used (None = not measured)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    lang: Language
    gibberish: bool
    reasons: tuple[Reason, ...] = ()
    notes: tuple[Note, ...] = ()
    log_likelihood: float | None = None
    valid_word_ratio: float | None = None
    longest_class_run: int | None = None
    complete_syllable_ratio: float | None = None
    distinct_jamo: int | None = None
    morpheme_found: bool | None = None


def _check_options(thresholds: GibberishThresholds) -> None:
    """Fail on a missing optional package before the first answer, not halfway through a file."""
    _resources.resolve_dictionary(thresholds.en_dictionary)
    if thresholds.ko_morphemes == "kiwi" and not _resources.kiwi_available():
        _resources.morpheme_analyser("kiwi")  # raises with the install hint


def detect(text: str, *, lang: LanguageChoice = "auto",
           thresholds: GibberishThresholds = DEFAULT_THRESHOLDS) -> GibberishResult:
    """Judge one answer. ``lang="auto"`` picks the pipeline from the script of the text; "en" or
    "ko" applies that pipeline to every answer, flagging answers with none of its letters."""
    _check_options(thresholds)
    return _detect(text, lang, thresholds)


def detect_many(texts: Iterable[str], *, lang: LanguageChoice = "auto",
                thresholds: GibberishThresholds = DEFAULT_THRESHOLDS) -> list[GibberishResult]:
    """Judge many answers with the same options; results come back in input order."""
    _check_options(thresholds)
    return [_detect(text, lang, thresholds) for text in texts]


def markov_log_likelihood(text: str, *, lang: Literal["en", "ko"]) -> float | None:
    """The bare Markov score (no rules, no exceptions): the seed's Markov-only baseline."""
    symbols = english_symbols(text) if lang == "en" else korean_symbols(text)
    return _resources.bigram_model(lang).mean_log_likelihood(symbols)


def _detect(text: str, choice: LanguageChoice, thresholds: GibberishThresholds) -> GibberishResult:
    if not text.strip():
        return GibberishResult(text=text, lang="none", gibberish=thresholds.empty_is_gibberish,
                               reasons=("empty",) if thresholds.empty_is_gibberish else ())
    counts = count_scripts(text)
    lang = language_of(counts) if choice == "auto" else choice
    notes: tuple[Note, ...] = ()
    if choice == "auto" and is_mixed_script(counts, minority_share=thresholds.mixed_script_share):
        notes = ("mixed_script",)
    if lang == "en":
        return _english(text, thresholds, notes)
    if lang == "ko":
        return _korean(text, thresholds, notes)
    if lang == "other":
        return GibberishResult(text=text, lang="other", gibberish=False, notes=("unsupported_language",))
    if any(char.isdigit() for char in text):
        return GibberishResult(text=text, lang="none", gibberish=False, notes=("numeric",))
    return GibberishResult(text=text, lang="none", gibberish=True, reasons=("no_letters",))


def _no_letters_of(lang: Literal["en", "ko"], text: str) -> GibberishResult:
    reason: Reason = "wrong_script" if count_scripts(text).letters else "no_letters"
    if reason == "no_letters" and any(char.isdigit() for char in text):
        return GibberishResult(text=text, lang=lang, gibberish=False, notes=("numeric",))
    return GibberishResult(text=text, lang=lang, gibberish=True, reasons=(reason,))


def _english(text: str, thresholds: GibberishThresholds, notes: tuple[Note, ...]) -> GibberishResult:
    is_word = _resources.word_checker(thresholds.en_dictionary, thresholds.en_min_word_zipf)
    signals = english_signals(text, is_word, thresholds.en_slang)
    if not signals.symbols.strip():
        return _no_letters_of("en", text)
    likelihood = _resources.bigram_model("en").mean_log_likelihood(signals.symbols)
    unlikely = likelihood is not None and likelihood < thresholds.en_min_log_likelihood
    ratio = signals.valid_word_ratio
    few_words = ratio is not None and ratio < thresholds.en_min_valid_word_ratio
    if signals.nonstandard:
        # Seed exception: slang and stretched words stay unless both statistics fail.
        if "slang" in signals.kinds:
            notes += ("slang",)
        if "elongated" in signals.kinds:
            notes += ("elongation",)
        if not (unlikely and few_words):
            unlikely = few_words = False
    fired = (("low_likelihood", unlikely), ("few_valid_words", few_words),
             ("char_class_run", signals.longest_class_run > thresholds.en_max_class_run))
    reasons = tuple(name for name, hit in fired if hit)
    return GibberishResult(text=text, lang="en", gibberish=bool(reasons), reasons=reasons,  # type: ignore[arg-type]
                           notes=notes, log_likelihood=likelihood, valid_word_ratio=ratio,
                           longest_class_run=signals.longest_class_run)


def _korean(text: str, thresholds: GibberishThresholds, notes: tuple[Note, ...]) -> GibberishResult:
    signals = korean_signals(text, thresholds.ko_whitelist)
    if signals.whitelisted:
        return GibberishResult(text=text, lang="ko", gibberish=False, notes=(*notes, "whitelisted"))
    if not signals.remaining:
        return _no_letters_of("ko", text)
    likelihood = _resources.bigram_model("ko").mean_log_likelihood(korean_symbols(signals.remaining))
    ratio, distinct = signals.complete_syllable_ratio, signals.distinct_jamo
    fired = [name for name, hit in (
        ("low_likelihood", likelihood is not None and likelihood < thresholds.ko_min_log_likelihood),
        ("incomplete_syllables", ratio is not None and ratio < thresholds.ko_min_complete_syllable_ratio),
        # A number with its counter ("3번", "5점") is short by nature, not repetitive noise.
        ("few_distinct_jamo", distinct is not None and distinct < thresholds.ko_min_distinct_jamo
         and not any(char.isdigit() for char in text)),
    ) if hit]
    morpheme_found = None
    analyser = _resources.morpheme_analyser(thresholds.ko_morphemes)
    if analyser is None:
        notes += ("morpheme_check_skipped",)
    elif not fired:
        # The analyser is the slowest step and only matters for answers the cheap rules passed.
        morpheme_found = has_content_morpheme(analyser, signals.remaining)
        if not morpheme_found:
            fired.append("no_morpheme")
    return GibberishResult(text=text, lang="ko", gibberish=bool(fired), reasons=tuple(fired),  # type: ignore[arg-type]
                           notes=notes, log_likelihood=likelihood, complete_syllable_ratio=ratio,
                           distinct_jamo=distinct, morpheme_found=morpheme_found)
