"""English signals: letters for the Markov model, word tokens and their kinds, consonant/vowel runs
(seed 000, appendix A.1).

Tokens are found with a regular expression rather than NLTK's ``word_tokenize``, whose model data
(punkt_tab) cannot be fetched offline; for survey answers a letters-and-apostrophes pattern finds
the same words.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from convoscope.filters._markov import BigramModel

ENGLISH_ALPHABET = " abcdefghijklmnopqrstuvwxyz"
VOWELS = frozenset("aeiou")
TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)*")
_NOT_LETTER = re.compile(r"[^a-z]+")
_CLASS_RUNS = re.compile(r"[aeiou]+|[b-df-hj-np-tv-z]+")
_ELONGATED_RUN = re.compile(r"(.)\1{2,}")
_LAUGHTER = re.compile(r"(?:(?:bw|mw)?a?(?:h+[aeiou]+)+h*|(?:lo)+l+|lm+f?a+o+|x+d+|(?:ja)+j?|(?:ke)+k?)")

DEFAULT_SLANG = frozenset(
    # Chat abbreviations, fillers and informal spellings a dictionary may lack or rank too low.
    "lol lolz lmao lmfao rofl brb btw idk idc ikr imo imho tbh ngl omg omfg wtf smh fyi afaik irl "
    "jk np ty tysm thx thnx pls plz ok okay k kk ya yah yea yeah yep yup yas yass nah nope meh hmm "
    "hm mhm uh uhh um umm er ugh ew eww wow yay oof gg gr8 u ur r y bc cuz coz tho thru gonna "
    "wanna gotta kinda sorta dunno lemme gimme ain't y'all xd xo xoxo asap diy ikr fr rn af bff dm "
    "sus bruh bro fam noob hella lit mid vibe vibes sry soz luv gud kool nvm idgaf w/e wbu hbu "
    "ttyl gtg g2g bday pic pics convo fave fav tmi".split()
)

TokenKind = Literal["word", "slang", "elongated", "unknown"]


@dataclass(frozen=True)
class EnglishSignals:
    words: tuple[str, ...]  # what the Markov model reads: the tokens without apostrophes
    tokens: tuple[str, ...]
    kinds: tuple[TokenKind, ...]
    valid_word_ratio: float | None
    longest_class_run: int

    @property
    def symbols(self) -> str:
        """The padded symbol string (as ``english_symbols`` gives it)."""
        return " " + " ".join(self.words) + " "

    @property
    def nonstandard(self) -> bool:
        """Slang, laughter or an elongated word is present: the seed's exception applies."""
        return any(kind in ("slang", "elongated") for kind in self.kinds)


def fold(text: str) -> str:
    """Lower-case, accents removed (café -> cafe), typographic apostrophes made plain."""
    text = text.lower().replace("\u2019", "'")
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def english_symbols(text: str) -> str:
    """Lower-case a-z with single spaces, padded so word starts and ends are transitions too.
    Apostrophes vanish (don't -> dont) instead of splitting a word in two."""
    letters = _NOT_LETTER.sub(" ", fold(text).replace("'", ""))
    return " " + " ".join(letters.split()) + " "


def tokenize(text: str) -> tuple[str, ...]:
    return tuple(TOKEN.findall(fold(text)))


def longest_class_run(word: str) -> int:
    """Longest stretch of letters that are all vowels or all consonants (aeiou are vowels)."""
    return max(map(len, _CLASS_RUNS.findall(word)), default=0)


def is_slang(token: str, slang: frozenset[str]) -> bool:
    return token in slang or _LAUGHTER.fullmatch(token) is not None


def _squeezed_forms(token: str) -> set[str]:
    """Every way of shortening each run of 3+ equal letters to one or two letters (sooo -> so, soo)."""
    runs = list(_ELONGATED_RUN.finditer(token))[:4]  # cap the 2^n combinations
    forms = set()
    for lengths in itertools.product((1, 2), repeat=len(runs)):
        pieces, position = [], 0
        for run, keep in zip(runs, lengths, strict=True):
            pieces.append(token[position:run.start()] + run.group(1) * keep)
            position = run.end()
        forms.add("".join(pieces) + token[position:])
    return forms


def token_kind(token: str, is_word: Callable[[str], bool], slang: frozenset[str]) -> TokenKind:
    if is_slang(token, slang):
        return "slang"
    if is_word(token):
        return "word"
    if _ELONGATED_RUN.search(token):
        # A squeezed form must keep two different letters: "aaaaaa" -> "a" is noise, not a word.
        for form in _squeezed_forms(token):
            if len(set(form)) >= 2 and (is_word(form) or is_slang(form, slang)):
                return "elongated"
    return "unknown"


