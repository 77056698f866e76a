#!/usr/bin/env python3
"""Speed of the gibberish filter beside the `gibberish-detector` PyPI package (English character
bigrams only), on distinct lines. Run by hand; figures depend on the machine and its load.

    pip install gibberish-detector            # optional: the baseline (not a dependency)
    python3 benchmarks/gibberish_speed.py     # uses /work/shared/data when it exists
    python3 benchmarks/gibberish_speed.py --shared path/to/shared/data --answers 100000

Lines: English from human-chat (CC0) and Topical-Chat, Korean from ChatbotData (MIT), each
line used once (no repeats that a cache could exploit), plus the English and Korean mash halves
of our dev sets. Without the shared data the dev sets are repeated (and the table says so).

Start-up is measured in a fresh process for one English line and for one Korean line (wall
time and peak resident memory), since resources load per language on first use.

    python3 benchmarks/gibberish_speed.py --cli 50000 --repeats 3

runs the command end to end instead: `convoscope gibberish FILE --out flags.jsonl` (default
`--lang auto`, and `--lang en`) on that many distinct English lines (the lines above, then pairs
of them joined, so that no line repeats), against gibberish-detector in a fresh process reading
the same file line by line and writing one JSON line per answer (its model trained beforehand on
the dev lines, not timed), and on 10 lines (its start-up). ``--before SRC`` runs the convoscope
commands from an older ``src`` folder too. Turn about, after one untimed run of each command
(what is kept once per machine is then there, compiled bytecode included: every child keeps it
in one folder, as an installed package has it, even where PYTHONDONTWRITEBYTECODE is set;
``--cold-bytecode`` does not); CPU is the child's user + system time; peak resident memory
beside it.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import resource
import string
import subprocess
import sys
import time
from pathlib import Path

from convoscope.filters import detect_many

HERE = Path(__file__).resolve().parent
DEFAULT_SHARED = Path("/work/shared/data")


def dev_lines(lang: str) -> list[str]:
    with open(HERE / "data" / f"gibberish_{lang}.tsv", encoding="utf-8", newline="") as handle:
        return [row["text"] for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)]


def english_lines(shared: Path | None) -> tuple[list[str], bool]:
    if shared is None or not (shared / "human-chat").exists():
        return dev_lines("en"), False
    lines = (shared / "human-chat" / "human_chat.txt").read_text(encoding="utf-8").splitlines()
    texts = [line.split(":", 1)[-1].strip() for line in lines]
    for name in ("train.json", "valid_freq.json", "valid_rare.json", "test_freq.json"):
        path = shared / "topical-chat" / name
        if path.exists():
            data = json.loads(path.read_text(encoding="utf-8"))
            texts += [turn["message"] for conv in data.values() for turn in conv["content"]]
    return list(dict.fromkeys([*texts, *dev_lines("en")])), True


def korean_lines(shared: Path | None) -> tuple[list[str], bool]:
    path = None if shared is None else shared / "korean-chatbot-data" / "ChatbotData.csv"
    if path is None or not path.exists():
        return dev_lines("ko"), False
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    texts = [row["Q"] for row in rows] + [row["A"] for row in rows]
    return list(dict.fromkeys([*texts, *dev_lines("ko")])), True


def take(lines: list[str], count: int) -> tuple[list[str], bool]:
    """``count`` lines, repeating only when there are fewer distinct ones (reported)."""
    repeated = count > len(lines)
    return (lines * (count // len(lines) + 1))[:count], repeated


def rate(function, texts: list[str]) -> float:  # type: ignore[no-untyped-def]
    start = time.process_time()
    function(texts)
    return len(texts) / (time.process_time() - start)


def start_up(text: str) -> tuple[float, float]:
    code = ("import time, resource; t = time.perf_counter();"
            f"from convoscope.filters import detect; detect({text!r});"
            "print(time.perf_counter() - t,"
            " resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds, megabytes = map(float, out.stdout.split())
    return seconds, megabytes


def baseline(train: list[str]):  # type: ignore[no-untyped-def]
    if importlib.util.find_spec("gibberish_detector") is None:
        return None
    from gibberish_detector import detector, trainer

    model = trainer.train_on_content("\n".join(train), string.ascii_letters)
    return detector.Detector(model, threshold=4.0)


BASELINE_LOOP = """
import json, sys
from gibberish_detector import detector
found = detector.create_from_model(sys.argv[1])
with open(sys.argv[2], encoding="utf-8") as lines, open(sys.argv[3], "w", encoding="utf-8") as out:
    for number, line in enumerate(lines, start=1):
        text = line.rstrip("\\n")
        out.write(json.dumps({"line": number, "text": text, "gibberish": found.is_gibberish(text)}) + "\\n")
