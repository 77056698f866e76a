"""`convoscope agree` with its default intervals (1,000 resamples) against hand-written point
estimates, on RATERS x ITEMS ordinal ratings (1-5) with 20 % missing, as a long CSV
(issue 39, observation 9: 100 raters x 10,000 items, 1M cells, about 800,000 ratings).

The reference is what one writes by hand without intervals: pandas (pyarrow reader, pivot),
the krippendorff package's ordinal alpha, Fleiss' kappa in numpy (statsmodels' needs the
same number of raters per item), scikit-learn's linear
Cohen's kappa for every rater pair, and pandas' pairwise Spearman. Each side runs in its own
process, turn about, so a busy machine slows both alike; CPU is the child's user + system
time (BLAS threads included), wall beside it.

    python benchmarks/agree_scale.py 100 2000 3     # 160,000 ratings, a minute or two
    python benchmarks/agree_scale.py 100 10000 3    # the issue's table (several minutes)
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REFERENCE = """
import sys, itertools
import numpy as np, pandas as pd, krippendorff
from sklearn.metrics import cohen_kappa_score
frame = pd.read_csv(sys.argv[1], engine="pyarrow")
wide = frame.pivot(index="item_id", columns="rater", values="value")
matrix = wide.to_numpy(dtype=float).T
alpha = krippendorff.alpha(matrix, level_of_measurement="ordinal")
paired = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
counts = np.stack([(paired == v).sum(axis=0) for v in range(1, 6)], axis=1)
raters = counts.sum(axis=1)  # Fleiss' kappa with a varying number of raters per item, by hand
observed = (((counts * counts).sum(axis=1) - raters) / (raters * (raters - 1))).mean()
shares = counts.sum(axis=0) / raters.sum()
fleiss = (observed - (shares**2).sum()) / (1 - (shares**2).sum())
kappas = []
for i, j in itertools.combinations(range(len(matrix)), 2):
    both = ~np.isnan(matrix[i]) & ~np.isnan(matrix[j])
    kappas.append(cohen_kappa_score(matrix[i, both], matrix[j, both], weights="linear",
                                    labels=[1.0, 2.0, 3.0, 4.0, 5.0]))
rho = wide.corr(method="spearman").to_numpy()
print(alpha, fleiss, np.mean(kappas), rho[np.triu_indices(len(rho), 1)].mean())
"""


def write_ratings(path: Path, raters: int, items: int) -> int:
    import pandas as pd

    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, items)
    values = np.clip(truth + rng.integers(-1, 2, (raters, items)), 1, 5)
    rater, item = np.nonzero(rng.random(values.shape) >= 0.2)
    pd.DataFrame({"item_id": [f"i{i}" for i in item], "rater": [f"r{r}" for r in rater],
                  "value": values[rater, item]}).to_csv(path, index=False)
    return len(rater)


def timed(command: list[str]) -> tuple[float, float]:
    """CPU (user + system, the child and its threads) and wall seconds of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def main(raters: int, items: int, repeats: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ratings.csv"
        n = write_ratings(path, raters, items)
        ours = [sys.executable, "-m", "convoscope", "agree", str(path), "--level", "ordinal"]
        reference = [sys.executable, "-c", REFERENCE, str(path)]
        mine, theirs = [], []
        for _ in range(repeats):
            mine.append(timed(ours))
            theirs.append(timed(reference))
    cpu_ours, wall_ours = (float(np.median(column)) for column in zip(*mine, strict=True))
    cpu_ref, wall_ref = (float(np.median(column)) for column in zip(*theirs, strict=True))
    print(f"{raters} raters x {items:,} items, {n:,} ratings; medians of {repeats}, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"agree, 1,000-resample intervals: {cpu_ours:7.1f} s CPU {wall_ours:7.1f} s wall")
    print(f"hand-written point estimates:    {cpu_ref:7.1f} s CPU {wall_ref:7.1f} s wall")
    print(f"ratio (target <= 2):             {cpu_ours / cpu_ref:7.2f}x CPU "
          f"{wall_ours / wall_ref:5.2f}x wall")


if __name__ == "__main__":
    arguments = [int(value) for value in sys.argv[1:4]]
    main(*(arguments + [100, 2000, 3][len(arguments):]))
