"""`compare` streams runs from the store and reduces them to counts (issue 40): the figures from
counts are pinned to scipy, statsmodels, scikit-learn and krippendorff, a run streamed from a
store gives the figures of the same verdicts held in memory, and memory does not grow with the
number of verdicts."""

from __future__ import annotations

import tracemalloc
from collections import Counter
from dataclasses import asdict

import numpy as np
import pytest
from made_runs import run as verdicts
from made_runs import stored_run
from scipy import stats

import convoscope as cs
from convoscope.comparison._stream import Row, Source
from convoscope.comparison._tables import (
    differences,
    interval_alpha,
    kappa_table,
    mcnemar_table,
    paired_test_table,
    square,
    wilcoxon_counts,
)
from convoscope.judges import Verdict


def joint_of(a, b):
    return Counter(zip(a, b, strict=True))


def paired(seed, n, shift=0.3, scale=(1, 5)):
    rng = np.random.default_rng(seed)
    a = rng.integers(scale[0], scale[1] + 1, n)
    b = np.clip(np.round(a + rng.normal(shift, 1.0, n)), scale[0], scale[1]).astype(int)
    return a.tolist(), b.tolist()


@pytest.mark.parametrize(
    ("seed", "n", "shift"), [(1, 80, 0.3), (2, 400, 0.0), (3, 3000, -0.2), (4, 200, 2.0)]
)
def test_wilcoxon_from_counts_of_differences_is_scipys_normal_approximation(seed, n, shift):
    a, b = paired(seed, n, shift)
    ours = wilcoxon_counts(differences(joint_of(a, b)), rebuild_below=0)  # the formula, not scipy
    reference = stats.wilcoxon(b, a, zero_method="wilcox")  # ties: scipy takes the normal approximation
    assert ours.statistic == pytest.approx(reference.statistic, rel=1e-12)
    assert ours.pvalue == pytest.approx(reference.pvalue, rel=1e-9, abs=1e-300)


def test_the_mean_change_interval_from_counts_is_scipys_paired_t():
    from convoscope.comparison._tables import change_interval, means

    a, b = paired(5, 3000, 0.1, scale=(0, 7))
    reference = stats.ttest_rel(b, a).confidence_interval(0.9)
    assert change_interval(differences(joint_of(a, b)), confidence=0.9) == pytest.approx(
        (reference.low, reference.high), rel=1e-12
    )
    assert means(joint_of(a, b)) == pytest.approx((np.mean(a), np.mean(b)), rel=1e-15)


def test_wilcoxon_on_few_pairs_is_scipys_own_exact_or_permutation_p_value():
    a, b = [3, 1, 4, 1, 5, 2, 2, 5], [4, 1, 2, 3, 5, 4, 3, 2]
    ours = wilcoxon_counts(differences(joint_of(a, b)))
    reference = stats.wilcoxon(b, a, zero_method="wilcox")
    assert (ours.statistic, ours.pvalue) == pytest.approx((reference.statistic, reference.pvalue), rel=1e-12)


@pytest.mark.parametrize(("flip_a", "flip_b"), [(0.1, 0.05), (0.3, 0.25)])  # exact, then chi-square
def test_mcnemar_from_the_discordant_cells_is_statsmodels(flip_a, flip_b):
    from statsmodels.stats.contingency_tables import mcnemar

    rng = np.random.default_rng(7)
    a = rng.integers(0, 2, 200)
    b = np.where(rng.random(200) < np.where(a == 1, flip_a, flip_b), 1 - a, a)
    table = [[np.sum((a == 1) & (b == 1)), np.sum((a == 1) & (b == 0))],
             [np.sum((a == 0) & (b == 1)), np.sum((a == 0) & (b == 0))]]
    discordant = table[0][1] + table[1][0]
    reference = mcnemar(table, exact=discordant < 25, correction=True)
    ours = mcnemar_table(joint_of(a.tolist(), b.tolist()))
    assert ours.name == f"McNemar ({'exact' if discordant < 25 else 'chi-square, corrected'})"
    assert (ours.statistic, ours.pvalue) == pytest.approx((reference.statistic, reference.pvalue), rel=1e-9)


def test_stuart_maxwell_from_the_square_table_is_statsmodels():
    from statsmodels.stats.contingency_tables import SquareTable

    rng = np.random.default_rng(8)
    labels = np.array(["fair", "good", "poor", "vague"])
    a = labels[rng.integers(0, 4, 300)]
    b = np.where(rng.random(300) < 0.3, labels[rng.integers(0, 4, 300)], a)
    b[:30] = "poor"
    ours = paired_test_table("nominal", joint_of(a.tolist(), b.tolist()))
    table = square(joint_of(a.tolist(), b.tolist()), sorted(labels))
    reference = SquareTable(table, shift_zeros=False).homogeneity(method="stuart_maxwell")
    assert (ours.statistic, ours.pvalue) == pytest.approx((reference.statistic, reference.pvalue), rel=1e-9)


