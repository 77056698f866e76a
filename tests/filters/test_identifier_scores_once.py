"""`convoscope gibberish --lang auto` (issue 39, observation 8): py3langid scores a text once per
process, though the filter asks it for the language of a text (``identify``) and then, for a
short flagged answer, for its likeliest languages (``identify_ranked``), and a sentence may recur
in answers the fast path leaves to the general one. Same answers as a fresh identifier."""

import pytest

from convoscope.filters import _resources, detect_many

pytest.importorskip("py3langid")

TEXTS = ["adorei", "lecker", "Das Essen war lecker", "How has your week been?", "adorei",
         "Hard to keep a count. Maybe 25.", "Maybe 25. Hard to keep a count.", "asdf qwer"]


def test_a_text_is_scored_once_for_its_language_and_its_ranking(monkeypatch):
    from py3langid.langid import LanguageIdentifier

    scored: list[str] = []
    raw_score = LanguageIdentifier._raw_score
    monkeypatch.setattr(LanguageIdentifier, "_raw_score",
                        lambda self, text: scored.append(text) or raw_score(self, text))
    _resources.language_identifier.cache_clear()
    try:
        found = [(_resources.identify(text), _resources.identify_ranked(text)) for text in TEXTS]
        again = [(_resources.identify(text), _resources.identify_ranked(text)) for text in TEXTS]
    finally:
        _resources.language_identifier.cache_clear()
    assert len(scored) == len(set(TEXTS))  # 7 distinct texts, asked 32 times
    assert again == found


def test_scores_kept_give_the_answers_of_a_fresh_identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    fresh = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    _resources.language_identifier.cache_clear()
    try:
        for _ in range(2):  # the second round reads the kept scores
            assert [_resources.identify(text) for text in TEXTS] == [
                (str(code), float(p)) for code, p in map(fresh.classify, TEXTS)]
            assert [_resources.identify_ranked(text) for text in TEXTS] == [
                [(str(code), float(p)) for code, p in fresh.rank(text)[:5]] for text in TEXTS]
        detect_many(TEXTS)
    finally:
        _resources.language_identifier.cache_clear()
