"""A small simulated-dialogue run on the embedded models, in two languages (issues 6 and 17).

Samples N contexts per language and has the embedded models play user, judge and chatbot, each
role in its own model instances as ``convoscope synth dialogues`` builds them: by default the
packaged model chosen per language (issue 28); ``--embedded smollm2`` puts SmolLM2 in every role,
as the issue-17 measurements did (``--shared-model`` then puts all three on one instance, as
before issue 17). Reports wall time, model calls and tokens
per dialogue and per *accepted user turn* (the unit of useful work), what the judge could check,
then the per-language statistics table. A second pass over the same output shows what resuming
costs.

Run by hand:  python benchmarks/synth_run.py --n 2 --languages en,pt
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from convoscope.items import read_items
from convoscope.models import ResponseCache, open_model
from convoscope.synth import (
    EmbeddedByLanguage,
    SynthSettings,
    default_filtered_path,
    generate_dialogues_async,
    sample_contexts,
    stats_table,
    synth_stats,
)


def settings_from(args: argparse.Namespace) -> SynthSettings:
    return SynthSettings(max_turns=args.max_turns, user_max_tokens=args.max_tokens,
                         chatbot_max_tokens=args.max_tokens, user_first_max_tokens=args.opening_max_tokens,
                         first_turn_attempts=args.first_turn_attempts,
                         later_turn_attempts=args.later_turn_attempts)


def build_models(args: argparse.Namespace, cache: ResponseCache) -> dict[str, object]:
    def one(name: str) -> object:
        return open_model(f"embedded:{name}", cache=cache, n_threads=args.threads)

    if args.embedded == "auto":
        return {role: EmbeddedByLanguage(role, one) for role in ("user", "judge", "chatbot")}  # type: ignore[arg-type]
    if args.shared_model:
        return dict.fromkeys(("user", "judge", "chatbot"), one(args.embedded))
    return {role: one(args.embedded) for role in ("user", "judge", "chatbot")}


async def run(args: argparse.Namespace, folder: Path) -> None:
    contexts = sample_contexts(args.n, args.languages.split(","), seed=args.seed)
    settings = settings_from(args)
    out = folder / "dialogues.jsonl"
    cache = ResponseCache(folder / "cache.db")
    models = build_models(args, cache)
    judge = None if args.judge == "none" else models["judge"]
    label = "embedded" if args.embedded == "auto" else "smol"
    roles = {"users": {label: models["user"]}, "judge": judge, "chatbots": {label: models["chatbot"]}}
    try:
        started, cpu = time.perf_counter(), time.process_time()
        summary = await generate_dialogues_async(contexts, **roles, out=out, settings=settings,
                                                 concurrency=args.concurrency)
        elapsed = time.perf_counter() - started
        report(summary, elapsed, out)
        print(f"CPU time (all threads of this process): {time.process_time() - cpu:.1f} s")
        again = time.perf_counter()
        resumed = await generate_dialogues_async(contexts, **roles, out=out, settings=settings)
        print(f"re-run: {resumed.already_done} already done, {resumed.written} written, "
              f"{time.perf_counter() - again:.2f} s")
    finally:
        for model in {id(m): m for m in models.values()}.values():
            await model.aclose()  # type: ignore[attr-defined]
        cache.close()
    items = written(out)
    print()
    print("Kept dialogues (text columns); usage over all:")
    print(stats_table(synth_stats(items)))


def written(out: Path) -> list:
    return [item for path in (out, default_filtered_path(out)) if path.exists() for item in read_items(path)]


def report(summary, elapsed: float, out: Path) -> None:  # type: ignore[no-untyped-def]
    calls = sum(u.calls for u in summary.usage.values())
    tokens = sum(u.prompt_tokens + u.completion_tokens for u in summary.usage.values())
    items = written(out)
    accepted = len({(synth["opening"]["key"] if log["position"] == 0 else item.id, log["position"])
                    for item in items for synth in [item.meta["synth"]] for log in synth["user_turns"]
                    if log["accepted"]})
    made = max(summary.written, 1)
    kept = summary.written - summary.filtered
    languages = sorted({item.language for item in read_items(out)}) if out.exists() else []
    print(f"{summary.written} dialogues ({kept} kept, languages kept: {', '.join(languages) or 'none'}) "
          f"in {elapsed:.1f} s: {elapsed / made:.1f} s, {calls / made:.1f} calls, {tokens / made:.0f} tokens "
          f"per dialogue")
    if accepted:
        print(f"{accepted} accepted user turns: {elapsed / accepted:.1f} s, {calls / accepted:.1f} calls, "
              f"{tokens / accepted:.0f} tokens per accepted user turn")
    else:
        print("0 accepted user turns: every call was spent on rejected attempts")
    print("calls by role:", {role: u.calls for role, u in sorted(summary.usage.items())})
    print("tokens by role:", {role: u.prompt_tokens + u.completion_tokens
                              for role, u in sorted(summary.usage.items())})
    print("ended by:", summary.ends, " filtered:", summary.filter_reasons)
    print("judge:", summary.judge_note)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2, help="contexts per language")
    parser.add_argument("--languages", default="en,pt")
    parser.add_argument("--judge", choices=["embedded", "none"], default="embedded")
    parser.add_argument("--max-turns", type=int, default=6)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--opening-max-tokens", type=int, default=64)
    parser.add_argument("--first-turn-attempts", type=int, default=10)
    parser.add_argument("--later-turn-attempts", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--threads", type=int, default=None,
                        help="llama.cpp threads per model instance (default: llama.cpp's, half the cores)")
    parser.add_argument("--embedded", choices=["auto", "smollm2", "gemma3-270m"], default="auto",
                        help="auto: the packaged model chosen per language; else that model everywhere")
    parser.add_argument("--shared-model", action="store_true",
                        help="one model instance for every role (the pre-issue-17 set-up; not with auto)")
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