def test_kappa_from_the_confusion_table_is_sklearns_plain_and_quadratic():
    from sklearn.metrics import cohen_kappa_score

    a, b = paired(9, 500, 0.4, scale=(0, 7))
    b = [value if value != 4 else 5 for value in b]  # a gap in B's values: weights follow positions
    labels = sorted(set(a) | set(b))
    table = square(joint_of(a, b), labels)
    assert kappa_table(table) == pytest.approx(cohen_kappa_score(a, b), rel=1e-12)
    assert kappa_table(table, quadratic=True) == pytest.approx(
        cohen_kappa_score(a, b, weights="quadratic", labels=labels), rel=1e-12
    )
    assert kappa_table(square(joint_of([2] * 5, [2] * 5), [2])) is None  # one value: undefined


def test_interval_alpha_from_sums_is_the_krippendorff_package():
    import krippendorff

    a, b = paired(10, 300, 0.5, scale=(0, 9))
    reference = krippendorff.alpha(reliability_data=np.array([a, b], float), level_of_measurement="interval")
    assert interval_alpha(joint_of(a, b)) == pytest.approx(reference, rel=1e-9)


def mixed_runs(n=400, seed=11):
    """Two runs on three criteria (a 1–5 score, 0/1, labels) with systems, languages, reasons,
    unscored verdicts, items in one run only and a repeated verdict."""
    rng = np.random.default_rng(seed)
    first, second = [], []
    for k in range(n):
        item, system, language = f"item-{k:05d}", f"sys{k % 3}", ["en", "de"][k % 2]
        score = int(rng.integers(1, 6))
        label = str(rng.choice(["good", "fair", "poor"]))
        binary = int(rng.integers(0, 2))
        for rater, values in (("model:a", (score, binary, label)), ("model:b", (
            int(np.clip(score + rng.integers(-1, 3), 1, 5)),
            binary if rng.random() < 0.8 else 1 - binary,
            label if rng.random() < 0.7 else str(rng.choice(["good", "fair", "poor"])),
        ))):
            out = first if rater == "model:a" else second
            for criterion, value in zip(("score", "yesno", "label"), values, strict=True):
                if k % 37 == 5 and rater == "model:b":
                    value = None  # unscored in B
                if k % 41 == 3 and rater == "model:a" and criterion == "score":
                    continue  # judged in B only
                out.append(Verdict(item_id=item, criterion=criterion, rater=rater, value=value,
                                   unscored_reason="parse_failure" if value is None else None,
                                   reason=f"<b>{rater}</b> on {item}", system=system, language=language))
    first.append(first[0].model_copy(update={"value": 2}))  # repeated: the last one counts
    rng.shuffle(first)  # a run's order is not the merge's order
    return first, second


