#!/usr/bin/env python3
"""Precision and recall of the offline safety rules (``convoscope.judges.safety_flags``) on our
set, benchmarks/data/safety_rules.csv: assistant replies in an in-car setting, English and
Korean, half of them dangerous instructions (disabling a safety device, unsafe driving, risky
procedures, tampering), the rest near misses (the same devices in safe advice, negations,
refusals, the manual's own procedures). Three splits:

* dev (80): written with the rules;
* revised (60): written afterwards as a held-out set. The first rules found 9 of its 30
  dangerous replies (precision 1.00, recall 0.30), so the rules were revised on it: it is no
  longer held out;
* held-out (60): written after that revision and never used to change a rule.

With ``--judge embedded`` it also asks the embedded judge, as the security expert, whether each
reply fulfils the harmful-system-output KPI, and reports how many dangerous replies the model
alone marks "not fulfilled" beside the rules (the judge then applies the rules itself).

    python3 benchmarks/safety_rules.py
    python3 benchmarks/safety_rules.py --judge embedded --split held-out   # ~120 model calls
"""

from __future__ import annotations

import argparse
import asyncio
import csv
from pathlib import Path

from convoscope.criteria import get_criterion
from convoscope.items import Item, Turn
from convoscope.judges import PERSONAS, Verdict, safety_flags

HERE = Path(__file__).resolve().parent


def load() -> list[dict[str, str]]:
    with open(HERE / "data" / "safety_rules.csv", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def scores(flagged: list[bool], harmful: list[bool]) -> str:
    caught = sum(f and h for f, h in zip(flagged, harmful, strict=True))
    precision = f"{caught / sum(flagged):.2f}" if any(flagged) else "-"
    return f"{sum(harmful)} | {sum(flagged)} | {precision} | {caught / sum(harmful):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--judge", help="also ask this judge (e.g. embedded) as the security expert")
    parser.add_argument("--split", default="held-out", help="split the judge reads (default held-out)")
    args = parser.parse_args()
    rows = load()
    print("| split | language | replies | dangerous | flagged | precision | recall |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for split in ("dev", "revised", "held-out"):
        for language in ("en", "ko", "all"):
            chosen = [r for r in rows if r["split"] == split and language in ("all", r["language"])]
            flagged = [bool(safety_flags(r["text"])) for r in chosen]
            print(f"| {split} | {language} | {len(chosen)} | "
                  f"{scores(flagged, [r['label'] == 'harmful' for r in chosen])} |")
    if args.judge:
        judged(args.judge, [r for r in rows if r["split"] == args.split])


def judged(judge: str, rows: list[dict[str, str]]) -> None:
    import tempfile

    from convoscope.runs import JudgeSpec, judge_async

    criterion = get_criterion("kpi:harmful-system-output")
    items = [Item(id=r["id"], context=(Turn(speaker="user", text="How do I deal with this in my car?"),),
                  response=r["text"], language=r["language"]) for r in rows]
    spec = JudgeSpec(judge, persona=PERSONAS["security-expert"], persona_name="security-expert")
    with tempfile.TemporaryDirectory() as folder:
        result = asyncio.run(judge_async(items, [criterion], [spec], store=Path(folder) / "s.db",
                                         cache_path=HERE / "results" / "safety_rules.cache.db",
                                         concurrency=2))
    verdicts: dict[str, Verdict] = {v.item_id: v for v in result.verdicts}
    harmful = [r["label"] == "harmful" for r in rows]
    by_rule = [bool(v.reason and v.reason.startswith("offline safety rules")) for v in
               (verdicts[r["id"]] for r in rows)]
    with_rules = [verdicts[r["id"]].value == 0 for r in rows]
    # The rules only ever turn "fulfilled" into "not fulfilled", and say so in the reason.
    model_alone = [said and not rule for said, rule in zip(with_rules, by_rule, strict=True)]
    print(f"\n{judge} as the security expert on harmful-system-output ({len(rows)} replies):")
    print("| marks 'not fulfilled' | dangerous | flagged | precision | recall |")
    print("|---|---:|---:|---:|---:|")
    print(f"| the model alone | {scores(model_alone, harmful)} |")
    print(f"| the model with the rules | {scores(with_rules, harmful)} |")


if __name__ == "__main__":
    main()
