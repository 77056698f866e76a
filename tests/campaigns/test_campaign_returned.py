"""People who left part-way (returned, timed out, rejected, withdrew consent): their answers stay in
the store and the ledger but leave agreement, majority votes, results, exports and the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from campaign_helpers import PROLIFIC_PAID, answer_all, write_campaign
from click.testing import CliRunner
from leavers import right

from convoscope.campaigns import (
    Campaign,
    Submission,
    export_verdicts,
    invite,
    ledger_rows,
    open_campaign,
    prolific_bonus_lines,
    render_campaign_report,
    system_results,
)
from convoscope.cli._campaign import campaign_group


def _study(tmp_path: Path) -> tuple[Campaign, list[str]]:
    """No qualification, three people per batch: a001 says yes to everything, a002 no, and a003
    says no to the first three tasks only, then stops (their 'no' makes the majority there)."""
    directory = write_campaign(tmp_path / "study")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("enabled: true", "enabled: false")
                    .replace("annotators_per_batch: 2", "annotators_per_batch: 3"), encoding="utf-8")
    people = [person.id for person in invite(directory, 3)]
    campaign = open_campaign(directory)
    for person, answer, limit in zip(people, ("1", "0", "0"), (None, None, 3), strict=True):
        done = 0
        while (work := campaign.work(person)).task is not None and (limit is None or done < limit):
            campaign.submit(person, work.task, Submission(answer=answer))
            done += 1
    return campaign, people


def _raters(verdicts: list) -> set[str]:
    return {verdict.rater for verdict in verdicts}


WAYS = ["RETURNED", "TIMED-OUT", "REJECTED", "WITHDRAWN"]


@pytest.mark.parametrize("status", WAYS)
def test_a_person_who_left_no_longer_changes_the_majority_or_the_agreement(tmp_path: Path,
                                                                           status: str) -> None:
    """Observed: a person marked returned freed their place, yet their three answers still made the
    majority 'no' and sat in the batch's kappa, the results, the export and the report."""
    campaign, (yes, no, leaver) = _study(tmp_path)
    everyone = campaign.verdicts()
    assert f"human:{leaver}" in _raters(everyone)  # before: they count
    with_leaver = system_results([v for v in everyone if v.item_id in campaign.owner], campaign.criteria)
    campaign.mark_returned(leaver, status)

    kept = campaign.verdicts()
    assert _raters(kept) == {f"human:{yes}", f"human:{no}"}
    main = [v for v in kept if campaign.owner[v.item_id].kind == "main"]
    results, _ = campaign.results()
    assert results == system_results(main, campaign.criteria)
    assert results != [r for r in with_leaver if r.criterion in {x.criterion for x in results}]
    for row in campaign.status().batches:
        if row.agreement is not None:
            assert f"human:{leaver}" not in row.agreement.annotators
    out = tmp_path / "human.jsonl"
    export_verdicts(campaign, out)
    assert f"human:{leaver}" not in {json.loads(line)["rater"] for line in out.read_text().splitlines()}
    export_verdicts(campaign, out, everything=True)  # for audit, on request
    assert sum(json.loads(line)["rater"] == f"human:{leaver}" for line in out.read_text().splitlines()) == 3
    assert f"{leaver}: 3 answers not counted (left:" in render_campaign_report(campaign)
    ledger = {row.annotator: row for row in ledger_rows(campaign)}
    assert ledger[leaver].tasks == 3  # the work stays on the books (pay)
    person = next(a for a in campaign.status().annotators if a.annotator == leaver)
    assert person.standing.startswith("left:") and person.counted == 0


def test_a_person_marked_by_hand_leaves_the_results_and_can_be_brought_back(tmp_path: Path) -> None:
    """Without Prolific's API: `campaign withdraw` records a return, a time-out or a withdrawal."""
    campaign, (_, _, leaver) = _study(tmp_path)
    runner = CliRunner()
    done = runner.invoke(campaign_group, ["withdraw", str(campaign.directory), leaver, "--why", "withdrew"])
    assert done.exit_code == 0, done.output
    fresh = open_campaign(campaign.directory)
    assert f"human:{leaver}" not in _raters(fresh.verdicts())
    assert fresh.work(leaver).state == "returned"
    wrong = runner.invoke(campaign_group, ["withdraw", str(campaign.directory), "a999"])
    assert wrong.exit_code != 0 and "a999" in wrong.output
    back = runner.invoke(campaign_group, ["withdraw", str(campaign.directory), leaver, "--undo"])
    assert back.exit_code == 0, back.output
    again = open_campaign(campaign.directory)
    assert f"human:{leaver}" in _raters(again.verdicts())


PROLIFIC = PROLIFIC_PAID


def test_a_participant_who_timed_out_after_working_stays_in_the_ledger_for_review(tmp_path: Path) -> None:
    """Their answers leave the results, not the books: the ledger says how many and what they are
    worth, for the researcher to decide (never a bulk bonus line before that)."""
    directory = write_campaign(tmp_path / "study", references=["a001"])
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text() + PROLIFIC, encoding="utf-8")
    [reference] = invite(directory, 1)
    campaign = open_campaign(directory)
    answer_all(campaign, reference.id, right)
    person = campaign.join("5f00aa010000000000000000", {}).annotator.id
    for _ in range(8):  # the qualification batch (6 answers, all right), then 2 main tasks
        work = campaign.work(person)
        campaign.submit(person, work.task, Submission(answer=right(work.task)))
    assert campaign.decision(person).qualified
    campaign.mark_returned(person, "TIMED-OUT")
    row = next(r for r in ledger_rows(campaign) if r.annotator == person)
    assert (row.outcome, row.state, row.tasks, row.action) == ("return", "returned", 8, "review")
    assert row.bonus == pytest.approx(0.40) and row.code_shown == ""
    assert prolific_bonus_lines([row]) == ""  # reviewed first
    assert f"human:{person}" not in _raters(campaign.verdicts())
