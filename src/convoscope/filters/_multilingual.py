"""Answers in languages without a bigram model (pt, es, de, fr, ja, zh, ...): language-neutral rules
plus the language's word list where wordfreq has one.

Short answers are the hard case: "adorei", "passt", "好评", "草" are whole answers, and a rule
that wants many known words would reject them for being short and foreign. So:

* laughter, chat abbreviations and stretched words are set aside first, in every language
  ("kkkkk", "rsrs", "jajaja", "mdr", "www", "ｗｗｗ", "草", "(笑)", "哈哈哈", "hhh", "yyds",
  "すごーーい", "perfeitoooo" when "perfeito" is a word);
* keyboard mashes are read as the keys that typed them: NFKC turns full-width ``ｑｗｅｒｔｙ``
  into ``qwerty``, and kana are turned back into the romaji a Japanese input method was given
  (``あｓｄｆ`` was typed a-s-d-f), so the keyboard-row rules see the mash; kana typed with the
  kana layout (``ちとしはき``) slide along the kana rows;
* the word list counts only when there is enough text to count: four or more words with too few
  known ones (``few_valid_words``), or Han characters that no word of the language uses
  (``rare_characters``: 靐齉爩).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from convoscope.text import WORD, fold, thai_words, words

# Hiragana in gojuon order and the romaji an input method turns into them.
_KANA = ("あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん"
         "がぎぐげござじずぜぞだぢづでどばびぶべぼぱぴぷぺぽぁぃぅぇぉゃゅょっゔ")
_ROMAJI = ("a i u e o ka ki ku ke ko sa si su se so ta ti tu te to na ni nu ne no ha hi hu he ho "
           "ma mi mu me mo ya yu yo ra ri ru re ro wa wo nn ga gi gu ge go za zi zu ze zo da di du "
           "de do ba bi bu be bo pa pi pu pe po la li lu le lo lya lyu lyo ltu vu").split()
_TO_ROMAJI = dict(zip(_KANA, _ROMAJI, strict=True)) | {"ー": "-"}
# Two kana typed as one syllable: "we" gives うぇ, "fa" ふぁ, "kya" きゃ.
_PAIRS = {"うぃ": "wi", "うぇ": "we", "ふぁ": "fa", "ふぃ": "fi", "ふぇ": "fe", "ふぉ": "fo",
          "てぃ": "thi", "でぃ": "dhi"}
_SMALL_Y = {"ゃ": "ya", "ゅ": "yu", "ょ": "yo"}

# Laughter as typed in chat: hhh and 233 (Chinese), www and 草 (Japanese), kkkk and rsrs
# (Brazilian), jajaja (Spanish), mdr / ptdr (French), haha everywhere. A key held down much
# longer than laughter runs ("hhhhhhhhhhhhhhhhhhh") is left to the noise rules.
LAUGHTER = re.compile(
    r"(?:h{2,8}|w{1,10}|k{2,12}|(?:ha|he|hi|ho|ah|eh|ja|je|rs|hue|hua){1,6}[hjs]?|mdr+|ptdr+"
    r"|lo+l+|x+d+|[哈呵嘻嘿嘎]{1,10}|[草笑]{1,3}|ワロタ|わろた)")
CHAT_SLANG = frozenset(
    # Abbreviations a word list may lack: Chinese internet slang in Latin letters, and chat forms
    # of Portuguese, Spanish, French, German and Italian.
    "yyds xswl nb awsl zqsg hhh emmm srds dbq bhys plmm "
    "vlw blz mt mto tb tbm tmj pq vc vcs msm mds sdds cmg bjs obg "
    "xd q tmb xq ntp tqm bn grax salu "
    "mdr ptdr slt jsp stp bcp cc tkt osef mtn jpp "
    "hdl mfg vllt kp lg bzw ka jz "
    "cmq nn xk tvb grz "
    "ok okay lol top".split())
_ELONGATION_MARKS = re.compile(r"[ー〜~]{1,}")
_RUN = re.compile(r"(.)\1{2,}")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_KANA_CHARS = re.compile(r"[\u3040-\u30ff]")
_THAI = re.compile(r"[\u0e00-\u0e7f]")


def keystrokes(text: str) -> str:
    """What was typed: the folded text (full-width to ASCII, lower case), kana back to romaji."""
    folded = fold(text)
    if not _KANA_CHARS.search(folded):
        return folded
    out: list[str] = []
    index = 0
    while index < len(folded):
        char = folded[index]
        hiragana = chr(ord(char) - 0x60) if "\u30a1" <= char <= "\u30f6" else char
        pair = folded[index:index + 2]
        if pair in _PAIRS:
            out.append(_PAIRS[pair])
            index += 2
            continue
        roman = _TO_ROMAJI.get(hiragana)
        following = folded[index + 1:index + 2]
        if roman and following in _SMALL_Y and roman.endswith("i") and len(roman) == 2:
            out.append(roman[0] + _SMALL_Y[following])
            index += 2
            continue
        out.append(roman if roman else char)
        index += 1
    return "".join(out)


@dataclass(frozen=True)
class Cleaned:
    """An answer with laughter, chat forms and stretches set aside, and what was set aside."""

    text: str  # the words left, space-separated
    slang: bool
    elongation: bool
    typed: str = ""  # the answer as typed (NFKC, lower case) less what was set aside


def set_aside(text: str, is_word: Callable[[str], bool]) -> Cleaned:
    """Drop laughter and chat abbreviations, squeeze stretched words ("perfeitoooo" when
    "perfeito" is a word, "すごーーい", "うまあああ")."""
    folded = fold(text)
    stretched = _ELONGATION_MARKS.search(folded) is not None
    folded = _ELONGATION_MARKS.sub("", folded)
    slang = False
    kept: list[str] = []

    def keep(match: re.Match[str]) -> str:
        nonlocal slang, stretched
        token = match.group(0)
        if LAUGHTER.fullmatch(token) or token in CHAT_SLANG:
            slang = True
            return " "
        if _RUN.search(token):
            squeezed = _squeeze(token, is_word)
            if squeezed is not None:
                stretched = True
                token = squeezed
        kept.append(token)
        return token

    typed = WORD.sub(keep, folded)
    return Cleaned(" ".join(kept), slang, stretched, typed)


def _squeeze(token: str, is_word: Callable[[str], bool]) -> str | None:
    """The word a stretched token stands for, or None. Kana stretch vowels freely ("うまあああ");
    other scripts only count when the squeezed form is a known word."""
    once = _RUN.sub(r"\1", token)
    twice = _RUN.sub(r"\1\1", token)
    if _KANA_CHARS.search(token) and len(set(once)) >= 2:
        return once
    for form in (twice, once):
        if len(set(form)) >= 2 and is_word(form):
            return form
    return None


def unknown_han_share(text: str, known_characters: frozenset[str] | Callable[[], frozenset[str]]
                      ) -> tuple[int, float]:
    """(Han characters, share of them that no word of the language's list uses)."""
    han = _HAN.findall(text)
    if not han:
        return 0, 0.0
    known = known_characters() if callable(known_characters) else known_characters
    return len(han), sum(char not in known for char in han) / len(han)


def word_share(text: str, is_word: Callable[[str], bool]) -> tuple[int, float | None]:
    """(words, share of them that are known words), CJK text left out. Words keep their marks
    (Devanagari, Thai, Vietnamese); Thai is cut by its segmenter and its words are looked up in
    the segmenter's dictionary as well."""
    found = [word for word in words(text) if not _HAN.search(word) and not _KANA_CHARS.search(word)]
    if not found:
        return 0, None
    return len(found), sum(1 for word in found if is_word(word) or _is_thai_word(word)) / len(found)


def _is_thai_word(word: str) -> bool:
    return _THAI.match(word) is not None and word in thai_words()


def other_language_rules(text: str, is_word: Callable[[str], bool],
                         known_han: frozenset[str] | Callable[[], frozenset[str]], *,
                         max_noise_share: float, min_valid_word_ratio: float,
                         ) -> tuple[tuple[str, ...], tuple[str, ...], float | None]:
    """(reasons, notes, valid-word share) for an answer in a language without a bigram model.
    ``known_han`` may be a function giving the set, called only for text with Han characters
    (reading the Chinese and Japanese lists costs about a second and 30 MB)."""
    cleaned = set_aside(text, is_word)
    notes = (("slang",) if cleaned.slang else ()) + (("elongation",) if cleaned.elongation else ())
    if not cleaned.text.strip():
        if notes:
            return (), notes, None
        cleaned = Cleaned(fold(text), False, False)
    from convoscope.filters._neutral import han_mash_share, neutral_reasons, neutral_signals

    signals = neutral_signals(cleaned.text, keys=keystrokes(cleaned.typed or cleaned.text), known=is_word)
    reasons = list(neutral_reasons(signals, max_noise_share=max_noise_share))
    words, share = word_share(cleaned.text, is_word)
    if words >= 4 and share is not None and share < min_valid_word_ratio:
        reasons.append("few_valid_words")
    han, unknown = unknown_han_share(cleaned.text, known_han)
    if han >= 2 and unknown > 0.5:
        reasons.append("rare_characters")
    # Laughter (哈哈) is part of what was typed: the pinyin chain reads the answer as written.
    han, typed_along_row = han_mash_share(fold(text))
    if han >= 4 and typed_along_row > max_noise_share and "keyboard_mash" not in reasons:
        reasons.append("keyboard_mash")
    return tuple(reasons), notes, share
