"""Published figures beside convoscope's, each computed by the paper's own protocol.

Every figure printed in a benchmark paper that convoscope reproduces (USR Table 2, GPT-ABCEval,
Ji et al. 2022), the protocols that do not reproduce them (the CLI's former defaults), FED's
published agreement with every procedure tried on the released file, and, for GRADE, ConTurE
and MAIA-DQE, convoscope's figures with no published one to compare (their papers print none
we could check here). The data is research-only and read in place (never copied):

    python benchmarks/analysis_published.py [--data /work/shared/data]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from convoscope import analysis as A
from convoscope.datasets import load_benchmark
from convoscope.datasets._published import (
    abc_pooled_f1,
    all_figures,
    fed_agreement_variants,
    ji_replication,
)

FED_PUBLISHED = (0.52, 0.84)  # range of FED's printed inter-annotator agreement over its qualities


def figures_table(data: Path) -> None:
    print(f"{'source':<16}{'figure':<40}{'paper':>9}{'convoscope':>12}  match  protocol")
    for figure in all_figures(data):
        paper, ours = f"{figure.paper:.{figure.digits}f}", f"{figure.ours:.{figure.digits}f}"
        print(f"{figure.source:<16}{figure.label:<40}{paper:>9}{ours:>12}  "
              f"{'yes' if figure.matches else 'NO':<5}  {figure.how}")


def other_protocols(data: Path) -> None:
    print("\nThe same figures by the protocols that do not reproduce them:")
    if (data / "usr").exists():
        benchmark = load_benchmark("usr-topicalchat", data / "usr")
        by_identity = A.rater_matrices(benchmark.human)[("natural", None)].values
        print(f"  USR TC Natural, raters paired by identity (agree default): "
              f"{A.pairwise_correlation(by_identity):.4f} (paper .4871)")
    if (data / "abc-eval-gpt").exists():
        print(f"  GPT-ABCEval ChatGPT !Rel F1+, pooled human majority (metaeval default): "
              f"{abc_pooled_f1(data / 'abc-eval-gpt'):.1f} (paper 40.6)")
    if (data / "ji2022-dialogue-eval").exists():
        reversed_r = ji_replication(data / "ji2022-dialogue-eval", reverse_negative=True)
        print(f"  Ji 2022 replication with robotic/repetitive reversed: r = {reversed_r:.3f} (paper .969)")


def fed(data: Path) -> None:
    if not (data / "fed").exists():
        return
    low, high = FED_PUBLISHED
    print(f"\nFED inter-annotator agreement: paper {low:.2f}-{high:.2f} over the qualities; on the "
          "released file (range over the 20 qualities):")
    for label, (found_low, found_high) in fed_agreement_variants(data / "fed").items():
        print(f"  {label:<40}{found_low:.2f}-{found_high:.2f}")


def unpublished(data: Path) -> None:
    print("\nNo published figure checked here; convoscope's agreement for reference:")
    for name, folder in (("grade", "grade"), ("conture-dialogue", "conture"), ("maia-dqe-turn", "maia-dqe")):
        if not (data / folder).exists():
            continue
        try:
            benchmark = load_benchmark(name, data / folder)
        except (KeyError, ValueError) as error:
            print(f"  {name}: {error}")
            continue
        for row in A.agreement_table(benchmark.human, level="ordinal")[:3]:
            print(f"  {name:<18}{row.criterion:<22}raters {row.n_raters:>3}  "
                  f"alpha {_f(row.krippendorff_alpha)}  LOO rho {_f(row.loo_spearman)}")


def _f(value: float | None) -> str:
    return "  –  " if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data")
    args = parser.parse_args()
    if not args.data.exists():
        raise SystemExit(f"data not found at {args.data}; pass --data")
    figures_table(args.data)
    other_protocols(args.data)
    fed(args.data)
    unpublished(args.data)


if __name__ == "__main__":
    main()
