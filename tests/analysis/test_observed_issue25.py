"""Issue 25, observations 3–8: what a reviewer would otherwise compute by hand. Each test failed
before the fix; statistics are pinned to a reference library or a worked example."""

import json
import math
import re
import shutil
import subprocess
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner
from patience import PATIENT_S
from scipy import stats

import convoscope as cs
from convoscope.analysis import (
    Rating,
    adjust_pvalues,
    alt_test,
    cohen_kappa,
    cohen_kappa_ci,
    dialogue_level,
    krippendorff_alpha,
    krippendorff_alpha_ci,
    majority_vote,
    metaeval,
    metaeval_study,
    outlier_systems,
    pairwise_accuracy,
    paper_table,
    rank_intervals,
    system_bootstrap_ci,
    system_permutation_test,
    system_significance,
    system_williams_test,
    to_latex,
    to_markdown,
)
from convoscope.cli import cli
from convoscope.cli._app import _register

_register()


def _run(*args, columns=300):
    return CliRunner().invoke(cli, [str(arg) for arg in args], env={"COLUMNS": str(columns)})


def _systems_study(m=8, n=20, seed=0, judges=(0.9, 0.3), humans=3):
    """m systems x n shared inputs: people's and judges' scores per (system, input)."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=m)
    people = quality[:, None] + rng.normal(0, 1.5, (m, n))
    scored = [weight * quality[:, None] + rng.normal(0, 1.5, (m, n)) for weight in judges]
    rows = []
    for s in range(m):
        for j in range(n):
            item = f"s{s}:i{j}"
            for k in range(humans):
                value = float(np.clip(np.round(3 + people[s, j] + rng.normal(0, 0.7)), 1, 5))
                rows.append(Rating(item, "q", f"human:h{k}", value, system=f"s{s}"))
            for name, score in zip(("model:a", "model:b"), scored, strict=False):
                rows.append(Rating(item, "q", name, float(score[s, j]), system=f"s{s}"))
    return rows, people, scored


# --- observation 3: the system level ------------------------------------------------------------

def _matrices(seed=0, m=8, n=20):
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=m)
    human = quality[:, None] + rng.normal(0, 1.5, (m, n))
    a = 0.7 * quality[:, None] + rng.normal(0, 1.5, (m, n))
    b = 0.3 * quality[:, None] + rng.normal(0, 1.5, (m, n))
    systems = np.repeat([f"s{i}" for i in range(m)], n)
    inputs = np.tile([f"i{j}" for j in range(n)], m)
    return human, a, b, systems, inputs


def test_system_intervals_resample_systems_and_items_by_default_as_deutsch_et_al():
    nlpstats = pytest.importorskip("nlpstats.correlations")
    human, a, _, systems, inputs = _matrices()
    default = system_bootstrap_ci(a.ravel(), human.ravel(), systems, inputs=inputs, n_resamples=2000, seed=1)
    items_only = system_bootstrap_ci(a.ravel(), human.ravel(), systems, inputs=inputs, resample="items",
                                     n_resamples=2000, seed=1)
    assert default.high - default.low > items_only.high - items_only.low  # what the issue saw: 8 systems
    np.random.seed(1)
    theirs = nlpstats.bootstrap(a, human, "system", "pearson", "both", n_resamples=2000)
    # Monte-Carlo error of a 2.5 % quantile over 2,000 resamples: a few hundredths.
    assert default.low == pytest.approx(theirs.lower, abs=0.06)
    assert default.high == pytest.approx(theirs.upper, abs=0.03)
    # The 10th and 90th percentiles: less Monte-Carlo error than the 2.5 % tail.
    ours = system_bootstrap_ci(a.ravel(), human.ravel(), systems, inputs=inputs, resample="items",
                               n_resamples=2000, confidence=0.8, seed=1)
    np.random.seed(1)
    theirs = nlpstats.bootstrap(a, human, "system", "pearson", "inputs", n_resamples=2000,
                                confidence_level=0.8)
    assert (ours.low, ours.high) == pytest.approx((theirs.lower, theirs.upper), abs=0.05)


def test_system_level_williams_equals_nlpstats():
    nlpstats = pytest.importorskip("nlpstats.correlations")
    human, a, b, systems, _ = _matrices(seed=3)
    ours = system_williams_test(human.ravel(), a.ravel(), b.ravel(), systems)
    assert ours.n == 8
    assert ours.pvalue == pytest.approx(nlpstats.williams_test(a, b, human, "system", "pearson").pvalue,
                                        abs=1e-12)


@pytest.mark.parametrize("method", ["both", "systems", "items"])
def test_system_permutation_test_agrees_with_nlpstats(method):
    nlpstats = pytest.importorskip("nlpstats.correlations")
    human, a, b, systems, inputs = _matrices(seed=0)
    ours = system_permutation_test(human.ravel(), a.ravel(), b.ravel(), systems, permute=method,
                                   inputs=inputs, n_resamples=1000, seed=2)
    np.random.seed(2)
    theirs = nlpstats.permutation_test(a, b, human, "system", "pearson",
                                       "inputs" if method == "items" else method, n_resamples=1000)
    assert ours.pvalue == pytest.approx(theirs.pvalue, abs=0.05)  # two independent Monte-Carlo draws


def test_pairwise_ranking_accuracy_counts_the_pairs_ordered_as_people_order_them():
    # people: a < b < c < d; the judge swaps b and c: 5 of 6 pairs agree (Kocmi et al. 2021).
    found = pairwise_accuracy([1, 2, 3, 4], [1, 3, 2, 4], list("abcd"))
    assert (found.agreeing, found.n_pairs, found.accuracy) == (5, 6, 5 / 6)
    tied = pairwise_accuracy([1, 1, 3, 4], [1, 3, 2, 4], list("abcd"))
    assert tied.tied_by_people == 1 and tied.n_pairs == 5


def test_metaeval_warns_below_five_systems_and_names_outliers():
    rows, _, _ = _systems_study(m=4)
    study = metaeval_study(rows, system=True, n_resamples=200, permutations=100)
    notes = " ".join(note for row in study.systems for note in row.notes)
    assert "only 4 systems" in notes
    assert outlier_systems({"a": 1.0, "b": 1.1, "c": 0.9, "d": 1.05, "e": 5.0}) == ("e",)


def test_metaeval_system_level_has_judge_tests_ranks_and_clusters():
    rows, _, _ = _systems_study(m=8)
    study = metaeval_study(rows, system=True, n_resamples=300, permutations=200)
    assert {row.judge for row in study.systems} == {"model:a", "model:b"}
    assert study.systems[0].resample.startswith("systems and items")
    assert study.systems[0].pairwise_accuracy is not None
    comparison = study.system_comparisons[0]
    assert comparison.n_systems == 8
    assert comparison.williams and comparison.permutation and comparison.bootstrap
    ranking = study.rankings[0]
    assert len(ranking.ranks) == 8 and ranking.significance is not None
    assert all(rank.low <= rank.rank <= rank.high for rank in ranking.ranks)


def test_ji_significance_is_the_authors_one_sided_mann_whitney():
    rng = np.random.default_rng(4)
    scores = np.concatenate([rng.normal(0.5, 1, 40), rng.normal(0, 1, 40), rng.normal(-0.5, 1, 40)])
    systems = np.repeat(["a", "b", "c"], 40)
    found = system_significance(scores, systems, correction="none")
    first, second = found.systems.index("a"), found.systems.index("c")
    expected = stats.mannwhitneyu(scores[:40], scores[80:], alternative="greater", method="auto").pvalue
    assert found.pvalues[first][second] == pytest.approx(expected, abs=1e-15)
    assert found.tests[first][second] == "Mann–Whitney U"


def test_shared_inputs_are_compared_pair_by_pair_with_wilcoxon():
    rng = np.random.default_rng(5)
    base = rng.normal(size=30)
    scores = np.concatenate([base + 0.4 + rng.normal(0, 0.2, 30), base])
    systems, inputs = np.repeat(["a", "b"], 30), np.tile([f"i{j}" for j in range(30)], 2)
    found = system_significance(scores, systems, inputs=inputs, correction="none")
    expected = stats.wilcoxon(scores[:30] - scores[30:], alternative="greater").pvalue
    assert found.pvalues[0][1] == pytest.approx(expected, abs=1e-15)
    assert found.tests[0][1] == "Wilcoxon signed-rank"


def test_clusters_split_only_where_every_system_above_beats_every_system_below():
    rng = np.random.default_rng(6)
    scores = np.concatenate([rng.normal(3, 0.3, 30), rng.normal(2.95, 0.3, 30), rng.normal(0, 0.3, 30)])
    found = system_significance(scores, np.repeat(["a", "b", "c"], 30))
    assert found.clusters == (("a", "b"), ("c",)) or found.clusters == (("b", "a"), ("c",))
    assert found.correction == "Holm"


def test_rank_intervals_pin_a_clearly_best_system_to_rank_one():
    rng = np.random.default_rng(7)
    scores = np.concatenate([rng.normal(5, 0.1, 20), rng.normal(0, 1, 20), rng.normal(0.1, 1, 20)])
    found = rank_intervals(scores, np.repeat(["best", "x", "y"], 20), n_resamples=400)
    assert found[0].system == "best" and (found[0].low, found[0].high) == (1.0, 1.0)
    assert found[1].low == 2.0 and found[2].high == 3.0


def test_bradley_terry_strengths_come_with_rank_intervals():
    from convoscope.pairwise import bradley_terry
    from convoscope.pairwise._stats import Outcome

    results = [Outcome("a", "b", 1.0)] * 10 + [Outcome("b", "c", 1.0)] * 10 + [Outcome("a", "c", 1.0)] * 10
    table = bradley_terry(results, n_resamples=20)
    assert [row.system for row in table] == ["a", "b", "c"]
    assert [row.rank for row in table] == [1.0, 2.0, 3.0]
    assert table[0].rank_ci == (1.0, 1.0)


def test_holm_and_benjamini_hochberg_equal_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(8)
    for _ in range(50):
        p = rng.random(int(rng.integers(2, 25))) ** 2
        for ours, theirs in (("holm", "holm"), ("bh", "fdr_bh"), ("by", "fdr_by")):
            expected = multitest.multipletests(p, method=theirs)[1]
            assert adjust_pvalues(p, method=ours) == pytest.approx(expected)


def test_the_table_marks_after_the_correction_and_names_it():
    rows, _, _ = _systems_study(m=6, n=10, judges=(0.9, 0.6))
    study = metaeval_study(rows, n_resamples=100, permutations=100)
    raw = paper_table(study.rows, study.comparisons, correction="none")
    holm = paper_table(study.rows, study.comparisons, correction="holm")
    assert [r["williams_p"] for r in raw] == [r["williams_p"] for r in holm]
    adjusted = [r["williams_p_adjusted"] for r in holm if r["williams_p_adjusted"] is not None]
    assert adjusted and all(a >= r for a, r in zip(adjusted, [x["williams_p"] for x in holm
                                                             if x["williams_p"] is not None], strict=True))
    assert "Holm-adjusted p < 0.05" in to_markdown(holm)
    assert "Benjamini–Hochberg-adjusted" in to_markdown(raw, correction="bh")


# --- observation 4: can the judge replace an annotator? -----------------------------------------

def _alt_reference(judge, humans, epsilon, q, scoring):
    """The procedure as the paper states it, written as plain loops (BY by statsmodels)."""
    from statsmodels.stats.multitest import multipletests

    def score(value, others):
        if scoring == "accuracy":
            return float(np.mean([value == other for other in others]))
        return -math.sqrt(float(np.mean([(value - other) ** 2 for other in others])))

    pvalues, advantages = [], []
    for left in range(len(humans)):
        person_wins, judge_wins = [], []
        for item in range(len(judge)):
            others = [humans[k][item] for k in range(len(humans))
                      if k != left and humans[k][item] is not None]
            if humans[left][item] is None or not others:
                continue
            person, machine = score(humans[left][item], others), score(judge[item], others)
            judge_wins.append(machine >= person)
            person_wins.append(person >= machine)
        difference = np.array(person_wins, float) - np.array(judge_wins, float)
        pvalues.append(stats.ttest_1samp(difference, epsilon, alternative="less").pvalue)
        advantages.append(float(np.mean(judge_wins)))
    rejected = multipletests(pvalues, alpha=q, method="fdr_by")[0]
    return float(np.mean(rejected)), float(np.mean(advantages)), pvalues


@pytest.mark.parametrize("scoring", ["accuracy", "neg_rmse"])
def test_alt_test_equals_the_procedure_written_from_the_paper(scoring):
    rng = np.random.default_rng(9)
    truth = rng.integers(1, 6, 60)
    humans = [np.where(rng.random(60) < 0.7, truth, rng.integers(1, 6, 60)).astype(float) for _ in range(4)]
    humans[3][:10] = np.nan  # one annotator skipped some items
    judge = np.where(rng.random(60) < 0.75, truth, rng.integers(1, 6, 60)).astype(float)
    ours = alt_test(judge, np.array(humans), epsilon=0.15, scoring=scoring)
    reference = [[None if np.isnan(v) else v for v in row] for row in humans]
    winning, advantage, pvalues = _alt_reference(judge, reference, 0.15, 0.05, scoring)
    assert [a.pvalue for a in ours.annotators] == pytest.approx(pvalues, abs=1e-12)
    assert (ours.winning_rate, ours.advantage_probability) == pytest.approx((winning, advantage), abs=1e-12)


def test_alt_test_worked_example_by_hand():
    # Three annotators agree on every item; the judge agrees on 3 of 4. Leaving out annotator k,
    # the annotator matches the two others on every item and the judge on 3 of 4: the judge wins
    # 3 items, the person 4, so d = (0, 0, 0, 1) and mean(d) = .25 against epsilon.
    humans = np.array([[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]], dtype=float)
    judge = np.array([1, 2, 3, 1], dtype=float)
    found = alt_test(judge, humans, epsilon=0.2, scoring="accuracy", min_items_per_annotator=1)
    expected = stats.ttest_1samp([0, 0, 0, 1], 0.2, alternative="less").pvalue
    assert [a.pvalue for a in found.annotators] == pytest.approx([expected] * 3)
    assert found.advantage_probability == 0.75 and found.winning_rate == 0.0 and not found.passed


def test_metaeval_shows_the_alt_test_beside_the_ceiling_and_explains_two_annotators(tmp_path):
    rows, _, _ = _systems_study(m=3, n=20, humans=2)
    study = metaeval_study(rows, n_resamples=100, permutations=0)
    row = study.rows[0]
    assert row.alt_test is not None and row.alt_test.n_annotators == 2
    assert "cannot tell with fewer than 3" in " ".join(row.notes)
    assert row.alt_test.decision.outcome == "cannot_tell" and not row.alt_test.passed
    assert row.humans.loo_spearman is None and "need three or more" in row.humans.note
    path = tmp_path / "all.jsonl"
    path.write_text("".join(json.dumps({"item_id": r.item_id, "criterion": r.criterion, "rater": r.rater,
                                        "value": r.value, "system": r.system}) + "\n" for r in rows))
    result = _run("metaeval", path, "--resamples", 50, "--permutations", 0)
    assert result.exit_code == 0, result.output
    assert "alt-test ω" in result.output and "leave-one-out ρ – (2 annotator(s)" in result.output


# --- observation 5: paper-ready LaTeX -----------------------------------------------------------

def _latex_study():
    rows, _, _ = _systems_study(m=6, n=10)
    renamed = [Rating(r.item_id, "overall_quality & more", r.rater.replace("model:a", "model:gpt_4o-mini"),
                      r.value, system=r.system) for r in rows]
    return metaeval_study(renamed, n_resamples=100, permutations=100)


def test_latex_caption_states_alpha_in_math_mode():
    text = to_latex(_latex_study().records())
    assert "p ¡" not in text and r"p < $\alpha$" not in text
    assert r"$p < 0.05$" in text and r"$\alpha$ = 0.05" in text and "Holm-adjusted" in text
    assert r"\resizebox{\columnwidth}{!}" in text and r"overall\_quality \& more" in text


@pytest.mark.parametrize("layout", ["resize", "narrow"])
def test_latex_table_fits_a_column_of_a_two_column_article(tmp_path, layout):
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (Debian: texlive-latex-base texlive-latex-recommended)")
    table = _latex_study().table(".tex", layout=layout)
    document = ("\\documentclass[twocolumn]{article}\n\\usepackage[T1]{fontenc}\n"
                "\\usepackage{booktabs,graphicx,amssymb}\n\\begin{document}\n" + table + "\\end{document}\n")
    (tmp_path / "paper.tex").write_text(document, encoding="utf-8")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=PATIENT_S)
    log = (tmp_path / "paper.log").read_text(encoding="latin-1")
    assert done.returncode == 0, log[-2000:]
    assert "Overfull \\hbox" not in log, re.findall(r"Overfull \\hbox.*", log)


# --- observation 7: defaults a paper author would not expect ------------------------------------

def test_majority_ties_can_take_the_median():
    matrix = [[2, 1, 3], [4, 2, 3]]
    assert majority_vote(matrix, ties="low").tolist() == [2.0, 1.0, 3.0]
    assert majority_vote(matrix, ties="median").tolist() == [3.0, 2.0, 3.0]  # (1 + 2) / 2 rounds to even


def test_the_tie_rule_is_an_option_of_metaeval_and_changes_kappa(tmp_path):
    rows, _, _ = _systems_study(m=4, n=15, humans=2)
    rows = [r if r.rater.startswith("human:") else Rating(r.item_id, r.criterion, r.rater,
                                                          float(np.clip(np.round(3 + r.value), 1, 5)))
            for r in rows]  # judges on the people's 1-5 scale, so kappa is defined
    low = metaeval(rows, n_resamples=20, ties="low", alt_epsilon=None)
    median = metaeval(rows, n_resamples=20, ties="median", alt_epsilon=None)
    judge = next(i for i, r in enumerate(low) if r.judge == "model:a")
    assert low[judge].kappa != median[judge].kappa
    path = tmp_path / "all.jsonl"
    path.write_text("".join(json.dumps({"item_id": r.item_id, "criterion": r.criterion, "rater": r.rater,
                                        "value": r.value}) + "\n" for r in rows))
    result = _run("metaeval", path, "--ties", "median", "--resamples", 20, "--permutations", 0)
    assert result.exit_code == 0, result.output
    assert "ties: median" in result.output


def test_agree_and_metaeval_take_the_same_level_by_default(tmp_path):
    rows, _, _ = _systems_study(m=4, n=15)
    humans = [r for r in rows if r.rater.startswith("human:")]
    agreement = cs.agree(humans, n_resamples=0)[0]
    ceiling = metaeval(rows, n_resamples=20, alt_epsilon=None)[0].humans
    assert agreement.level == ceiling.alpha_level == "ordinal"
    assert agreement.krippendorff_alpha == pytest.approx(ceiling.alpha)
    path = tmp_path / "humans.jsonl"
    path.write_text("".join(json.dumps({"item_id": r.item_id, "criterion": r.criterion, "rater": r.rater,
                                        "value": r.value}) + "\n" for r in humans))
    result = _run("agree", path, "--resamples", 0)
    assert result.exit_code == 0, result.output
    assert "ordinal" in result.output


def test_dialogue_level_spearman_equals_exact_arithmetic():
    # Means that are equal as fractions (1/3 + 2/3) / 2 == 1/2 must tie in the ranks.
    rng = np.random.default_rng(10)
    turns = []
    for dialogue in range(60):
        length = int(rng.integers(2, 7))
        for turn in range(length):
            for rater in ("human:a", "human:b", "model:j"):
                turns.append(Rating(f"d{dialogue}:{turn}", "q", rater, int(rng.integers(0, 2))))
    dialogues = dialogue_level(turns)
    ours = metaeval(dialogues, n_resamples=10, alt_epsilon=None)[0].spearman.estimate
    exact: dict[str, dict[str, list[Fraction]]] = {}
    for r in turns:
        exact.setdefault(r.item_id.split(":")[0], {}).setdefault(r.rater, []).append(Fraction(r.value))
    means = {d: {k: sum(v) / len(v) for k, v in raters.items()} for d, raters in exact.items()}
    keys = sorted(means)
    judge = [means[d]["model:j"] for d in keys]
    people = [(means[d]["human:a"] + means[d]["human:b"]) / 2 for d in keys]
    expected = stats.spearmanr(stats.rankdata([float(x) for x in judge]),
                               _exact_ranks(people)).statistic
    assert ours == pytest.approx(expected, abs=1e-12)


def _exact_ranks(values):
    order = sorted(set(values))
    positions = {value: [] for value in order}
    for index, value in enumerate(sorted(values)):
        positions[value].append(index + 1)
    return [float(np.mean(positions[value])) for value in values]


# --- intervals for alpha and kappa --------------------------------------------------------------

def test_alpha_and_kappa_intervals_are_item_bootstraps_around_the_statistic():
    rng = np.random.default_rng(11)
    matrix = rng.integers(1, 6, (3, 200)).astype(float)
    matrix[1] = np.where(rng.random(200) < 0.6, matrix[0], matrix[1])
    matrix[rng.random(matrix.shape) < 0.1] = np.nan
    ours = krippendorff_alpha_ci(matrix, level="ordinal", n_resamples=3000, seed=0)
    assert ours.estimate == pytest.approx(krippendorff_alpha(matrix, level="ordinal"), abs=1e-12)
    pairable = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
    draws = np.random.default_rng(1).integers(0, pairable.shape[1], (3000, pairable.shape[1]))
    loop = [krippendorff_alpha(pairable[:, d], level="ordinal") for d in draws]
    assert (ours.low, ours.high) == pytest.approx(tuple(np.quantile(loop, [0.025, 0.975])), abs=0.02)
    kappa = cohen_kappa_ci(matrix[0], matrix[1], weights="quadratic", labels=range(1, 6), n_resamples=500)
    sklearn = pytest.importorskip("sklearn.metrics")
    both = ~np.isnan(matrix[0]) & ~np.isnan(matrix[1])
    assert kappa.estimate == pytest.approx(sklearn.cohen_kappa_score(matrix[0][both], matrix[1][both],
                                                                     weights="quadratic", labels=range(1, 6)))
    assert kappa.low < kappa.estimate < kappa.high
    assert cohen_kappa(matrix[0], matrix[1]) == pytest.approx(cohen_kappa_ci(matrix[0], matrix[1]).estimate)


def test_agree_prints_intervals_for_alpha_and_kappa(tmp_path):
    rows, _, _ = _systems_study(m=4, n=15)
    path = tmp_path / "humans.jsonl"
    humans = [r for r in rows if r.rater.startswith("human:")]
    path.write_text("".join(json.dumps({"item_id": r.item_id, "criterion": r.criterion, "rater": r.rater,
                                        "value": r.value}) + "\n" for r in humans))
    out = tmp_path / "agree.json"
    result = _run("agree", path, "--resamples", 200, "--out", out)
    assert result.exit_code == 0, result.output
    row = json.loads(out.read_text())["rows"][0]
    assert row["alpha_ci"]["low"] < row["krippendorff_alpha"] < row["alpha_ci"]["high"]
    assert row["cohen_ci"] is not None and "[CI]" in result.output


# --- observation 8: gaps in the surface ---------------------------------------------------------

def test_permutation_results_appear_in_every_table_with_p_values(tmp_path):
    rows, _, _ = _systems_study(m=5, n=12)
    path = tmp_path / "all.jsonl"
    path.write_text("".join(json.dumps({"item_id": r.item_id, "criterion": r.criterion, "rater": r.rater,
                                        "value": r.value, "system": r.system}) + "\n" for r in rows))
    result = _run("metaeval", path, "--resamples", 50, "--permutations", 200, "--table", tmp_path / "t.md",
                  "--table", tmp_path / "t.csv", "--report", tmp_path / "r.html")
    assert result.exit_code == 0, result.output
    assert "perm. p" in result.output
    assert "perm." in (tmp_path / "t.md").read_text() and "permutation_p" in (tmp_path / "t.csv").read_text()
    assert "permutation p" in (tmp_path / "r.html").read_text()


def test_heat_map_cells_carry_their_numbers():
    from convoscope.analysis._report import _pyplot, correlation_matrix, heatmap

    rows = [np.array([1, 2, 3, 4, 5.0]), np.array([1, 3, 2, 5, 4.0]), np.array([5, 4, 3, 2, 1.0])]
    figure = heatmap(["a", "b", "c"], rows)
    texts = {text.get_text() for text in figure.axes[0].texts}
    _pyplot().close(figure)
    values = correlation_matrix(rows)
    assert {f"{v:.2f}" for v in values.ravel()} <= texts and "-1.00" in texts


def test_figures_are_written_as_svg_and_pdf(tmp_path):
    rows, _, _ = _systems_study(m=3, n=10)
    study = metaeval_study(rows, n_resamples=50, permutations=0)
    written = study.write_figures(tmp_path / "figures")
    suffixes = {path.suffix for path in written}
    assert suffixes == {".svg", ".pdf"} and len(written) >= 6
    assert all(path.stat().st_size > 0 and re.fullmatch(r"[A-Za-z0-9._-]+", path.name) for path in written)
    path = tmp_path / "all.jsonl"
    path.write_text("".join(json.dumps({"item_id": r.item_id, "criterion": r.criterion, "rater": r.rater,
                                        "value": r.value}) + "\n" for r in rows))
    result = _run("metaeval", path, "--resamples", 20, "--permutations", 0, "--figures", tmp_path / "cli")
    assert result.exit_code == 0, result.output
    assert sorted(p.suffix for p in (tmp_path / "cli").iterdir()).count(".pdf") >= 3


def test_study_parts_as_pandas_and_the_front_door():
    rows, _, _ = _systems_study(m=6, n=10)
    study = cs.metaeval_study(rows, system=True, n_resamples=100, permutations=100)
    table = study.to_pandas()
    assert {"spearman", "spearman_low", "williams_p_adjusted", "permutation_p", "alt_winning_rate",
            "humans_alpha"} <= set(table.columns)
    assert len(table) == len(study.rows)
    assert len(study.to_pandas("rankings")) == 6 and len(study.to_pandas("system_comparisons")) == 1
    with pytest.raises(cs.ConfigError, match="part must be one of"):
        study.to_pandas("nope")


def test_metaeval_tables_keep_every_judge_name_at_80_columns(tmp_path):
    rows, _, _ = _systems_study(m=3, n=8)
    renamed = {"model:a": "model:openai:gpt-4o-mini[chat]", "model:b": "model:openai:gpt-4o[chat]"}
    path = tmp_path / "all.jsonl"
    path.write_text("".join(json.dumps({"item_id": r.item_id, "criterion": r.criterion,
                                        "rater": renamed.get(r.rater, r.rater), "value": r.value})
                            + "\n" for r in rows))
    result = _run("metaeval", path, "--resamples", 20, "--permutations", 0, columns=80)
    assert result.exit_code == 0, result.output
    flat = result.output.replace("\n", "")
    assert "gpt-4o-mini[chat]" in re.sub(r"\s+", "", flat) and "…" not in result.output
