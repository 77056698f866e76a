"""`convoscope gibberish --lang auto` (issue 39, observation 8): other languages' word lists are
read from wordfreq's files once per machine and kept packed; a later process (here: the caches
cleared) answers the same words without reading any msgpack file or building a set."""

import pytest

from convoscope.filters import _resources, _routing, detect
from convoscope.filters._word_lists import SortedWords, _read, packed_path

pytest.importorskip("wordfreq")


def _clear() -> None:
    for cached in (_resources.known_words, _resources.language_words, _resources._word_buckets,
                   _routing.word_checker_for):
        cached.cache_clear()


@pytest.fixture
def fresh_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _clear()
    yield tmp_path
    _clear()


def _count_reads(monkeypatch) -> list[str]:
    reads: list[str] = []
    original = _resources._word_buckets.__wrapped__
    monkeypatch.setattr(_resources, "_word_buckets",
                        _resources.cache(lambda lang, zipf: reads.append(lang) or original(lang, zipf)))
    return reads


SHORT_ANSWERS = ["adorei", "lecker", "bof bof", "genial", "mercii", "asdf qwer"]


def test_a_second_process_routes_short_answers_without_reading_a_word_list(fresh_caches, monkeypatch):
    first = [detect(text) for text in SHORT_ANSWERS]
    _clear()  # as a new process on the same machine
    reads = _count_reads(monkeypatch)
    second = [detect(text) for text in SHORT_ANSWERS]
    assert reads == []
    assert second == first
    assert [result.lang for result in first][:3] == ["pt", "de", "fr"]


def test_other_language_answers_are_judged_alike_from_the_packed_lists(fresh_caches, monkeypatch):
    texts = ["Eu adorei o atendimento, muito obrigado", "asdfgh jklö qwertz", "Das Essen war lecker"]
    first = [detect(text, lang=code) for text, code in zip(texts, ["pt", "de", "de"], strict=True)]
    _clear()
    reads = _count_reads(monkeypatch)
    assert [detect(text, lang=code) for text, code in zip(texts, ["pt", "de", "de"], strict=True)] == first
    assert reads == []


def test_packed_words_answer_membership_as_the_set_does(fresh_caches):
    words = _resources.language_words("de", 3.0)
    kept = _resources.known_words("de", 3.0)
    assert kept is words  # the first process builds the set and keeps it packed
    _clear()
    packed = _resources.known_words("de", 3.0)
    assert isinstance(packed, SortedWords) and len(packed) == len(words)
    probes = [*sorted(words)[::211], "straße", "Straße", "lecker", "", "zzzzzz", "\udcff", "a\nb", 3, None]
    assert [probe in packed for probe in probes] == [probe in words for probe in probes]


def test_a_damaged_packed_list_is_dropped_and_the_set_used(fresh_caches, monkeypatch):
    words = _resources.language_words("nl", 3.0)
    _resources.known_words("nl", 3.0)
    path = packed_path(_resources._wordfreq_file("nl"), "nl", _resources._last_bucket(3.0))
    path.write_bytes(path.read_bytes()[:5000])  # cut short: the count no longer matches
    assert _read(path) is None and not path.exists()
    _clear()
    assert _resources.known_words("nl", 3.0) == words


def test_a_cache_folder_that_cannot_be_written_leaves_the_sets(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    _clear()
    try:
        assert _resources.known_words("it", 3.0) == _resources.language_words("it", 3.0)
        assert detect("buonissimo").lang == "it"
    finally:
        _clear()


def test_a_kept_list_asked_a_few_words_is_looked_up_without_splitting_it(fresh_caches):
    """Short answers ask a list for two or three words, often of ten languages in a row: the kept
    file is looked up as it was read, and split into its words only once a list is asked many
    words. The answers are the set's either way."""
    words = _resources.language_words("pt", 3.0)
    _resources.known_words("pt", 3.0)
    _clear()
    packed = _resources.known_words("pt", 3.0)
    probes = ["adorei", "obrigado", "asdf", "", "a\nb", "\n", "de\nque", "\udcff", "Adorei", 7,
              *sorted(words)[:3], *sorted(words)[-3:]]
    assert [probe in packed for probe in probes] == [probe in words for probe in probes]
    assert packed._words is None  # not split: a few lookups in the text as read
    many = [*sorted(words)[::31], "zzzq", "adorei"]
    assert [probe in packed for probe in many] == [probe in words for probe in many]
    assert packed._words is not None and len(packed) == len(words)
    assert [probe in packed for probe in probes] == [probe in words for probe in probes]


def test_lookups_in_the_text_of_a_list_answer_as_its_set_does():
    import random

    from convoscope.filters._word_lists import _in_sorted_lines

    draw = random.Random(39)
    for size in [0, 1, 2, 3, 5, 8, 40]:
        for _ in range(30):
            words = {"".join(draw.choice("abé") for _ in range(draw.randint(1, 4))) for _ in range(size)}
            encoded = sorted(word.encode() for word in words)
            text = b"\n".join(encoded)
            probes = [*words, "", "a\na", "z", "\u00e9", *("".join(draw.choice("abé") for _ in range(3))
                                                           for _ in range(10))]
            assert [_in_sorted_lines(text, probe.encode()) for probe in probes] == [
                probe in words for probe in probes]


def test_a_process_reads_a_packages_release_once_for_all_the_lists_it_keeps(tmp_path, monkeypatch):
    """Each kept list is named after wordfreq's release; reading a package's metadata costs about
    1 ms, once a process rather than once a list (23 lists on the 50,000-line benchmark)."""
    import importlib.metadata

    from convoscope import _folders

    asked: list[str] = []
    version = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: asked.append(name) or version(name))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _folders._release.cache_clear()
    try:
        source = _resources._wordfreq_file("de")
        names = {_folders.kept_name("wordfreq", source, lang, 650, suffix=".txt")
                 for lang in ("de", "fr", "nl")}
    finally:
        _folders._release.cache_clear()
    assert asked == ["wordfreq"] and len(names) == 3
    assert all(name.name.startswith(f"wordfreq-{version('wordfreq')}-") for name in names)


