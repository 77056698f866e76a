"""`convoscope gibberish --lang auto` (issue 39, observation 8): a sentence the English fast path
cannot decide ("Adorei.", "Asdfg qwert.": no English function word) is sent to the language identifier each
time an answer holds it; its verdict depends on the sentence alone, so it is identified once, and
every answer gets the verdict the general path gives it."""

from convoscope.filters import DEFAULT_THRESHOLDS, _filter, _general, _resources, detect
from convoscope.filters._fast_english import _ascii_english

ANSWERS = [f"The staff were very kind and I liked the room {n}. Haha! Cool. Adorei. Asdfg qwert."
           for n in range(40)]


def test_a_sentence_repeated_across_answers_is_identified_once(monkeypatch):
    _ascii_english.cache_clear()
    asked: list[str] = []
    original = _resources.identify
    monkeypatch.setattr(_resources, "identify", lambda text: asked.append(text) or original(text))
    try:
        found = _filter.detect_many(ANSWERS)
    finally:
        _ascii_english.cache_clear()
    assert asked and len(asked) == len(set(asked))  # each undecided sentence once, not 40 times
    assert [r.model_dump() for r in found] == [
        _filter._detect(text, "auto", DEFAULT_THRESHOLDS).model_dump() for text in ANSWERS]


def test_the_kept_verdicts_are_those_of_the_general_path_for_flagged_and_kept_sentences():
    _ascii_english.cache_clear()
    try:
        fast = _ascii_english(DEFAULT_THRESHOLDS, "auto")
        for answer in ANSWERS[:2]:
            fast.judge(answer)
        # The kept segments the fast path cannot decide alone went the general path.
        general = {segment: flagged for segment, flagged in fast.segment_flags.items()
                   if (judged := fast._judged(segment)) is None or judged[1]}
        assert general
        for segment, flagged in general.items():
            part = _general._detect_whole(segment, "auto", _general._without_morphemes(DEFAULT_THRESHOLDS))
            assert flagged == (part.gibberish and _general._counts_as_fragment(part))
        assert detect(ANSWERS[0]).gibberish == any(general.values())
    finally:
        _ascii_english.cache_clear()
