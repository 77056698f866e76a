"""The gibberish filter: thresholds, the per-answer result, and ``detect`` / ``detect_many``.

An answer is gibberish when any rule of its language fires (seed 000, appendix A). Rules report
by name in ``reasons``; exceptions that kept an answer (slang, elongation, whitelist) and checks
that could not run are listed in ``notes``, so every decision can be read back.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from convoscope.filters import _resources
from convoscope.filters._english import (
    DEFAULT_SLANG,
    EnglishStats,
    ascii_tokens,
    english_stats,
    english_symbols,
    token_scorer,
)
from convoscope.filters._korean import (
    DEFAULT_KO_WHITELIST,
    has_content_morpheme,
    has_content_morphemes,
    korean_signals,
    korean_symbols,
)
from convoscope.filters._langid import count_scripts, is_mixed_script, language_of
from convoscope.filters._multilingual import other_language_rules
from convoscope.filters._routing import (
    acronyms_only,
    choice_for,
    cjk_language,
    language_code,
    short_foreign,
    word_checker_for,
)
from convoscope.text import fold

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
    "keyboard_mash",  # any language: most letters slide along a keyboard row (asdf, hjkl)
    "repeated_characters",  # any language: most letters are one letter repeated (aaaaaa)
    "few_distinct_letters",  # any language: a long answer made of one or two letters
    "repeated_pattern",  # any language: one short stretch typed over and over (asdasdasd)
    "rare_characters",  # Han text: most characters are used by no common word (靐齉爩)
    "gibberish_segment",  # one sentence or segment is gibberish though the whole passed
]
Note = Literal[
    "slang",  # en: abbreviations, chat words or laughter were present (and counted as words)
    "elongation",  # en: a stretched word (sooo) was read as the word
    "whitelisted",  # ko: the whole answer is chat markers or whitelisted short forms
    "mixed_script",  # Hangul and Latin letters both hold a sizeable share
    "unsupported_language",  # no bigram model: language-neutral rules and the wordfreq word list
    "language_id_unavailable",  # py3langid is not installed: the script chose the pipeline
    "numeric",  # digits but no letters: a number is a legitimate answer
    "morpheme_check_skipped",  # ko: the analyser is off or not installed
    "declared_language",  # the answer's declared language chose the rules, not identification
]
LanguageChoice = str
"""``auto`` (identify), or the ISO 639 code of the answers' language (``en``, ``ko``, ``pt``,
``pt-BR``, ``ja``...): English and Korean have their own models, every other language gets the
language-neutral rules and its wordfreq word list."""


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
    ko_morpheme_max_words: int = Field(
        default=2, ge=0,
        description="Not in the seed: run the morpheme check only on answers of at most this "
        "many words (eojeol). The check catches short syllable salad (아러아러); longer answers "
        "that pass the statistical rules have never needed it on our sets, and the analyser is "
        "the slowest step (~2,000 lines/s).")
    empty_is_gibberish: bool = Field(
        default=True,
        description="Flag an empty answer (reason 'empty'): there is nothing to score.")
    language_id: Literal["auto", "off"] = Field(
        default="auto",
        description="Identify the language of Latin-script and other answers with py3langid "
        "(when installed) so that answers in languages without a model are only judged by "
        "language-neutral rules; 'off' chooses by script alone.")
    other_min_probability: float = Field(
        default=0.5, ge=0, le=1,
        description="An answer is taken to be in another language when py3langid gives that "
        "language at least this probability.")
    en_sure_word_ratio: float = Field(
        default=0.75, ge=0, le=1,
        description="A plain-ASCII answer the English rules pass with at least this share of "
        "English words is English without asking the identifier (the fast path).")
    neutral_max_noise_share: float = Field(
        default=0.5, ge=0, le=1,
        description="Language-neutral rules: more than this share of letters in keyboard-row runs "
        "or in repeated-letter runs is gibberish.")
    segments: bool = Field(
        default=True,
        description="Also judge each sentence of a multi-sentence answer, so a gibberish "
        "fragment is not hidden by a fluent sentence (reason 'gibberish_segment').")
    mixed_script_share: float = Field(
        default=0.25, gt=0, le=0.5,
        description="Note 'mixed_script' when the smaller of Hangul and Latin holds at least this "
        "share of the letters.")


DEFAULT_THRESHOLDS = GibberishThresholds()


class GibberishResult(BaseModel):
    """The verdict on one answer, with every measurement the rules used (None = not measured)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    lang: str = Field(description="ISO 639 code (en, ko, pt, ...), 'other' when the language "
                      "could not be told, 'none' when the answer has no letters.")
    gibberish: bool
    reasons: tuple[Reason, ...] = ()
    notes: tuple[Note, ...] = ()
    log_likelihood: float | None = None
    valid_word_ratio: float | None = None
    longest_class_run: int | None = None
    complete_syllable_ratio: float | None = None
    distinct_jamo: int | None = None
    morpheme_found: bool | None = None
    language_probability: float | None = None
    segment: str | None = Field(default=None, description="The gibberish segment, when one was.")


