"""Reproduce published figures from the USR human annotations with convoscope.analysis.

USR (Mehri and Eskenazi, ACL 2020) had three experts rate 360 Topical-Chat and 300 PersonaChat
responses on six qualities, and reports inter-annotator agreement as the Spearman correlation
between annotators, averaged over the three annotator pairs. This script recomputes it, adds the
chance-corrected coefficients the paper does not report, and measures a response-length baseline
against the mean Overall rating, with bootstrap intervals.

The data is research-only and is read in place from ../shared/data/usr (never copied):

    python benchmarks/analysis_published.py [--data /work/shared/data/usr] [--resamples 2000]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

from convoscope import analysis as A

QUALITIES = ["Understandable", "Natural", "Maintains Context", "Engaging", "Uses Knowledge", "Overall"]
# USR, Table 2 (inter-annotator agreement, mean pairwise Spearman). The Topical-Chat row, and the
# PersonaChat values marked below, as printed in the paper; None where we could not check the
# printed value here.
PUBLISHED = {
    "usr_topical_chat.json": [0.5102, 0.4871, 0.5599, 0.5811, 0.7090, 0.7183],
    "pc_usr_data.json": [0.2984, 0.4842, None, None, 0.8115, None],
}
# USR's own turn-level correlation with Overall (abstract): a reference point for the baseline.
USR_TURN_LEVEL = {"usr_topical_chat.json": 0.42, "pc_usr_data.json": 0.48}


def load(path: Path) -> tuple[dict[str, np.ndarray], list[str], list[str], list[str]]:
    """Annotators x responses per quality, plus each response's text, system and context."""
    contexts = json.loads(path.read_text(encoding="utf-8"))
    responses = [(c, r) for c in contexts for r in c["responses"]]
    matrices = {q: np.array([r[q] for _, r in responses], dtype=float).T for q in QUALITIES}
    return (matrices, [r["response"].strip() for _, r in responses], [r["model"] for _, r in responses],
            [c["context"].strip().split("\n")[-1] for c, _ in responses])


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def overlap_f1(response: str, turn: str) -> float:
    """Unigram F1 between a response and the turn it answers: a second trivial baseline."""
    said, heard = set(words(response)), set(words(turn))
    common = len(said & heard)
    return 0.0 if common == 0 else 2 * common / (len(said) + len(heard))


def agreement_report(name: str, matrices: dict[str, np.ndarray]) -> None:
    print(f"\n{name}: inter-annotator agreement ({matrices['Overall'].shape[1]} responses, 3 experts)")
    print(f"{'quality':<20}{'pairwise ρ':>11}{'published':>11}{'LOO ρ':>8}{'α ord':>8}{'Fleiss':>8}"
          f"{'Cohen κw':>10}")
    for quality, published in zip(QUALITIES, PUBLISHED[name], strict=True):
        m = matrices[quality]
        shown = "–" if published is None else f"{published:.4f}"
        print(f"{quality:<20}{A.pairwise_correlation(m):>11.4f}{shown:>11}{A.leave_one_out(m):>8.3f}"
              f"{A.krippendorff_alpha(m, level='ordinal'):>8.3f}{A.fleiss_kappa(m):>8.3f}"
              f"{A.pairwise_cohen_kappa(m, weights='quadratic').mean:>10.3f}")


def baseline_report(name: str, matrices: dict[str, np.ndarray], texts: list[str], systems: list[str],
                    turns: list[str], resamples: int) -> None:
    overall = A.mean_pool(matrices["Overall"])
    length = np.array([len(words(t)) for t in texts], dtype=float)
    overlap = np.array([overlap_f1(t, turn) for t, turn in zip(texts, turns, strict=True)])
    print(f"\n{name}: baselines vs mean Overall (turn level, {resamples} resamples, 95% CI)")
    for label, scores in (("length (words)", length), ("overlap F1 with last turn", overlap)):
        for statistic in (A.spearman, A.kendall):
            ci = A.bootstrap_ci(statistic, scores, overall, n_resamples=resamples, seed=0)
            print(f"  {label:<26}{statistic.__name__:<9}{ci.estimate:>7.3f}  [{ci.low:.3f}, {ci.high:.3f}]")
    diff = A.paired_bootstrap_diff(A.spearman, overall, length, overlap, n_resamples=resamples, seed=0)
    print(f"  length minus overlap, Spearman: {diff.estimate:+.3f} [{diff.low:+.3f}, {diff.high:+.3f}]"
          f"{'  (significant)' if not diff.contains(0.0) else ''}")
    system = A.system_correlation(length, overall, systems, method="spearman")
    print(f"  length, system level ({system.n} systems): Spearman {system.statistic:.3f} "
          f"(p = {system.pvalue:.3f}); USR's own turn-level correlation: {USR_TURN_LEVEL[name]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data/usr")
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    if not args.data.exists():
        raise SystemExit(f"USR data not found at {args.data}; pass --data")
    for name in PUBLISHED:
        matrices, texts, systems, turns = load(args.data / name)
        agreement_report(name, matrices)
        baseline_report(name, matrices, texts, systems, turns, args.resamples)


if __name__ == "__main__":
    main()