@functools.lru_cache(maxsize=200_000)
def token_info(token: str, is_word: Callable[[str], bool], slang: frozenset[str]) -> tuple[TokenKind, int]:
    """A token's kind and, for kinds that can show a mashing run, its longest vowel/consonant
    run. Cached: words repeat (Zipf), so most lines cost a few dictionary hits."""
    kind = token_kind(token, is_word, slang)
    # Elongations and laughter are repetitive by design; only other words can show a mashing run.
    run = 0 if kind in ("slang", "elongated") else longest_class_run(token.replace("'", ""))
    return kind, run


# Per token, everything a line needs: (counts as a word, slang, elongated, longest class run,
# Markov log-likelihood sum of the token's transitions, number of transitions).
TokenRow = tuple[bool, bool, bool, int, float, int]
_TABLE_LIMIT = 200_000
# A token's counts packed in one int so that one C-level ``sum`` over a line adds them all:
# word (bit 0), slang (bit 15), elongated (bit 30) and its transitions from bit 45 up. Each
# 15-bit field holds a count of at most the line's tokens, so lines of fewer than 2**15 tokens
# never carry into the next field; longer lines take the row-by-row path.
_FIELD_BITS = 15
_FIELD_MASK = (1 << _FIELD_BITS) - 1
_PACKED_MAX_TOKENS = 1 << _FIELD_BITS


class EnglishStats(NamedTuple):
    """What the English rules read from a line (the same figures ``english_signals`` and
    ``mean_log_likelihood_of_words`` give, computed in one pass over cached token rows)."""

    tokens: int
    valid_word_ratio: float | None
    slang: bool
    elongated: bool
    longest_class_run: int
    log_likelihood: float | None


_NO_TOKENS = EnglishStats(0, None, False, False, 0, None)
_new_tuple = tuple.__new__


def _token_row(token: str, is_word: Callable[[str], bool], slang: frozenset[str],
               model: BigramModel) -> TokenRow:
    kind, run = token_info(token, is_word, slang)
    word = token.replace("'", "")
    return (kind != "unknown", kind == "slang", kind == "elongated", run,
            model.word_log_likelihood(word), len(word) + 1)


class TokenScorer:
    """Cached per-token figures for one (dictionary, slang set, model), kept for the life of the
    process (at most 200,000 tokens): words repeat (Zipf), so a line costs a regex pass and three
    C-level passes over dictionary hits. ``stats`` gives exactly what the row-by-row
    computation gives (same float additions in the same order)."""

    __slots__ = ("byte_keys", "is_word", "log_likelihood", "model", "packed", "run", "slang")

    def __init__(self, is_word: Callable[[str], bool], slang: frozenset[str], model: BigramModel,
                 *, byte_keys: bool = False) -> None:
        self.is_word, self.slang, self.model = is_word, slang, model
        self.byte_keys = byte_keys  # tokens come as ASCII bytes (``ascii_tokens``), not str
        self.packed: dict[str | bytes, int] = {}
        self.log_likelihood: dict[str | bytes, float] = {}
        self.run: dict[str | bytes, int] = {}

    def _fill(self, tokens: Sequence[str | bytes]) -> bool:
        """Score the tokens the table lacks; False when the table is full and some stay out."""
        packed, log_likelihood, runs = self.packed, self.log_likelihood, self.run
        is_word, slang, word_sum = self.is_word, self.slang, self.model.word_log_likelihood_uncached
        for key in tokens:
            if key in packed:
                continue
            if len(packed) >= _TABLE_LIMIT:
                return False
            token = key.decode() if isinstance(key, bytes) else key
            # _token_row without its two caches (this table is the cache).
            kind = token_kind(token, is_word, slang)
            word = token.replace("'", "") if "'" in token else token
            if kind == "slang":
                flags, run = 1 | 1 << _FIELD_BITS, 0
            elif kind == "elongated":
                flags, run = 1 | 1 << 2 * _FIELD_BITS, 0
            else:
                flags, run = int(kind == "word"), longest_class_run(word)
            packed[key] = flags | (len(word) + 1) << 3 * _FIELD_BITS
            log_likelihood[key] = word_sum(word)
            runs[key] = run
        return True

    def stats(self, tokens: Sequence[str | bytes]) -> EnglishStats:
        """The English measurements of a line from its tokens (``TOKEN`` on the folded text, or
        ``ascii_tokens`` for a scorer with byte keys)."""
        count = len(tokens)
        if not count:
            return _NO_TOKENS
        packed = self.packed
        if count >= _PACKED_MAX_TOKENS:
            return self._row_by_row(tokens)
        try:
            total = sum(map(packed.__getitem__, tokens))
        except KeyError:
            if not self._fill(tokens):
                return self._row_by_row(tokens)
            total = sum(map(packed.__getitem__, tokens))
        return _new_tuple(EnglishStats, (  # EnglishStats(...) without its Python-level __new__
            count, (total & _FIELD_MASK) / count, (total >> _FIELD_BITS & _FIELD_MASK) > 0,
            (total >> 2 * _FIELD_BITS & _FIELD_MASK) > 0, max(map(self.run.__getitem__, tokens)),
            sum(map(self.log_likelihood.__getitem__, tokens)) / (total >> 3 * _FIELD_BITS)))

    def _row_by_row(self, tokens: Sequence[str | bytes]) -> EnglishStats:
        """Very long lines and a full table: one row per token, summed as rows."""
        rows = [_token_row(token.decode() if isinstance(token, bytes) else token,
                           self.is_word, self.slang, self.model) for token in tokens]
        valid, slangs, stretched, runs, sums, lengths = zip(*rows)  # noqa: B905 (rows of six)
        return EnglishStats(len(tokens), sum(valid) / len(tokens), any(slangs), any(stretched),
                            max(runs), sum(sums) / sum(lengths))


