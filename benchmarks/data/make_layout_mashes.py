#!/usr/bin/env python3
"""Generates benchmarks/data/layout_mashes.tsv (issue 38): keyboard mashes typed on each layout
the XKB data knows, and ordinary text in the same languages, by a fixed procedure written before
the rules that judge them.

Mashes: for every layout in ``src/convoscope/filters/data/keyboard_rows.json`` (made by
``scripts/keyboard_rows.py`` from xkb-data) and each of its three rows, a slide of 6 keys from the
row's start, the same slide backwards, and a slide from the middle, plus one two-row mash (home
row then top row, 4 keys each).
Ordinary text: for the languages of those layouts that wordfreq has a list for, the 40 most
frequent words of 4+ letters, cut into answers of five words (Thai: PyThaiNLP's dictionary).

    python benchmarks/data/make_layout_mashes.py
"""

from __future__ import annotations

import csv
import json
import random
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROWS = ROOT / "src" / "convoscope" / "filters" / "data" / "keyboard_rows.json"
OUT = Path(__file__).with_name("layout_mashes.tsv")
# Layout file -> the language its users write (for the ordinary rows and the declared language).
LANGUAGES = {"us": "en", "ru": "ru", "ua": "uk", "bg": "bg", "by": "ru", "ara": "ar", "ir": "fa",
             "il": "he", "gr": "el", "in": "hi", "th": "th", "tr": "tr", "se": "sv", "de": "de",
             "fr": "fr", "es": "es", "pt": "pt", "it": "it", "pl": "pl", "cz": "cs", "vn": "vi",
             "dk": "da", "no": "nb", "fi": "fi", "hu": "hu", "nl": "nl", "pk": "ur", "bd": "bn", "np": "ne"}


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


def ordinary(layout: str, lang: str, rng: random.Random) -> list[dict[str, str]]:
    if lang == "th":
        from pythainlp.corpus import thai_words

        words = sorted(word for word in thai_words() if 3 <= len(word) <= 6)
        chosen = rng.sample(words, 20)
    else:
        from wordfreq import top_n_list

        # Letters and marks: str.isalpha() is false for a Devanagari or Bengali word with a vowel sign.
        chosen = [word for word in top_n_list(lang, 400)
                  if len(word) >= 4 and all(unicodedata.category(char)[0] in "LM" for char in word)][:40]
    joiner = "" if lang == "th" else " "
    return [{"label": "ordinary", "kind": "frequent_words", "layout": layout,
             "text": joiner.join(chosen[start:start + 5])} for start in range(0, len(chosen) - 4, 5)]


def main() -> None:
    rng = random.Random(38)
    layouts = json.loads(ROWS.read_text(encoding="utf-8"))["layouts"]
    rows: list[dict[str, str]] = []
    for layout, letter_rows in layouts.items():
        for row in mashes(layout, letter_rows):
            rows.append({**row, "lang": LANGUAGES.get(layout, "")})
    from wordfreq import available_languages

    known = set(available_languages()) | {"th"}  # wordfreq answers an unknown code with English
    for layout, lang in LANGUAGES.items():
        if layout in layouts and lang in known:
            rows += [{**row, "lang": lang} for row in ordinary(layout, lang, rng)]
    with OUT.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["label", "kind", "layout", "lang", "text"],
                                delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"{OUT}: {len(rows)} rows")


if __name__ == "__main__":
    main()
