"""Lazy loaders for the filter's tables, dictionary and Korean analyser.

Nothing here runs at import. Each loader is cached because what it returns is read-only and
costly to build (the wordfreq list takes ~0.3 s, the Korean analyser several seconds); tests and
callers who want other tables pass their own paths to ``BigramModel.load``.
"""

from __future__ import annotations

import gzip
import importlib.util
from collections.abc import Callable, Container, Iterable
from functools import cache, lru_cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

from convoscope.errors import ConfigError
from convoscope.filters._markov import BigramModel
from convoscope.filters._word_lists import SortedWords

ENGLISH_TABLE = "en_char_bigrams.json.gz"
KOREAN_TABLE = "ko_jamo_bigrams.json.gz"
ENGLISH_WORDS = "en_words.txt.gz"

Dictionary = Literal["auto", "wordfreq", "corpus"]
Analyser = Literal["auto", "kiwi", "off"]


def _data(name: str) -> Traversable:
    return files("convoscope.filters").joinpath("data", name)


@lru_cache(maxsize=2)
def bigram_model(lang: Literal["en", "ko"]) -> BigramModel:
    return BigramModel.load(_data(ENGLISH_TABLE if lang == "en" else KOREAN_TABLE))


@lru_cache(maxsize=1)
def corpus_words() -> frozenset[str]:
    """Words seen at least twice in the bundled conversational corpora (see the build script)."""
    text = gzip.decompress(_data(ENGLISH_WORDS).read_bytes()).decode("utf-8")
    return frozenset(line for line in text.splitlines() if line)


@lru_cache(maxsize=8)
def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: a module blocked or half-imported in sys.modules
        return False


def wordfreq_available() -> bool:
    return _installed("wordfreq")


@lru_cache(maxsize=4)
def wordfreq_words(min_zipf: float) -> frozenset[str]:
    """English words at or above a Zipf frequency (log10 of uses per billion words).

    Read straight from wordfreq's "large" cBpack file, whose buckets run from the most to the
    least frequent (one bucket per centibel), stopping at the floor: the rare tail is most of the
    file, and never materialising it keeps the English start-up under 100 MB. The packed list
    kept once per machine (``known_words``: the same words, not filtered) is read instead when it
    is there: a plain text of the words, split in a few milliseconds, where unpacking the msgpack
    buckets costs about 30 ms every start."""
    kept = known_words("en", min_zipf)
    if isinstance(kept, SortedWords):
        return frozenset(word for word in kept.words() if word.isascii())
    import gzip as gz

    import msgpack  # a dependency of wordfreq

    last_bucket = _last_bucket(min_zipf)
    path = _wordfreq_data() / "large_en.msgpack.gz"
    words: set[str] = set()
    with gz.open(path, "rb") as handle:
        unpacker = msgpack.Unpacker(handle, raw=False)
        count = unpacker.read_array_header()
        unpacker.skip()  # the header
        for _ in range(min(count - 1, last_bucket + 1)):
            words.update(word for word in unpacker.unpack() if word.isascii())
    return frozenset(words)


@cache
def _wordfreq_data() -> Path:
    """wordfreq's data folder, found without importing wordfreq: its import pulls in ftfy,
    langcodes and regex (about 0.1 s CPU) and only the files are read here."""
    spec = importlib.util.find_spec("wordfreq")
    locations = spec.submodule_search_locations if spec is not None else None
    if not locations:
        raise ConfigError("the wordfreq package is not installed: pip install 'convoscope[gibberish]'")
    return Path(next(iter(locations))) / "data"


@cache  # one stat per language, not one per short answer that asks
def _wordfreq_file(lang: str) -> Path | None:
    folder = _wordfreq_data()
    for size in ("large", "small"):
        path = folder / f"{size}_{lang}.msgpack.gz"
        if path.exists():
            return path
    return None


def has_word_list(lang: str) -> bool:
    """True when wordfreq (installed) has a frequency list for ``lang`` (40+ languages)."""
    return lang.isalpha() and wordfreq_available() and _wordfreq_file(lang) is not None


# Unbounded on purpose: the keys are wordfreq's 42 languages at the two or three frequencies the
# rules ask for, so the cache grows only with the languages a file's answers are in. Bounded at 16
# it was cleared over and over by short answers whose likeliest languages kept changing (112
# lists read again per 10,000 lines: most of `--lang auto`'s time).
@cache
def language_words(lang: str, min_zipf: float) -> frozenset[str]:
    """Every word of ``lang``'s wordfreq list at or above a Zipf frequency (empty when wordfreq
    has no list); read as ``wordfreq_words`` reads the English one, without the ASCII filter."""
    buckets = _word_buckets(lang, min(min_zipf, _READ_FLOOR))
    return frozenset(word for bucket in buckets[:_last_bucket(min_zipf) + 1] for word in bucket)


