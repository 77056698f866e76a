#!/usr/bin/env python3
"""Rebuild the gibberish filter's tables in src/convoscope/filters/data/ from the shared corpora.

    python3 scripts/build_gibberish_tables.py --data ../shared/data

Reads three permissively licensed corpora (each folder's SOURCE.md must name the licence checked
below): human-chat (CC0-1.0) and Topical-Chat valid_freq/valid_rare (CDLA-Sharing-1.0) for
English, songys' ChatbotData.csv (MIT) for Korean. Only aggregate counts and a word list leave the
corpora. Output is byte-identical for identical input.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

from convoscope.filters._build import build_tables

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "src" / "convoscope" / "filters" / "data"
LICENCES = {"human-chat": "CC0", "topical-chat": "CDLA-Sharing", "korean-chatbot-data": "MIT"}
SPEAKER = re.compile(r"^Human \d+:\s*")


def check_licence(folder: Path) -> None:
    expected = LICENCES[folder.name]
    source = folder / "SOURCE.md"
    if not source.is_file() or expected not in source.read_text(encoding="utf-8"):
        raise SystemExit(f"{source}: expected a SOURCE.md naming the {expected} licence; not building")


def human_chat(folder: Path) -> list[str]:
    lines = (folder / "human_chat.txt").read_text(encoding="utf-8").splitlines()
    return [SPEAKER.sub("", line) for line in lines if line.strip()]


def topical_chat(folder: Path) -> list[str]:
    texts = []
    for name in ("valid_freq.json", "valid_rare.json"):
        conversations = json.loads((folder / name).read_text(encoding="utf-8"))
        texts += [turn["message"] for conversation in conversations.values()
                  for turn in conversation["content"]]
    return texts


def korean_chatbot(folder: Path) -> list[str]:
    with open(folder / "ChatbotData.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    # The answers repeat a few stock replies hundreds of times; count each distinct text once.
    return list(dict.fromkeys(text for row in rows for text in (row["Q"], row["A"]) if text))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="the shared/data folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the tables go")
    parser.add_argument("--smoothing", type=float, default=1.0, help="add-k smoothing of bigram counts")
    parser.add_argument("--min-word-count", type=int, default=2, help="corpus word-list cut-off")
    args = parser.parse_args(argv)
    folders = {name: args.data / name for name in LICENCES}
    for folder in folders.values():
        check_licence(folder)
    english = human_chat(folders["human-chat"]) + topical_chat(folders["topical-chat"])
    korean = korean_chatbot(folders["korean-chatbot-data"])
    paths = build_tables(
        english, korean, args.out, smoothing=args.smoothing, min_word_count=args.min_word_count,
        english_source="human-chat (CC0-1.0) + Topical-Chat valid_freq/valid_rare (CDLA-Sharing-1.0)",
        korean_source="songys/Chatbot_data ChatbotData.csv (MIT), distinct Q and A texts",
    )
    print(f"{len(english)} English texts, {len(korean)} Korean texts")
    for path in paths.values():
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
