"""`convoscope gibberish --lang auto` (issue 39): py3langid scored each answer or sentence the
English rules could not settle when the loop over answers reached it, between English answers that
push its tables out of the processor's caches; they are now scored one after another, ahead of each
chunk's judging (callgrind's cache simulation, 20,000 lines: last-level read misses -42 %,
first-level data and instruction misses -2.4 %, the same instructions within 0.1 %). Checked by the
order of the calls, and by the texts scored ahead being those asked about, not by timing."""

import pytest

from convoscope.filters import _filter, _resources, detect_many
from convoscope.filters._fast_english import _ascii_english

ANSWERS = ["The fries were great", "Fenway Park history", "Qwrtzp xkcdvbn fhgjt",
           "We stayed at the Kerrowdale. Quite a claim to fame. Asdfg qwert zxcvb.",
           "The room was clean and I liked the staff. Quite a claim to fame.",
           "It was fine, the staff were kind. Big men problems! Dang, thats crazy.",
           "Haha wow so odd", "123", ""]


def test_the_answers_and_sentences_to_identify_are_scored_together_before_they_are_judged(monkeypatch):
    pytest.importorskip("py3langid")
    events: list[tuple[str, str]] = []
    identify = _resources.identify
    monkeypatch.setattr(_resources, "identify", lambda text: events.append(("asked", text)) or identify(text))
    ahead = _resources.identify_ahead
    monkeypatch.setattr(_resources, "identify_ahead",
                        lambda texts: events.extend(("ahead", t) for t in texts) or ahead(texts))
    _ascii_english.cache_clear()
    try:
        found = detect_many(ANSWERS)
    finally:
        _ascii_english.cache_clear()
    asked = [text for kind, text in events if kind == "asked"]
    scored = [text for kind, text in events if kind == "ahead"]
    assert "Fenway Park history" in asked and "Quite a claim to fame." in asked
    assert set(asked) == set(scored)  # every text asked about was scored ahead, and no other
    last_ahead = max(index for index, (kind, _) in enumerate(events) if kind == "ahead")
    first_asked = min(index for index, (kind, _) in enumerate(events) if kind == "asked")
    assert last_ahead < first_asked
    monkeypatch.setattr(_filter, "_ascii_english", lambda *options: None)  # the general path alone
    assert [r.model_dump() for r in found] == [r.model_dump() for r in detect_many(ANSWERS)]


def test_scores_kept_ahead_are_the_scores_py3langid_gives():
    pytest.importorskip("py3langid")
    texts = ["Fenway Park history", "Quite a claim to fame.", "Muito bom, gostei bastante"]
    _resources.identify_ahead(texts)
    identifier = _resources.language_identifier()
    for text in texts:
        kept = identifier._decide(text)
        assert kept.tolist() == type(identifier).__mro__[1]._decide(identifier, text).tolist()
