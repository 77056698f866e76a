"""The alternative annotator test against its authors' own results (Calderon, Reichart and Dror,
ACL 2025): every winning rate and advantage probability their notebook prints, recomputed with
``convoscope.analysis.alt_test`` on their data.

Their repository (github.com/nitaytech/AltTest) has ``data/<dataset>/human_annotations.json`` and
``llm_annotations.json`` and the notebook ``alt_test_example.ipynb`` with the printed output;
nothing of it is copied here. Point ``--repo`` at a checkout:

    python benchmarks/alt_test_authors.py --repo path/to/AltTest

Writes the comparison to ``benchmarks/results/alt_test_authors.md``.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np

from convoscope.analysis import alt_test

# The scoring function and epsilon the notebook uses for each dataset.
SETTINGS = {
    "wax": ("accuracy", 0.1), "lgbteen": ("accuracy", 0.2), "mtbench": ("accuracy", 0.2),
    "framing": ("accuracy", 0.15), "cebab_aspects": ("accuracy", 0.1), "summeval": ("neg_rmse", 0.2),
    "10k_prompts": ("neg_rmse", 0.15), "cebab_stars": ("neg_rmse", 0.1), "lesion": ("neg_rmse", 0.15),
}
RESULTS = Path(__file__).parent / "results" / "alt_test_authors.md"
PRINTED = re.compile(r"^(\S+) (\S+) \[(PASSED|FAILED)\]:\t"
                     r"Winning Rate=([\d.]+)\tAdvantage Probability=([\d.]+)")


def printed_results(notebook: Path) -> dict[tuple[str, str], tuple[float, float]]:
    """(dataset, llm) -> (winning rate, advantage probability) as the notebook printed them."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    found = {}
    for cell in cells:
        for output in cell.get("outputs", []):
            for line in "".join(output.get("text", "")).splitlines():
                match = PRINTED.match(line)
                if match:
                    found[(match[1], match[2])] = (float(match[4]), float(match[5]))
    return found


def matrices(folder: Path) -> tuple[list[str], list[str], np.ndarray, dict[str, dict[str, object]]]:
    humans = json.loads((folder / "human_annotations.json").read_text(encoding="utf-8"))
    llms = json.loads((folder / "llm_annotations.json").read_text(encoding="utf-8"))
    annotators = list(humans)
    items = list(dict.fromkeys(i for ratings in humans.values() for i in ratings))
    numeric = all(isinstance(v, int | float) for ratings in humans.values() for v in ratings.values())
    fill = np.nan if numeric else None
    matrix = np.array([[humans[a].get(i, fill) for i in items] for a in annotators],
                      dtype=float if numeric else object)
    return annotators, items, matrix, llms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="a checkout of nitaytech/AltTest")
    args = parser.parse_args()
    printed = printed_results(args.repo / "alt_test_example.ipynb")
    lines = ["# The alternative annotator test against the authors' printed results", "",
             "`python benchmarks/alt_test_authors.py --repo AltTest` (github.com/nitaytech/AltTest, commit "
             "18428b1; ω winning rate, ρ advantage probability, as the notebook prints them)", "",
             "| dataset | LLM | authors ω | convoscope ω | authors ρ | convoscope ρ | match |",
             "|---|---|---:|---:|---:|---:|---|"]
    matches = 0
    for dataset, (scoring, epsilon) in SETTINGS.items():
        annotators, items, matrix, llms = matrices(args.repo / "data" / dataset)
        for llm, labels in llms.items():
            fill = np.nan if matrix.dtype != object else None
            pred = np.array([labels.get(i, fill) for i in items], dtype=matrix.dtype)
            result = alt_test(pred, matrix, epsilon=epsilon, scoring=scoring, annotators=annotators)  # type: ignore[arg-type]
            paper = printed.get((dataset, llm))
            ours = (round(result.winning_rate, 2), round(result.advantage_probability, 2))
            same = paper is not None and ours == paper
            matches += same
            shown = ("–", "–") if paper is None else (f"{paper[0]:.2f}", f"{paper[1]:.2f}")
            lines.append(f"| {dataset} | {llm} | {shown[0]} | {ours[0]:.2f} | {shown[1]} | {ours[1]:.2f} | "
                         f"{'yes' if same else 'NO'} |")
    lines += ["", f"{matches} of {len(printed)} printed results reproduced to the printed two decimals."]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
