"""Pairwise judges against people on USR Topical-Chat: which of two responses to one context is better.

USR gives each response an overall rating (1–5) from each of three experts. Each expert's ratings
imply a preference on every pair of responses to the same context (the higher rating wins; equal
ratings tie), so the experts are three people who "judged" every pair, and their majority is the
people's answer. The judges answer the same pairs (``convoscope.pairwise``, both orders asked);
the length baseline names the longer response. Reported per judge: agreement and Cohen's kappa
with the experts' majority, position bias, and the Spearman correlation between its Bradley–Terry
system ranking and the experts' — with one expert against the other two as the ceiling.

    python3 benchmarks/pairwise_usr.py --data ../shared/data --contexts 20
    python3 benchmarks/pairwise_usr.py --data ../shared/data --judge embedded --judge length

The data is research-only (no licence): it is read in place, never copied into the repository.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from scipy.stats import spearmanr

from convoscope.criteria import Criterion
from convoscope.datasets import load_benchmark
from convoscope.judges import Verdict
from convoscope.pairwise import (
    bradley_terry,
    compare_with_people,
    judge_pairs,
    majority,
    make_pairs,
    outcomes,
    pair_sides,
    position_bias_rates,
)

OVERALL = Criterion.model_validate({
    "name": "overall", "question": "Which response is better overall?",
    "definition": "A good response is understandable, natural, follows on from the conversation, "
                  "is interesting and uses what is known about the topic.",
    "scale": {"kind": "range", "minimum": 1, "maximum": 5}})
CRITERION = f"pairwise:{OVERALL.name}"


def expert_pairs(pairs: list[Any], human: list[Verdict]) -> list[Verdict]:
    """Each expert's implied preference on every pair, as pairwise verdicts."""
    rating = {(v.item_id, v.rater): v.value for v in human
              if v.criterion == "overall" and v.value is not None}
    experts = sorted({rater for _, rater in rating})
    found = []
    for pair in pairs:
        a, b = pair_sides(pair)
        for expert in experts:
            first, second = rating.get((a["item_id"], expert)), rating.get((b["item_id"], expert))
            if first is None or second is None:
                continue
            value = "tie" if first == second else (a["system"] if first > second else b["system"])
            found.append(Verdict(item_id=pair.id, criterion=CRITERION, rater=expert, value=value,
                                 system=pair.system))
    return found


def length_judge(pairs: list[Any]) -> list[Verdict]:
    """The baseline: the longer response (in words) wins; the same length ties."""
    verdicts = []
    for pair in pairs:
        a, b = pair_sides(pair)
        la, lb = len(a["response"].split()), len(b["response"].split())
        value = "tie" if la == lb else (a["system"] if la > lb else b["system"])
        verdicts.append(Verdict(item_id=pair.id, criterion=CRITERION, rater="baseline:length", value=value,
                                system=pair.system))
    return verdicts


def system_rho(verdicts: list[Verdict], people: list[Verdict]) -> float:
    """Spearman between the judge's and the people's Bradley–Terry system strengths."""
    mine = {s.system: s.strength for s in bradley_terry(outcomes(verdicts), n_resamples=0)}
    theirs = {s.system: s.strength for s in bradley_terry(outcomes(people), n_resamples=0)}
    systems = sorted(set(mine) & set(theirs))
    return float(spearmanr([mine[s] for s in systems], [theirs[s] for s in systems]).statistic)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--contexts", type=int, default=20, help="First N of USR's 60 contexts.")
    parser.add_argument("--judge", action="append", default=None,
                        help="'length' or a model spec (default: length and embedded).")
    args = parser.parse_args()
    judges = args.judge or ["length", "embedded"]
    bench = load_benchmark("usr-topicalchat", args.data / "usr")
    contexts: dict[int, list[Any]] = defaultdict(list)
    for item in bench.items:
        contexts[int(item.meta["context_index"])].append(item)
    chosen = [item for index in sorted(contexts)[: args.contexts] for item in contexts[index]]
    pairs = make_pairs(chosen)
    people = expert_pairs(pairs, list(bench.human))
    experts = sorted({v.rater for v in people})
    print(f"USR Topical-Chat: {args.contexts} contexts, {len(pairs)} pairs, experts {', '.join(experts)}; "
          f"the experts' majority names a winner on {sum(w != 'tie' for _, w in majority(people).values())} "
          "pairs and ties the rest")
    rows = []
    for expert in experts:  # the ceiling: one expert against the other two
        others = [v for v in people if v.rater != expert]
        mine = [v.model_copy(update={"rater": f"held-out:{expert}"}) for v in people if v.rater == expert]
        _, agreement = compare_with_people(mine, others, CRITERION, n_resamples=0)
        row = agreement[f"held-out:{expert}"]
        rows.append((row.rater, row.pairs, row.agreement, row.kappa, None, system_rho(mine, others), 0.0))
    with tempfile.TemporaryDirectory() as folder:
        for spec in judges:
            started = time.perf_counter()
            if spec == "length":
                verdicts = length_judge(pairs)
            else:
                report = judge_pairs(chosen, OVERALL, [spec], store=Path(folder) / "pairs.db", n_resamples=0)
                verdicts = [v for v in report.verdicts if v.value is not None]
            seconds = time.perf_counter() - started
            _, agreement = compare_with_people(verdicts, people, CRITERION, n_resamples=0)
            for rater, row in agreement.items():
                mine = [v for v in verdicts if v.rater == rater]
                bias = position_bias_rates(mine)[0].rate if spec != "length" else None
                rows.append((rater, row.pairs, row.agreement, row.kappa, bias, system_rho(mine, people),
                             seconds / max(len(mine), 1)))
    print(f"{'rater':44} {'pairs':>5} {'agree':>6} {'kappa':>6} {'flips':>6} {'system rho':>10} "
          f"{'s/pair':>7}")
    for rater, n, agree, kappa, bias, rho, per in rows:
        kappa_text = "–" if kappa is None else f"{kappa:.3f}"
        bias_text = "–" if bias is None else f"{bias:.1%}"
        print(f"{rater:44} {n:5d} {agree:6.1%} {kappa_text:>6} {bias_text:>6} {rho:10.3f} {per:7.2f}")
    print("agree / kappa: against the experts' majority per pair (system A, system B or tie); flips: the "
          "judge's position bias (pairs whose answer followed the order); system rho: Spearman between "
          "Bradley–Terry strengths of the six systems. held-out rows: one expert against the other two.")


if __name__ == "__main__":
    main()
