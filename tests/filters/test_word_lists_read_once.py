"""`convoscope gibberish --lang auto` (issue 39, observation 8): each language's word list is read
once per process, however many languages the answers are in and in whatever order they come.
Before, the lists were kept in a cache of 16 that short answers tried more languages than, so the
same lists were read again and again (112 times per 10,000 lines)."""

import pytest

from convoscope.filters import _resources

pytest.importorskip("wordfreq")


def test_every_language_word_list_is_read_once_however_the_languages_alternate(monkeypatch):
    reads = []
    original = _resources._wordfreq_file
    monkeypatch.setattr(_resources, "_wordfreq_file", lambda lang: reads.append(lang) or original(lang))
    _resources.language_words.cache_clear()
    try:
        languages = ["pt", "es", "fr", "de", "it", "nl", "pl", "tr", "id", "sv", "da", "fi", "cs", "ro",
                     "hu", "ca", "sk", "sl", "lt", "lv"]  # 20 languages, more than 16
        for _ in range(3):
            for lang in languages:
                assert _resources.language_words(lang, 3.0)
    finally:
        _resources.language_words.cache_clear()
    assert sorted(reads) == sorted(languages)
