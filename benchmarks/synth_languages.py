"""The offline synth loop in the six seed languages, as a user runs it (issue 28).

Runs the two commands of the issue's target in a fresh folder, exactly as typed (plus any
``--dialogues-option``), and times the second one:

    convoscope synth contexts --n 2 --languages en,ko,pt,es,ja,zh --out contexts.jsonl
    convoscope synth dialogues contexts.jsonl --out dialogues.jsonl

then reads what it wrote and reports, per language: dialogues kept / attempted, accepted user
turns, model calls (and calls per accepted user turn), the rules that refused attempts, the model
that wrote each role, and one kept dialogue in full. The machine's load average is printed next to
the wall time: the machine is shared, so the time is indicative.

Run by hand:
    python benchmarks/synth_languages.py --keep /tmp/synth6 --out benchmarks/results/synth_languages.md
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from convoscope.items import Item, read_items
from convoscope.synth import default_filtered_path


def run(command: list[str], folder: Path) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the command's process, its output)."""
    started, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run([sys.executable, "-m", "convoscope", *command], cwd=folder, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{shlex.join(command)} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - started, _children_cpu() - cpu, done.stdout + done.stderr


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def load() -> str:
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


def calls(item: Item, seen_openings: set[str]) -> int:
    """Model calls of one dialogue; its shared opening counted once per (context, user)."""
    synth = item.meta["synth"]
    roles = [synth["usage"]]
    if synth["opening"]["key"] not in seen_openings:
        seen_openings.add(synth["opening"]["key"])
        roles.append(synth["opening"]["usage"])
    return sum(totals["calls"] for usage in roles for totals in usage.values())


def per_language(items: list[Item]) -> dict[str, dict]:
    rows: dict[str, dict] = defaultdict(lambda: {"attempted": 0, "kept": 0, "accepted_turns": 0, "calls": 0,
                                                 "rules": Counter(), "judged": 0, "models": set(),
                                                 "sample": None, "filtered": Counter()})
    seen: set[str] = set()
    for item in sorted(items, key=lambda item: item.id):
        row, synth = rows[item.language or "?"], item.meta["synth"]
        row["attempted"] += 1
        row["calls"] += calls(item, seen)
        row["models"].update(f"{role} {synth[f'{role}_model']}" for role in ("user", "judge", "chatbot")
                             if synth.get(f"{role}_model"))
        for log in synth["user_turns"]:
            row["accepted_turns"] += bool(log["accepted"])
            for attempt in log["attempts"]:
                judged = "judge" if attempt["checked_by"] == "judge" else "-"
                row["rules"][attempt.get("rule") or judged] += 1
        if synth["filter"]["passed"]:
            row["kept"] += 1
            if row["sample"] is None or len(item.context) > len(row["sample"].context):
                row["sample"] = item
        else:
            row["filtered"].update(synth["filter"]["reasons"])
    return rows


def report(rows: dict[str, dict], times: tuple[float, float], loads: tuple[str, str],
           commands: list[list[str]], summary: str) -> str:
    seconds, cpu = times
    lines = ["```bash", *(f"convoscope {shlex.join(command)}" for command in commands), "```", "",
             f"`synth dialogues` wall time: **{seconds:.0f} s** ({seconds / 60:.1f} min), CPU time of its "
             f"process {cpu:.0f} s ({cpu / 60:.1f} min, all threads); load average (1 / 5 / 15 min) before "
             f"{loads[0]}, after {loads[1]} on a 2-core machine shared with other engineers.", "",
             "| language | kept / attempted | accepted user turns | model calls | calls per accepted turn | "
             "attempts by outcome (rule that refused it, judge-checked, - = passed the rules, no judge) |",
             "|---|---|---|---|---|---|"]
    total_calls = total_turns = 0
    for language, row in sorted(rows.items()):
        per_turn = row["calls"] / row["accepted_turns"] if row["accepted_turns"] else float("nan")
        outcomes = ", ".join(f"{name} {count}" for name, count in row["rules"].most_common())
        why = ", ".join(f"{reason} {count}" for reason, count in row["filtered"].items())
        filtered = f" (filtered: {why})" if why else ""
        lines.append(f"| {language} | {row['kept']} / {row['attempted']}{filtered} | "
                     f"{row['accepted_turns']} | {row['calls']} | {per_turn:.1f} | {outcomes} |")
        total_calls += row["calls"]
        total_turns += row["accepted_turns"]
    calibration = re.search(r"calibration: calls / cache hits / tokens in\+out\s*│\s*(\d+)", summary)
    calibrating = int(calibration.group(1)) if calibration else 0
    lines += ["", f"All languages: {total_calls} calls for {total_turns} accepted user turns "
              f"({total_calls / max(1, total_turns):.1f} per turn), plus {calibrating} calls calibrating the "
              f"judge at the start ({(total_calls + calibrating) / max(1, total_turns):.1f} per turn with "
              "them).", "", "Models:", ""]
    lines += [f"- {language}: {', '.join(sorted(row['models']))}" for language, row in sorted(rows.items())]
    lines += ["", "One kept dialogue per language (the longest):", ""]
    for language, row in sorted(rows.items()):
        sample = row["sample"]
        if sample is None:
            lines.append(f"- {language}: none kept")
            continue
        lines.append(f"- **{language}** `{sample.id}` (ended by {sample.meta['synth']['end']}):")
        lines += [f"  - {turn.speaker}: {turn.text}" for turn in sample.context]
    lines += ["", "The command's own summary:", "", "```", summary.strip(), "```"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2)
    parser.add_argument("--languages", default="en,ko,pt,es,ja,zh")
    parser.add_argument("--dialogues-option", action="append", default=[],
                        help="extra option for `synth dialogues`, e.g. --dialogues-option=--max-turns=4")
    parser.add_argument("--keep", type=Path, help="run in this folder (kept) instead of a temporary one")
    parser.add_argument("--out", type=Path, help="also write the report here")
    args = parser.parse_args()
    commands = [["synth", "contexts", "--n", str(args.n), "--languages", args.languages,
                 "--out", "contexts.jsonl"],
                ["synth", "dialogues", "contexts.jsonl", *args.dialogues_option, "--out", "dialogues.jsonl"]]
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        run(commands[0], folder)
        before = load()
        seconds, cpu, summary = run(commands[1], folder)
        after = load()
        out = folder / "dialogues.jsonl"
        items = [item for path in (out, default_filtered_path(out)) if path.exists()
                 for item in read_items(path)]
        text = report(per_language(items), (seconds, cpu), (before, after), commands, summary)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
