"""Estimates read from a verdict table where a judge and people both wrote rows."""

import numpy as np
import pytest

from convoscope import Verdict
from convoscope.errors import ConfigError
from convoscope.estimate import estimate, fit_isotonic, ppi_mean

JUDGE = "model:scripted-judge"


def _table(seed=0, items=300, labelled=60):
    """Two systems; the judge sees a noisy, shifted copy of what the two people say."""
    rng = np.random.default_rng(seed)
    rows, truth = [], {}
    for system, quality in (("bot-a", 3.0), ("bot-b", 2.0)):
        for index in range(items):
            item = f"{system}-{index}"
            score = int(np.clip(round(quality + rng.normal(0, 1)), 0, 4))
            truth[item] = score
            judged = int(np.clip(round(score + 1 + rng.normal(0, 0.7)), 0, 5))
            rows.append(Verdict(item_id=item, criterion="overall", rater=JUDGE, value=judged,
                                system=system, language="en"))
            if index < labelled:
                for person in ("human:p1", "human:p2"):
                    rows.append(Verdict(item_id=item, criterion="overall", rater=person,
                                        value=score, system=system, language="en"))
    return rows, truth


def test_estimate_per_system_equals_ppi_on_the_same_numbers():
    rows, truth = _table()
    results = estimate(rows, criterion="overall", judge=JUDGE, score="value")
    assert [r.group["system"] for r in results] == ["bot-a", "bot-b"]
    first = results[0]
    y = np.array([truth[f"bot-a-{i}"] for i in range(60)], dtype=float)
    judged = {v.item_id: v.value for v in rows if v.rater == JUDGE and v.system == "bot-a"}
    yhat = np.array([judged[f"bot-a-{i}"] for i in range(60)], dtype=float)
    yhat_u = np.array([judged[f"bot-a-{i}"] for i in range(60, 300)], dtype=float)
    assert first.estimate == ppi_mean(y, yhat, yhat_u)
    assert first.labelled == "all human-rated items"


def test_routed_items_are_not_used_as_labels_when_a_random_sample_is_named():
    rows, _ = _table()
    sample = {f"bot-a-{i}" for i in range(30)} | {f"bot-b-{i}" for i in range(30)}
    results = estimate(rows, criterion="overall", judge=JUDGE, random_sample=sample, score="value")
    assert all(r.estimate.n_human == 30 for r in results)
    assert all(r.estimate.n_judged == 270 for r in results)
    assert results[0].labelled == "random sample"


def test_shares_of_each_label_sum_to_one():
    rows, _ = _table()
    results = estimate(rows, criterion="overall", judge=JUDGE, target="shares", score="value")
    for system in ("bot-a", "bot-b"):
        shares = [r.estimate.value for r in results if r.group["system"] == system]
        # One lambda for all labels: the shares sum to one, up to a share below zero clipped to 0
        # (a label the judge gives and people never do).
        assert all(0.0 <= share <= 1.0 for share in shares)
        assert sum(shares) == pytest.approx(1.0, abs=0.005)


def test_calibration_is_named_on_every_estimate():
    rows, truth = _table()
    judged = {v.item_id: v.value for v in rows if v.rater == JUDGE}
    items = [f"bot-{s}-{n}" for s in "ab" for n in range(200, 300)]  # none of them labelled
    calibration = fit_isotonic([judged[i] for i in items], [truth[i] for i in items], name="iso-v1",
                               item_ids=items)
    results = estimate(rows, criterion="overall", judge=JUDGE, calibration=calibration, score="value")
    assert {r.calibration for r in results} == {"iso-v1"}


def test_a_missing_judge_or_missing_people_is_a_clear_error():
    rows, _ = _table()
    with pytest.raises(ConfigError, match="judges present: model:scripted-judge"):
        estimate(rows, criterion="overall", judge="model:other")
    machine_only = [v for v in rows if not v.rater.startswith("human:")]
    with pytest.raises(ConfigError, match="no human verdict"):
        estimate(machine_only, criterion="overall", judge=JUDGE)
