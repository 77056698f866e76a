"""CPU time of the agreement intervals `agree` computes by default (1,000 resamples): the mean
pairwise Cohen's kappa (linear weights), Krippendorff's alpha (ordinal), and the pairwise kappa
point estimate beside them, on RATERS x ITEMS ordinal ratings with 20 % missing.

    python benchmarks/agreement_intervals.py 100 2000     # 160,000 ratings, about a minute
    python benchmarks/agreement_intervals.py 100 10000    # the issue's 1M-cell table (slow)

Run it with PYTHONPATH pointing at two trees to compare two versions of the code.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from convoscope.analysis import pairwise_cohen_kappa
from convoscope.analysis._agreement_ci import krippendorff_alpha_ci, pairwise_cohen_kappa_ci


def main(raters: int, items: int) -> None:
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, items)
    matrix = np.clip(truth + rng.integers(-1, 2, (raters, items)), 1, 5).astype(float)
    matrix[rng.random(matrix.shape) < 0.2] = np.nan
    labels = [1.0, 2.0, 3.0, 4.0, 5.0]
    for name, work in (
        ("pairwise kappa, point estimate", lambda: pairwise_cohen_kappa(
            matrix, weights="linear", labels=labels)),
        ("pairwise kappa, 1,000 resamples", lambda: pairwise_cohen_kappa_ci(
            matrix, weights="linear", labels=labels, n_resamples=1000, seed=0)),
        ("alpha, 1,000 resamples", lambda: krippendorff_alpha_ci(matrix, level="ordinal", n_resamples=1000,
                                                                 seed=0)),
    ):
        started = time.process_time()
        work()
        print(f"{name}: {time.process_time() - started:.2f} s CPU")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100, int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
