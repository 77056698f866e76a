"""Speed of convoscope.analysis beside the reference libraries, on 10,000 items.

Run by hand (needs the dev extras: scikit-learn, statsmodels, krippendorff, pandas, pyarrow):

    python benchmarks/analysis_speed.py            # full run, a few minutes on 2 cores
    python benchmarks/analysis_speed.py --quick    # fewer repeats
    python benchmarks/analysis_speed.py --only scale   # only the issue-15 lines below

The scale lines (issue 15): ``agree`` on a 1,000,000-row long CSV (200,000 items x 5 raters,
read and every statistic computed) against pandas (pyarrow reader + pivot) plus the krippendorff
package's alpha alone; alpha with 50 % missing ratings in several shapes; the Kendall bootstrap
above 1,000 items; and ``metaeval`` on the real ABC-Eval and Ji et al. sets when present.

Each line shows the best of several runs for ours and the reference, and the ratio
(reference time / our time: above 1 means we are faster). The bootstrap lines compare the
vectorised path with a plain loop over resamples calling the scipy function (what one writes by
hand) and calling our own function. The inputs of both sides are the same
arrays; where the reference needs another input shape (statsmodels' count table, a 2x2 table
for McNemar), building it is counted, because a user has to do that too.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import krippendorff
import numpy as np
from scipy import stats
from sklearn import metrics
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from convoscope import analysis as A
from convoscope.items import ColumnMap

N_ITEMS = 10_000


def best_of(function: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def data(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, N_ITEMS)
    raters = np.clip(truth + rng.integers(-1, 2, (5, N_ITEMS)), 1, 5).astype(float)
    with_holes = raters.copy()
    with_holes[rng.random(raters.shape) < 0.2] = np.nan
    labels = rng.integers(0, 2, N_ITEMS)
    return {
        "x": truth + rng.normal(size=N_ITEMS), "y": truth + rng.normal(size=N_ITEMS),
        "raters": raters, "with_holes": with_holes, "labels": labels,
        "scores": labels + rng.normal(size=N_ITEMS),
        "predicted": np.where(rng.random(N_ITEMS) < 0.8, labels, 1 - labels),
        "other": np.where(rng.random(N_ITEMS) < 0.7, labels, 1 - labels),
    }


def comparisons(d: dict[str, np.ndarray]) -> list[tuple[str, Callable[[], object], Callable[[], object]]]:
    x, y, raters, holes = d["x"], d["y"], d["raters"], d["with_holes"]
    labels, scores, predicted, other = d["labels"], d["scores"], d["predicted"], d["other"]

    def sm_mcnemar_from_arrays() -> object:
        a, b = predicted == labels, other == labels
        table = [[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]]
        return sm_mcnemar(table, exact=False)

    return [
        ("pearson", lambda: A.pearson(x, y), lambda: stats.pearsonr(x, y)),
        ("spearman", lambda: A.spearman(x, y), lambda: stats.spearmanr(x, y)),
        ("kendall (tau-b)", lambda: A.kendall(x, y), lambda: stats.kendalltau(x, y)),
        ("spearman_test", lambda: A.spearman_test(x, y), lambda: stats.spearmanr(x, y)),
        ("cohen_kappa quadratic", lambda: A.cohen_kappa(raters[0], raters[1], weights="quadratic"),
         lambda: metrics.cohen_kappa_score(raters[0], raters[1], weights="quadratic")),
        ("fleiss_kappa 5 raters", lambda: A.fleiss_kappa(raters),
         lambda: sm_fleiss(aggregate_raters(raters.T.astype(int))[0])),
        ("krippendorff nominal, 20% NaN", lambda: A.krippendorff_alpha(holes),
         lambda: krippendorff.alpha(holes, level_of_measurement="nominal")),
        ("krippendorff ordinal, 20% NaN", lambda: A.krippendorff_alpha(holes, level="ordinal"),
         lambda: krippendorff.alpha(holes, level_of_measurement="ordinal")),
        ("krippendorff interval, 20% NaN", lambda: A.krippendorff_alpha(holes, level="interval"),
         lambda: krippendorff.alpha(holes, level_of_measurement="interval")),
        ("roc_auc", lambda: A.roc_auc(labels, scores), lambda: metrics.roc_auc_score(labels, scores)),
        ("roc_curve", lambda: A.roc_curve(labels, scores),
         lambda: metrics.roc_curve(labels, scores, drop_intermediate=False)),
        ("f1 (positive class)", lambda: A.f1(labels, predicted), lambda: metrics.f1_score(labels, predicted)),
        ("binary_scores vs precision_recall_fscore_support",
         lambda: A.binary_scores(labels, predicted),
         lambda: metrics.precision_recall_fscore_support(labels, predicted)),
        ("mcnemar", lambda: A.mcnemar(predicted == labels, other == labels), sm_mcnemar_from_arrays),
        ("majority_vote vs scipy mode", lambda: A.majority_vote(raters),
         lambda: stats.mode(raters, axis=0)),
        ("mean_pool vs nanmean", lambda: A.mean_pool(holes), lambda: np.nanmean(holes, axis=0)),
        ("median_pool vs nanmedian", lambda: A.median_pool(holes), lambda: np.nanmedian(holes, axis=0)),
    ]


def _loop_seconds(statistic: Callable[[np.ndarray, np.ndarray], object], x: np.ndarray, y: np.ndarray,
                  resamples: int, probe: int) -> float:
    """A plain Python loop over resamples, timed on ``probe`` resamples and scaled up."""
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(probe):
        index = rng.integers(0, len(x), len(x))
        statistic(x[index], y[index])
    return (time.perf_counter() - start) * resamples / probe


def bootstrap_lines(d: dict[str, np.ndarray], resamples: int) -> list[str]:
    lines = []
    cases = [
        ("spearman", A.spearman, stats.spearmanr, 10_000, False),
        ("spearman", A.spearman, stats.spearmanr, 500, False),
        ("pearson", A.pearson, stats.pearsonr, 10_000, False),
        ("kendall", A.kendall, stats.kendalltau, 1_000, True),
        ("kendall", A.kendall, stats.kendalltau, 200, True),
    ]
    for name, ours, reference, n, rounded in cases:
        x, y = d["x"][:n], d["y"][:n]
        if rounded:  # ties, as with rating scales
            x, y = np.round(x), np.round(y)
        start = time.perf_counter()
        A.bootstrap_ci(ours, x, y, n_resamples=resamples, seed=0)
        vectorised = time.perf_counter() - start
        scipy_loop = _loop_seconds(reference, x, y, resamples, probe=100)
        our_loop = _loop_seconds(ours, x, y, resamples, probe=100)
        label = f"bootstrap_ci {name}, {n:,} items x {resamples}"
        lines.append(f"{label:<44}{vectorised:>8.2f} s{scipy_loop:>12.2f} s{our_loop:>12.2f} s"
                     f"{scipy_loop / vectorised:>9.1f}x")
    return lines


def long_csv(path: Path, n_items: int = 200_000, raters: int = 5) -> None:
    import pandas as pd

    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, n_items)
    items = np.repeat(np.arange(n_items), raters)
    values = np.clip(truth[items] + rng.integers(-1, 2, len(items)), 1, 5)
    rater_names = [f"r{r}" for r in np.tile(np.arange(raters), n_items)]
    pd.DataFrame({"item_id": [f"i{i}" for i in items], "rater": rater_names,
                  "value": values}).to_csv(path, index=False)


def interleaved(ours: Callable[[], object], reference: Callable[[], object],
                repeats: int) -> tuple[float, float]:
    """Best time of each, measured turn about, so a busy machine slows both alike."""
    mine, theirs = [], []
    for _ in range(repeats):
        mine.append(best_of(ours, 1))
        theirs.append(best_of(reference, 1))
    return min(mine), min(theirs)


def scale_lines(repeats: int) -> list[str]:
    import tempfile

    import pandas as pd

    from convoscope.analysis._frame import read_frame

    lines = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "long.csv"
        long_csv(path)

        def ours() -> object:
            frame = read_frame(path, columns=ColumnMap(default_criterion="value"))
            return A.agreement_table(frame, level="ordinal", n_resamples=0)

        def with_intervals() -> object:
            frame = read_frame(path, columns=ColumnMap(default_criterion="value"))
            return A.agreement_table(frame, level="ordinal", n_resamples=1000)

        def reference() -> object:
            frame = pd.read_csv(path, engine="pyarrow")
            matrix = frame.pivot(index="rater", columns="item_id", values="value").to_numpy(dtype=float)
            return krippendorff.alpha(matrix, level_of_measurement="ordinal")

        mine, theirs = interleaved(ours, reference, repeats)
        lines.append(f"{'agree, 1M-row CSV (all statistics, no intervals)':<52}{mine:>9.2f} s "
                     f"{theirs:>10.2f} s{mine / theirs:>9.2f}x of the reference (target <= 2)")
        lines.append(f"{'agree, 1M-row CSV, with the 1,000-resample intervals':<52}"
                     f"{best_of(with_intervals, repeats):>9.2f} s")
    rng = np.random.default_rng(1)
    for raters, items in ((5, 10_000), (5, 100_000), (50, 10_000), (20, 2_000)):
        truth = rng.integers(1, 6, items)
        table = np.clip(truth + rng.integers(-1, 2, (raters, items)), 1, 5).astype(float)
        table[rng.random(table.shape) < 0.5] = np.nan
        mine = best_of(lambda t=table: A.krippendorff_alpha(t, level="ordinal"), repeats)
        theirs = best_of(lambda t=table: krippendorff.alpha(t, level_of_measurement="ordinal"), repeats)
        label = f"alpha ordinal, 50% missing, {raters} x {items:,}"
        lines.append(f"{label:<52}{mine * 1e3:>9.2f} ms{theirs * 1e3:>9.2f} ms{theirs / mine:>9.2f}x")
    for n in (1_634, 4_000):
        x = np.round(rng.normal(size=n) * 2)
        y = np.round(x + rng.normal(size=n))
        start = time.perf_counter()
        A.bootstrap_ci(A.kendall, x, y, n_resamples=2000, seed=0)
        lines.append(f"{f'bootstrap Kendall, {n:,} items x 2,000 (O(n log n))':<52}"
                     f"{time.perf_counter() - start:>9.2f} s")
    return lines + metaeval_lines()


def metaeval_lines() -> list[str]:
    from convoscope.datasets import load_benchmark

    data = Path(__file__).resolve().parents[2] / "shared/data"
    lines = []
    for name, folder in (("abc-eval", "abc-eval-gpt"), ("ji2022", "ji2022-dialogue-eval")):
        if not (data / folder).exists():
            continue
        benchmark = load_benchmark(name, data / folder)
        judges = list(benchmark.published)
        if not judges:  # Ji et al. ship no automatic labels: their z-scores stand in as a "judge"
            judges = [A.Rating(r.item_id, r.criterion, "model:z-score", r.value, system=r.system)
                      for r in benchmark.derived["z"]]
        start = time.perf_counter()
        A.metaeval_study(judges, benchmark.human, n_resamples=2000, system=True)
        lines.append(f"{f'metaeval {name}, every criterion, 2,000 resamples':<52}"
                     f"{time.perf_counter() - start:>9.2f} s")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--only", choices=["scale"], help="only the scale lines")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    if args.only == "scale":
        for line in scale_lines(repeats):
            print(line)
        return
    d = data()
    np.seterr(all="ignore")
    warnings.simplefilter("ignore")  # numpy's all-NaN warnings would cost the references time
    print(f"{'function (10,000 items)':<52}{'ours':>12}{'reference':>14}{'ratio':>10}")
    for name, ours, reference in comparisons(d):
        ours_time, reference_time = best_of(ours, repeats), best_of(reference, repeats)
        print(f"{name:<52}{ours_time * 1e3:>9.2f} ms{reference_time * 1e3:>11.2f} ms"
              f"{reference_time / ours_time:>9.1f}x")
    print()
    print(f"{'bootstrap (percentile, 2,000 resamples)':<44}{'ours':>10}{'scipy loop':>13}"
          f"{'our loop':>13}{'ratio':>10}")
    for line in bootstrap_lines(d, resamples=2000):
        print(line)
    print()
    print(f"{'at scale (issue 15)':<52}{'ours':>12}{'reference':>12}{'ratio':>10}")
    for line in scale_lines(repeats):
        print(line)


if __name__ == "__main__":
    main()
