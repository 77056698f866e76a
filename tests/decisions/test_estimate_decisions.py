"""Issue 36, observation 2: an estimate of a binary or categorical criterion takes the share path
by default, an interval never collapses to a point without a warning, and "labels worth" is
finite or not printed. Rare classes are simulated, so the true share is known."""

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from simstudies import rare_binary_study
from statsmodels.stats.proportion import proportion_confint

from convoscope.analysis import Rating
from convoscope.cli import cli
from convoscope.cli._app import _register
from convoscope.estimate import estimate, ppi_mean

_register()


def _verdicts(y, judged_labelled, judged_pool, *, as_text=False):
    """Rows for :func:`estimate`: people rated the first len(y) items, the judge every item."""
    def value(x):
        return ("yes" if x else "no") if as_text else int(x)

    rows = []
    for i, (person, machine) in enumerate(zip(y, judged_labelled, strict=True)):
        rows.append(Rating(f"i{i}", "unsafe", "human:h", value(person), system="s"))
        rows.append(Rating(f"i{i}", "unsafe", "model:j", value(machine), system="s"))
    for k, machine in enumerate(judged_pool):
        rows.append(Rating(f"u{k}", "unsafe", "model:j", value(machine), system="s"))
    return rows


def _run(rows, **options):
    return estimate(rows, criterion="unsafe", judge="model:j", **options)[0].estimate


@pytest.mark.parametrize("n", [20, 40])
def test_a_rare_binary_class_is_covered_by_default(n):
    # A 5 % class: with the plain mean's interval, coverage was .66 at 20 labels.
    rng = np.random.default_rng(n)
    covered = []
    for _ in range(200):
        y, yhat, pool, share = rare_binary_study(rng, n_labelled=n, n_unlabelled=300)
        found = _run(_verdicts(y, yhat, pool), min_labels=2)
        covered.append(found.ci[0] <= share <= found.ci[1])
    assert np.mean(covered) >= 0.93


@pytest.mark.parametrize("n, positives", [(10, 0), (20, 0), (40, 0), (10, 1), (20, 1), (40, 1)])
def test_no_or_one_positive_never_gives_a_point_interval(n, positives):
    y, yhat, pool, _ = rare_binary_study(np.random.default_rng(7), n_labelled=n, positives=positives,
                                         judge_fpr=0.0, judge_sensitivity=1.0)
    found = _run(_verdicts(y, yhat, pool), min_labels=2)
    assert found.ci[1] > found.ci[0] and found.human_only_ci[1] > found.human_only_ci[0]
    # As wide as it must be: the people-only interval reaches at least the Wilson bound's half way.
    wilson_high = proportion_confint(positives, n, method="wilson")[1]
    assert found.human_only_ci[1] >= wilson_high / 2
    assert math.isfinite(found.effective_n)


def test_text_labels_are_estimated_as_shares_by_default():
    y, yhat, pool, _ = rare_binary_study(np.random.default_rng(3), n_labelled=30, share=0.3)
    targets = {row.target for row in estimate(_verdicts(y, yhat, pool, as_text=True), criterion="unsafe",
                                              judge="model:j", min_labels=2)}
    assert targets == {"share:yes", "share:no"}


def test_a_collapsed_interval_comes_with_a_warning_and_no_infinite_worth():
    found = ppi_mean([3.0] * 10, [3.0] * 10, [3.0] * 50)
    assert found.width == 0 and found.warnings
    assert "no width" in found.warnings[0]
    assert not math.isinf(found.effective_n)


def test_the_console_never_prints_a_point_interval_or_infinite_worth(tmp_path):
    y, yhat, pool, _ = rare_binary_study(np.random.default_rng(7), n_labelled=20, positives=0,
                                         judge_fpr=0.0, judge_sensitivity=1.0)
    path = tmp_path / "verdicts.jsonl"
    path.write_text("".join(json.dumps({"item_id": r.item_id, "criterion": r.criterion, "rater": r.rater,
                                        "value": r.value, "system": r.system}) + "\n"
                            for r in _verdicts(y, yhat, pool)))
    result = CliRunner().invoke(cli, ["estimate", str(path), "--criterion", "unsafe", "--judge", "model:j",
                                      "--min-labels", "2"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "[0.000, 0.000]" not in result.output and "inf" not in result.output


def test_a_group_with_too_few_labels_is_a_cannot_tell_decision():
    y, yhat, pool, _ = rare_binary_study(np.random.default_rng(1), n_labelled=20, share=0.3)
    rows = _verdicts(y, yhat, pool)
    rows += [Rating("t0", "unsafe", rater, 1, system="t") for rater in ("human:h", "model:j")]
    rows += [Rating("t1", "unsafe", "model:j", 0, system="t")]
    found = estimate(rows, criterion="unsafe", judge="model:j", min_labels=5)
    (refusal,) = found.refusals
    assert refusal.outcome == "cannot_tell" and refusal.number("labels") == 1 and "system=t" in refusal.reason
