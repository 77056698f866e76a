"""Issue 25, observations 1, 2, 7 (route) and 8 (estimate): estimates that keep their guarantee.

Each test failed before the fix. The coverage figures quoted come from
``benchmarks/ppi_coverage.py`` (see docs/judges-and-people.md); the tests here check the same
properties on fewer simulated studies.
"""

import csv
import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from convoscope import Verdict
from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.errors import ConfigError
from convoscope.estimate import (
    Calibration,
    crossfit_mean,
    estimate,
    fit_isotonic,
    ppi_difference,
    ppi_mean,
    select_items,
)

from .test_estimate_cli import _split
from .test_estimate_verdicts import JUDGE, _table

_register()


def _run(*args, columns=300):
    return CliRunner().invoke(cli, [str(arg) for arg in args], env={"COLUMNS": str(columns)})


# --- observation 1: calibration and estimation on the same labels -------------------------------

def test_a_calibration_records_the_items_it_was_fitted_on(tmp_path):
    judge, people = _split(tmp_path)
    out = tmp_path / "calibration.json"
    result = _run("calibrate", judge, people, "--criterion", "overall", "--judge", JUDGE,
                  "--score", "value", "--out", out)
    assert result.exit_code == 0, result.output
    saved = json.loads(out.read_text())
    assert len(saved["fitted_on"]) == 120  # 60 rated items per system
    assert Calibration.from_dict(saved).fitted_on == tuple(saved["fitted_on"])


def test_estimating_on_the_labels_the_calibration_was_fitted_on_is_refused(tmp_path):
    judge, people = _split(tmp_path)
    calibration = tmp_path / "calibration.json"
    _run("calibrate", judge, people, "--criterion", "overall", "--judge", JUDGE, "--score", "value",
         "--out", calibration)
    result = _run("estimate", judge, people, "--criterion", "overall", "--judge", JUDGE,
                  "--calibration", calibration, "--score", "value")
    assert result.exit_code == 2, result.output
    assert "was fitted on 120 of the 120 labelled items" in result.output
    assert "--cross-fit" in result.output and "--exclude" in result.output


def test_a_calibration_without_item_ids_cannot_be_checked_and_is_refused():
    rows, _ = _table()
    old = Calibration(name="old", knots_x=(0.0, 5.0), knots_y=(0.0, 4.0), n=120)
    with pytest.raises(ConfigError, match="does not record which items it was fitted on"):
        estimate(rows, criterion="overall", judge=JUDGE, calibration=old, score="value")


def test_calibrating_outside_the_random_sample_is_accepted(tmp_path):
    judge, people = _split(tmp_path)
    sample = tmp_path / "sample.txt"
    sample.write_text("".join(f"bot-{s}-{i}\n" for s in "ab" for i in range(30)))
    calibration = tmp_path / "calibration.json"
    result = _run("calibrate", judge, people, "--criterion", "overall", "--judge", JUDGE,
                  "--score", "value", "--exclude", sample, "--out", calibration)
    assert result.exit_code == 0, result.output
    assert len(json.loads(calibration.read_text())["fitted_on"]) == 60
    out = tmp_path / "estimates.csv"
    result = _run("estimate", judge, people, "--criterion", "overall", "--judge", JUDGE,
                  "--calibration", calibration, "--random-sample", sample, "--score", "value",
                  "--out", out)
    assert result.exit_code == 0, result.output
    assert [row["n_human"] for row in csv.DictReader(out.open())] == ["30", "30"]


def test_cross_fitted_mean_equals_ppi_python_cross_ppi():
    reference = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(3)
    y = rng.integers(1, 6, 40).astype(float)
    oof = y + rng.normal(0.3, 0.8, 40)
    unlabelled = rng.normal(3.2, 1.0, (300, 1)) + rng.normal(0, 0.1, (300, 5))
    ours = crossfit_mean(y, oof, unlabelled, interval="normal")
    low, high = reference.crossppi_mean_ci(y, oof, unlabelled, alpha=0.05)
    point = reference.crossppi_mean_pointestimate(y, oof, unlabelled)
    assert ours.value == pytest.approx(float(np.squeeze(point)), abs=1e-12)
    assert ours.ci == pytest.approx((float(np.squeeze(low)), float(np.squeeze(high))), abs=1e-12)
    assert ours.lam == 1.0


def test_estimate_cross_fits_the_calibration_from_the_cli(tmp_path):
    judge, people = _split(tmp_path)
    out = tmp_path / "estimates.csv"
    result = _run("estimate", judge, people, "--criterion", "overall", "--judge", JUDGE,
                  "--cross-fit", 5, "--score", "value", "--out", out)
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(out.open()))
    assert {row["calibration"] for row in rows} == {"isotonic, cross-fitted in 5 folds"}
    assert {row["labelled"] for row in rows} == {"all human-rated items"}


