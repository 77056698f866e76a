"""How often the qualification rule lets simulated coin-flippers and good workers through, by the
size of the qualification batch (two agreeing references, balanced binary answers; defaults
min_kappa 0.21, min_accuracy 0.6), without and with the chance check (``max_chance_pass`` 0.05,
``when_cannot_tell: refuse``). A good worker agrees with the references except on 10 % of answers,
at random. The table in docs/campaigns.md ("The rule, and what it can catch") comes from this
script:

    PYTHONPATH=src python benchmarks/qualification_rates.py [--workers 1000]
"""

from __future__ import annotations

import argparse
import random

from convoscope.campaigns import qualify
from convoscope.judges import Verdict

SIZES = (4, 6, 8, 10, 12, 16, 24, 40, 80)


def _votes(rater: str, answers: list[int]) -> list[Verdict]:
    return [Verdict(item_id=f"i{k:03d}", criterion="c", rater=f"human:{rater}", value=value)
            for k, value in enumerate(answers)]


def _passes(batch: list[Verdict], checked: bool) -> bool:
    return qualify("c", batch, ["r1", "r2"], threshold=0.21, min_accuracy=0.6,
                   chance=0.5 if checked else None).qualified


def rates(size: int, workers: int, rng: random.Random) -> dict[str, float]:
    """Shares passing: flippers / good workers, with the chance check off and on."""
    counts = dict.fromkeys(("flip_off", "flip_on", "good_off", "good_on"), 0)
    for _ in range(workers):
        reference = [rng.randint(0, 1) for _ in range(size)]
        flips = [rng.randint(0, 1) for _ in range(size)]
        slips = [v if rng.random() > 0.1 else 1 - v for v in reference]
        both = _votes("r1", reference) + _votes("r2", reference)
        for answers, who in ((flips, "flip"), (slips, "good")):
            batch = both + _votes("c", answers)
            counts[f"{who}_off"] += _passes(batch, False)
            counts[f"{who}_on"] += _passes(batch, True)
    return {name: count / workers for name, count in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=1000, help="Simulated workers of each kind per size.")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print("| answers | coin-flippers pass (no check) | with the check | good workers pass (no check) "
          "| with the check |")
    print("|---|---|---|---|---|")
    for size in SIZES:
        r = rates(size, args.workers, rng)
        cells = " | ".join(f"{r[name]:.1%}" for name in ("flip_off", "flip_on", "good_off", "good_on"))
        print(f"| {size} | {cells} |")


if __name__ == "__main__":
    main()
