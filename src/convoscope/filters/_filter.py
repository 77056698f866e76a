"""The gibberish filter's doors: ``detect`` / ``detect_many`` and the bare Markov score.

An answer is gibberish when any rule of its language fires (seed 000, appendix A). Rules report
by name in ``reasons``; exceptions that kept an answer (slang, elongation, whitelist) and checks
that could not run are listed in ``notes``, so every decision can be read back.

Layers, each importing only those below it: ``_result`` (thresholds, reasons, the result),
``_general`` (the rules on one whole text, the sentence split), ``_fast_english`` (plain-ASCII
English, which calls back into ``_general``), and this module, which sends each answer one way
or the other and looks at its sentences.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from convoscope.filters import _resources
from convoscope.filters._english import english_symbols
from convoscope.filters._fast_english import _ascii_english, _AsciiEnglish
from convoscope.filters._general import _counts_as_fragment, _detect_whole, _segments, _without_morphemes
from convoscope.filters._korean import has_content_morphemes, korean_symbols
from convoscope.filters._result import (
    DEFAULT_THRESHOLDS,
    GibberishResult,
    GibberishThresholds,
    LanguageChoice,
)
from convoscope.filters._routing import choice_for, language_code
from convoscope.text import fold


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