def _check_options(thresholds: GibberishThresholds) -> None:
    """Fail on a missing optional package before the first answer, not halfway through a file."""
    _resources.resolve_dictionary(thresholds.en_dictionary)
    if thresholds.ko_morphemes == "kiwi" and not _resources.kiwi_available():
        _resources.morpheme_analyser("kiwi")  # raises with the install hint


def detect(text: str, *, lang: LanguageChoice = "auto",
           thresholds: GibberishThresholds = DEFAULT_THRESHOLDS) -> GibberishResult:
    """Judge one answer. ``lang="auto"`` picks the pipeline from the script of the text (and
    py3langid for Latin letters that may not be English); "en" or "ko" applies that pipeline,
    flagging answers with none of its letters; any other code ("pt", "ja") is the answer's
    language: its word list and the language-neutral rules judge it, with no identification."""
    _check_options(thresholds)
    choice = language_code(lang)
    result = _detect(text, choice, thresholds)
    return result if choice in ("auto", "en", "ko") else _declared(result)


def detect_many(texts: Iterable[str], *, lang: LanguageChoice = "auto",
                languages: Sequence[str | None] | None = None,
                thresholds: GibberishThresholds = DEFAULT_THRESHOLDS) -> list[GibberishResult]:
    """Judge many answers with the same options; results come back in input order. Repeated
    answers (survey exports repeat "no", "good", "n/a" a lot) are judged once.

    ``languages`` gives each answer's declared language (a survey's language column; None or ""
    where unknown). A declared language wins over identification; only the script can overrule
    it (Hangul is judged as Korean, and an answer declared Korean without Hangul is identified)."""
    _check_options(thresholds)
    texts = list(texts)
    if languages is None:
        choice = language_code(lang)
        found = _judge_distinct(texts, choice, thresholds)
        return found if choice in ("auto", "en", "ko") else [_declared(r) for r in found]
    declared = list(languages)
    if len(declared) != len(texts):
        raise ValueError(f"{len(declared)} declared languages for {len(texts)} answers")
    choices = [choice_for(text, language_code(given or ""), language_code(lang))
               for text, given in zip(texts, declared, strict=True)]
    results: list[GibberishResult | None] = [None] * len(texts)
    for choice in dict.fromkeys(choice for choice, _ in choices):
        indexes = [index for index, (wanted, _) in enumerate(choices) if wanted == choice]
        for index, result in zip(indexes, _judge_distinct([texts[i] for i in indexes], choice, thresholds),
                                 strict=True):
            results[index] = _declared(result) if choices[index][1] else result
    return [result for result in results if result is not None]


def _declared(result: GibberishResult) -> GibberishResult:
    if "declared_language" in result.notes:
        return result
    return result.model_copy(update={"notes": (*result.notes, "declared_language")})