@cache
def known_words(lang: str, min_zipf: float) -> Container[str]:
    """``language_words`` for membership tests only, read from the packed form kept once per
    machine (``_word_lists``): a later process reads no msgpack file and builds no set."""
    source = _wordfreq_file(lang) if lang.isalpha() and wordfreq_available() else None
    if source is None:
        return frozenset()
    from convoscope.filters._word_lists import packed_path, packed_words

    return packed_words(packed_path(source, lang, _last_bucket(min_zipf)),
                        lambda: language_words(lang, min_zipf))


# The rules ask for a language's words at Zipf 3.0 (short answers) and 2.5 (other languages):
# its file is read once down to 2.5 and both sets are cut from the same buckets.
_READ_FLOOR = 2.5


def _last_bucket(min_zipf: float) -> int:
    """wordfreq's buckets run one per centibel down from Zipf 9; the last one at ``min_zipf``."""
    return int(round((9 - min_zipf) * 100 + 1e-9))


@cache
def _word_buckets(lang: str, min_zipf: float) -> tuple[list[str], ...]:
    import gzip as gz

    import msgpack

    path = _wordfreq_file(lang) if wordfreq_available() else None
    if path is None:
        return ()
    with gz.open(path, "rb") as handle:
        unpacker = msgpack.Unpacker(handle, raw=False)
        count = unpacker.read_array_header()
        unpacker.skip()
        return tuple(unpacker.unpack() for _ in range(min(count - 1, _last_bucket(min_zipf) + 1)))


@lru_cache(maxsize=8)
def language_characters(lang: str, min_zipf: float) -> frozenset[str]:
    """The characters the words of ``lang``'s list use (for Han text: a character no common word
    uses is a rare one)."""
    return frozenset(char for word in language_words(lang, min_zipf) for char in word)


@lru_cache(maxsize=1)
def cjk_characters() -> frozenset[str]:
    """Characters used by the Chinese and Japanese words of wordfreq's lists (Zipf 2 and up)."""
    return language_characters("zh", 2.0) | language_characters("ja", 2.0)


def identify_ranked(text: str, top: int = 5) -> list[tuple[str, float]]:
    """py3langid's most likely languages, best first (empty when it is not installed)."""
    if not langid_available():
        return []
    ranked = language_identifier().rank(text)  # type: ignore[attr-defined]
    return [(str(code), float(probability)) for code, probability in ranked[:top]]


def resolve_dictionary(choice: Dictionary) -> Literal["wordfreq", "corpus"]:
    if choice == "auto":
        return "wordfreq" if wordfreq_available() else "corpus"
    if choice == "wordfreq" and not wordfreq_available():
        raise ConfigError("en_dictionary='wordfreq' needs the wordfreq package: "
                         "pip install 'convoscope[gibberish]'")
    return choice


@lru_cache(maxsize=8)
def word_checker(choice: Dictionary, min_zipf: float) -> Callable[[str], bool]:
    """Membership test for English words. Single letters other than "a" and "i" never count:
    frequency lists hold every letter, and a row of letters is what a mash looks like."""
    words = wordfreq_words(min_zipf) if resolve_dictionary(choice) == "wordfreq" else corpus_words()

    def is_word(token: str) -> bool:
        return (len(token) > 1 or token in ("a", "i")) and token in words

    return is_word


def kiwi_available() -> bool:
    return _installed("kiwipiepy")


@lru_cache(maxsize=1)
def kiwi() -> object:
    from kiwipiepy import Kiwi

    return Kiwi()


def morpheme_analyser(choice: Analyser) -> object | None:
    """The Korean analyser, or None when the check is off or kiwipiepy is not installed."""
    if choice == "off" or (choice == "auto" and not kiwi_available()):
        return None
    if not kiwi_available():
        raise ConfigError("ko_morphemes='kiwi' needs the kiwipiepy package: "
                         "pip install 'convoscope[gibberish]'")
    return kiwi()


def langid_available() -> bool:
    return _installed("py3langid")


@lru_cache(maxsize=1)
def language_identifier() -> object:
    """py3langid's naive Bayes identifier with normalised probabilities (~0.3 s and ~80 MB on
    first use once its model is unpacked, see ``_langid_model``; built only when an answer needs it)."""
    from convoscope.filters._langid_model import load_identifier

    return load_identifier()




def identify_ahead(texts: Iterable[str]) -> None:
    """Score, one after another, texts that ``identify`` (or ``identify_ranked``) is about to be
    asked about: the identifier keeps the last texts' scores (``_langid_model``), and scored
    between other work its tables are pushed out of the processor's caches each time."""
    if not langid_available():
        return
    score = language_identifier()._decide  # type: ignore[attr-defined]
    for text in dict.fromkeys(texts):
        score(text)


def identify(text: str) -> tuple[str, float] | None:
    """(ISO 639 code, probability) from py3langid, or None when it is not installed. ``zxx``
    means "no linguistic content", py3langid's own verdict on noise."""
    if not langid_available():
        return None
    code, probability = language_identifier().classify(text)  # type: ignore[attr-defined]
    return str(code), float(probability)
