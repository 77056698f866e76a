"""Coverage of the prediction-powered intervals at 10, 20, 40 and 150 human labels, before and
after issue 25: the simulation that chose the intervals ``convoscope estimate`` uses.

Three studies, each repeated ``--reps`` times with a known truth (nominal coverage .95):

- **mean**: a 1–5 human scale and a judge correlating about .6 with it (biased upwards); PPI++ with
  the normal interval (before) against the Student t interval on n - 1 degrees of freedom (after).
- **rare share**: the share of a label people give 5 % of the time, the judge's probability of it
  as prediction; normal interval (before) against t with the Agresti–Coull floor, clipped to
  [0, 1] (after).
- **calibrate, then estimate**: the judge's raw score (0–1) is calibrated onto the 1–5 scale by
  isotonic regression on every human-rated item — the random sample plus 80 items routed to
  people because the judge was least sure — and the estimate then uses the same random sample
  (before: what ``calibrate`` + ``estimate --calibration`` did); against cross-fitting the
  calibration in 5 folds (cross-prediction, after: ``estimate --cross-fit 5``). "labels worth" is
  the median effective number of labels the estimate claims.

    python benchmarks/ppi_coverage.py --reps 2000

Writes ``benchmarks/results/ppi_coverage.md``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from convoscope.estimate import cross_fit, crossfit_mean, fit_isotonic, ppi_mean

RESULTS = Path(__file__).parent / "results" / "ppi_coverage.md"
SIZES = (10, 20, 40, 150)
UNLABELLED = 600


def mean_study(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    quality = rng.normal(size=n + UNLABELLED)
    people = np.clip(np.round(3 + 1.1 * quality + rng.normal(0, 0.6, n + UNLABELLED)), 1, 5)
    judge = 3.4 + 0.8 * quality + rng.normal(0, 1.0, n + UNLABELLED)
    return people[:n], judge[:n], judge[n:]


def share_study(rng: np.random.Generator, n: int, share: float = 0.05) -> tuple[np.ndarray, ...]:
    people = (rng.random(n + UNLABELLED) < share).astype(float)
    judge = np.where(people == 1, rng.beta(3, 4, n + UNLABELLED), rng.beta(1, 12, n + UNLABELLED))
    return people[:n], judge[:n], judge[n:]


def calibration_study(rng: np.random.Generator, n: int, routed: int = 80) -> tuple[np.ndarray, ...]:
    quality = rng.normal(size=UNLABELLED)
    people = np.clip(np.round(3 + 1.1 * quality + rng.normal(0, 0.6, UNLABELLED)), 1, 5)
    score = 1 / (1 + np.exp(-(0.9 * quality + rng.normal(0, 0.8, UNLABELLED))))
    order = rng.permutation(UNLABELLED)
    sample, rest = order[:n], order[n:]
    chosen = rest[np.argsort(np.abs(score[rest] - 0.5))][:routed]
    return people, score, sample, chosen


def covered(estimate: object, truth: float) -> bool:
    low, high = estimate.ci  # type: ignore[attr-defined]
    return bool(low <= truth <= high)


def run_mean(rng: np.random.Generator, n: int, reps: int) -> dict[str, float]:
    hits = {"before": 0, "after": 0}
    for _ in range(reps):
        y, yhat, unlabelled = mean_study(rng, n)
        hits["before"] += covered(ppi_mean(y, yhat, unlabelled, interval="normal"), 3.0)
        hits["after"] += covered(ppi_mean(y, yhat, unlabelled, interval="t"), 3.0)
    return {key: value / reps for key, value in hits.items()}


def run_share(rng: np.random.Generator, n: int, reps: int) -> dict[str, float]:
    hits = {"before": 0, "after": 0}
    for _ in range(reps):
        y, yhat, unlabelled = share_study(rng, n)
        hits["before"] += covered(ppi_mean(y, yhat, unlabelled, interval="normal"), 0.05)
        hits["after"] += covered(ppi_mean(y, yhat, unlabelled, share=True), 0.05)
    return {key: value / reps for key, value in hits.items()}


def run_calibration(rng: np.random.Generator, n: int, reps: int) -> dict[str, float]:
    found = {"before": 0.0, "after": 0.0}
    worth: dict[str, list[float]] = {"worth before": [], "worth after": []}
    for _ in range(reps):
        people, score, sample, chosen = calibration_study(rng, n)
        unlabelled = np.setdiff1d(np.arange(UNLABELLED), sample)
        rated = np.concatenate([sample, chosen])
        same = fit_isotonic(score[rated], people[rated], scale=(1, 5))
        before = ppi_mean(people[sample], same.apply(score[sample]), same.apply(score[unlabelled]),
                          interval="normal")
        judge = {str(i): float(score[i]) for i in range(UNLABELLED)}
        human = {str(i): float(people[i]) for i in rated}
        labelled = [str(i) for i in sample]
        folds = cross_fit(judge, human, labelled, folds=min(5, n), seed=int(rng.integers(1 << 31)))
        after = crossfit_mean(people[sample], [folds.out_of_fold[i] for i in labelled],
                              folds.unlabelled(score[unlabelled]))
        found["before"] += covered(before, 3.0)
        found["after"] += covered(after, 3.0)
        worth["worth before"].append(before.effective_n)
        worth["worth after"].append(after.effective_n)
    # The median: a calibration that fits its own labels exactly has zero variance, "worth" infinity.
    return {**{key: value / reps for key, value in found.items()},
            **{key: float(np.median(values)) for key, values in worth.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    lines = ["# Coverage of the prediction-powered intervals (nominal .95)", "",
             f"`python benchmarks/ppi_coverage.py --reps {args.reps} --seed {args.seed}` "
             f"({UNLABELLED} judge-only items per study)", "",
             "| study | labels | before | after | labels worth before | labels worth after |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, runner in (("mean (PPI++; normal → t)", run_mean),
                         ("rare share 5 % (normal → t + Agresti–Coull, clipped)", run_share),
                         ("calibrate then estimate (same labels → cross-fit, 5 folds)", run_calibration)):
        for n in SIZES:
            found = runner(rng, n, args.reps)
            worth = [f"{found[k]:.1f}" if k in found else "" for k in ("worth before", "worth after")]
            lines.append(f"| {name} | {n} | {found['before']:.3f} | {found['after']:.3f} | "
                         f"{worth[0]} | {worth[1]} |")
            print(lines[-1], flush=True)
    lines += ["", f"{time.perf_counter() - started:.0f} s on the shared machine."]
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
