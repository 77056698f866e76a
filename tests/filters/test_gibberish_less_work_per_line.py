"""`convoscope gibberish` at gibberish-detector's cost (issue 39, observation 8), fourth pass: a
sentence that recurs across answers is judged once, a line whose apostrophes all stand inside
words ("don't") is cut into tokens without the token pattern, the command spaces the garbage
collector's young-generation collections while it judges, and the English dictionary is read from
the packed list kept once per machine instead of wordfreq's msgpack buckets. Checked by counting
what is done, with the results of the reference computation, never by timing."""

import gc
import random

import pytest
from click.testing import CliRunner

from convoscope.cli import _gibberish as command
from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.filters import DEFAULT_THRESHOLDS, _english, _fast_english, _filter, _general, detect_many
from convoscope.filters._fast_english import _ascii_english

# Each answer holds an unknown word (a name), so its sentences are checked one by one; the last
# two sentences are the same in every answer.
ANSWERS = [f"We stayed {n} nights at the Kerrowdale. The staff were very kind. The room was clean."
           for n in range(30)]


@pytest.mark.parametrize("lang", ["auto", "en"])
def test_a_sentence_met_in_many_answers_is_judged_once(monkeypatch, lang):
    _ascii_english.cache_clear()
    judged: list[str] = []
    rules = _fast_english._AsciiEnglish._rules
    monkeypatch.setattr(_fast_english._AsciiEnglish, "_rules",
                        lambda self, text, tokens: judged.append(text) or rules(self, text, tokens))
    try:
        found = detect_many(ANSWERS, lang=lang)
    finally:
        _ascii_english.cache_clear()
    assert judged.count("The staff were very kind.") == 1  # not once per answer (30)
    assert judged.count("The room was clean.") == 1
    assert [r.model_dump() for r in found] == [
        _filter._detect(text, lang, DEFAULT_THRESHOLDS).model_dump() for text in ANSWERS]


def test_a_kept_sentence_verdict_is_the_one_the_sentence_gets_alone():
    _ascii_english.cache_clear()
    try:
        fast = _ascii_english(DEFAULT_THRESHOLDS, "auto")
        mash = "We liked the room and the staff were very kind to us all week. Xkqzvw plmtr."
        answers = [*ANSWERS[:3], mash, mash.replace("room", "food")]
        judged = [fast.judge(answer) for answer in answers]
        quick = _general._without_morphemes(DEFAULT_THRESHOLDS)
        for segment, kept in fast.segment_flags.items():
            part = _general._detect_whole(segment, "auto", quick)
            assert kept == (part.gibberish and _general._counts_as_fragment(part))
        assert fast.segment_flags["Xkqzvw plmtr."] is True
        assert fast.segment_flags["The staff were very kind."] is False
        assert [r.model_dump() for r in judged] == [r.model_dump() for r in detect_many(answers)]
        assert [r.segment for r in judged[3:]] == ["Xkqzvw plmtr."] * 2
    finally:
        _ascii_english.cache_clear()


class _CountingPattern:
    def __init__(self, pattern):
        self.pattern, self.texts = pattern, []

    def findall(self, text):
        self.texts.append(text)
        return self.pattern.findall(text)


def test_apostrophes_inside_words_are_split_without_the_token_pattern(monkeypatch):
    counting = _CountingPattern(_english._BYTES_TOKEN)
    monkeypatch.setattr(_english, "_BYTES_TOKEN", counting)
    assert _english.ascii_tokens("I don't know, it's OK rock'n'roll") == [
        b"i", b"don't", b"know", b"it's", b"ok", b"rock'n'roll"]
    assert counting.texts == []
    assert _english.ascii_tokens("'tis the dogs' toy, a''b") == [b"tis", b"the", b"dogs", b"toy", b"a", b"b"]
    assert len(counting.texts) == 1  # a loose apostrophe: the pattern decides


def test_ascii_tokens_are_the_token_patterns_on_any_ascii_text():
    pattern, table = _english._BYTES_TOKEN, _english._ASCII_LETTERS
    chosen = random.Random(39)
    texts = ["".join(chosen.choice("ab' .Z-\t\n\"") for _ in range(chosen.randint(0, 14)))
             for _ in range(20_000)]
    texts += ["don't", "'", "''", "a'", "'a", "a'b'c", "a' b", "a 'b", "Y'ALL", "x\t'y"]
    for text in texts:
        assert _english.ascii_tokens(text) == pattern.findall(text.encode("ascii").translate(table)), text


def test_the_command_judges_with_young_collections_spaced_and_restores_the_default(monkeypatch, tmp_path):
    _register()
    seen: list[tuple[int, int, int]] = []
    judge = command.detect_many
    monkeypatch.setattr(command, "detect_many",
                        lambda *args, **kwargs: seen.append(gc.get_threshold()) or judge(*args, **kwargs))
    answers, out = tmp_path / "answers.txt", tmp_path / "flags.jsonl"
    answers.write_text("The fries were great\nasdfghjkl\n", encoding="utf-8")
    before = gc.get_threshold()
    result = CliRunner().invoke(cli, ["gibberish", str(answers), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert seen and all(young >= 10_000 and tuple(rest) == before[1:] for young, *rest in seen)
    assert gc.get_threshold() == before
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2


def _unpacked_english(min_zipf):
    """The English words as wordfreq's msgpack buckets give them (the reference)."""
    import gzip

    import msgpack

    from convoscope.filters import _resources

    words = set()
    with gzip.open(_resources._wordfreq_data() / "large_en.msgpack.gz", "rb") as handle:
        unpacker = msgpack.Unpacker(handle, raw=False)
        count = unpacker.read_array_header()
        unpacker.skip()
        for _ in range(min(count - 1, _resources._last_bucket(min_zipf) + 1)):
            words.update(word for word in unpacker.unpack() if word.isascii())
    return frozenset(words)


@pytest.mark.parametrize("min_zipf", [2.5, 3.0])
def test_the_english_dictionary_is_read_from_the_kept_list_without_unpacking_msgpack(
        tmp_path, monkeypatch, min_zipf):
    pytest.importorskip("wordfreq")
    import msgpack

    from convoscope.filters import _resources

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cached = (_resources.wordfreq_words, _resources.known_words, _resources.language_words,
              _resources._word_buckets)
    for function in cached:
        function.cache_clear()
    try:
        _resources.known_words("en", min_zipf)  # a first process keeps the packed list
        for function in cached:
            function.cache_clear()  # as a new process on the same machine
        unpacked: list[object] = []
        unpacker = msgpack.Unpacker
        monkeypatch.setattr(msgpack, "Unpacker", lambda *a, **k: unpacked.append(a) or unpacker(*a, **k))
        words = _resources.wordfreq_words(min_zipf)
        assert unpacked == []
        monkeypatch.setattr(msgpack, "Unpacker", unpacker)
        assert words == _unpacked_english(min_zipf)
    finally:
        for function in cached:
            function.cache_clear()
