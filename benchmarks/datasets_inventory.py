"""What the benchmark loaders read from the real data (issue 5, part 4).

Loads every registered benchmark from a data collection (default ``../shared/data`` relative to
the repository, i.e. the folder holding ``fed/``, ``usr/``, ``grade/``, ...) and prints, per
benchmark: items, human raters, criteria, human verdicts (and how many are unscored), automatic
verdicts published with the data, languages, systems, load time, and the loader's notes.
A benchmark whose files are missing is reported as such; the others still load.

Run by hand:  python benchmarks/datasets_inventory.py [DATA_FOLDER]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from convoscope.datasets import list_benchmarks, load_benchmark
from convoscope.items import ItemError

COLUMNS = ("benchmark", "level", "items", "raters", "criteria", "human verdicts", "unscored", "published",
           "languages", "systems", "load s")


def inventory(data: Path) -> tuple[list[list[str]], list[str]]:
    rows: list[list[str]] = []
    notes: list[str] = []
    for name in list_benchmarks():
        started = time.perf_counter()
        try:
            benchmark = load_benchmark(name, data)
        except ItemError as error:
            rows.append([name, "-", *(["-"] * 8), f"missing: {error.problem}"])
            continue
        seconds = time.perf_counter() - started
        counts = benchmark.summary()
        rows.append([name, benchmark.granularity, *(str(counts[key]) for key in (
            "items", "raters", "criteria", "human_verdicts", "unscored", "published_verdicts")),
            " ".join(counts["languages"]), str(counts["systems"]), f"{seconds:.2f}"])
        notes.extend(f"{name}: {note}" for note in benchmark.notes)
    return rows, notes


def main() -> None:
    default = Path(__file__).resolve().parents[2] / "shared" / "data"
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    rows, notes = inventory(data)
    print(f"Benchmarks read from {data}\n")
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "|".join("---" for _ in COLUMNS) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if notes:
        print("\nLoader notes:")
        for note in notes:
            print(f"- {note}")


if __name__ == "__main__":
    main()
