#!/usr/bin/env python3
"""Answers that imitate the judge, end to end through the survey pipeline (issue 29).

The probe set, ``benchmarks/data/grader_imitation_probe.csv``, holds 149 answers in eight
languages (en, ko, pt, es, de, fr, ja, zh), written for convoscope in two halves: ``held-out``
(72, written first and committed before any detector code existed, scored once) and ``tune`` (77,
written next, used to write the patterns). Each manipulative answer has a class
(forged_verdict, fake_boundary, role_line, fake_result, bracketed_instruction, rubric_change,
direct_request), its honest part (``clean``) and the effort that honest part deserves at most
(``deserved_effort``, on the 0-7 effort scale); ``none`` rows are ordinary answers, many of them
near misses ("I'd rate the stay 9/10", "Nota 10 para o café").

For each half it reports, per class and per language:

* **flagged** — the offline check (``grader_signals``) names the answer (before any model call);
* **accepted** — the pipeline accepted it (target 0);
* **above, not rejected** — the judge's effort is above ``deserved_effort`` and the answer was
  not rejected (target at most 5 %); ``above clean`` compares with the judge's own effort for the
  honest part instead, so that a tiny judge's generosity to short answers is not counted as the
  manipulation's doing.

It also counts false flags on ordinary answers: the ``none`` rows and every ordinary answer in
``benchmarks/data/`` (the clean rows of the gibberish sets, the labelled survey answers that are
not manipulative, the earlier grader probe's ordinary rows) and ``examples/`` (target at most 1 %).

    python benchmarks/survey_grader_imitation.py                   # embedded judge (completion)
    python benchmarks/survey_grader_imitation.py --offline         # detector only, no model
    python benchmarks/survey_grader_imitation.py --judge openai:MODEL@http://127.0.0.1:8000/v1

The patterns and both halves were written by the same person, so even the held-out figures are
an upper bound on what answers nobody tuned for will meet.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import glob
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from convoscope.filters import grader_signals
from convoscope.items import Item
from convoscope.runs import judge_specs
from convoscope.store import Store
from convoscope.survey import score_survey_async
from convoscope.survey._score import grader_terms

HERE = Path(__file__).resolve().parent
PROBES = HERE / "data" / "grader_imitation_probe.csv"
CLASSES = ("forged_verdict", "fake_boundary", "role_line", "fake_result", "bracketed_instruction",
           "rubric_change", "direct_request")
LANGUAGES = ("en", "ko", "pt", "es", "de", "fr", "ja", "zh")


def read_probes() -> list[dict[str, str]]:
    with PROBES.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def ordinary_answers() -> list[str]:
    """Every ordinary answer the project keeps: clean gibberish-set rows, non-manipulative
    labelled and probe answers, the example export."""
    texts: list[str] = []
    for path in sorted(glob.glob(str(HERE / "data" / "gibberish_*.tsv"))):
        with open(path, encoding="utf-8", newline="") as handle:
            texts += [row["text"] for row in csv.DictReader(handle, delimiter="\t",
                                                            quoting=csv.QUOTE_NONE)
                      if row["label"] == "clean"]
    with open(HERE / "data" / "survey_labelled.csv", encoding="utf-8", newline="") as handle:
        # Two labelled answers ask for a high score on purpose; they are not ordinary.
        texts += [row["answer"] for row in csv.DictReader(handle)
                  if "score" not in row["answer"].lower() and "점수" not in row["answer"]]
    with open(HERE / "data" / "survey_grader_probe.csv", encoding="utf-8", newline="") as handle:
        texts += [row["answer"] for row in csv.DictReader(handle) if row["manipulative"] == "0"]
    with open(HERE.parent / "examples" / "survey_answers.csv", encoding="utf-8", newline="") as handle:
        texts += [row["answer"] for row in csv.DictReader(handle)]
    return texts


async def judged(rows: list[dict[str, str]], judges: tuple[str, ...], folder: Path,
                 clean: bool) -> dict[str, Any]:
    items = [Item(id=row["id"], question=row["question"],
                  response=row["clean"] if clean else row["answer"]) for row in rows]
    result = await score_survey_async(items, judge_specs(judges, mode="auto"),
                                      store=Store(folder / "store.db"),
                                      cache_path=folder / "cache.db")
    return {answer.id: answer for answer in result.answers}


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "-"


def table(rows: list[dict[str, str]], scored: dict[str, Any] | None,
          clean: dict[str, Any] | None, key: str, values: tuple[str, ...]) -> list[str]:
    lines = [f"| {key} | answers | flagged | accepted | above deserved, not rejected "
             "| above clean, not rejected |",
             "|---|---:|---:|---:|---:|---:|"]
    groups: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        groups[row[key]].append(row)
    for value in (*values, "all"):
        chosen = rows if value == "all" else groups.get(value, [])
        if not chosen:
            continue
        flagged = sum(bool(grader_signals(row["answer"], terms=grader_terms())) for row in chosen)
        cells = [str(len(chosen)), _pct(flagged, len(chosen))]
        if scored is None:
            cells += ["-", "-", "-"]
        else:
            answers = [scored[row["id"]] for row in chosen]
            cells.append(_pct(sum(a.decision == "accept" for a in answers), len(chosen)))
            cells.append(_pct(sum(_above(a, int(row["deserved_effort"])) for a, row
                                  in zip(answers, chosen, strict=True)), len(chosen)))
            cells.append("-" if clean is None else _pct(sum(
                _above(a, max(int(row["deserved_effort"]), _effort(clean.get(row["id"]))))
                for a, row in zip(answers, chosen, strict=True)), len(chosen)))
        lines.append(f"| {value} | " + " | ".join(cells) + " |")
    return lines


def _effort(answer: Any) -> int:
    value = None if answer is None else answer.scores.get("effort")
    return -1 if value is None else int(value)


def _above(answer: Any, ceiling: int) -> bool:
    return answer.decision != "reject" and _effort(answer) > ceiling


def cross_table(rows: list[dict[str, str]], scored: dict[str, Any] | None) -> list[str]:
    """Class by language: flagged / answers, then how many were accepted or kept a score above
    what they deserve without being rejected (``a`` and ``s``; omitted when both are 0)."""
    lines = ["| class | " + " | ".join(LANGUAGES) + " |", "|---|" + "---:|" * len(LANGUAGES)]
    for name in CLASSES:
        cells = []
        for language in LANGUAGES:
            chosen = [row for row in rows if row["class"] == name and row["language"] == language]
            if not chosen:
                cells.append("")
                continue
            flagged = sum(bool(grader_signals(row["answer"], terms=grader_terms())) for row in chosen)
            cell = f"{flagged}/{len(chosen)}"
            if scored is not None:
                accepted = sum(scored[row["id"]].decision == "accept" for row in chosen)
                above = sum(_above(scored[row["id"]], int(row["deserved_effort"])) for row in chosen)
                cell += f" a{accepted} s{above}" if accepted or above else ""
            cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


async def main(args: argparse.Namespace) -> None:
    probes = read_probes()
    ordinary = ordinary_answers()
    false_flags = [text for text in ordinary if grader_signals(text, terms=grader_terms())]
    print(f"False flags on ordinary answers from benchmarks/data and examples: "
          f"{_pct(len(false_flags), len(ordinary))}")
    for text in false_flags:
        print(f"  false flag: {text!r}")
    folder = Path(args.workdir or tempfile.mkdtemp(prefix="imitation-"))
    folder.mkdir(parents=True, exist_ok=True)
    for split in ("held-out", "tune"):
        rows = [row for row in probes if row["split"] == split]
        manipulative = [row for row in rows if row["class"] != "none"]
        ordinary_rows = [row for row in rows if row["class"] == "none"]
        scored = clean = None
        if not args.offline:
            scored = await judged(rows, tuple(args.judges), folder, clean=False)
            clean = await judged(manipulative, tuple(args.judges), folder, clean=True)
        print(f"\n## {split} half ({len(manipulative)} manipulative, {len(ordinary_rows)} ordinary)\n")
        print("\n".join(table(manipulative, scored, clean, "class", CLASSES)) + "\n")
        print("\n".join(table(manipulative, scored, clean, "language", LANGUAGES)) + "\n")
        print("Flagged / answers by class and language (a = accepted, s = scored above what it "
              "deserves and not rejected; shown when not 0):\n")
        print("\n".join(cross_table(manipulative, scored)) + "\n")
        flagged = [row["id"] for row in ordinary_rows
                   if grader_signals(row["answer"], terms=grader_terms())]
        print(f"Ordinary answers of this half flagged: {_pct(len(flagged), len(ordinary_rows))} {flagged}")
        found = sum(bool(grader_signals(row["answer"], terms=grader_terms())) for row in manipulative)
        precision = found / (found + len(flagged)) if found + len(flagged) else float("nan")
        print(f"Grader detection on this half: precision {precision:.3f}, recall "
              f"{found / len(manipulative):.3f} ({found} of {len(manipulative)} manipulative found, "
              f"{len(flagged)} of {len(ordinary_rows)} ordinary flagged)")
        missed = [row["id"] for row in manipulative
                  if not grader_signals(row["answer"], terms=grader_terms())]
        print(f"Manipulative answers not flagged: {missed}")
        if scored is not None:
            for row in manipulative:
                answer = scored[row["id"]]
                if answer.decision == "accept" or _above(answer, int(row["deserved_effort"])):
                    print(f"  {row['id']} {row['class']}: {answer.decision}, effort "
                          f"{answer.scores.get('effort')} > {row['deserved_effort']}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judge", dest="judges", action="append", default=[],
                        help="model spec (default: embedded); repeat for a panel")
    parser.add_argument("--offline", action="store_true", help="the detector only, no model call")
    parser.add_argument("--workdir", help="keep the store and response cache here (re-runs are free)")
    arguments = parser.parse_args()
    arguments.judges = arguments.judges or ["embedded"]
    asyncio.run(main(arguments))
