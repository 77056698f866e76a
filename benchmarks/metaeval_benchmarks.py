"""Meta-evaluation on real benchmarks: judge vs baselines vs the human ceiling (issue 5, part 5).

For each benchmark a loader reads from the data folder, a fixed seeded sample of items is judged
on the benchmark's main overall-like criterion by each judge (default: the embedded SmolLM2 in
completion mode), the three baselines score the same items (response length, embedding cosine
and TF-IDF cosine between context and response), and ``convoscope.analysis.metaeval`` compares
all of them with the people. Items are judged reference-free (USR's ground-truth turn removed).

The judge's correlations use its probability-weighted score (``expected_value``: with a tiny
model the most likely digit is nearly constant), its kappa and F1 use the chosen value.
Baselines get correlations (and AUC on binary criteria), never kappa or F1: they have no
threshold. The ceiling is the humans' leave-one-out Spearman (3+ raters) or else their
Krippendorff alpha; benchmarks with one rating per item have none.

Writes a markdown table to stdout and to ``benchmarks/results/metaeval.md`` (the statistics
only: no text from the research-only data sets). Run by hand, bounded by ``--n``:

    python3 benchmarks/metaeval_benchmarks.py --data ../shared/data --n 50 --n-dialogue 40
    python3 benchmarks/metaeval_benchmarks.py --data ../shared/data --only usr-topicalchat \\
        --judge openai:qwen2.5-7b@http://127.0.0.1:8000/v1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convoscope.analysis import MetaevalRow, metaeval
from convoscope.baselines import LlamaEmbedder, baseline_ratings
from convoscope.criteria import Criterion, Level, Scale
from convoscope.datasets import Benchmark, load_benchmark
from convoscope.items import Item, ItemError, Turn
from convoscope.runs import JudgeSpec, judge_async
from convoscope.store import Store

RESULTS = Path(__file__).parent / "results"
QUALITY_WORDS = ["very poor", "poor", "fair", "good", "very good"]


@dataclass(frozen=True)
class Plan:
    """One benchmark and its main criterion; ``scale`` is the judge's (low, high) when the
    human scale is too wide for next-token scoring (0-100 sliders), else the human scale."""

    benchmark: str
    criterion: str
    scale: tuple[int, int] | None  # None: binary
    variant: str = ""  # "", "+fact" (USR's knowledge / persona as a first turn), "+reference"
    size: int | None = None  # items, when a rare label needs more than --n to show up at all


PLANS = [
    Plan("fed-turn", "overall", (0, 4)),
    Plan("usr-topicalchat", "overall", (1, 5)),
    Plan("usr-topicalchat", "overall", (1, 5), "+fact"),
    Plan("usr-topicalchat", "overall", (1, 5), "+reference"),
    Plan("usr-personachat", "overall", (1, 5)),
    Plan("grade", "coherence", (1, 5)),
    Plan("conture-turn", "overall-impression", (0, 2)),
    Plan("abc-eval", "irrelevant", None, size=100),  # both people say "irrelevant" on ~9% of turns
    Plan("maia-dqe-turn", "interaction-quality", (1, 5)),
    Plan("fed-dialogue", "overall", (0, 4)),
    Plan("conture-dialogue", "overall", (1, 5)),
    Plan("maia-dqe-dialogue", "task-success", (1, 5)),
    Plan("ji2022", "interesting", (1, 5)),
]
SAME_SCALE_AS_HUMANS = {"ji2022": False}


def judge_criterion(benchmark: Benchmark, plan: Plan) -> Criterion:
    """A rubric for the judge, named as the benchmark's criterion so metaeval lines them up."""
    definition = benchmark.criteria[plan.criterion]
    granularity = "dialogue" if benchmark.granularity == "dialogue" else "response"
    if plan.scale is None:
        scale = Scale(kind="binary", labels=("yes", "no"))
        levels = (Level(value=1, definition="Yes, the description fits."),
                  Level(value=0, definition="No, it does not."))
        return Criterion(name=plan.criterion, question=f"{definition}", definition="Answer yes or no.",
                         granularity=granularity, scale=scale, levels=levels, higher_is_better=False)
    low, high = plan.scale
    words = _spread(QUALITY_WORDS, high - low + 1)
    levels = tuple(Level(value=value, definition=word) for value, word in zip(range(low, high + 1), words,
                                                                             strict=True))
    question = f"How good is the {'dialogue' if granularity == 'dialogue' else 'response'}?"
    return Criterion(name=plan.criterion, question=question, definition=definition,
                     granularity=granularity, scale=Scale(kind="range", minimum=low, maximum=high),
                     levels=levels)