def _calibration_study(rng, n, routed=80, big_n=600):
    q = rng.normal(size=big_n)
    y = np.clip(np.round(3 + 1.1 * q + rng.normal(0, 0.6, big_n)), 1, 5)
    score = 1 / (1 + np.exp(-(0.9 * q + rng.normal(0, 0.8, big_n))))
    rows = []
    order = rng.permutation(big_n)
    sample, rest = order[:n], order[n:]
    chosen = rest[np.argsort(np.abs(score[rest] - 0.5))][:routed]  # the judge's least sure items
    for index in range(big_n):
        rows.append(Verdict(item_id=str(index), criterion="q", rater=JUDGE,
                            value=int(round(score[index] * 4)) + 1, expected_value=float(score[index]),
                            system="s"))
    for index in [*sample, *chosen]:
        rows.append(Verdict(item_id=str(index), criterion="q", rater="human:p", value=int(y[index]),
                            system="s"))
    return rows, {str(i) for i in sample}, {str(i) for i in [*sample, *chosen]}


def test_cross_fitting_keeps_coverage_where_same_label_calibration_loses_it():
    truth = 3.0  # the human scale is symmetric about 3 by construction
    rng = np.random.default_rng(0)
    hits_same = hits_cross = 0
    studies = 300
    for _ in range(studies):
        rows, sample, rated = _calibration_study(rng, n=20)
        judged = {v.item_id: v.expected_value for v in rows if v.rater == JUDGE}
        people = {v.item_id: v.value for v in rows if v.rater == "human:p"}
        ids = sorted(rated)
        same = fit_isotonic([judged[i] for i in ids], [people[i] for i in ids], scale=(1, 5))
        unlabelled = [judged[i] for i in judged if i not in sample]
        labelled = sorted(sample)
        before = ppi_mean([people[i] for i in labelled], same.apply([judged[i] for i in labelled]),
                          same.apply(unlabelled), interval="normal")
        hits_same += before.ci[0] <= truth <= before.ci[1]
        after = estimate(rows, criterion="q", judge=JUDGE, random_sample=sample, cross_fit=5,
                         by=())[0].estimate
        hits_cross += after.ci[0] <= truth <= after.ci[1]
    assert hits_same / studies < 0.92  # nominal .95; the benchmark's figures are in the docs
    assert hits_cross / studies >= 0.93


# --- observation 2: small groups ----------------------------------------------------------------

def test_the_default_interval_is_student_t_on_n_minus_1_degrees_of_freedom():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 5, 12).astype(float)
    yhat = y + rng.normal(0.5, 1, 12)
    unlabelled = rng.normal(2.5, 1.2, 200)
    ours = ppi_mean(y, yhat, unlabelled, lam=0.6)
    rectifier = y - 0.6 * yhat
    se = np.sqrt((0.6 * unlabelled).var(ddof=1) / 200 + rectifier.var(ddof=1) / 12)
    half = stats.t.ppf(0.975, 11) * se
    assert ours.interval == "t"
    assert ours.ci == pytest.approx((ours.value - half, ours.value + half), abs=1e-12)
    assert ours.std_error == pytest.approx(se, abs=1e-12)


def test_t_intervals_cover_at_ten_labels_where_normal_ones_do_not():
    rng = np.random.default_rng(7)
    hits = {"t": 0, "normal": 0}
    studies = 600
    for _ in range(studies):
        q = rng.normal(size=610)
        y = np.clip(np.round(3 + 1.1 * q + rng.normal(0, 0.6, 610)), 1, 5)
        yhat = 3.4 + 0.8 * q + rng.normal(0, 1.0, 610)
        for interval in hits:
            low, high = ppi_mean(y[:10], yhat[:10], yhat[10:], interval=interval).ci
            hits[interval] += low <= 3.0 <= high
    assert hits["normal"] / studies < 0.91  # the benchmark's figures are in docs/judges-and-people.md
    assert hits["t"] / studies >= 0.93


def test_groups_below_the_minimum_of_labels_are_not_estimated():
    rows, _ = _table(labelled=2)
    with pytest.raises(ConfigError, match="at least 10 and 1 are needed"):
        estimate(rows, criterion="overall", judge=JUDGE, score="value")
    results = estimate(rows, criterion="overall", judge=JUDGE, score="value", min_labels=2)
    assert len(results) == 2


