"""Judges and people together on USR Topical-Chat: how many human labels does a judge save?

The question a team has: "what is the mean overall quality people would give, and how sure are
we?". The full answer is known here (three experts rated all 360 responses), so every estimate
can be checked against it. Each repetition reveals people's labels for
  * a uniform random sample of ``--n-random`` items (what makes the estimate unbiased), and
  * ``--n-route`` items routed to people because the judge was least sure of them (flattest
    score distribution); these calibrate the judge (isotonic map onto the 1–5 scale) and are
    never used as the labelled sample,
then estimates the mean by prediction-powered inference (PPI++) from the random sample plus the
judge's scores on every other item, beside the people-only estimate from the same sample.

Judges: the embedded SmolLM2 (its verdicts from ``--verdicts``, a file ``convoscope judge``
wrote, or judged now with ``--judge embedded``) and response length in words (free, and on
this data a better predictor than the tiny model). Run by hand:

    python3 benchmarks/ppi_worked_example.py --data ../shared/data --judge embedded
    python3 benchmarks/ppi_worked_example.py --data ../shared/data --verdicts verdicts.jsonl --reps 2000
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from convoscope.baselines import item_length
from convoscope.datasets import load_benchmark
from convoscope.estimate import fit_isotonic, ppi_mean
from convoscope.judges import read_verdicts

CRITERION = "overall"


def entropy(distribution: dict[str, float] | None) -> float:
    if not distribution or len(distribution) < 2:
        return 0.0
    return -sum(p * math.log(p) for p in distribution.values() if p > 0) / math.log(len(distribution))


def judge_now(items: list[Any], benchmark: Any, spec: str) -> list[Any]:
    """Judge every item with ``spec`` through the library's front door."""
    sys.path.insert(0, str(Path(__file__).parent))
    from metaeval_benchmarks import Plan, judge_criterion

    import convoscope as cs

    criterion = judge_criterion(benchmark, Plan("usr-topicalchat", CRITERION, (1, 5)))
    work = Path(tempfile.mkdtemp(prefix="ppi-"))
    result = cs.judge(items, [criterion], spec, store=work / "ppi.db", concurrency=1)
    return [v for v in result.verdicts if v.criterion == CRITERION]


