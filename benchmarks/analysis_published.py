"""Every published figure convoscope tries to reproduce, beside the paper's, with the match.

Every cell of the tables this script claims (USR Table 2, both corpora; GPT-ABCEval's ChatGPT
F1+ on "irrelevant"; Ji et al.'s self-replication r; FED's printed agreement), whether or not it
matches, and for each one that does not, what the data shows. Then the protocols that do not
reproduce them (the CLI's former defaults) and, for GRADE, ConTurE and MAIA-DQE, convoscope's
figures with no published one to compare. The data is research-only and read in place (never
copied); the statistics (no text from the data) go to ``benchmarks/results/analysis_published.md``:

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
    ji_z_check,
)

RESULTS = Path(__file__).parent / "results" / "analysis_published.md"
FED_PUBLISHED = (0.52, 0.84)  # range of FED's printed inter-annotator agreement over its qualities
NOT_CHECKED = ("no copy of the printed value could be read here (offline); convoscope's value by the "
               "same protocol as the checked cells")


def figures_table(data: Path) -> list[str]:
    lines = ["| source | figure | paper | convoscope | match | protocol / what the data shows |",
             "|---|---|---:|---:|---|---|"]
    for figure in all_figures(data):
        ours = f"{figure.ours:.{figure.digits}f}"
        paper = "–" if figure.paper is None else f"{figure.paper:.{figure.digits}f}"
        match = {True: "yes", False: "NO", None: "not checked"}[figure.matches]
        how = figure.how if figure.paper is not None else f"{figure.how}; {NOT_CHECKED}"
        lines.append(f"| {figure.source} | {figure.label} | {paper} | {ours} | {match} | {how} |")
    if (data / "fed").exists():
        variants = fed_agreement_variants(data / "fed")
        low, high = variants["leave-one-out Spearman"]
        printed = f"{FED_PUBLISHED[0]:.2f}–{FED_PUBLISHED[1]:.2f}"
        lines.append(f"| FED | inter-annotator agreement, range over the qualities | "
                     f"{printed} | {low:.2f}–{high:.2f} | NO | leave-one-out Spearman on the released file "
                     "(five ratings per item; needs no worker ids). No variant below covers the printed "
                     "range; the closest, each annotator against the mean of all five with itself "
                     "included (not an agreement measure), gives .52–.67. The paper gives no more detail "
                     "of its computation. Not reproduced. |")
    return lines


def other_protocols(data: Path) -> list[str]:
    lines = ["", "The same figures by protocols that do not reproduce them:", ""]
    if (data / "usr").exists():
        benchmark = load_benchmark("usr-topicalchat", data / "usr")
        by_identity = A.rater_matrices(benchmark.human)[("natural", None)].values
        lines.append(f"- USR TC Natural, raters paired by identity (`agree` default): "
                     f"{A.pairwise_correlation(by_identity):.4f} (paper .4871, by annotation slot)")
    if (data / "abc-eval-gpt").exists():
        lines.append(f"- GPT-ABCEval ChatGPT !Rel F1+, pooled human majority (`metaeval` default): "
                     f"{abc_pooled_f1(data / 'abc-eval-gpt'):.1f} (paper 40.6, per annotation set)")
    if (data / "ji2022-dialogue-eval").exists():
        found = ji_z_check(data / "ji2022-dialogue-eval")
        stored, again = found["as stored"], found["reversed again"]
        lines.append(f"- Ji et al. 2022, robotic / repetitive: the released z-scores are the per-worker "
                     f"standardisation of the raw scores as stored for {stored[0]} of {stored[1]} "
                     f"worker-runs, and of their reversal for {again[0]}: the negative criteria are released "
                     "already reversed (higher = better), so reversing them again (r = .881) is a double "
                     "reversal, not a protocol.")
    return lines


def fed(data: Path) -> list[str]:
    if not (data / "fed").exists():
        return []
    low, high = FED_PUBLISHED
    lines = ["", f"FED inter-annotator agreement: paper {low:.2f}–{high:.2f} over the qualities; on the "
             "released file (range over the 20 qualities):", ""]
    for label, (found_low, found_high) in fed_agreement_variants(data / "fed").items():
        lines.append(f"- {label}: {found_low:.2f}–{found_high:.2f}")
    return lines


def unpublished(data: Path) -> list[str]:
    lines = ["", "No published figure checked here; convoscope's agreement for reference:", ""]
    for name, folder in (("grade", "grade"), ("conture-dialogue", "conture"), ("maia-dqe-turn", "maia-dqe")):
        if not (data / folder).exists():
            continue
        try:
            benchmark = load_benchmark(name, data / folder)
        except (KeyError, ValueError) as error:
            lines.append(f"- {name}: {error}")
            continue
        for row in A.agreement_table(benchmark.human, level="ordinal", n_resamples=0)[:3]:
            lines.append(f"- {name} {row.criterion}: raters {row.n_raters}, "
                         f"alpha {_f(row.krippendorff_alpha)}, LOO rho {_f(row.loo_spearman)}")
    return lines


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data")
    args = parser.parse_args()
    if not args.data.exists():
        raise SystemExit(f"data not found at {args.data}; pass --data")
    lines = ["# Published figures reproduced", "",
             "`python benchmarks/analysis_published.py --data DATA`", "", *figures_table(args.data),
             *other_protocols(args.data), *fed(args.data), *unpublished(args.data)]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