def test_a_share_interval_stays_within_zero_and_one():
    rng = np.random.default_rng(2)
    y = np.zeros(12)
    y[0] = 1.0
    yhat = rng.beta(1, 12, 12)
    ours = ppi_mean(y, yhat, rng.beta(1, 12, 300), share=True)
    assert 0.0 <= ours.ci[0] <= ours.value <= ours.ci[1] <= 1.0


def test_a_label_nobody_gave_in_the_sample_still_gets_a_positive_upper_bound():
    ours = ppi_mean(np.zeros(12), np.zeros(12), np.zeros(300), share=True)
    assert ours.value == 0.0 and ours.ci[0] == 0.0
    assert ours.ci[1] > 0.1  # Agresti–Coull: (0 + 1.92) / (12 + 3.84) people in 12 is no proof of 0


def test_rare_label_shares_cover_at_forty_labels():
    rng = np.random.default_rng(4)
    hits = {"share": 0, "plain": 0}
    studies = 400
    for _ in range(studies):
        y = (rng.random(640) < 0.05).astype(float)
        yhat = np.where(y == 1, rng.beta(3, 4, 640), rng.beta(1, 12, 640))
        for kind in hits:
            low, high = ppi_mean(y[:40], yhat[:40], yhat[40:], share=kind == "share").ci
            hits[kind] += low <= 0.05 <= high
    assert hits["plain"] / studies < 0.9  # .846 in the benchmark
    assert hits["share"] / studies >= 0.94


def test_difference_of_t_intervals_uses_welch_degrees_of_freedom():
    rng = np.random.default_rng(5)
    a = ppi_mean(rng.normal(3, 1, 15), rng.normal(3, 1, 15), rng.normal(3, 1, 100))
    b = ppi_mean(rng.normal(2, 1, 25), rng.normal(2, 1, 25), rng.normal(2, 1, 100))
    difference = ppi_difference(a, b)
    se = np.hypot(a.std_error, b.std_error)
    df = se**4 / (a.std_error**4 / 14 + b.std_error**4 / 24)
    half = stats.t.ppf(0.975, df) * se
    assert difference.ci == pytest.approx((difference.value - half, difference.value + half), abs=1e-12)


# --- observation 7: route without a budget ------------------------------------------------------

def test_route_budget_caps_the_items_and_keeps_the_whole_random_sample():
    rows = []
    rng = np.random.default_rng(0)
    for index in range(600):
        for judge in ("model:a", "model:b"):  # disagree on most items
            rows.append(Verdict(item_id=f"i{index}", criterion="q", rater=judge,
                                value=int(rng.integers(0, 3))))
    unbounded = select_items(rows, random=40)
    assert len(unbounded) > 300  # what the issue saw: 520 of 600
    chosen = select_items(rows, random=40, budget=100)
    assert len(chosen) == 100
    assert sum(s.in_random_sample for s in chosen) == 40
    with pytest.raises(ConfigError, match="budget of 30 is smaller than the random sample of 40"):
        select_items(rows, random=40, budget=30)


def test_route_budget_from_the_cli(tmp_path):
    judge, _ = _split(tmp_path)
    out = tmp_path / "route.jsonl"
    result = _run("route", judge, "--random", 20, "--budget", 50, "--out", out)
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) <= 50


# --- observation 8: the difference of two systems, and tables that keep their keys --------------

def test_estimate_difference_of_two_systems_from_the_cli(tmp_path):
    judge, people = _split(tmp_path)
    result = _run("estimate", judge, people, "--criterion", "overall", "--judge", JUDGE,
                  "--score", "value", "--difference", "bot-a", "bot-b")
    assert result.exit_code == 0, result.output
    rows, _ = _table()
    found = estimate(rows, criterion="overall", judge=JUDGE, score="value")
    expected = ppi_difference(found[0].estimate, found[1].estimate)
    assert f"{expected.value:+.3f} [{expected.ci[0]:+.3f}, {expected.ci[1]:+.3f}]" in result.output
    assert "bot-a − bot-b" in result.output


def test_estimate_difference_names_an_unknown_system(tmp_path):
    judge, people = _split(tmp_path)
    result = _run("estimate", judge, people, "--criterion", "overall", "--judge", JUDGE,
                  "--score", "value", "--difference", "bot-a", "bot-z")
    assert result.exit_code == 2
    assert "bot-z" in result.output and "bot-a, bot-b" in result.output


def test_estimate_table_keeps_every_system_name_at_80_columns(tmp_path):
    judge, people = _split(tmp_path)
    result = _run("estimate", judge, people, "--criterion", "overall", "--judge", JUDGE,
                  "--score", "value", columns=80)
    assert result.exit_code == 0, result.output
    assert "bot-a" in result.output and "bot-b" in result.output
    assert "…" not in result.output