def _spread(words: list[str], count: int) -> list[str]:
    if count == 1:
        return [words[-1]]
    return [words[round(index * (len(words) - 1) / (count - 1))] for index in range(count)]


def sample(benchmark: Benchmark, plan: Plan, size: int, seed: int) -> tuple[list[Item], list[Any]]:
    """A seeded sample of items with at least one scored human rating on the criterion, and the
    human verdicts on them (that criterion only)."""
    rated = {v.item_id for v in benchmark.human if v.criterion == plan.criterion and v.value is not None}
    pool = [item for item in benchmark.items if item.id in rated]
    chosen = random.Random(f"{seed}:{plan.benchmark}").sample(pool, min(size, len(pool)))
    chosen_ids = {item.id for item in chosen}
    human = [v for v in benchmark.human if v.criterion == plan.criterion and v.item_id in chosen_ids]
    return [_variant(item, plan.variant) for item in chosen], human


def _variant(item: Item, variant: str) -> Item:
    if variant == "+fact":
        fact = item.meta.get("knowledge") or item.meta.get("persona")
        return item.model_copy(update={"context": (Turn(speaker="fact", text=str(fact)), *item.context)})
    return item


async def run_judge(items: list[Item], criterion: Criterion, spec: JudgeSpec, store: Store,
                    cache: Path) -> list[Any]:
    summary = await judge_async(items, [criterion], [spec], store=store, cache_path=cache, concurrency=1)
    return [v for v in store.verdicts(summary.run_id) if v.criterion == criterion.name]


def evaluate(plan: Plan, items: list[Item], human: list[Any], verdicts: list[Any], baselines: list[Any],
             resamples: int) -> dict[str, MetaevalRow]:
    """Rows by rater: judges on their expected value (correlations) and value (kappa, F1)."""
    options = dict(criteria=[plan.criterion], n_resamples=resamples, seed=0)
    by_value = metaeval([*verdicts, *baselines], human, **options)
    by_expected = metaeval(verdicts, human, score="expected_value", **options)
    rows = {row.judge: row for row in by_value}
    for row in by_expected:
        rows[f"{row.judge} (expected)"] = row
    return rows


def fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def fmt_ci(result: Any) -> str:
    return "–" if result is None else f"{result.estimate:.2f} [{result.low:.2f}, {result.high:.2f}]"


def ceiling(row: MetaevalRow) -> str:
    humans = row.humans
    if humans.loo_spearman is not None:
        return f"LOO ρ {humans.loo_spearman:.2f} ({humans.n_humans} raters)"
    if humans.alpha is not None and humans.n_humans > 1:
        return f"α {humans.alpha:.2f} ({humans.n_humans} raters)"
    return "none (one rating per item)"


def spearman_of(rows: dict[str, MetaevalRow], rater: str) -> str:
    row = rows.get(rater)
    return fmt(row.spearman.estimate if row and row.spearman else None)


def table_lines(results: list[dict[str, Any]]) -> list[str]:
    lines = ["| benchmark | criterion | judge | n | judge ρ [95% CI] | judge κ | length ρ | embedding ρ "
             "| tfidf ρ | human ceiling | s/item |",
             "|---|---|---|---:|---|---:|---:|---:|---:|---|---:|"]
    for result in results:
        rows, judge = result["rows"], result["judge"]
        expected = rows.get(f"{judge} (expected)") or rows[judge]
        main = rows[judge]
        kappa = fmt(main.kappa) if result["same_scale"] else "– (scales differ)"
        lines.append(
            f"| {result['benchmark']}{result['variant']} | {result['criterion']} | {judge} | {main.n_items} "
            f"| {fmt_ci(expected.spearman)} | {kappa} | {spearman_of(rows, 'baseline:length')} "
            f"| {spearman_of(rows, 'baseline:embedding-sim')} | {spearman_of(rows, 'baseline:tfidf-sim')} "
            f"| {ceiling(main)} | {result['seconds_per_item']:.2f} |")
    return lines