def _judge_distinct(texts: list[str], lang: str, thresholds: GibberishThresholds) -> list[GibberishResult]:
    distinct = list(dict.fromkeys(texts))
    if len(distinct) == len(texts):
        return _judge_all(texts, lang, thresholds)
    verdicts = dict(zip(distinct, _judge_all(distinct, lang, thresholds), strict=True))
    return [verdicts[text] for text in texts]


def _judge_all(texts: list[str], lang: LanguageChoice,
               thresholds: GibberishThresholds) -> list[GibberishResult]:
    pending: list[tuple[int, str]] = []
    results = []
    ascii_english = _ascii_english(thresholds, lang) if lang in ("auto", "en") else None
    prepared = None
    if ascii_english is not None and ascii_english.ask_language:
        prepared = ascii_english.ahead(texts)
    for index, text in enumerate(texts):
        if ascii_english is not None and text.isascii():
            fast = ascii_english.judge(text, prepared[index] if prepared is not None else None)
            if fast is not None:
                results.append(fast)
                continue
        before = len(pending)
        results.append(_detect(text, lang, thresholds, pending, ascii_english))
        if len(pending) > before:
            pending[-1] = (index, pending[-1][1])
            if results[-1].gibberish:  # a gibberish segment decided it already
                pending.pop()
    if ascii_english is not None:
        ascii_english.prepared.clear()  # sentences prepared for answers that did not need them
    if pending:
        # One batch call: Kiwi tokenises a list many times faster than line by line.
        analyser = _resources.morpheme_analyser(thresholds.ko_morphemes)
        found = has_content_morphemes(analyser, [remaining for _, remaining in pending])
        for (index, _), has_morpheme in zip(pending, found, strict=True):
            result = results[index]
            update: dict[str, object] = {"morpheme_found": has_morpheme}
            if not has_morpheme:
                update |= {"gibberish": True, "reasons": (*result.reasons, "no_morpheme")}
            results[index] = result.model_copy(update=update)
    return results


def markov_log_likelihood(text: str, *, lang: Literal["en", "ko"]) -> float | None:
    """The bare Markov score (no rules, no exceptions): the seed's Markov-only baseline."""
    symbols = english_symbols(text) if lang == "en" else korean_symbols(text)
    return _resources.bigram_model(lang).mean_log_likelihood(symbols)


def _detect(text: str, choice: LanguageChoice, thresholds: GibberishThresholds,
            pending: list[tuple[int, str]] | None = None,
            fast: _AsciiEnglish | None = None) -> GibberishResult:
    """``pending`` collects Korean text whose morpheme check is left to a batch call; ``fast``, the
    batch path for these thresholds and choice, judges text that folds to plain ASCII, and
    plain-ASCII sentences with its kept verdicts (the same results as the general path's). The
    rules read the text layer's folded form (NFKC, format characters dropped, confusables
    folded; case kept) and the result names the text as it arrived."""
    if not text.isascii():
        readable = fold(text, casefold=False)
        if readable != text:  # folded to plain ASCII ("It’s"): the batch path's, when there is one
            found = fast.judge(readable) if fast is not None and readable.isascii() else None
            if found is None:
                found = _detect(readable, choice, thresholds, pending, fast)
            return found.model_copy(update={"text": text})
    whole = _detect_whole(text, choice, thresholds, pending)
    if whole.gibberish or not thresholds.segments or whole.lang not in ("en", "ko"):
        return whole
    if whole.lang == "en" and whole.valid_word_ratio == 1.0 and (whole.longest_class_run or 0) <= 4:
        return whole  # every token is a word, slang or an elongation: no segment can be noise
    segments = _segments(text)
    if not segments:
        return whole
    # Segments get the statistical rules only: the morpheme check already saw the whole text.
    quick = _without_morphemes(thresholds)
    for segment in segments:
        if fast is not None and segment.isascii():
            flagged = fast.flags(segment)
        else:
            part = _detect_whole(segment, choice, quick)
            flagged = part.gibberish and _counts_as_fragment(part)
        if flagged:
            return whole.model_copy(update={"gibberish": True, "reasons": ("gibberish_segment",),
                                            "segment": segment})
    return whole


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


