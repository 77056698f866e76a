#!/usr/bin/env python3
"""Every flag of the gibberish filter on the benchmark sets, as SHA-256 digests: run before and
after a change that must not move any decision (a speed-up), and compare.

    python3 benchmarks/gibberish_same_flags.py                      # print the digests
    python3 benchmarks/gibberish_same_flags.py --check benchmarks/results/gibberish_flags_reference.txt
    python3 benchmarks/gibberish_same_flags.py --dump /tmp/flags    # also the full JSONL per part

Parts: each labelled set of ``benchmarks/data`` (gibberish_*.tsv: identified, forced English, and
with the declared language where the set has one), ``layout_mashes.tsv`` (identified and
declared), the public rrenaud and Voynich sets when the shared data is there, and the command
``convoscope gibberish`` end to end (``--lang auto`` and ``--lang en``) on 50,000 distinct English
lines built as ``gibberish_speed.py --cli`` builds them. A digest covers every field of every
result (``model_dump``) in order, so a changed measurement counts as much as a changed flag.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from convoscope.filters import detect_many

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gibberish_eval  # noqa: E402
import gibberish_speed  # noqa: E402

SHARED = Path("/work/shared/data")


def rows_of(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


def library_parts(shared: Path | None):  # type: ignore[no-untyped-def]
    for path in sorted((HERE / "data").glob("gibberish_*.tsv")) + [HERE / "data" / "layout_mashes.tsv"]:
        rows = rows_of(path)
        texts = [row["text"] for row in rows]
        yield f"{path.name} auto", detect_many(texts)
        yield f"{path.name} en", detect_many(texts, lang="en")
        column = "language" if "language" in rows[0] else "lang" if "lang" in rows[0] else None
        if column:
            yield f"{path.name} declared", detect_many(texts, languages=[row[column] or None for row in rows])
    if shared is not None and (shared / "gibberish-rrenaud").exists():
        rr = shared / "gibberish-rrenaud"
        texts = [t for name in ("good.txt", "bad.txt")
                 for t in (rr / name).read_text().splitlines() if t.strip()]
        yield "rrenaud auto", detect_many(texts)
        yield "voynich auto", detect_many(gibberish_eval.voynich_lines(shared))


def digest(lines: list[str]) -> str:
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def command_parts(shared: Path | None, count: int):  # type: ignore[no-untyped-def]
    english, _ = gibberish_speed.english_lines(shared)
    with tempfile.TemporaryDirectory() as folder:
        answers, out = Path(folder, "answers.txt"), Path(folder, "out.jsonl")
        answers.write_text("\n".join(gibberish_speed.distinct_lines(english, count)) + "\n", encoding="utf-8")
        for lang in ("auto", "en"):
            subprocess.run([sys.executable, "-m", "convoscope", "gibberish", str(answers), "--lang", lang,
                            "--out", str(out)], check=True, capture_output=True)
            yield f"command {count} lines --lang {lang}", out.read_text(encoding="utf-8").splitlines(True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--shared", type=Path, default=SHARED if SHARED.exists() else None)
    parser.add_argument("--lines", type=int, default=50_000, help="lines for the command (0: skip it)")
    parser.add_argument("--dump", type=Path, help="write each part's JSONL into this folder")
    parser.add_argument("--check", type=Path, help="compare with digests printed before")
    args = parser.parse_args()
    found: dict[str, str] = {}
    parts = list(library_parts(args.shared))
    texts = [(name, [json.dumps(r.model_dump(mode="json"), ensure_ascii=False) + "\n" for r in results])
             for name, results in parts]
    if args.lines:
        texts += list(command_parts(args.shared, args.lines))
    for name, lines in texts:
        found[name] = digest(lines)
        if args.dump:
            args.dump.mkdir(parents=True, exist_ok=True)
            (args.dump / (name.replace(" ", "_") + ".jsonl")).write_text("".join(lines), encoding="utf-8")
    if args.check is None:
        for name, value in found.items():
            print(f"{value}  {name}")
        return
    expected = dict(reversed(line.rstrip("\n").split("  ", 1))
                    for line in args.check.read_text().splitlines())
    moved = [name for name in expected if found.get(name) != expected[name]]
    print("identical" if not moved else "CHANGED: " + ", ".join(moved))
    raise SystemExit(1 if moved else 0)


if __name__ == "__main__":
    main()