def simulate(name: str, scores: np.ndarray, flatness: np.ndarray, truth_items: np.ndarray, *,
             n_random: int, n_route: int, reps: int, seed: int) -> dict[str, Any]:
    truth = float(truth_items.mean())
    rng = np.random.default_rng(seed)
    order_by_doubt = np.argsort(-flatness, kind="stable")
    covered = covered_human = 0
    widths, human_widths, effective, errors, human_errors = [], [], [], [], []
    for _ in range(reps):
        sample = rng.choice(len(scores), size=n_random, replace=False)
        in_sample = np.zeros(len(scores), bool)
        in_sample[sample] = True
        # A judge with no doubt signal (no distribution) gets a random set routed instead.
        order = order_by_doubt if flatness.any() else rng.permutation(len(scores))
        routed = [i for i in order if not in_sample[i]][:n_route]
        predicted = scores
        if n_route >= 2:
            predicted = fit_isotonic(scores[routed], truth_items[routed], scale=(1, 5)).apply(scores)
        result = ppi_mean(truth_items[in_sample], predicted[in_sample], predicted[~in_sample])
        covered += result.ci[0] <= truth <= result.ci[1]
        covered_human += result.human_only_ci[0] <= truth <= result.human_only_ci[1]
        widths.append(result.width)
        human_widths.append(result.human_only_ci[1] - result.human_only_ci[0])
        effective.append(result.effective_n)
        errors.append(abs(result.value - truth))
        human_errors.append(abs(result.human_only - truth))
    return {"judge": name, "truth": truth, "coverage": covered / reps, "coverage_human": covered_human / reps,
            "width": float(np.mean(widths)), "width_human": float(np.mean(human_widths)),
            "effective_n": float(np.mean(effective)), "error": float(np.mean(errors)),
            "error_human": float(np.mean(human_errors))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--verdicts", help="The judge's verdicts on all items (convoscope judge --out).")
    parser.add_argument("--judge", help="Judge every item now with this spec (e.g. embedded).")
    parser.add_argument("--n-random", default="40,100", help="Random sample sizes, comma-separated.")
    parser.add_argument("--n-route", type=int, default=20)
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--synthetic-r", type=float, default=0.6,
                        help="Also show a synthetic judge whose scores correlate about this much with "
                             "the people's (people's mean plus noise): what a capable judge would save. "
                             "0 leaves it out.")
    args = parser.parse_args()
    benchmark = load_benchmark("usr-topicalchat", Path(args.data), reference_free=True)
    items = list(benchmark.items)
    human: dict[str, list[float]] = {}
    for verdict in benchmark.human:
        if verdict.criterion == CRITERION and verdict.value is not None:
            human.setdefault(verdict.item_id, []).append(float(verdict.value))
    items = [item for item in items if item.id in human]
    truth = np.array([np.mean(human[item.id]) for item in items])
    judges: list[tuple[str, np.ndarray, np.ndarray]] = []
    verdicts: list[Any] = []
    started = time.perf_counter()
    if args.verdicts:
        verdicts = list(read_verdicts(args.verdicts))
    elif args.judge:
        verdicts = judge_now(items, benchmark, args.judge)
    if verdicts:
        by_item = {v.item_id: v for v in verdicts if v.criterion == CRITERION and v.value is not None}
        missing = [item.id for item in items if item.id not in by_item]
        if missing:
            raise SystemExit(f"the judge left {len(missing)} items unscored, e.g. {missing[:3]}")
        scores = np.array([by_item[i.id].expected_value if by_item[i.id].expected_value is not None
                           else float(by_item[i.id].value) for i in items])
        flatness = np.array([entropy(by_item[i.id].distribution) for i in items])
        judges.append((by_item[items[0].id].rater, scores, flatness))
    lengths = np.array([float(item_length(item)) for item in items])
    judges.append(("baseline:length", lengths, np.zeros(len(items))))  # no doubt signal: routed at random
    if args.synthetic_r:
        # Noise sized so corr(truth, truth + noise) = r: var(noise) = var(truth) (1 / r^2 - 1).
        noise_sd = truth.std() * math.sqrt(1 / args.synthetic_r**2 - 1)
        synthetic = truth + np.random.default_rng(args.seed + 1).normal(0, noise_sd, len(truth))
        judges.append((f"synthetic judge (r ≈ {args.synthetic_r})", synthetic, np.zeros(len(items))))
    print(f"USR Topical-Chat, {len(items)} responses, truth = mean of {min(map(len, human.values()))}–"
          f"{max(map(len, human.values()))} experts per item; {args.reps} repetitions, seed {args.seed}; "
          f"judging took {time.perf_counter() - started:.0f} s\n")
    print("| judge | people's labels (random + routed) | PPI coverage | people-only coverage | PPI CI width "
          "| people-only CI width | effective labels | labels saved | mean abs error PPI / people-only |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for name, scores, flatness in judges:
        for n_random in (int(part) for part in args.n_random.split(",")):
            for n_route in (0, args.n_route):
                print_row(name, simulate(name, scores, flatness, truth, n_random=n_random, n_route=n_route,
                                         reps=args.reps, seed=args.seed), n_random, n_route)
    print(f"\nTrue mean (all {len(items)} items, all experts): {truth.mean():.3f}")


def print_row(name: str, row: dict[str, Any], n_random: int, n_route: int) -> None:
    print(f"| {name}{' + calibration' if n_route else ''} | {n_random} + {n_route} "
          f"| {row['coverage']:.3f} | {row['coverage_human']:.3f} | {row['width']:.3f} "
          f"| {row['width_human']:.3f} | {row['effective_n']:.1f} "
          f"| {row['effective_n'] - n_random - n_route:+.1f} "
          f"| {row['error']:.3f} / {row['error_human']:.3f} |")


if __name__ == "__main__":
    main()
