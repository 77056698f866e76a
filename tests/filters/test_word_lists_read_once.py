"""`convoscope gibberish --lang auto` (issue 39, observation 8): each language's word list is read
once per process, however many languages the answers are in and in whatever order they come.
Before, the lists were kept in a cache of 16 that short answers tried more languages than, so the
same lists were read again and again (112 times per 10,000 lines)."""

import pytest

from convoscope.filters import _resources

pytest.importorskip("wordfreq")


@pytest.fixture
def reads(monkeypatch):
    """The languages whose word-list file is read, from empty caches (emptied again afterwards)."""
    read = []
    original = _resources._wordfreq_file
    monkeypatch.setattr(_resources, "_wordfreq_file", lambda lang: read.append(lang) or original(lang))
    _resources.language_words.cache_clear()
    _resources._word_buckets.cache_clear()
    yield read
    _resources.language_words.cache_clear()
    _resources._word_buckets.cache_clear()


def test_every_language_word_list_is_read_once_however_the_languages_alternate(reads):
    languages = ["pt", "es", "fr", "de", "it", "nl", "pl", "tr", "id", "sv", "da", "fi", "cs", "ro",
                 "hu", "ca", "sk", "sl", "lt", "lv"]  # 20 languages, more than 16
    for _ in range(3):
        for lang in languages:
            assert _resources.language_words(lang, 3.0)
    assert sorted(reads) == sorted(languages)


def test_a_language_asked_at_both_frequencies_is_read_once_and_cut_like_two_reads(reads):
    """Short answers ask for Zipf 3.0, other-language answers for 2.5: one read serves both, and
    each set is the one a read down to its own frequency gives (wordfreq's own figures)."""
    import wordfreq

    common, wider = _resources.language_words("pt", 3.0), _resources.language_words("pt", 2.5)
    assert reads == ["pt"]
    assert common < wider
    sample = sorted(wider)[::997]
    assert all((wordfreq.zipf_frequency(word, "pt", wordlist="large") >= 3.0) == (word in common)
               for word in sample)