def binary_lines(results: list[dict[str, Any]]) -> list[str]:
    lines = []
    for result in results:
        for rater, row in result["rows"].items():
            if row.auc is None and row.binary is None:
                continue
            f1s = f"{fmt(row.binary.f1_pos)} / {fmt(row.binary.f1_neg)}" if row.binary else "– (no threshold)"
            name = result["benchmark"] + result["variant"]
            lines.append(f"| {name} | {result['criterion']} | {rater} | {f1s} | {fmt(row.auc)} |")
    if not lines:
        return []
    legend = ("Binary criteria (positive = the behaviour is present, human majority; an AUC below 0.5 "
              "means the score runs the other way, e.g. lower similarity for irrelevant turns):")
    return ["", legend, "",
            "| benchmark | criterion | rater | F1+ / F1− | AUC |", "|---|---|---|---|---:|", *lines]


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    work = Path(args.store).parent if args.store else Path(tempfile.mkdtemp(prefix="metaeval-"))
    work.mkdir(parents=True, exist_ok=True)
    store = Store(args.store or work / "metaeval.db")
    cache = work / "metaeval.cache.db"
    embedder = LlamaEmbedder()
    results: list[dict[str, Any]] = []
    try:
        for plan in PLANS:
            if args.only and plan.benchmark not in args.only:
                continue
            try:
                benchmark = load_benchmark(plan.benchmark, args.data,
                                           reference_free=plan.variant != "+reference")
            except ItemError as error:
                print(f"skip {plan.benchmark}: {error}", file=sys.stderr)
                continue
            size = plan.size or (args.n_dialogue if benchmark.granularity == "dialogue" else args.n)
            items, human = sample(benchmark, plan, size, args.seed)
            criterion = judge_criterion(benchmark, plan)
            started = time.perf_counter()
            baselines = baseline_ratings(items, ["length", "embedding", "tfidf"], [plan.criterion],
                                         embedder=embedder)
            for judge in args.judge:
                began = time.perf_counter()
                verdicts = await run_judge(items, criterion, JudgeSpec(judge), store, cache)
                seconds = (time.perf_counter() - began) / max(1, len(items))
                rows = evaluate(plan, items, human, verdicts, baselines, args.resamples)
                rater = next(iter({v.rater for v in verdicts}))
                results.append({"benchmark": plan.benchmark, "variant": plan.variant,
                                "criterion": plan.criterion, "judge": rater, "rows": rows,
                                "same_scale": SAME_SCALE_AS_HUMANS.get(plan.benchmark, True),
                                "seconds_per_item": seconds})
                print(table_lines(results[-1:])[-1], file=sys.stderr, flush=True)
            print(f"  {plan.benchmark}{plan.variant}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    finally:
        embedder.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="../shared/data", help="Folder holding the benchmarks' folders.")
    parser.add_argument("--n", type=int, default=50, help="Items per turn-level benchmark.")
    parser.add_argument("--n-dialogue", type=int, default=40, help="Items per dialogue-level benchmark.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resamples", type=int, default=1000, help="Bootstrap resamples.")
    parser.add_argument("--judge", action="append", help="Model spec (repeatable; default: embedded).")
    parser.add_argument("--only", action="append", help="Only this benchmark (repeatable).")
    parser.add_argument("--store", help="Keep verdicts in this SQLite file (resumable); default: a temp dir.")
    parser.add_argument("--out", default=str(RESULTS / "metaeval.md"))
    args = parser.parse_args()
    args.judge = args.judge or ["embedded"]
    started = time.perf_counter()
    results = asyncio.run(run(args))
    command = "python3 benchmarks/metaeval_benchmarks.py " + " ".join(sys.argv[1:])
    text = "\n".join([
        "# Meta-evaluation on real benchmarks", "",
        f"`{command}` — seed {args.seed}, {args.resamples} bootstrap resamples, "
        f"{time.perf_counter() - started:.0f} s in all.", "",
        "ρ is Spearman with the mean human rating; the judge's ρ uses its probability-weighted score, "
        "its κ (quadratic, against the human majority) its chosen value. Baselines: response length "
        "in words; cosine of context and response (last 3 turns) by SmolLM2 mean-pooled embeddings "
        "and by TF-IDF; for whole dialogues, total length and the mean cosine of adjacent turns. "
        "Items are judged reference-free except in the +reference row; +fact puts USR's knowledge "
        "snippet before the context.", "",
        *table_lines(results), *binary_lines(results), ""])
    print(text)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    rows = [{"benchmark": r["benchmark"] + r["variant"],
             "rows": {rater: row.as_dict() for rater, row in r["rows"].items()}} for r in results]
    out.with_suffix(".json").write_text(json.dumps(rows, indent=1, default=str) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
