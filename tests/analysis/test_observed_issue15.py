"""The problems issue 15 observed, each as a specification that failed before the fix."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from convoscope.analysis import bootstrap_ci, kendall, mcnemar, pairwise_correlation, spearman
from convoscope.cli import cli
from convoscope.cli._app import _register

_register()
SAMPLES = Path(__file__).parent / "samples"
HUMAN_OPTIONS = ["--item-col", "id", "--rater-col", "annotator", "--value-col", "label"]


def _run(*args):
    return CliRunner().invoke(cli, [str(arg) for arg in args], env={"COLUMNS": "300"})


def test_mcnemar_with_equal_discordant_counts_matches_statsmodels():
    a = [1, 1, 1, 0, 0, 0, 1, 0]
    b = [0, 0, 0, 1, 1, 1, 1, 0]  # b = c = 3
    ours = mcnemar(a, b, exact=False)
    theirs = sm_mcnemar([[1, 3], [3, 1]], exact=False, correction=True)
    assert ours.pvalue == pytest.approx(theirs.pvalue) == pytest.approx(0.683, abs=5e-4)
    assert ours.statistic == pytest.approx(theirs.statistic)


def test_bootstrap_warns_when_resamples_are_undefined():
    with pytest.warns(RuntimeWarning, match=r"undefined on \d+ of 200 resamples"):
        result = bootstrap_ci(spearman, [1.0, 2.0, 3.0], [1.0, 3.0, 2.0], n_resamples=200, seed=0)
    assert result.n_undefined > 0


def test_bootstrap_on_well_behaved_data_does_not_warn():
    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bootstrap_ci(spearman, x, x + rng.normal(size=50), n_resamples=100, seed=0)


def test_agree_with_a_single_rater_exits_non_zero(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("id,annotator,label\n" + "".join(f"{i},solo,{i % 3}\n" for i in range(10)))
    result = _run("agree", path, *HUMAN_OPTIONS)
    assert result.exit_code != 0
    assert "nothing could be computed" in result.output


def test_agree_reports_pairwise_and_leave_one_out_correlation(tmp_path):
    out = tmp_path / "agree.json"
    result = _run("agree", SAMPLES / "humans.csv", *HUMAN_OPTIONS, "--level", "ordinal", "--out", out)
    assert result.exit_code == 0, result.output
    assert "pair ρ" in result.output and "LOO ρ" in result.output
    row = next(r for r in json.loads(out.read_text())["rows"] if r["criterion"] == "overall")
    import csv

    table: dict[str, dict[str, float]] = {}
    for record in csv.DictReader((SAMPLES / "humans.csv").open()):
        if record["criterion"] == "overall" and record["label"].strip()[:1].isdigit():
            table.setdefault(record["annotator"], {})[record["id"]] = float(record["label"])
    items = sorted({i for ratings in table.values() for i in ratings})
    matrix = [[table[r].get(i, np.nan) for i in items] for r in sorted(table)]
    assert row["pairwise_spearman"] == pytest.approx(pairwise_correlation(matrix))


def test_agree_pairs_raters_by_slot(tmp_path):
    # Each item is rated by three people whose identities rotate; slot k is the k-th rating of
    # an item in file order, as USR's annotation lists are read.
    rng = np.random.default_rng(3)
    truth = rng.integers(1, 6, 40)
    lines = ["id,annotator,label"]
    for item in range(40):
        people = [f"p{(item + k) % 5}" for k in range(3)]
        for slot, person in enumerate(people):
            noise = rng.integers(-1, 2) if slot else 0
            lines.append(f"i{item},{person},{int(np.clip(truth[item] + noise, 1, 5))}")
    path = tmp_path / "rotating.csv"
    path.write_text("\n".join(lines) + "\n")
    by_slot = tmp_path / "slot.json"
    result = _run("agree", path, *HUMAN_OPTIONS, "--pair-by", "slot", "--out", by_slot)
    assert result.exit_code == 0, result.output
    slots = np.full((3, 40), np.nan)
    for index, line in enumerate(lines[1:]):
        item, _, value = line.split(",")
        slots[index % 3, int(item[1:])] = float(value)
    row = json.loads(by_slot.read_text())["rows"][0]
    assert row["n_raters"] == 3
    assert row["pairwise_spearman"] == pytest.approx(pairwise_correlation(slots))


def test_kendall_bootstrap_above_a_thousand_items_is_vectorised_and_equals_the_loop():
    from convoscope.analysis._resample import index_chunks, kendall_batch

    rng = np.random.default_rng(1)
    x = np.round(rng.normal(size=1500), 1)
    y = np.round(x + rng.normal(size=1500), 1)
    batch = kendall_batch(x, y)
    assert batch is not None
    indices = next(index_chunks(len(x), 5, seed=0))
    expected = [kendall(x[row], y[row]) for row in indices]
    assert batch(indices) == pytest.approx(expected, abs=1e-12)
