"""The general path of the gibberish filter: the rules of one text's language applied to the
whole text (an answer, or one of its sentences), and the sentence split with the test of when a
sentence flags its answer.

Every answer can go this way; ``_fast_english`` takes a shortcut for plain-ASCII English and
gives the same results, and ``_filter`` chooses between them. This module imports neither, so
both import it.
"""

from __future__ import annotations

import functools
import re
from typing import Literal

from convoscope.filters import _resources
from convoscope.filters._english import EnglishStats, ascii_tokens, english_stats, token_scorer
from convoscope.filters._korean import has_content_morpheme, korean_signals, korean_symbols
from convoscope.filters._langid import count_scripts, is_mixed_script, language_of
from convoscope.filters._multilingual import other_language_rules
from convoscope.filters._result import GibberishResult, GibberishThresholds, LanguageChoice, Note, Reason
from convoscope.filters._routing import acronyms_only, cjk_language, short_foreign, word_checker_for


@functools.lru_cache(maxsize=8)
def _without_morphemes(thresholds: GibberishThresholds) -> GibberishThresholds:
    return thresholds.model_copy(update={"ko_morphemes": "off"})


_ASCII_LETTER = re.compile(r"[A-Za-z]")
# Both alternatives start on whitespace; the leading look-ahead says so up front, which makes the
# split a third faster and changes no split (checked on the benchmark lines and 200,000 fuzz strings).
_SENTENCE_END = re.compile(r"(?=\s)(?:(?<=[.!?;。！？])\s+|\s*\n+\s*)")


def _segments(text: str) -> list[str]:
    """Sentences (and lines) of a multi-sentence answer; [] for a one-sentence answer."""
    parts = [part for part in _SENTENCE_END.split(text.strip()) if part.strip()]
    return parts if len(parts) > 1 else []


def _counts_as_fragment(part: GibberishResult) -> bool:
    return _is_fragment(part.reasons, part.text)


def _is_fragment(reasons: tuple[Reason, ...], segment: str) -> bool:
    """A segment flags the answer only on strong evidence: a lone unknown word ("Ljubljana.")
    fails the word-share rule but is no mash, so it needs a second rule or a second token."""
    if reasons in (("few_valid_words",), ("empty",), ("no_letters",)):
        return len(segment.split()) >= 2 and reasons == ("few_valid_words",)
    return True


def _detect_whole(text: str, choice: LanguageChoice, thresholds: GibberishThresholds,
                  pending: list[tuple[int, str]] | None = None) -> GibberishResult:
    if not text.strip():
        return GibberishResult(text=text, lang="none", gibberish=thresholds.empty_is_gibberish,
                               reasons=("empty",) if thresholds.empty_is_gibberish else ())
    notes: tuple[Note, ...] = ()
    lang: str
    if choice not in ("auto", "en", "ko"):
        return _other_language(text, thresholds, (choice, None))
    if choice != "auto":
        lang = choice
    elif text.isascii():  # the common case: Latin letters only, never mixed with Hangul
        lang = "en" if _ASCII_LETTER.search(text) else "none"
    else:
        counts = count_scripts(text)
        lang = language_of(counts)
        if is_mixed_script(counts, minority_share=thresholds.mixed_script_share):
            notes = ("mixed_script",)
    if lang == "en":
        result = _english(text, thresholds, notes)
        return result if choice == "en" else _unless_another_language(text, result, thresholds)
    if lang == "ko":
        return _korean(text, thresholds, notes, pending)
    if lang == "other":
        return _other_language(text, thresholds, None)
    if any(char.isdigit() for char in text):
        return GibberishResult(text=text, lang="none", gibberish=False, notes=("numeric",))
    return GibberishResult(text=text, lang="none", gibberish=True, reasons=("no_letters",))


def _identified(text: str, thresholds: GibberishThresholds) -> tuple[str, float] | None:
    return None if thresholds.language_id == "off" else _resources.identify(text)


def _unless_another_language(text: str, english: GibberishResult,
                             thresholds: GibberishThresholds) -> GibberishResult:
    """Latin letters need not be English. A plain-ASCII answer the English rules pass with
    mostly English words is English (no identifier call); otherwise py3langid decides, and an
    answer confidently in another language gets the language-neutral rules instead."""
    sure = (not english.gibberish and text.isascii()
            and (english.valid_word_ratio or 0.0) >= thresholds.en_sure_word_ratio
            and _has_english_function_word(text))
    if sure or thresholds.language_id == "off":
        return english
    found = _identified(text, thresholds)
    if found is None:
        return english.model_copy(update={"notes": (*english.notes, "language_id_unavailable")})
    other = _another_language(text, english.gibberish, thresholds, found)
    if other is not None:
        return other
    code, probability = found
    return english.model_copy(update={"language_probability": probability if code == "en" else None})


def _another_language(text: str, gibberish: bool, thresholds: GibberishThresholds,
                      found: tuple[str, float]) -> GibberishResult | None:
    """The result when py3langid's answer ``found`` takes the text for another language, or the
    English rules' verdict (``gibberish``) leaves it to a short answer in one; None: English."""
    code, probability = found
    if code not in ("en", "zxx") and probability >= thresholds.other_min_probability:
        return _other_language(text, thresholds, found)
    rescued = short_foreign(text, gibberish)
    return None if rescued is None else _other_language(text, thresholds, rescued)


# Common English words that are rare as words of other Latin-script languages ("a", "do", "me",
# "die" are left out: Portuguese, Spanish and German use them all the time).
_ENGLISH_FUNCTION_WORDS = frozenset(
    "the and is was were it i i'm my we you they of for with but not very this that are have "
    "had be really just would could our at he she his her there what when because it's don't "
    "liked like good great nice love loved".split())


