"""Every decision convoscope prints, on simulated studies whose right answer is known (issue 36).

Each row is one decision on one kind of study, repeated ``--reps`` times with fresh seeds: the
truth, how often the library's decision differed from it (its error rate), and how often it said
"cannot tell". The studies are the ones the tests use (``tests/simstudies.py``):

- alt-test: categorical labels coded as integers (``--level nominal``) and as strings; a judge
  far worse than the annotators that errs to the middle code (truth: fail), a judge better than
  them (truth: pass), two annotators (truth: cannot tell), a judge that ties one annotator on
  every item (truth: pass, as good as a person);
- estimate: a rare 0/1 class (5 %) at 10, 20 and 40 labels, and the samples with 0 positives
  (truth: the interval holds the true share; a point interval is an error);
- card "ranks systems": 4 systems (truth: cannot tell), 5 systems with one broken system and a
  weak judge (truth: no claim), 8 systems and a judge that tracks quality (truth: pass);
- card ceiling flag: a judge that saw the answers (truth: flagged), an honest one (not flagged),
  a judge that is one more person on 1,000 items (truth: not flagged; the check is one-sided at
  2.5 %, so an error rate up to about that is the nominal rate);
- outlier screen: the best system far ahead but on the trend (truth: not flagged), a system the
  judge misplaces (truth: flagged);
- multiple testing: a table of 30 truly significant "worse than the best" tests (truth: every
  Holm-corrected permutation p below .05).

    python benchmarks/decisions.py --reps 200
    python benchmarks/decisions.py --reps 60 --only ceiling   # some cases: printed, not written

Writes ``benchmarks/results/decisions.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

from simstudies import as_words, categorical_study, panel_study, rare_binary_study, systems_study  # noqa: E402

from convoscope.analysis import Rating, alt_test, metaeval, metaeval_study, system_level  # noqa: E402
from convoscope.analysis._influence import bonferroni_outliers  # noqa: E402
from convoscope.card import CardThresholds  # noqa: E402
from convoscope.card._model import Agreement, JudgeReport  # noqa: E402
from convoscope.card._verdict import findings, system_decision  # noqa: E402
from convoscope.estimate import ppi_mean  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "decisions.md"
LIMITS = CardThresholds()
Study = Callable[[np.random.Generator], str]  # returns the decision's outcome on one study


def _alt(coding: str, truth_good: bool, annotators: int = 4) -> Study:
    def run(rng: np.random.Generator) -> str:
        options = dict(annotator_accuracy=0.7, n_annotators=annotators)
        options.update(judge_accuracy=0.9) if truth_good else options.update(
            judge_accuracy=0.2, judge_errs_to_middle=True)
        judge, humans = categorical_study(rng, **options)  # type: ignore[arg-type]
        found = alt_test(judge, humans, level="nominal") if coding == "int" else \
            alt_test(as_words(judge), as_words(humans))
        return found.decision.outcome
    return run


def _alt_copy(rng: np.random.Generator) -> str:
    """A judge that copies one annotator: it ties that person on every item (ties count for both)."""
    _, humans = categorical_study(rng, n_annotators=4, annotator_accuracy=0.7)
    return alt_test(as_words(humans[0].copy()), as_words(humans)).decision.outcome


def _share(n: int, positives: int | None) -> Study:
    def run(rng: np.random.Generator) -> str:
        y, yhat, pool, share = rare_binary_study(rng, n_labelled=n, positives=positives)
        if positives is not None:
            share = 0.05
        found = ppi_mean(y, yhat, pool, share=True)  # what estimate() uses for 0/1 labels
        if found.ci[1] - found.ci[0] <= 1e-12:
            return "point"
        return "pass" if found.ci[0] <= share <= found.ci[1] else "fail"
    return run


def _ratings(rows: list[tuple[str, str, str, float]]) -> list[Rating]:
    return [Rating(item, "q", rater, score, system=system) for item, system, rater, score in rows]


def _ranking(**options: object) -> Study:
    def run(rng: np.random.Generator) -> str:
        ratings = _ratings(systems_study(rng, **options))  # type: ignore[arg-type]
        judge = [r for r in ratings if r.rater == "model:j"]
        humans = [r for r in ratings if r.rater != "model:j"]
        return system_decision(system_level(judge, humans, n_resamples=200)[0], LIMITS).outcome
    return run


def _ceiling(**options: object) -> Study:
    def run(rng: np.random.Generator) -> str:
        ratings = _ratings(systems_study(rng, **options))  # type: ignore[arg-type]
        row = next(r for r in metaeval(ratings, n_resamples=200, alt_epsilon=None) if r.judge == "model:j")
        report = JudgeReport("j", "model:j", (Agreement("q", None, row),), (), (), (), None, (), (), 0, None,
                             (), ())
        return "pass" if any(f.rule == "ceiling_margin" for f in findings(report, LIMITS)) else "fail"
    return run


def _one_more_person(rng: np.random.Generator) -> str:
    judge, people = panel_study(rng, n_items=1000)
    ratings = [Rating(f"i{i}", "q", "model:j", float(v)) for i, v in enumerate(judge)]
    ratings += [Rating(f"i{i}", "q", f"human:h{k}", float(v)) for k, row in enumerate(people)
                for i, v in enumerate(row)]
    row = next(r for r in metaeval(ratings, n_resamples=200, alt_epsilon=None) if r.judge == "model:j")
    report = JudgeReport("j", "model:j", (Agreement("q", None, row),), (), (), (), None, (), (), 0, None,
                         (), ())
    return "pass" if any(f.rule == "ceiling_margin" for f in findings(report, LIMITS)) else "fail"


def _outlier(off_trend: bool) -> Study:
    def run(rng: np.random.Generator) -> str:
        quality = rng.normal(0, 0.3, 8)
        if not off_trend:
            quality[0] = 1.5
        judge = {f"s{i}": float(q + rng.normal(0, 0.05)) for i, q in enumerate(quality)}
        human = {f"s{i}": float(q + rng.normal(0, 0.05)) for i, q in enumerate(quality)}
        target = "s1" if off_trend else "s0"
        if off_trend:
            human["s1"] = max(human.values()) + 0.6
            judge["s1"] = float(np.median(list(judge.values())))
        return "pass" if target in bonferroni_outliers(judge, human) else "fail"
    return run


def _family(rng: np.random.Generator) -> str:
    rows = []
    for c in range(6):
        truth = rng.normal(size=60)
        for i in range(60):
            rows.extend(Rating(f"i{i}", f"c{c}", f"human:h{h}", float(truth[i] + rng.normal(0, 0.3)))
                        for h in range(3))
            rows.append(Rating(f"i{i}", f"c{c}", "model:j0", float(truth[i] + rng.normal(0, 0.1))))
            rows.extend(Rating(f"i{i}", f"c{c}", f"model:j{j}", float(rng.normal())) for j in range(1, 6))
    study = metaeval_study(rows, n_resamples=20, permutations=1000, alt_epsilon=None,
                           seed=int(rng.integers(1 << 30)))
    adjusted = [r["permutation_p_adjusted"] for r in study.records()
                if r["permutation_p_adjusted"] is not None]
    return "pass" if adjusted and max(adjusted) < 0.05 else "fail"


CASES: list[tuple[str, str, str, Study, int]] = [  # (decision, study, truth, run, cost weight)
    ("alt-test", "int codes 0/1/2, --level nominal, judge 20 % right (errs to the middle code)", "fail",
     _alt("int", False), 1),
    ("alt-test", "string labels, judge 20 % right", "fail", _alt("str", False), 1),
    ("alt-test", "int codes, --level nominal, judge 90 % right, annotators 70 %", "pass",
     _alt("int", True), 1),
    ("alt-test", "string labels, judge 90 % right, two annotators", "cannot_tell", _alt("str", True, 2), 1),
    ("alt-test", "ties: the judge copies one of four annotators", "pass", _alt_copy, 1),
    *[("estimate interval holds the share", f"5 % class, {n} labels", "pass", _share(n, None), 1)
      for n in (10, 20, 40)],
    *[("estimate interval holds the share", f"5 % class, {n} labels, {k} positive(s)", "pass",
       _share(n, k), 1) for n in (10, 20, 40) for k in (0, 1)],
    ("card: ranks systems", "4 systems, judge and people nearly exact", "cannot_tell",
     _ranking(n_systems=4, judge_noise=0.01, human_noise=0.01), 3),
    ("card: ranks systems", "5 systems, one broken, judge weight .3", "fail",
     _ranking(n_systems=5, judge_weight=0.3, outlier=True), 3),
    ("card: ranks systems", "5 systems, one broken, judge blind otherwise", "fail",
     _ranking(n_systems=5, judge_weight=0.0, outlier=True), 3),
    ("card: ranks systems", "8 systems, judge tracks quality", "pass",
     _ranking(n_systems=8, spread=1.0, judge_noise=0.2, human_noise=0.2), 3),
    ("card: above the ceiling flag", "judge saw the answers, noisy people", "pass",
     _ceiling(n_systems=6, human_noise=1.5, leaked=True), 3),
    ("card: above the ceiling flag", "honest judge, consistent people", "fail",
     _ceiling(n_systems=6, human_noise=0.3, judge_noise=1.0), 3),
    ("card: above the ceiling flag", "judge is one more person, 1,000 items", "fail", _one_more_person, 3),
    ("outlier flag", "best system far ahead, on the trend (8 systems)", "fail", _outlier(False), 1),
    ("outlier flag", "a system the judge misplaces (8 systems)", "pass", _outlier(True), 1),
    ("permutation p after Holm", "30 truly significant tests, 1,000 permutations asked", "pass", _family, 30),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=200, help="studies per cheap case (costly ones fewer)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", help="run only the cases whose decision or study holds this text; "
                        "the rows are printed and the results file is left alone")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    lines = ["# Decisions on studies with a known answer", "",
             f"`python benchmarks/decisions.py --reps {args.reps} --seed {args.seed}` (a case of cost "
             "weight w runs max(reps // w, 5) studies).", "",
             "| decision | study | truth | studies | error rate | cannot tell | seconds |",
             "|---|---|---|---|---|---|---|"]
    for decision, study, truth, run, weight in CASES:
        if args.only and args.only not in f"{decision} {study}":
            continue
        reps = max(args.reps // weight, 5)
        started = time.perf_counter()
        outcomes = [run(rng) for _ in range(reps)]
        wrong = sum(outcome != truth for outcome in outcomes) / reps
        unsure = sum(outcome == "cannot_tell" for outcome in outcomes) / reps
        row = (f"| {decision} | {study} | {truth} | {reps} | {wrong:.3f} | {unsure:.3f} | "
               f"{time.perf_counter() - started:.1f} |")
        print(row, flush=True)
        lines.append(row)
    lines += ["", "Estimate rows: the error rate is 1 − coverage of the 95 % interval (a point interval "
              "counts as an error); the interval is `ppi_mean(..., share=True)`, what `estimate` now uses "
              "for 0/1 labels by default."]
    if not args.only:
        RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
