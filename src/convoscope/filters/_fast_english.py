"""The batch path for plain-ASCII answers: the gibberish filter's English fast path.

Most survey answers are plain ASCII English that the English rules decide without the language
identifier. For those, ``_AsciiEnglish`` runs the steps of ``_filter._detect`` ->
``_general._detect_whole`` -> ``_english`` -> ``_unless_another_language`` with the thresholds
read once per batch and no result object until the verdict; an answer it cannot call English by
itself is handed to py3langid from here, with the figures already found (``_identified``); an
answer without letters returns None and goes the general way. The general path stays the
reference: tests/filters/test_gibberish_speed_paths.py checks both give equal results.

Layers: this module calls back into the general path in ``_general`` (a sentence without letters,
the fragment test, the other-language rules) and ``_filter`` calls it; ``_general`` imports
neither, so no import runs in a circle.
"""

from __future__ import annotations

import functools

from convoscope.filters import _resources
from convoscope.filters._english import EnglishStats, ascii_tokens, token_scorer
from convoscope.filters._general import (
    _another_language,
    _counts_as_fragment,
    _detect_whole,
    _has_function_word_lowered,
    _is_fragment,
    _segments,
    _slang_exception,
    _without_morphemes,
)
from convoscope.filters._result import GibberishResult, GibberishThresholds, LanguageChoice, Note, Reason
from convoscope.filters._routing import acronyms_only

# The fields set (pydantic's ``model_fields_set``) of the results ``_english`` builds, and of
# ``_filter._detect``'s copy that names a gibberish segment. One set is shared by every result: pydantic
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