"""


def distinct_lines(english: list[str], count: int) -> list[str]:
    """``count`` distinct one-line answers: the lines, then pairs of them joined."""
    lines = list(dict.fromkeys(" ".join(line.split()) for line in english if line.strip()))
    seen, step = set(lines), 0
    while len(lines) < count:
        joined = f"{lines[step % len(seen)]} {lines[(step * 7 + 3) % len(seen)]}"
        if joined not in seen:
            seen.add(joined)
            lines.append(joined)
        step += 1
    return lines[:count]


def child_cost(command: list[str], source: str | None = None,
               bytecode: Path | None = None) -> tuple[float, float]:
    """CPU seconds (user + system) and peak resident MB of one child process; ``source``: a
    ``src`` folder put first on its PYTHONPATH (another version of convoscope); ``bytecode``: a
    folder where every child keeps and finds its modules' compiled bytecode."""
    import os

    env = dict(os.environ, PYTHONPATH=source) if source else dict(os.environ)
    if bytecode is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(bytecode)
    pid = os.fork()
    if pid == 0:  # the child replaces itself with the command; its rusage is its own
        os.execvpe(command[0], command, env)
    _, status, usage = os.wait4(pid, 0)
    if status != 0:
        raise SystemExit(f"failed: {' '.join(command)}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def cli_lines(count: int, repeats: int, shared: Path | None, before: Path | None = None,
              cold_bytecode: bool = False) -> None:
    import os
    import statistics
    import tempfile

    english, _ = english_lines(shared)
    with tempfile.TemporaryDirectory() as folder:
        answers, model, out = Path(folder, "answers.txt"), Path(folder, "en.model"), Path(folder, "out.jsonl")
        answers.write_text("\n".join(distinct_lines(english, count)) + "\n", encoding="utf-8")
        from gibberish_detector import serializer, trainer

        model.write_text(serializer.serialize(trainer.train_on_content("\n".join(dev_lines("en")),
                                                                       string.ascii_letters)))
        gibberish = [sys.executable, "-m", "convoscope", "gibberish", str(answers)]
        commands = {
            "convoscope gibberish (--lang auto)": [*gibberish, "--out", str(out)],
            "convoscope gibberish --lang en": [*gibberish, "--lang", "en", "--out", str(out)],
            "gibberish-detector, a plain loop": [sys.executable, "-c", BASELINE_LOOP, str(model),
                                                 str(answers), str(out)],
        }
        ten = Path(folder, "ten.txt")
        ten.write_text("\n".join(distinct_lines(english, 10)) + "\n", encoding="utf-8")
        commands["convoscope gibberish, 10 lines (start-up)"] = [
            sys.executable, "-m", "convoscope", "gibberish", str(ten), "--out", str(out)]
        sources: dict[str, str | None] = {name: None for name in commands}
        if before is not None:  # the same commands run from an older src folder, turn about
            for name in [name for name in commands if name.startswith("convoscope")]:
                commands[f"before: {name}"] = commands[name]
                sources[f"before: {name}"] = str(before)
        costs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        loads = []
        # Every child finds its modules compiled, as in an installed package (pip compiles on
        # install), even where PYTHONDONTWRITEBYTECODE is set: otherwise each start compiles
        # convoscope's sixty-odd modules again (about 0.05 s). --cold-bytecode leaves it so.
        bytecode = None if cold_bytecode else Path(folder, "bytecode")
        # One untimed run of each command first: what is kept once per machine (py3langid's
        # unpacked model, the packed word lists, the compiled modules) is then there, as on
        # every run after a machine's first.
        for name in [name for name in commands if "10 lines" not in name]:
            child_cost(commands[name], sources[name], bytecode)
        for _ in range(repeats):
            for name, command in commands.items():
                loads.append(os.getloadavg()[0])
                costs[name].append(child_cost(command, sources[name], bytecode))
    compiled = "compiled each start" if cold_bytecode else "bytecode kept"
    print(f"{count:,} distinct English lines, medians of {repeats}, load {min(loads):.1f}-{max(loads):.1f}, "
          f"{compiled}\n")
    print("| command | CPU s | lines/s (CPU) | peak MB | x gibberish-detector |")
    print("|---|---:|---:|---:|---:|")
    baseline_cpu = statistics.median(run[0] for run in costs["gibberish-detector, a plain loop"])
    for name, runs in costs.items():
        cpu = statistics.median(run[0] for run in runs)
        memory = statistics.median(run[1] for run in runs)
        if "10 lines" in name:  # start-up: no rate to compare
            print(f"| {name} | {cpu:.2f} | - | {memory:.0f} | - |")
        else:
            print(f"| {name} | {cpu:.2f} | {count / cpu:,.0f} | {memory:.0f} | {baseline_cpu / cpu:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--answers", type=int, default=20_000, help="lines per language")
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED if DEFAULT_SHARED.exists() else None)
    parser.add_argument("--cli", type=int, metavar="LINES", help="time the command end to end on LINES lines")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", type=Path, metavar="SRC",
                        help="with --cli: also run the commands from this src folder (e.g. an older "
                        "commit: git archive COMMIT src | tar -x -C /tmp/before), turn about")
    parser.add_argument("--cold-bytecode", action="store_true",
                        help="with --cli: leave PYTHONDONTWRITEBYTECODE as it is (each start may compile)")
    args = parser.parse_args()
    if args.cli:
        cli_lines(args.cli, args.repeats, args.shared, args.before, args.cold_bytecode)
        return
    for lang, text in (("en", "The fries were great"), ("ko", "감자튀김이 맛있어요")):
        seconds, megabytes = start_up(text)
        print(f"start-up, one {lang} line in a fresh process: {seconds:.2f} s, peak {megabytes:.0f} MB "
              "(Python and convoscope.filters included)")
    english, en_distinct = english_lines(args.shared)
    korean, ko_distinct = korean_lines(args.shared)
    count = min(args.answers, len(english), len(korean)) if en_distinct and ko_distinct else args.answers
    en_texts, en_repeated = take(english, count)
    ko_texts, ko_repeated = take(korean, count)
    detect_many(en_texts[:50] + ko_texts[:50])  # first-use loading is measured above, not here
    print("\nCPU time (process_time), one core:\n")
    print("| method | lines | distinct | lines/s |")
    print("|---|---|---|---:|")
    note = {True: "no (repeated)", False: "yes"}
    en = rate(detect_many, en_texts)
    en_note, ko_note = note[en_repeated or not en_distinct], note[ko_repeated or not ko_distinct]
    print(f"| convoscope, every rule | {len(en_texts)} English | {en_note} | {en:,.0f} |")
    ko = rate(detect_many, ko_texts)
    print(f"| convoscope, every rule | {len(ko_texts)} Korean | {ko_note} | {ko:,.0f} |")
    mixed = [line for pair in zip(en_texts, ko_texts, strict=True) for line in pair]
    both = rate(detect_many, mixed)
    print(f"| convoscope, every rule | {len(mixed)} mixed EN/KO | - | {both:,.0f} |")
    detector = baseline(english[: len(english) // 2])
    if detector is None:
        print("\ngibberish-detector is not installed: pip install gibberish-detector")
        return
    speed = rate(lambda batch: [detector.is_gibberish(t) for t in batch], en_texts)
    print(f"| gibberish-detector 0.1.1 (English bigrams) | {len(en_texts)} English | "
          f"{note[en_repeated or not en_distinct]} | {speed:,.0f} |")
    print(f"\nEnglish: convoscope / gibberish-detector = {en / speed:.2f}")
    print(f"peak memory of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
