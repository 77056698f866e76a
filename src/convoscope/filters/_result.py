"""The gibberish filter's vocabulary: the reasons and notes a verdict names, every threshold
(``GibberishThresholds``), and the verdict on one answer (``GibberishResult``).

Kept apart from the code that applies the rules (``_general``, ``_fast_english``, ``_filter``) so
that every layer imports it from below.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from convoscope.filters import _resources
from convoscope.filters._english import DEFAULT_SLANG
from convoscope.filters._korean import DEFAULT_KO_WHITELIST

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
