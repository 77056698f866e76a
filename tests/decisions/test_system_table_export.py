"""Issue 36, observation 7 (part): ``metaeval --system-level --table`` writes the system table
beside the judge table, as CSV, Markdown and LaTeX, with the numbers of ``study.systems``."""

import csv
import shutil
import subprocess

import numpy as np
import pytest

from convoscope.analysis import Rating, metaeval_study


def _study():
    rng = np.random.default_rng(0)
    rows = []
    for s in range(6):
        quality = rng.normal()
        for i in range(12):
            truth = quality + rng.normal(0, 0.5)
            for rater in ("human:h0", "human:h1", "human:h2", "model:a", "model:b"):
                noise = 2.0 if rater == "model:b" else 0.3
                rows.append(Rating(f"s{s}:{i}", "q & r", rater, float(truth + rng.normal(0, noise)),
                                   system=f"s{s}"))
    return metaeval_study(rows, n_resamples=100, permutations=0, system=True, alt_epsilon=None)


def test_the_system_table_is_written_beside_the_judge_table(tmp_path):
    study = _study()
    written = study.write_table(tmp_path / "table.csv")
    assert [p.name for p in written] == ["table.csv", "table-systems.csv"]
    records = list(csv.DictReader((tmp_path / "table-systems.csv").open()))
    for record, row in zip(records, study.systems, strict=True):
        assert record["judge"] == row.judge and int(record["n_systems"]) == row.n_systems
        assert float(record["spearman"]) == pytest.approx(row.spearman.estimate, abs=1e-12)
        assert float(record["pearson_low"]) == pytest.approx(row.pearson.low, abs=1e-12)
    worse = next(r for r in records if r["judge"] == "model:b")
    assert worse["versus"] == "model:a" and float(worse["williams_p_vs_best"]) < 1
    study.write_table(tmp_path / "table.md")
    assert "Williams p vs best" in (tmp_path / "table-systems.md").read_text()


def test_the_latex_system_table_compiles_on_a_two_column_page(tmp_path):
    _study().write_table(tmp_path / "t.tex", layout="narrow")
    table = (tmp_path / "t-systems.tex").read_text()
    assert r"\begin{table*}" in table and r"q \& r" in table
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed: the table's text is checked, not its typesetting")
    (tmp_path / "paper.tex").write_text("\\documentclass[twocolumn]{article}\\usepackage{booktabs}"
                                        "\\begin{document}\\input{t-systems.tex}x\\end{document}\n")
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "paper.tex"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "Overfull \\hbox" not in result.stdout, result.stdout[-2000:]


def test_figures_draw_system_means_with_peoples_own_interval(tmp_path):
    pytest.importorskip("matplotlib")
    from scipy import stats

    from convoscope.analysis._report_system import system_means

    study = _study()
    written = study.write_figures(tmp_path / "figures")
    assert {p.name for p in written} >= {"q-r-systems-model-a.svg", "q-r-systems-model-a.pdf"}
    scores = np.array([1.0, 2.0, 3.0, 5.0, 6.0])
    people = np.array([1.5, 2.5, 2.0, 4.0, 7.0])
    systems = np.array(["x", "x", "x", "y", "y"], dtype=object)
    found = system_means(scores, people, systems)
    low, high = stats.t.interval(0.95, 2, loc=2.0, scale=stats.sem([1.5, 2.5, 2.0]))
    assert found["x"][0] == 2.0 and found["x"][1] == 2.0 and found["x"][2] == pytest.approx((high - low) / 2)
