"""Time per answer of the whole survey pipeline (issue 4's closing note).

Scores examples/survey_answers.csv (English and Korean, two gibberish answers) with the embedded
judge into a fresh temporary store and no response cache, so every judgement is a real model
call. Reports wall time per answer and per judged answer. Gibberish answers cost only the
filter, which is why the two figures differ.

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
from convoscope.survey import score_survey_async

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
        store.engine.dispose()
    print(f"judge {args.judge}, overall by {args.aggregate}: {len(items)} answers, "
          f"{result.judged} judged, {result.model_calls} model calls")
    print(f"wall {elapsed:.1f} s (includes model load) = {elapsed / len(items):.2f} s per answer, "
          f"{elapsed / max(result.judged, 1):.2f} s per judged answer, "
          f"{elapsed / max(result.model_calls, 1):.2f} s per model call")


if __name__ == "__main__":
    main()
