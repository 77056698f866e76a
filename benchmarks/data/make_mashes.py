#!/usr/bin/env python3
"""Print keyboard mashes for the gibberish dev sets (provenance of part of their gibberish rows).

    python3 benchmarks/data/make_mashes.py en 60 --seed 1
    python3 benchmarks/data/make_mashes.py ko 60 --seed 2

A mash is a walk over neighbouring keys (people slam a region of the keyboard, not random keys),
sometimes repeated as a pattern or broken by spaces. For Korean the keys are those of the 2-set
(dubeolsik) layout and pass through a small model of the input method, which composes consonant +
vowel (+ final) into syllables exactly as typing would ("dkfj" -> "알ㅓ" style output).
"""

from __future__ import annotations

import argparse
import random

ROWS = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]
KEY_POS = {key: (row, col) for row, keys in enumerate(ROWS) for col, key in enumerate(keys)}
DUBEOLSIK = dict(zip("qwertyuiopasdfghjklzxcvbnm", "ㅂㅈㄷㄱㅅㅛㅕㅑㅐㅔㅁㄴㅇㄹㅎㅗㅓㅏㅣㅋㅌㅊㅍㅠㅜㅡ",
                     strict=True))
INITIALS = "ㄱㄲㄴㄷㄸㄹㅁㅂㅃㅅㅆㅇㅈㅉㅊㅋㅌㅍㅎ"
VOWELS = "ㅏㅐㅑㅒㅓㅔㅕㅖㅗㅘㅙㅚㅛㅜㅝㅞㅟㅠㅡㅢㅣ"
FINALS = ["", *"ㄱㄲㄳㄴㄵㄶㄷㄹㄺㄻㄼㄽㄾㄿㅀㅁㅂㅄㅅㅆㅇㅈㅊㅋㅌㅍㅎ"]
COMPOUND_VOWELS = {"ㅗㅏ": "ㅘ", "ㅗㅐ": "ㅙ", "ㅗㅣ": "ㅚ", "ㅜㅓ": "ㅝ", "ㅜㅔ": "ㅞ", "ㅜㅣ": "ㅟ",
                   "ㅡㅣ": "ㅢ"}
CLUSTERS = {"ㄱㅅ": "ㄳ", "ㄴㅈ": "ㄵ", "ㄴㅎ": "ㄶ", "ㄹㄱ": "ㄺ", "ㄹㅁ": "ㄻ", "ㄹㅂ": "ㄼ", "ㄹㅅ": "ㄽ",
            "ㄹㅌ": "ㄾ", "ㄹㅍ": "ㄿ", "ㄹㅎ": "ㅀ", "ㅂㅅ": "ㅄ"}
SPLIT = {cluster: pair for pair, cluster in CLUSTERS.items()}


def walk(rng: random.Random, length: int) -> str:
    key = rng.choice("".join(ROWS))
    keys = [key]
    while len(keys) < length:
        row, col = KEY_POS[key]
        near = [k for k, (r, c) in KEY_POS.items() if abs(r - row) <= 1 and abs(c - col) <= 2 and k != key]
        key = rng.choice(near)
        keys.append(key)
    return "".join(keys)


def shape(rng: random.Random, keys: str) -> str:
    style = rng.random()
    if style < 0.25:  # a short pattern slammed again and again: asdasdasd
        return keys[: rng.randint(2, 4)] * rng.randint(2, 5)
    if style < 0.45:  # broken into "words"
        cuts = sorted(rng.sample(range(1, len(keys)), k=min(len(keys) - 1, rng.randint(1, 3))))
        return " ".join(keys[a:b] for a, b in zip([0, *cuts], [*cuts, len(keys)], strict=True))
    return keys


def syllable(initial: str, vowel: str, final: str = "") -> str:
    code = 0xAC00 + (INITIALS.index(initial) * 21 + VOWELS.index(vowel)) * 28 + FINALS.index(final)
    return chr(code)


def compose(jamo: str) -> str:
    """A small 2-set input-method automaton: what appears on screen for a sequence of keys."""
    out: list[str] = []
    initial = vowel = final = ""

    def flush() -> None:
        nonlocal initial, vowel, final
        if initial and vowel:
            out.append(syllable(initial, vowel, final))
        else:
            out.append(initial + vowel)
        initial = vowel = final = ""

    for char in jamo:
        if char in VOWELS:
            if initial and vowel and final:  # the final moves on to start the next syllable
                keep, moved = SPLIT.get(final, ("", final))
                final = keep
                flush()
                initial, vowel = moved, char
            elif vowel and vowel + char in COMPOUND_VOWELS:
                vowel = COMPOUND_VOWELS[vowel + char]
            elif initial and not vowel:
                vowel = char
            else:
                flush()
                vowel = char
        elif initial and vowel and not final and char in FINALS:
            final = char
        elif initial and vowel and final and final + char in CLUSTERS:
            final = CLUSTERS[final + char]
        else:
            flush()
            initial = char
    flush()
    return "".join(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("lang", choices=["en", "ko"])
    parser.add_argument("count", type=int)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    for _ in range(args.count):
        text = shape(rng, walk(rng, rng.randint(4, 16)))
        if args.lang == "ko":
            text = " ".join(compose("".join(DUBEOLSIK[k] for k in word)) for word in text.split())
        print(text)


if __name__ == "__main__":
    main()
