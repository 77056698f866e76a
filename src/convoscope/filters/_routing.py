"""Which rules judge an answer: the declared language against the script, short answers in other
languages that the English rules would flag, Chinese or Japanese for Han text, acronyms.

Split from ``_general`` (which applies the rules) so that the routing can be read in one place.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from convoscope.filters import _resources
from convoscope.filters._langid import count_scripts, language_of
from convoscope.filters._multilingual import CHAT_SLANG, LAUGHTER
from convoscope.filters._neutral import neutral_reasons, neutral_signals


def language_code(language: str) -> str:
    """"pt-BR" -> "pt"; anything that is no language code (empty, "Portuguese") -> "auto"."""
    base = language.strip().lower().replace("_", "-").split("-")[0]
    return base if base == "auto" or (2 <= len(base) <= 3 and base.isalpha()) else "auto"


def choice_for(text: str, declared: str, fallback: str) -> tuple[str, bool]:
    """(the pipeline for one answer, whether its declared language chose it)."""
    if declared == "auto":
        return fallback, False
    if text.isascii():
        return (fallback, False) if declared == "ko" else (declared, True)
    counts = count_scripts(text)
    if language_of(counts) == "ko" and declared != "ko":
        return "ko", False  # the script overrules a declaration: Hangul is Korean
    if declared == "ko" and counts.hangul == 0:
        return fallback, False
    return declared, True


def short_foreign(text: str, flagged: bool) -> tuple[str, float] | None:
    """A short answer the English rules flag may be in another language that the identifier
    cannot name from so little text ("adorei", "lecker", "bof bof"): the language, among the
    identifier's five likeliest and the languages surveys use most, whose word list knows every
    word (stretched words squeezed: "mercii"); or "other" when every word is laughter or a chat
    form ("kkkkk", "yyds"). The language-neutral rules still judge the answer afterwards."""
    words = [word for word in re.findall(r"[^\W\d_]+", text.lower()) if word]
    if not flagged or not words or len(words) > _SHORT_WORDS:
        return None
    chat = [word for word in words if LAUGHTER.fullmatch(word) or word in CHAT_SLANG]
    rest = [word for word in words if word not in chat]
    if not rest:
        return ("other", 0.0) if chat else None
    english = _resources.known_words("en", _SURE_FOREIGN_ZIPF)
    if all(word in english for word in rest):
        return None  # English words the English rules flagged: their verdict stands
    ranked = dict(_resources.identify_ranked(text))
    forms = [_forms(word) for word in rest]  # the same for every language tried
    for code in dict.fromkeys([*ranked, *_COMMON_LANGUAGES]):
        if code != "en" and _resources.has_word_list(code):
            known = _resources.known_words(code, _SURE_FOREIGN_ZIPF)
            if all(any(form in known for form in word_forms) for word_forms in forms):
                return code, ranked.get(code, 0.0)
    return None


def _forms(word: str) -> tuple[str, ...]:
    """A word and its squeezed forms (letters doubled or more reduced to one, or two)."""
    return (word, re.sub(r"(.)\1+", r"\1", word), re.sub(r"(.)\1{2,}", r"\1\1", word))


_SHORT_WORDS = 6
# Languages whose lists are tried for every short answer, after the identifier's guesses.
_COMMON_LANGUAGES = ("pt", "es", "fr", "de", "it", "nl", "pl", "tr", "id")


# A word counts as another language's word, in the rescue of short answers, from this Zipf
# frequency: common enough that a mash ("asdf" sits near 2.5 in several lists) stays out.
_SURE_FOREIGN_ZIPF = 3.0


_KANA = re.compile(r"[\u3040-\u30ff\uff66-\uff9f]")
_HAN = re.compile(r"[\u3400-\u9fff]")


_BOPOMOFO = re.compile(r"[\u3100-\u312f\u31a0-\u31bf]")


def cjk_language(text: str, code: str) -> str:
    """Kana mean Japanese; Han characters alone are Chinese unless identified as Japanese (the
    identifier guesses wildly on one or two characters: "草" came back Serbian). Zhuyin
    (bopomofo) without kana is Chinese typed through a zhuyin method, whatever was identified."""
    if _BOPOMOFO.search(text) and not _KANA.search(text):
        return "zh"
    if code in ("ja", "zh"):
        return code
    if _KANA.search(text):
        return "ja"
    return "zh" if _HAN.search(text) else code


@functools.lru_cache(maxsize=32)
def word_checker_for(code: str) -> Callable[[str], bool]:
    """Known words of the language (its wordfreq list) or of English (code-switching: "ok",
    "wifi", "top"); English only when wordfreq has no list for the language."""
    own = _resources.known_words(code, _OTHER_MIN_ZIPF) if _resources.has_word_list(code) else frozenset()
    english = (_resources.known_words("en", _OTHER_MIN_ZIPF) if _resources.wordfreq_available()
               else _resources.corpus_words())

    def is_word(token: str) -> bool:
        return len(token) > 1 and (token in own or token in english)

    return is_word


_OTHER_MIN_ZIPF = 2.5


_CAPITALS = re.compile(r"[A-Z]{2,5}")
_NAME = re.compile(r"[A-Z][a-z]{1,12}")


def acronyms_only(text: str, max_noise_share: float) -> bool:
    """An answer of one to three words, acronyms ("BMW FTW.", "USB OK") or an acronym with a
    capitalised name ("VW Golf"), that is no keyboard run: acronyms are words the bigram model
    and the dictionary do not know."""
    tokens = re.findall(r"[A-Za-z]+", text)
    if not 0 < len(tokens) <= 3 or not any(_CAPITALS.fullmatch(token) for token in tokens):
        return False
    if not all(_CAPITALS.fullmatch(token) or _NAME.fullmatch(token) for token in tokens):
        return False
    return not neutral_reasons(neutral_signals(text), max_noise_share=max_noise_share)
