"""`campaign export --decisions`: every qualification decision with Cohen's kappa against each
reference, accuracy against the references' majority and the references' own agreement (issue 37),
on simulated workers, each figure pinned to scikit-learn."""

from __future__ import annotations

import csv
import json
import math
import random
import warnings
from pathlib import Path

import pytest
from campaign_helpers import answer_all, write_campaign
from click.testing import CliRunner
from scipy.stats import binom
from sklearn.metrics import cohen_kappa_score

from convoscope.campaigns import Campaign, decision_rows, export_decisions, invite, open_campaign
from convoscope.cli._campaign import campaign_group


def right(task: object) -> str:
    return "0" if task.candidate.system == "bot-y" else "1"  # type: ignore[attr-defined]


def second_reference(task: object) -> str:
    """The second reference: right, except on one context's contextualization (they disagree a little)."""
    slip = task.candidate.item_id.startswith("c2") and task.criterion.endswith("contextualization")  # type: ignore[attr-defined]
    return ("1" if right(task) == "0" else "0") if slip else right(task)


def _study(tmp_path: Path) -> tuple[Campaign, dict[str, str]]:
    directory = write_campaign(tmp_path / "study", references=["a001", "a002"])
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("contexts: 1", "contexts: 2"), encoding="utf-8")
    ids = [person.id for person in invite(directory, 6)]
    who = dict(zip(("ref1", "ref2", "good", "constant", "random", "adversarial"), ids, strict=True))
    campaign = open_campaign(directory)
    coin = random.Random(7)
    rules = {"ref1": right, "ref2": second_reference, "good": right, "constant": lambda task: "1",
             "random": lambda task: coin.choice("01"),
             "adversarial": lambda task: "1" if right(task) == "0" else "0"}
    for role, rule in rules.items():
        answer_all(campaign, who[role], rule)
    return campaign, who


def _answers(campaign: Campaign, person: str) -> dict[tuple[str, str], str]:
    trial = campaign.qualification_batch()
    return {(v.item_id, v.criterion): str(v.value) for v in campaign.answers()
            if v.rater == f"human:{person}" and campaign.owner.get(v.item_id) is trial}


def _kappa(a: dict, b: dict) -> float | None:
    """sklearn's Cohen's kappa over the cells both answered; None where it is undefined (NaN)."""
    keys = sorted(set(a) & set(b))
    with warnings.catch_warnings():  # one shared label: sklearn warns and gives NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        value = cohen_kappa_score([a[k] for k in keys], [b[k] for k in keys])
    return None if math.isnan(value) else float(value)


def test_every_decision_is_exported_with_the_per_reference_figures(tmp_path: Path) -> None:
    campaign, who = _study(tmp_path)
    out_csv, out_jsonl, human = tmp_path / "q.csv", tmp_path / "q.jsonl", tmp_path / "h.csv"
    done = CliRunner().invoke(campaign_group, ["export", str(campaign.directory), "--out", str(human),
                                               "--decisions", str(out_csv)])
    assert done.exit_code == 0, done.output
    assert "wrote 4 qualification decisions" in done.output
    assert export_decisions(campaign, out_jsonl) == 4
    rows = {row["annotator"]: row for row in csv.DictReader(out_csv.open(encoding="utf-8"))}
    lines = {row["annotator"]: row for row in map(json.loads, out_jsonl.read_text().splitlines())}
    assert set(rows) == set(lines) == {who[r] for r in ("good", "constant", "random", "adversarial")}
    assert out_csv.stat().st_mode & 0o777 == 0o600

    ref1, ref2 = _answers(campaign, who["ref1"]), _answers(campaign, who["ref2"])
    own = cohen_kappa_score([ref1[k] for k in sorted(ref1)], [ref2[k] for k in sorted(ref1)])
    agreed = {k: v for k, v in ref1.items() if ref2[k] == v}  # two references: majority = agreement
    assert 0 < own < 1 and len(agreed) < len(ref1)
    for role in ("good", "constant", "random", "adversarial"):
        person = who[role]
        mine = _answers(campaign, person)
        for reference, theirs in (("a001", ref1), ("a002", ref2)):
            expected = _kappa(mine, theirs)
            cell = rows[person][f"kappa_with_{reference}"]
            if expected is None:  # undefined: an empty cell, null in JSONL
                assert cell == "" and lines[person]["kappas"][reference] is None, (role, reference)
            else:
                assert float(cell) == pytest.approx(expected), (role, reference)
                assert lines[person]["kappas"][reference] == pytest.approx(expected)
        accuracy = sum(mine[k] == v for k, v in agreed.items()) / len(agreed)
        assert float(rows[person]["accuracy"]) == pytest.approx(accuracy)
        assert lines[person]["accuracy"] == pytest.approx(accuracy)
        assert int(rows[person]["majority_cells"]) == len(agreed)
        assert float(rows[person]["references_kappa"]) == pytest.approx(own)
        assert lines[person]["references_kappa"] == pytest.approx(own)
    decided = {role: rows[who[role]]["outcome"] for role in ("good", "constant", "random", "adversarial")}
    assert decided["good"] == "qualified" and decided["adversarial"] == decided["constant"] == "not_qualified"


def test_each_decision_says_how_likely_a_random_answerer_was_to_do_as_well(tmp_path: Path) -> None:
    campaign, who = _study(tmp_path)
    rows = {row["annotator"]: row for row in decision_rows(campaign)}
    good = rows[who["good"]]
    hits = round(good["accuracy"] * good["majority_cells"])
    assert good["chance_pass"] == pytest.approx(binom.sf(hits - 1, good["majority_cells"], 0.5))
    assert good["max_chance_pass"] == 0.05