def test_a_list_asked_the_same_few_words_again_and_again_is_not_split(fresh_caches):
    """Short answers repeat their words across languages' lists: on the 50,000-line benchmark,
    lists asked 96-291 times were asked 24-60 distinct words. Each word is looked up in the text
    once and its answer kept, so such a list is never split (about 3 ms)."""
    words = _resources.language_words("es", 3.0)
    _resources.known_words("es", 3.0)
    _clear()
    packed = _resources.known_words("es", 3.0)
    probes = ["genial", "asdf", "gracias", "qwer", "bueno"] * 40
    assert [probe in packed for probe in probes] == [probe in words for probe in probes]
    assert packed._words is None


def test_a_kept_list_is_the_files_bytes_as_read_not_a_copy(fresh_caches, monkeypatch):
    from pathlib import Path

    words = _resources.language_words("it", 3.0)
    _resources.known_words("it", 3.0)
    read: list[bytes] = []
    read_bytes = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(read_bytes(self)) or read[-1])
    packed = _read(packed_path(_resources._wordfreq_file("it"), "it", _resources._last_bucket(3.0)))
    assert isinstance(packed, SortedWords) and packed._text is read[-1]
    assert len(packed) == len(words) and set(packed.words()) == words
    probes = [*sorted(words)[::97], "buonissimo", "zzzz", ""]
    assert [probe in packed for probe in probes] == [probe in words for probe in probes]
    assert packed._words is not None  # asked more than 64 words: split, the header left out
    assert [probe in packed for probe in probes] == [probe in words for probe in probes]


class _CountedBytes(bytes):
    scans: list[int] = []

    def count(self, *args):  # type: ignore[override]
        self.scans.append(len(self))
        return super().count(*args)


def test_a_kept_list_is_checked_by_its_length_without_counting_its_lines(fresh_caches, monkeypatch):
    """Reading a kept list scans none of its bytes: its header names its words and its length,
    and a list cut short (the length no longer matches) is still dropped. On the benchmark's
    50,000 lines the line counts scanned every list the rules asked (10 MB, 1 % of the command's
    instructions)."""
    from pathlib import Path

    words = _resources.language_words("pt", 3.0)
    _resources.known_words("pt", 3.0)
    path = packed_path(_resources._wordfreq_file("pt"), "pt", _resources._last_bucket(3.0))
    read_bytes = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: _CountedBytes(read_bytes(self)))
    _CountedBytes.scans.clear()
    packed = _read(path)
    assert isinstance(packed, SortedWords) and len(packed) == len(words)
    assert _CountedBytes.scans == []
    assert ["adorei" in packed, "asdf" in packed] == ["adorei" in words, "asdf" in words]
    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    path.write_bytes(read_bytes(path)[:-3])  # the last word cut short
    assert _read(path) is None and not path.exists()


def test_a_list_kept_in_the_former_layout_is_left_to_the_convoscope_that_reads_it(fresh_caches):
    """Two releases sharing the cache folder (the benchmark's before and after, or two checkouts)
    each keep their own files: a file of the other layout under the same name was dropped and
    rebuilt at every start of either."""
    from convoscope._folders import kept_name

    source = _resources._wordfreq_file("es")
    former = kept_name("wordfreq", source, "es", _resources._last_bucket(3.0), suffix=".txt")
    former.parent.mkdir(parents=True, exist_ok=True)
    former.write_bytes(b"convoscope-words 1 2\nbueno\nhola")
    assert "hola" in _resources.known_words("es", 3.0)
    assert former.read_bytes() == b"convoscope-words 1 2\nbueno\nhola"
