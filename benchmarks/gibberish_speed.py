#!/usr/bin/env python3
"""Throughput of the gibberish filter (answers per second), beside the `gibberish-detector` PyPI
package when it is installed. Run by hand; figures depend on the machine.

    python3 benchmarks/gibberish_speed.py                  # 20,000 answers per language
    python3 benchmarks/gibberish_speed.py --answers 5000 --shared ../shared/data

`gibberish-detector` ships no trained model, so it is trained here in memory: on the shared
English corpora when --shared is given, otherwise on the clean half of the English dev set. Its
character bigram model covers English only, so it runs on the English answers only.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import time
from pathlib import Path

from convoscope.filters import detect, detect_many, markov_log_likelihood

HERE = Path(__file__).resolve().parent


def answers(lang: str, count: int) -> list[str]:
    with open(HERE / "data" / f"gibberish_{lang}.tsv", encoding="utf-8", newline="") as handle:
        texts = [row["text"] for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)]
    return (texts * (count // len(texts) + 1))[:count]


def rate(function, texts: list[str]) -> float:
    start = time.perf_counter()
    function(texts)
    return len(texts) / (time.perf_counter() - start)


def cold_start_seconds() -> dict[str, float]:
    """First-call costs: tables and word list (English), tables and analyser (Korean)."""
    costs = {}
    for lang, text in (("en", "the fries were great"), ("ko", "감자튀김이 맛있어요")):
        start = time.perf_counter()
        detect(text)
        costs[lang] = time.perf_counter() - start
    return costs


def english_training_text(shared: Path | None) -> str:
    if shared is None:
        with open(HERE / "data" / "gibberish_en.tsv", encoding="utf-8", newline="") as handle:
            rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
            return "\n".join(row["text"] for row in rows if row["label"] == "clean")
    lines = (shared / "human-chat" / "human_chat.txt").read_text(encoding="utf-8").splitlines()
    texts = [line.split(":", 1)[-1] for line in lines]
    for name in ("valid_freq.json", "valid_rare.json"):
        data = json.loads((shared / "topical-chat" / name).read_text(encoding="utf-8"))
        texts += [turn["message"] for conversation in data.values() for turn in conversation["content"]]
    return "\n".join(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--answers", type=int, default=20_000)
    parser.add_argument("--shared", type=Path, help="shared/data, to train gibberish-detector on")
    args = parser.parse_args()
    for lang, seconds in cold_start_seconds().items():
        print(f"first call ({lang}, loads tables/dictionary/analyser): {seconds:.2f} s")
    print("| method | language | answers | answers/s |")
    print("|---|---|---:|---:|")
    for lang in ("en", "ko"):
        texts = answers(lang, args.answers)
        full = rate(detect_many, texts)
        markov = rate(lambda batch, lang=lang: [markov_log_likelihood(t, lang=lang) for t in batch], texts)
        print(f"| convoscope full filter | {lang} | {len(texts)} | {full:,.0f} |")
        print(f"| convoscope Markov score only | {lang} | {len(texts)} | {markov:,.0f} |")
    if importlib.util.find_spec("gibberish_detector") is None:
        print("gibberish-detector is not installed: pip install gibberish-detector")
        return
    import string

    from gibberish_detector import detector, trainer

    model = trainer.train_on_content(english_training_text(args.shared), string.ascii_letters)
    baseline = detector.Detector(model, threshold=4.0)
    texts = answers("en", args.answers)
    speed = rate(lambda batch: [baseline.is_gibberish(t) for t in batch], texts)
    print(f"| gibberish-detector 0.1 (bigram, trained here) | en | {len(texts)} | {speed:,.0f} |")


if __name__ == "__main__":
    main()
