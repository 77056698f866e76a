"""`convoscope gibberish --lang auto` (issue 39): a plain-ASCII answer the English fast path cannot
call English by itself (no English function word, too few English words, or flagged) went the
general path again after the fast path had scored it: its tokens scored a second time, a result
validated by pydantic and copied for the probability, and each of its sentences judged anew. The
fast path now asks py3langid itself, with the figures it has, and gives the general path's result
field for field. Checked by counting entries to the general path, not by timing."""

import sys

import pytest

from convoscope.filters import (
    DEFAULT_THRESHOLDS,
    GibberishThresholds,
    _fast_english,
    _filter,
    _general,
    _resources,
    detect_many,
)
from convoscope.filters._fast_english import _ascii_english

# No English function word ("Fenway Park history"), flagged ("Qwrtzp xkcdvbn"), English with a
# mashed sentence, Portuguese and German (identified as such), a short answer in another
# language that the English rules flag ("adorei"), and sentences met twice.
ANSWERS = ["Fenway Park history", "Qwrtzp xkcdvbn fhgjt", "Great food. Asdfg qwert zxcvb.",
           "Muito bom, gostei bastante", "Das Essen war sehr gut", "adorei", "Quite a claim to fame.",
           "Big men problems! Dang, thats crazy.", "Pretty sad. Quite a claim to fame.",
           "Tom Brady rocks. Zxcvbnm qwerty.", "Haha wow so odd",
           "We stayed at the Kerrowdale. Quite a claim to fame. Asdfg qwert zxcvb."]


def _reference(texts, thresholds):
    return [_filter._detect(text, "auto", thresholds) for text in texts]


def _patch_where_called(monkeypatch, function, replacement):
    """Put ``replacement`` in place of ``function`` in every filters module that calls it by its
    bare name (the general path in ``_filter``, the fast path in ``_fast_english``): a patch on one
    module alone would miss the calls from the other, and the test would check nothing."""
    holders = [module for name, module in sorted(sys.modules.items())
               if name.startswith("convoscope.filters")
               and getattr(module, function.__name__, None) is function]
    for module in holders:
        monkeypatch.setattr(module, function.__name__, replacement)
    return holders


@pytest.mark.parametrize("options", [{}, {"segments": False}, {"en_sure_word_ratio": 0.9}])
def test_answers_sent_to_the_identifier_get_the_general_paths_results(options):
    thresholds = GibberishThresholds(**options)
    _ascii_english.cache_clear()
    try:
        found = detect_many(ANSWERS, thresholds=thresholds)
    finally:
        _ascii_english.cache_clear()
    for result, reference in zip(found, _reference(ANSWERS, thresholds), strict=True):
        assert result.model_dump() == reference.model_dump(), reference.text
        assert result.model_fields_set == reference.model_fields_set
        assert list(result.__dict__) == list(reference.__dict__)
    assert {r.lang for r in found} > {"en"}  # some answers were taken for another language


def test_an_ascii_answer_sent_to_the_identifier_is_not_judged_again_on_the_general_path(monkeypatch):
    pytest.importorskip("py3langid")
    general: list[str] = []
    detect_one = _filter._detect
    assert _filter in _patch_where_called(monkeypatch, detect_one,
                                          lambda text, *rest: general.append(text) or detect_one(text, *rest))
    asked: list[str] = []
    identify = _resources.identify
    monkeypatch.setattr(_resources, "identify", lambda text: asked.append(text) or identify(text))
    _ascii_english.cache_clear()
    try:
        detect_many(ANSWERS)
    finally:
        _ascii_english.cache_clear()
    assert "Fenway Park history" in asked and "Qwrtzp xkcdvbn fhgjt" in asked
    assert general == []


def test_without_the_identifier_the_answer_says_so_as_on_the_general_path(monkeypatch):
    monkeypatch.setattr(_resources, "identify", lambda text: None)
    _ascii_english.cache_clear()
    try:
        found = detect_many(ANSWERS)
        reference = _reference(ANSWERS, DEFAULT_THRESHOLDS)
    finally:
        _ascii_english.cache_clear()
    assert [r.model_dump() for r in found] == [r.model_dump() for r in reference]
    assert [r.model_fields_set for r in found] == [r.model_fields_set for r in reference]
    assert "language_id_unavailable" in found[0].notes


@pytest.fixture
def general_path(monkeypatch):
    """(the texts the general path, ``_detect_whole``, is asked to judge; the function itself; a
    function that puts it back), with the fast path's kept verdicts emptied before and after."""
    asked: list[str] = []
    whole = _general._detect_whole
    holders = _patch_where_called(monkeypatch, whole,
                                  lambda text, *rest: asked.append(text) or whole(text, *rest))
    assert {_filter, _fast_english} <= set(holders)  # called from the general path and the fast path

    def restore():
        for module in holders:
            monkeypatch.setattr(module, "_detect_whole", whole)

    _ascii_english.cache_clear()
    yield asked, whole, restore
    _ascii_english.cache_clear()


def test_a_sentence_sent_to_the_identifier_is_not_judged_again_on_the_general_path(monkeypatch,
                                                                                   general_path):
    """The same for the sentences of an answer ("Asdfg qwert zxcvb.", "Quite a claim to fame."):
    identified from the fast path, their verdicts those of ``_detect_whole`` alone."""
    pytest.importorskip("py3langid")
    general, whole, restore = general_path
    fast = _ascii_english(DEFAULT_THRESHOLDS, "auto")
    for answer in ANSWERS:
        fast.judge(answer)
    assert general == []
    restore()
    quick = _general._without_morphemes(DEFAULT_THRESHOLDS)
    # The sentences the English rules alone do not settle: no letters, or py3langid was asked.
    undecided = [segment for segment in fast.segment_flags
                 if (judged := fast._judged(segment)) is None or judged[1]]
    assert "Asdfg qwert zxcvb." in undecided and "Quite a claim to fame." in undecided
    for segment in undecided:
        part = whole(segment, "auto", quick)
        assert fast.segment_flags[segment] == (part.gibberish and _general._counts_as_fragment(part))


# Chat answers with an emoji or a curly quote are not plain ASCII and go the general path, but
# most of their sentences are plain ASCII.
NON_ASCII = ["I just got a matcha latte 🙂 Doing some work at my desk. Quite a claim to fame.",
             "We stayed at the Kerrowdale 🙂 Asdfg qwert zxcvb. Quite a claim to fame.",
             "It’s the Kerrowdale, I think. Dang, thats crazy. The staff were very kind.",
             "감자튀김이 맛있어요. Asdfg qwert zxcvb."]


def test_the_plain_ascii_sentences_of_other_answers_get_the_kept_verdicts(monkeypatch, general_path):
    """A plain-ASCII sentence of an answer that is not plain ASCII is judged by the fast path's
    kept verdicts (once per sentence), not by ``_detect_whole`` on the general path."""
    general, _, restore = general_path
    found = detect_many(NON_ASCII * 2)
    _ascii_english.cache_clear()
    assert [text for text in general if text.isascii()] == []
    assert "Asdfg qwert zxcvb." in [r.segment for r in found]
    restore()
    monkeypatch.setattr(_filter, "_ascii_english", lambda *options: None)  # the general path alone
    reference = detect_many(NON_ASCII * 2)
    assert [r.model_dump() for r in found] == [r.model_dump() for r in reference]
    assert [r.model_fields_set for r in found] == [r.model_fields_set for r in reference]