def assert_close(got, expected, where="figures"):
    """Equal, numbers to 1e-12 relative (NaN equals NaN)."""
    if isinstance(expected, dict):
        assert got.keys() == expected.keys(), where
        for key in expected:
            assert_close(got[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list | tuple):
        assert len(got) == len(expected), where
        for n, (x, y) in enumerate(zip(got, expected, strict=True)):
            assert_close(x, y, f"{where}[{n}]")
    elif isinstance(expected, float) and not isinstance(got, str):
        assert got == pytest.approx(expected, rel=1e-12, nan_ok=True), where
    else:
        assert got == expected, where


def figures(comparison):
    return [asdict(row) | {"changed_share": row.changed_share} for row in comparison.criteria]


def test_a_run_streamed_from_a_store_gives_the_figures_of_the_same_verdicts_in_memory(tmp_path):
    first, second = mixed_runs()
    people = [Verdict(item_id=f"item-{k:05d}", criterion="score", rater="human:p", value=(k * 7) % 5 + 1)
              for k in range(0, 400, 3)]
    store = tmp_path / "runs.db"
    stored_run(store, "run-a", first)
    stored_run(store, "run-b", second)
    in_memory = cs.compare(first, second, human=people, max_flips=7)
    streamed = cs.compare("run-a", "run-b", store=store, human=people, max_flips=7)
    assert all(f.task_key_a and f.task_key_b for row in streamed.criteria for f in row.flips)
    strip = {"task_key_a": None, "task_key_b": None, "prompt_note": ""}  # a list has no task keys
    got, expected = figures(streamed), figures(in_memory)
    for row in got:
        row["flips"] = [flip | strip for flip in row["flips"]]
    assert_close(got, expected)
    assert streamed.notes == tuple(note.replace("verdicts:", "run-a:") for note in in_memory.notes)
    score = streamed.criterion("score")
    assert score.only_b == 10 and score.unscored_b > 0 and len(score.flips) == 7
    assert [f.size for f in score.flips] == sorted((f.size for f in score.flips), reverse=True)


def test_the_flips_kept_are_the_largest_then_the_first_items_as_the_whole_list_sorted():
    a = [1, 1, 1, 1, 1, 1, 1, 1]
    b = [2, 5, 3, 5, 1, 4, 5, 2]
    kept = cs.compare(verdicts(a), verdicts(b, rater="model:b"), max_flips=3).criterion("effort")
    assert [(f.item_id, f.size) for f in kept.flips] == [("i1", 4.0), ("i3", 4.0), ("i6", 4.0)]
    assert kept.changed == 7
    labels = cs.compare(verdicts(list("xyxyx")), verdicts(list("yyyxx"), rater="model:b"), max_flips=2)
    assert [f.item_id for f in labels.criterion("effort").flips] == ["i0", "i2"]


def made_rows(criterion, n, seed, shift):
    """A run's sorted rows made on the fly (never held): n items on a 0–7 scale, five systems."""
    for k in range(n):
        value = min(7, (k * 7 + k // 3 + seed) % 8 + shift * (k % 3 == 0))
        yield Row(criterion, f"item-{k:09d}", value, "why", f"sys{k % 5}", "en", None)


def peak_bytes(n):
    first = Source("a", {}, lambda: made_rows("effort", n, 1, 0))
    second = Source("b", {}, lambda: made_rows("effort", n, 1, 1))
    tracemalloc.start()
    try:
        row = cs.compare(first, second).criterion("effort")
        return tracemalloc.get_traced_memory()[1], row
    finally:
        tracemalloc.stop()


def test_comparing_four_times_more_verdicts_takes_no_more_memory():
    peak_bytes(100)  # first use imports scipy and the rest: not part of what is measured
    small, row_small = peak_bytes(5_000)
    large, row_large = peak_bytes(20_000)
    assert (row_small.n_items, row_large.n_items) == (5_000, 20_000)
    assert row_large.changed > 2_500
    # Held in memory, 15,000 more pairs of rows would add megabytes; streamed, the peak
    # is set by the scale's tables and the 50 flips kept, whatever the number of verdicts.
    assert large < small + 256 * 1024, (small, large)
    assert large < 4 * 1024 * 1024


def test_a_stored_run_is_read_in_groups_not_whole(tmp_path):
    store = tmp_path / "runs.db"
    for n, name in ((1200, "small"), (4800, "large")):  # both above the rows fetched at a time
        for side, shift in (("a", 0), ("b", 1)):
            values = [Verdict(item_id=row.item_id, criterion="effort", rater="model:x", value=row.value)
                      for row in made_rows("effort", n, 2, shift)]
            stored_run(store, f"{name}-{side}", values)
    peaks = []
    cs.compare("small-a", "small-b", store=store)  # first use imports scipy and the rest
    for name in ("small", "large"):
        tracemalloc.start()
        try:
            assert cs.compare(f"{name}-a", f"{name}-b", store=store).criterion("effort").n_items > 0
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    assert peaks[1] < peaks[0] * 1.5, peaks  # four times the verdicts, about the same peak


def test_two_runs_in_two_stores_are_compared_from_the_command_line(tmp_path):
    import json

    from click.testing import CliRunner

    from convoscope.cli._app import cli

    first, second = mixed_runs(n=60, seed=12)
    stored_run(tmp_path / "a.db", "run-a", first)
    stored_run(tmp_path / "b.db", "run-b", second)
    out = tmp_path / "a-b.json"
    result = CliRunner().invoke(cli, ["compare", "run-a", "run-b", "--store", str(tmp_path / "a.db"),
                                      "--store-b", str(tmp_path / "b.db"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text(encoding="utf-8"))
    expected = cs.compare(first, second)
    assert [row["criterion"] for row in document["criteria"]] == expected.names
    for row, reference in zip(document["criteria"], expected.criteria, strict=True):
        assert (row["n_items"], row["changed"]) == (reference.n_items, reference.changed)
        assert row["pvalue"] == pytest.approx(reference.pvalue, rel=1e-12)


def test_a_large_archive_is_streamed_through_a_scratch_store_with_the_same_figures(tmp_path, monkeypatch):
    from convoscope.archive import export_run
    from convoscope.comparison import _stream

    first, second = mixed_runs(n=80, seed=13)
    store = tmp_path / "runs.db"
    stored_run(store, "run-a", first)
    stored_run(store, "run-b", second)
    archives = [export_run(run, store, tmp_path / f"{run}.cvs.zip") and tmp_path / f"{run}.cvs.zip"
                for run in ("run-a", "run-b")]
    held = cs.compare(*map(str, archives))
    import tempfile

    made = []
    real = _stream._scratch_store
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # the scratch stores stay in this test's folder
    monkeypatch.setattr(_stream, "ARCHIVE_HELD_UP_TO", 10)  # every archive counts as large
    monkeypatch.setattr(_stream, "_scratch_store", lambda *a: made.append(1) or real(*a))
    streamed = cs.compare(*map(str, archives))
    assert len(made) == 2
    assert_close(figures(streamed), figures(held))
    assert list(scratch.iterdir()) == []  # removed once compared