# The batch path for plain-ASCII answers ------------------------------------------------------
# Most survey answers are plain ASCII English that the English rules decide without the
# language identifier. For those, ``_AsciiEnglish`` runs the steps of ``_detect`` ->
# ``_detect_whole`` -> ``_english`` -> ``_unless_another_language`` with the thresholds read
# once per batch and no result object until the verdict; an answer it cannot call English by
# itself is handed to py3langid from there, with the figures already found (``_identified``); an
# answer without letters returns None and goes the general way. The general path stays the
# reference: tests/filters/test_gibberish_speed_paths.py checks both give equal results.

# The fields set (pydantic's ``model_fields_set``) of the results ``_english`` builds, and of
# ``_detect``'s copy that names a gibberish segment. One set is shared by every result: pydantic
# only changes the set of a fresh copy (``model_copy``), and the results are frozen; a new set
# per answer costs more than half a microsecond.
_ENGLISH_FIELDS = {"text", "lang", "gibberish", "reasons", "notes", "log_likelihood",
                   "valid_word_ratio", "longest_class_run"}
_SEGMENT_FIELDS = _ENGLISH_FIELDS | {"segment"}
# The same after ``_unless_another_language``'s copy that sets the identifier's probability.
_IDENTIFIED_FIELDS = _ENGLISH_FIELDS | {"language_probability"}
_IDENTIFIED_SEGMENT_FIELDS = _IDENTIFIED_FIELDS | {"segment"}
_new_model = object.__new__
_set_attribute = object.__setattr__


def _english_result(text: str, gibberish: bool, reasons: tuple[Reason, ...], notes: tuple[Note, ...],
                    stats: EnglishStats, segment: str | None, identified: bool = False,
                    probability: float | None = None) -> GibberishResult:
    """The GibberishResult ``_english`` (and, with a segment, ``_detect``'s copy; ``identified``:
    ``_unless_another_language``'s copy with the probability) would give, built without
    validating again what is valid by construction (str, bool, tuples of known names, floats, an
    int): validation costs about as much as the English rules themselves. Same field values and
    the same fields set, so results compare and dump equal."""
    result = _new_model(GibberishResult)
    _set_attribute(result, "__dict__", {
        "text": text, "lang": "en", "gibberish": gibberish, "reasons": reasons, "notes": notes,
        "log_likelihood": stats.log_likelihood, "valid_word_ratio": stats.valid_word_ratio,
        "longest_class_run": stats.longest_class_run, "complete_syllable_ratio": None,
        "distinct_jamo": None, "morpheme_found": None, "language_probability": probability,
        "segment": segment})
    if identified:
        fields = _IDENTIFIED_FIELDS if segment is None else _IDENTIFIED_SEGMENT_FIELDS
    else:
        fields = _ENGLISH_FIELDS if segment is None else _SEGMENT_FIELDS
    _set_attribute(result, "__pydantic_fields_set__", fields)
    _set_attribute(result, "__pydantic_extra__", None)
    _set_attribute(result, "__pydantic_private__", None)
    return result


_Found = tuple[bool, tuple[Reason, ...], tuple[Note, ...], EnglishStats]  # the English rules' verdict
_Prepared = tuple[_Found, bool, list[str] | None]  # (verdict, py3langid to ask, sentences to judge)