_SCORERS: dict[tuple[object, ...], TokenScorer] = {}


def token_scorer(is_word: Callable[[str], bool], slang: frozenset[str], model: BigramModel,
                 *, byte_keys: bool = False) -> TokenScorer:
    """The process-wide scorer for these resources (tables are kept apart per model)."""
    key = (is_word, slang, id(model), byte_keys)
    scorer = _SCORERS.get(key)
    if scorer is None or scorer.model is not model:  # an id reused by a new model
        scorer = _SCORERS[key] = TokenScorer(is_word, slang, model, byte_keys=byte_keys)
    return scorer


# Plain-ASCII text as bytes with A-Z lowered, a-z and the apostrophe kept and every other byte
# a space: ``split`` then gives TOKEN's tokens of the folded text, and when an apostrophe is
# present the same pattern on bytes does (other characters only ever separate tokens).
_ASCII_LETTERS = bytes(code + 32 if 65 <= code <= 90 else code if 97 <= code <= 122 or code == 39 else 32
                       for code in range(256))
_BYTES_TOKEN = re.compile(rb"[a-z]+(?:'[a-z]+)*")


def ascii_tokens(text: str) -> list[bytes]:
    """``TOKEN.findall(fold(text))`` for a plain-ASCII ``text``, as bytes (about twice as fast)."""
    letters = text.encode("ascii").translate(_ASCII_LETTERS)
    if b"'" in letters and _loose_apostrophe(letters):
        return _BYTES_TOKEN.findall(letters)
    return letters.split()


def _loose_apostrophe(letters: bytes) -> bool:
    """Whether an apostrophe of ``letters`` (a-z, apostrophes and spaces) stands anywhere but
    alone between two letters ("'tis", "dogs'", "a''b"). When none does, every apostrophe is
    inside a word ("don't", "rock'n'roll") and splitting at the spaces gives ``_BYTES_TOKEN``'s
    tokens: the pattern's only other break is an apostrophe next to a space, an end or another
    apostrophe. Chat writes "don't" and "it's" in almost every other line; the split is about
    twice as fast as the pattern."""
    return (letters[:1] == b"'" or letters[-1:] == b"'" or b" '" in letters or b"' " in letters
            or b"''" in letters)


def english_stats(text: str, is_word: Callable[[str], bool], slang: frozenset[str],
                  model: BigramModel) -> EnglishStats:
    """The English measurements of one line. Token figures are cached per (dictionary, slang,
    model): words repeat (Zipf), so a line costs one regex pass and a dictionary hit per token."""
    return token_scorer(is_word, slang, model).stats(TOKEN.findall(fold(text)))


def english_signals(text: str, is_word: Callable[[str], bool], slang: frozenset[str]) -> EnglishSignals:
    tokens = tokenize(text)
    # The Markov model's words are the tokens without apostrophes (don't -> dont), as
    # english_symbols would give them, without a second pass over the text.
    words = tuple(token.replace("'", "") if "'" in token else token for token in tokens)
    infos = [token_info(token, is_word, slang) for token in tokens]
    kinds = tuple(kind for kind, _ in infos)
    valid = sum(1 for kind in kinds if kind != "unknown")
    ratio = valid / len(tokens) if tokens else None
    return EnglishSignals(words, tokens, kinds, ratio, max((run for _, run in infos), default=0))