# A whitespace-separated word that, stripped of the punctuation .,!?;:"() at its ends, is a
# function word: one regex pass instead of a split and a strip per word.
_FUNCTION_WORD = re.compile(r'(?<!\S)[.,!?;:"()]*(?:'
                            + "|".join(sorted(map(re.escape, _ENGLISH_FUNCTION_WORDS), key=len, reverse=True))
                            + r')[.,!?;:"()]*(?!\S)')


def _has_english_function_word(text: str) -> bool:
    return _has_function_word_lowered(text.lower().replace("\u2019", "'"))


def _has_function_word_lowered(lowered: str) -> bool:
    return _FUNCTION_WORD.search(lowered) is not None or len(lowered.split()) <= 2


def _other_language(text: str, thresholds: GibberishThresholds,
                    found: tuple[str, float | None] | None) -> GibberishResult:
    """A language without a model: only the language-neutral rules, never a flag for the
    language itself."""
    if found is None:
        found = _identified(text, thresholds)
    code, probability = found if found is not None else ("other", None)
    if code == "zxx":  # py3langid's "no linguistic content" on a script we do not model
        code = "other"
    code = cjk_language(text, code)
    if not any(char.isalpha() for char in text):
        numeric = any(char.isdigit() for char in text)
        return GibberishResult(text=text, lang=code, gibberish=not numeric,
                               reasons=() if numeric else ("no_letters",),
                               notes=("numeric",) if numeric else (), language_probability=probability)
    reasons, notes, ratio = other_language_rules(
        text, word_checker_for(_WORD_LIST_CODE.get(code, code)), _resources.cjk_characters,
        max_noise_share=thresholds.neutral_max_noise_share,
        min_valid_word_ratio=thresholds.en_min_valid_word_ratio)
    return GibberishResult(text=text, lang=code, gibberish=bool(reasons), reasons=reasons,  # type: ignore[arg-type]
                           notes=("unsupported_language", *notes), valid_word_ratio=ratio,  # type: ignore[arg-type]
                           language_probability=probability)


# Language identification says "no" (Norwegian) where wordfreq's list is "nb" (Bokmål).
_WORD_LIST_CODE = {"no": "nb"}


def _slang_exception(stats: EnglishStats, unlikely: bool, few_words: bool
                    ) -> tuple[bool, bool, tuple[Note, ...]]:
    """Seed exception: slang and stretched words stay unless both statistics fail. Returns the
    two flags after the exception and the notes saying which words it was for."""
    notes: tuple[Note, ...] = ()
    if stats.slang:
        notes += ("slang",)
    if stats.elongated:
        notes += ("elongation",)
    if not (unlikely and few_words):
        unlikely = few_words = False
    return unlikely, few_words, notes


def _no_letters_of(lang: Literal["en", "ko"], text: str) -> GibberishResult:
    reason: Reason = "wrong_script" if count_scripts(text).letters else "no_letters"
    if reason == "no_letters" and any(char.isdigit() for char in text):
        return GibberishResult(text=text, lang=lang, gibberish=False, notes=("numeric",))
    return GibberishResult(text=text, lang=lang, gibberish=True, reasons=(reason,))


def _english(text: str, thresholds: GibberishThresholds, notes: tuple[Note, ...]) -> GibberishResult:
    is_word = _resources.word_checker(thresholds.en_dictionary, thresholds.en_min_word_zipf)
    if text.isascii():  # the fast path's table (byte keys) already holds these tokens, warm
        stats = token_scorer(is_word, thresholds.en_slang, _resources.bigram_model("en"),
                             byte_keys=True).stats(ascii_tokens(text))
    else:
        stats = english_stats(text, is_word, thresholds.en_slang, _resources.bigram_model("en"))
    if not stats.tokens:
        return _no_letters_of("en", text)
    likelihood = stats.log_likelihood
    unlikely = likelihood is not None and likelihood < thresholds.en_min_log_likelihood
    ratio = stats.valid_word_ratio
    few_words = ratio is not None and ratio < thresholds.en_min_valid_word_ratio
    if stats.slang or stats.elongated:
        unlikely, few_words, kept = _slang_exception(stats, unlikely, few_words)
        notes += kept
    fired = (("low_likelihood", unlikely), ("few_valid_words", few_words),
             ("char_class_run", stats.longest_class_run > thresholds.en_max_class_run))
    reasons = tuple(name for name, hit in fired if hit)
    if reasons and acronyms_only(text, thresholds.neutral_max_noise_share):
        reasons, notes = (), (*notes, "slang")
    return GibberishResult(text=text, lang="en", gibberish=bool(reasons), reasons=reasons,  # type: ignore[arg-type]
                           notes=notes, log_likelihood=likelihood, valid_word_ratio=ratio,
                           longest_class_run=stats.longest_class_run)


def _korean(text: str, thresholds: GibberishThresholds, notes: tuple[Note, ...],
            pending: list[tuple[int, str]] | None = None) -> GibberishResult:
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
    elif not fired and len(signals.remaining.split()) > thresholds.ko_morpheme_max_words:
        pass  # several words that pass every statistical rule: the analyser adds nothing
    elif not fired and pending is not None:
        pending.append((-1, signals.remaining))  # detect_many fills in the index
    elif not fired:
        # The analyser is the slowest step and only matters for answers the cheap rules passed.
        morpheme_found = has_content_morpheme(analyser, signals.remaining)
        if not morpheme_found:
            fired.append("no_morpheme")
    return GibberishResult(text=text, lang="ko", gibberish=bool(fired), reasons=tuple(fired),  # type: ignore[arg-type]
                           notes=notes, log_likelihood=likelihood, complete_syllable_ratio=ratio,
                           distinct_jamo=distinct, morpheme_found=morpheme_found)
