"""Time per answer of the whole survey pipeline (issue 4's closing note), and the demo's
decisions under each rule (issue 26).

Scores examples/survey_answers.csv (English and Korean, two gibberish answers) with the embedded
judge into a fresh temporary store and no response cache, so every judgement is a real model
call. Reports wall time per answer and per judged answer. Gibberish answers cost only the
filter, which is why the two figures differ. Then decides again from the stored verdicts (no
model call): with the plain thresholds on the Sum (what the demo did before issue 26) and with
the decision model `survey score` picks for the judge (the shipped one for the embedded judge).

    python3 benchmarks/survey_pipeline.py                 # embedded SmolLM2
    python3 benchmarks/survey_pipeline.py --aggregate llm # plus the overall synthesis call
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from convoscope.items import ColumnMap, read_items
from convoscope.runs import JudgeSpec
from convoscope.store import Store
from convoscope.survey import decision_model, score_survey_async

EXAMPLE = Path(__file__).parents[1] / "examples" / "survey_answers.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", default="embedded")
    parser.add_argument("--aggregate", choices=["sum", "llm"], default="sum")
    parser.add_argument("--answers", type=Path, default=EXAMPLE)
    args = parser.parse_args()
    items = read_items(args.answers, columns=ColumnMap(response="answer"))
    with tempfile.TemporaryDirectory() as folder:
        store = Store(str(Path(folder) / "bench.db"))
        started = time.perf_counter()
        result = asyncio.run(score_survey_async(items, [JudgeSpec(args.judge)], store=store,
                                                cache_path=None, aggregation=args.aggregate))
        elapsed = time.perf_counter() - started
        chosen = decision_model(None, [JudgeSpec(args.judge)])[0]
        rules = {"plain thresholds": None, "decision model": chosen}
        decided = {name: asyncio.run(score_survey_async(items, [JudgeSpec(args.judge)], store=store,
                                                        cache_path=None, aggregation=args.aggregate,
                                                        fitted=model)) for name, model in rules.items()}
        store.engine.dispose()
    print(f"judge {args.judge}, overall by {args.aggregate}: {len(items)} answers, "
          f"{result.judged} judged, {result.model_calls} model calls")
    print(f"wall {elapsed:.1f} s (includes model load) = {elapsed / len(items):.2f} s per answer, "
          f"{elapsed / max(result.judged, 1):.2f} s per judged answer, "
          f"{elapsed / max(result.model_calls, 1):.2f} s per model call")
    print("\n| answer | " + " | ".join(decided) + " |\n|---|" + "---|" * len(decided))
    for index, item in enumerate(items):
        cells = [f"{run.answers[index].decision} ({run.answers[index].overall or 0:.2f})"
                 for run in decided.values()]
        print(f"| {item.id}: {(item.response or '')[:40]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