class _AsciiEnglish:
    """English rules on plain-ASCII answers for one set of thresholds and language choice."""

    def __init__(self, thresholds: GibberishThresholds, choice: LanguageChoice) -> None:
        is_word = _resources.word_checker(thresholds.en_dictionary, thresholds.en_min_word_zipf)
        self.scorer = token_scorer(is_word, thresholds.en_slang, _resources.bigram_model("en"),
                                   byte_keys=True)
        self.min_log_likelihood = thresholds.en_min_log_likelihood
        self.min_valid_word_ratio = thresholds.en_min_valid_word_ratio
        self.max_class_run = thresholds.en_max_class_run
        self.sure_word_ratio = thresholds.en_sure_word_ratio
        # "en" applies the English rules as they are; "auto" asks whether Latin letters are English.
        self.ask_language = choice == "auto" and thresholds.language_id != "off"
        self.segments = thresholds.segments
        self.thresholds = thresholds
        self.choice = choice
        self.quick = _without_morphemes(thresholds)
        self.segment_flags: dict[str, bool] = {}  # segment -> whether it flags its answer (a fragment)
        self.prepared: dict[str, tuple[_Found, bool]] = {}  # this chunk's sentences: (verdict, unsure)

    def verdict(self, text: str) -> tuple[bool, tuple[Reason, ...], tuple[Note, ...], EnglishStats] | None:
        """(gibberish, reasons, notes, figures) of the English rules on the whole text, or None
        when it has no letters or py3langid must decide whether it is English."""
        judged = self._judged(text)
        return None if judged is None or judged[1] else judged[0]

    def _judged(self, text: str) -> tuple[_Found, bool] | None:
        """The English rules' verdict on plain-ASCII ``text`` and whether py3langid must say if
        it is English; None when it has no letters (empty, digits or punctuation)."""
        tokens = ascii_tokens(text)
        if not tokens:
            return None
        found = self._rules(text, tokens)
        return found, self._unsure(text, found)

    def _unsure(self, text: str, found: _Found) -> bool:
        """Whether py3langid must say if the text is English (``_unless_another_language``'s test)."""
        return self.ask_language and (
            found[0] or (found[3].valid_word_ratio or 0.0) < self.sure_word_ratio
            or not _has_function_word_lowered(text.lower()))

    def _rules(self, text: str, tokens: list[bytes]
               ) -> tuple[bool, tuple[Reason, ...], tuple[Note, ...], EnglishStats]:
        """``_english``'s verdict on text with letters."""
        stats = self.scorer.stats(tokens)
        likelihood, ratio = stats.log_likelihood, stats.valid_word_ratio
        unlikely = likelihood is not None and likelihood < self.min_log_likelihood
        few_words = ratio is not None and ratio < self.min_valid_word_ratio
        notes: tuple[Note, ...] = ()
        if stats.slang or stats.elongated:
            unlikely, few_words, notes = _slang_exception(stats, unlikely, few_words)
        long_run = stats.longest_class_run > self.max_class_run
        reasons: tuple[Reason, ...] = ()
        if unlikely or few_words or long_run:
            fired = (("low_likelihood", unlikely), ("few_valid_words", few_words),
                     ("char_class_run", long_run))
            reasons = tuple(name for name, hit in fired if hit)  # type: ignore[misc]
            if acronyms_only(text, self.quick.neutral_max_noise_share):
                reasons, notes = (), (*notes, "slang")
        return bool(reasons), reasons, notes, stats

    def ahead(self, texts: list[str]) -> list[_Prepared | None]:
        """The English rules' verdict on each plain-ASCII answer with letters (None for the
        others), whether py3langid must be asked, and its sentences when they will be looked at;
        the sentences' verdicts are kept in ``prepared``. Every answer and sentence py3langid
        will be asked about is scored first, one after another (``identify_ahead``)."""
        prepared: list[_Prepared | None] = []
        asked: list[str] = []
        for text in texts:
            judged = self._judged(text) if text.isascii() else None
            if judged is None:
                prepared.append(None)
                continue
            found, unsure = judged
            if unsure:
                asked.append(text)
            segments = self._segments_to_check(text, found)
            prepared.append((found, unsure, segments))
            for segment in segments or ():
                if segment in self.segment_flags or segment in self.prepared:
                    continue
                sentence = self._judged(segment)
                if sentence is not None:
                    self.prepared[segment] = sentence
                    if sentence[1]:
                        asked.append(segment)
        _resources.identify_ahead(asked)
        return prepared

    def _segments_to_check(self, text: str, found: _Found) -> list[str] | None:
        """``_detect``'s sentences to judge one by one when the answer is judged English, or
        None when none are (flagged already, segments off, or every token a word)."""
        stats = found[3]
        if found[0] or not self.segments or (stats.valid_word_ratio == 1.0 and stats.longest_class_run <= 4):
            return None
        return _segments(text)

    def judge(self, text: str, prepared: _Prepared | None = None) -> GibberishResult | None:
        """``_detect``'s result for a plain-ASCII answer, or None for one without letters;
        ``prepared``: what ``ahead`` found for it."""
        if prepared is None:
            judged = self._judged(text)
            if judged is None:
                return None
            found, unsure = judged
            segments = self._segments_to_check(text, found)
        else:
            found, unsure, segments = prepared
        if not unsure:
            return self._finished(text, found, segments)
        gibberish, reasons, notes, stats = found
        other, identified = self._elsewhere(text, gibberish, self.thresholds)
        if other is not None:
            return other
        if identified is None:
            return self._finished(text, (gibberish, reasons, (*notes, "language_id_unavailable"), stats),
                                  segments)
        code, probability = identified
        return self._finished(text, found, segments, True, probability if code == "en" else None)

    def _elsewhere(self, text: str, gibberish: bool, thresholds: GibberishThresholds
                   ) -> tuple[GibberishResult | None, tuple[str, float] | None]:
        """``_unless_another_language`` after the English rules' verdict already found (no second
        scoring, no result to validate and copy): (the result when the text is taken for another
        language, else None; py3langid's answer, None when it is not installed)."""
        identified = _resources.identify(text)
        if identified is None:
            return None, None
        return _another_language(text, gibberish, thresholds, identified), identified

    def _finished(self, text: str, found: _Found, segments: list[str] | None,
                  identified: bool = False, probability: float | None = None) -> GibberishResult:
        """The result of an answer judged English, after ``_detect``'s look at its sentences
        (``segments``: ``_segments_to_check``'s)."""
        gibberish, reasons, notes, stats = found
        for segment in segments or ():
            if self.flags(segment):
                return _english_result(text, True, ("gibberish_segment",), notes, stats, segment,
                                       identified, probability)
        return _english_result(text, gibberish, reasons, notes, stats, None, identified, probability)

    def flags(self, segment: str) -> bool:
        """Whether a segment is a gibberish fragment (``_detect``'s segment test), kept per
        segment: the verdict depends on the segment and the thresholds alone."""
        known = self.segment_flags.get(segment)
        if known is not None:
            return known
        ready = self.prepared.pop(segment, None)  # found by ``ahead``
        if ready is None:
            ready = self._judged(segment)
        if ready is None:  # no letters: the general path
            part = _detect_whole(segment, self.choice, self.quick)
            known = part.gibberish and _counts_as_fragment(part)
        else:
            found, unsure = ready
            other = self._elsewhere(segment, found[0], self.quick)[0] if unsure else None
            if other is not None:
                known = other.gibberish and _counts_as_fragment(other)
            else:
                known = found[0] and _is_fragment(found[1], segment)
        if len(self.segment_flags) < _SEGMENT_MEMO_LIMIT:
            self.segment_flags[segment] = known
        return known


# Sentences recur across answers ("Thank you.", "That's cool.": 20,037 distinct of 43,272 checked
# on the benchmark's 50,000 chat lines), and the ones the fast path cannot decide ("Adorei.",
# "Asdfg qwert.": no English function word) go through the identifier, about 0.25 ms each; a
# verdict depends on the segment and the thresholds alone, so it is kept, up to this many.
_SEGMENT_MEMO_LIMIT = 100_000


@functools.lru_cache(maxsize=8)
def _ascii_english(thresholds: GibberishThresholds, choice: LanguageChoice) -> _AsciiEnglish:
    return _AsciiEnglish(thresholds, choice)
