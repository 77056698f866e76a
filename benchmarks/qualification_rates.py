"""How often the qualification rule lets simulated coin-flippers and good workers through, by the
size of the qualification batch (two agreeing references, balanced binary answers; defaults
min_kappa 0.21, min_accuracy 0.6). The table in docs/campaigns.md ("The rule, and what it can
catch") comes from this script:

    PYTHONPATH=src python benchmarks/qualification_rates.py
"""

from __future__ import annotations

import random

from convoscope.campaigns import qualify
from convoscope.judges import Verdict


def _votes(rater: str, answers: list[int]) -> list[Verdict]:
    return [Verdict(item_id=f"i{k:03d}", criterion="c", rater=f"human:{rater}", value=value)
            for k, value in enumerate(answers)]


def main(workers: int = 1000, seed: int = 1) -> None:
    rng = random.Random(seed)
    for size in (6, 12, 24, 40, 80):
        flippers = good = 0
        for _ in range(workers):
            reference = [rng.randint(0, 1) for _ in range(size)]
            flips = [rng.randint(0, 1) for _ in range(size)]
            slips = [v if rng.random() > 0.1 else 1 - v for v in reference]
            both = _votes("r1", reference) + _votes("r2", reference)
            for answers, count in ((flips, "flippers"), (slips, "good")):
                decided = qualify("c", both + _votes("c", answers), ["r1", "r2"], threshold=0.21,
                                  min_accuracy=0.6).qualified
                if count == "flippers":
                    flippers += decided
                else:
                    good += decided
        print(f"{size} answers: coin-flippers pass {flippers / workers:.1%}, "
              f"good workers pass {good / workers:.1%}")


if __name__ == "__main__":
    main()
