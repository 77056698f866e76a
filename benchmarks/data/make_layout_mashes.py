#!/usr/bin/env python3
"""Generates benchmarks/data/layout_mashes.tsv (issue 38): keyboard mashes typed on each layout
the XKB data knows, and ordinary text in the same languages, by a fixed procedure written before
the rules that judge them.

Mashes: for every layout in ``src/convoscope/filters/data/keyboard_rows.json`` (made by
``scripts/keyboard_rows.py`` from xkb-data) and each of its three rows, a slide of 6 keys from the
row's start, the same slide backwards, and a slide from the middle, plus one two-row mash (home
row then top row, 4 keys each).
Input methods (the ``input_methods`` rows of the same file, from m17n-db): Korean 2-set rows
as bare jamo with the same slides, the same key slides composed into syllables by the 2-set
automaton of ``make_mashes.py``, each row's left half (consonants) interleaved with the row
below's right half (vowels) and composed (``뱆더`` style), and ten seeded walks over neighbouring
keys composed; zhuyin rows with the same slides; pinyin: the US row slides converted as a
pinyin IME would (longest syllable of m17n's ``zh-py.mim`` first, an initial typed alone read as
its first syllable, each syllable's first character).
Ordinary text: for the languages of those layouts that wordfreq has a list for, the 40 most
frequent words of 4+ letters, cut into answers of five words (Thai: PyThaiNLP's dictionary).

    python benchmarks/data/make_layout_mashes.py
"""

from __future__ import annotations

import csv
import json
import random
import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROWS = ROOT / "src" / "convoscope" / "filters" / "data" / "keyboard_rows.json"
OUT = Path(__file__).with_name("layout_mashes.tsv")
sys.path.insert(0, str(Path(__file__).parent))  # make_mashes.py: the 2-set automaton
# Layout file -> the language its users write (for the ordinary rows and the declared language).
LANGUAGES = {"us": "en", "ru": "ru", "ua": "uk", "bg": "bg", "by": "ru", "ara": "ar", "ir": "fa",
             "il": "he", "gr": "el", "in": "hi", "th": "th", "tr": "tr", "se": "sv", "de": "de",
             "fr": "fr", "es": "es", "pt": "pt", "it": "it", "pl": "pl", "cz": "cs", "vn": "vi",
             "dk": "da", "no": "nb", "fi": "fi", "hu": "hu", "nl": "nl", "pk": "ur", "bd": "bn", "np": "ne",
             "ko-han2": "ko", "zh-py": "zh"}


def mashes(layout: str, rows: list[str]) -> list[dict[str, str]]:
    out = []
    for index, row in enumerate(rows):
        middle = max(0, len(row) // 2 - 3)
        slides = (("slide", row[:6]), ("backwards", row[:6][::-1]), ("middle", row[middle:middle + 6]))
        for kind, text in slides:
            if len(text) >= 5:
                out.append({"label": "mash", "kind": f"row{index}_{kind}", "layout": layout, "text": text})
    out.append({"label": "mash", "kind": "two_rows", "layout": layout, "text": rows[1][:4] + rows[0][:4]})
    return out


M17N = Path("/usr/share/m17n")
_PINYIN = re.compile(r'^\s*\("([a-z]+)"\s*\("(.)')


def korean(rows: list[str]) -> list[dict[str, str]]:
    from make_mashes import DUBEOLSIK, compose, walk

    out = [{**row, "layout": "ko-han2"} for row in mashes("ko-han2", rows)]
    for row in out[:]:
        if compose(row["text"]) != row["text"]:
            out.append({**row, "kind": row["kind"] + "_composed", "text": compose(row["text"])})
    for index in range(len(rows) - 1):
        left, right = rows[index][:5], rows[index + 1][len(rows[index + 1]) // 2:]
        mixed = "".join(a + b for a, b in zip(left, right, strict=False))
        out.append({"label": "mash", "kind": f"rows{index}{index + 1}_interleaved", "layout": "ko-han2",
                    "text": compose(mixed)})
    rng = random.Random(382)
    for _ in range(10):
        keys = walk(rng, rng.randint(5, 10))
        out.append({"label": "mash", "kind": "walk_composed", "layout": "ko-han2",
                    "text": compose("".join(DUBEOLSIK[key] for key in keys))})
    return out


def pinyin_table() -> dict[str, str]:
    table: dict[str, str] = {}
    for line in (M17N / "zh-py.mim").read_text(encoding="utf-8").splitlines():
        match = _PINYIN.match(line)
        if match:
            table.setdefault(match.group(1), match.group(2))
    return table


def pinyin(keys: str, table: dict[str, str]) -> str:
    out, index = [], 0
    while index < len(keys):
        size = next((size for size in range(6, 0, -1) if keys[index:index + size] in table), 0)
        if size:
            out.append(table[keys[index:index + size]])
            index += size
            continue
        first = next((syllable for syllable in sorted(table) if syllable.startswith(keys[index])), None)
        out.append(table[first] if first else keys[index])
        index += 1
    return "".join(out)


def chinese(us_rows: list[str], zhuyin_rows: list[str]) -> list[dict[str, str]]:
    out = [{**row, "layout": "zh-bopomofo"} for row in mashes("zh-bopomofo", zhuyin_rows)]
    table = pinyin_table()
    for row in mashes("zh-py", us_rows):
        out.append({**row, "layout": "zh-py", "text": pinyin(row["text"], table)})
    return out


def ordinary(layout: str, lang: str, rng: random.Random) -> list[dict[str, str]]:
    if lang == "th":
        from pythainlp.corpus import thai_words

        words = sorted(word for word in thai_words() if 3 <= len(word) <= 6)
        chosen = rng.sample(words, 20)
    else:
        from wordfreq import top_n_list

        # Letters and marks: str.isalpha() is false for a Devanagari or Bengali word with a vowel sign.
        shortest = 2 if lang in ("ko", "zh") else 4  # a Hangul or Han character is a syllable
        chosen = [word for word in top_n_list(lang, 400)
                  if len(word) >= shortest
                  and all(unicodedata.category(char)[0] in "LM" for char in word)][:40]
    joiner = "" if lang in ("th", "zh") else " "
    return [{"label": "ordinary", "kind": "frequent_words", "layout": layout,
             "text": joiner.join(chosen[start:start + 5])} for start in range(0, len(chosen) - 4, 5)]


def main() -> None:
    rng = random.Random(38)
    layouts = json.loads(ROWS.read_text(encoding="utf-8"))["layouts"]
    rows: list[dict[str, str]] = []
    for layout, letter_rows in layouts.items():
        for row in mashes(layout, letter_rows):
            rows.append({**row, "lang": LANGUAGES.get(layout, "")})
    methods = json.loads(ROWS.read_text(encoding="utf-8")).get("input_methods", {})
    if "ko-han2" in methods:
        rows += [{**row, "lang": "ko"} for row in korean(methods["ko-han2"])]
    if "zh-bopomofo" in methods and (M17N / "zh-py.mim").is_file():
        rows += [{**row, "lang": "zh"} for row in chinese(layouts["us"], methods["zh-bopomofo"])]
    from wordfreq import available_languages

    known = set(available_languages()) | {"th"}  # wordfreq answers an unknown code with English
    for layout, lang in LANGUAGES.items():
        if (layout in layouts or layout in methods or layout == "zh-py") and lang in known:
            rows += [{**row, "lang": lang} for row in ordinary(layout, lang, rng)]
    with OUT.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["label", "kind", "layout", "lang", "text"],
                                delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"{OUT}: {len(rows)} rows")


if __name__ == "__main__":
    main()
