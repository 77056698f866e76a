"""A small simulated-dialogue run on the embedded model, in two languages (issue 6 measurement).

Samples N contexts per language, has SmolLM2 play user, judge and chatbot, and reports wall time
and model calls per dialogue, then the per-language statistics table (seed 001, table 3 columns
plus judge acceptance and usage). A second pass over the same output shows what resuming costs.

Run by hand:  python benchmarks/synth_run.py --n 2 --languages en,pt --max-turns 6
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from convoscope.items import read_items
from convoscope.models import CachedModel, EmbeddedModel, ResponseCache
from convoscope.synth import (
    SynthSettings,
    default_filtered_path,
    generate_dialogues_async,
    sample_contexts,
    stats_table,
    synth_stats,
)


async def run(args: argparse.Namespace, folder: Path) -> None:
    contexts = sample_contexts(args.n, args.languages.split(","), seed=args.seed)
    settings = SynthSettings(max_turns=args.max_turns, user_max_tokens=args.max_tokens,
                             chatbot_max_tokens=args.max_tokens,
                             first_turn_attempts=args.first_turn_attempts,
                             later_turn_attempts=args.later_turn_attempts)
    out = folder / "dialogues.jsonl"
    cache = ResponseCache(folder / "cache.db")
    model = CachedModel(EmbeddedModel(n_threads=args.threads), cache)
    judge = None if args.judge == "none" else model
    try:
        started = time.perf_counter()
        summary = await generate_dialogues_async(contexts, users={"smol": model}, judge=judge,
                                                 chatbots={"smol": model}, out=out, settings=settings,
                                                 concurrency=args.concurrency)
        elapsed = time.perf_counter() - started
        calls = sum(u.calls for u in summary.usage.values())
        tokens = sum(u.prompt_tokens + u.completion_tokens for u in summary.usage.values())
        made = max(summary.written, 1)
        print(f"{summary.written} dialogues ({summary.filtered} filtered, {summary.already_done} already "
              f"there) in {elapsed:.1f} s: {elapsed / made:.1f} s, {calls / made:.1f} model calls and "
              f"{tokens / made:.0f} tokens per dialogue")
        print("calls by role:", {role: u.calls for role, u in sorted(summary.usage.items())})
        print("ended by:", summary.ends, " filtered:", summary.filter_reasons)
        again = time.perf_counter()
        resumed = await generate_dialogues_async(contexts, users={"smol": model}, judge=judge,
                                                 chatbots={"smol": model}, out=out, settings=settings)
        print(f"re-run: {resumed.already_done} already done, {resumed.written} written, "
              f"{time.perf_counter() - again:.2f} s")
    finally:
        await model.aclose()
        cache.close()
    items = [item for path in (out, default_filtered_path(out)) if path.exists() for item in read_items(path)]
    print()
    print("Kept dialogues (text columns); usage over all:")
    print(stats_table(synth_stats(items)))
    print("\nAll dialogues, filtered ones included:")
    print(stats_table(synth_stats(items, include_filtered=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2, help="contexts per language")
    parser.add_argument("--languages", default="en,pt")
    parser.add_argument("--judge", choices=["embedded", "none"], default="embedded")
    parser.add_argument("--max-turns", type=int, default=6)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--first-turn-attempts", type=int, default=3)
    parser.add_argument("--later-turn-attempts", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="write the output here instead of a temporary folder")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        asyncio.run(run(args, args.keep))
    else:
        with tempfile.TemporaryDirectory() as folder:
            asyncio.run(run(args, Path(folder)))


if __name__ == "__main__":
    main()
