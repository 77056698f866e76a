"""Fair pay by outcome and the ledger (issue 37, observations 3 and 4): the three workers of the
observation, places that survive a restart, Prolific ids, consent refused, references and the
eligibility questionnaire, and a ledger that matches what each person saw."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from campaign_helpers import PROLIFIC_PAID, answer_all, get, hidden_field, write_campaign

from convoscope.campaigns import (
    Campaign,
    Submission,
    Task,
    invite,
    ledger_rows,
    open_campaign,
    prolific_approve_ids,
    prolific_bonus_lines,
    read_annotators,
)
from convoscope.web import build_server, dashboard_secret, join_secret, start_background

PROLIFIC = PROLIFIC_PAID + "  screen_out_reward: 0.10\n"
SESSION = {"STUDY_ID": "st1", "SESSION_ID": "se1"}


def pid(number: int) -> str:
    """A Prolific-shaped participant id (24 hexadecimal digits)."""
    return f"5f00{number:020x}"


GOLD = {"id": "gold-1", "response": "Choose 'not appropriate' for this one.", "system": "check",
        "context": [{"speaker": "A", "text": "attention check"}],
        "meta": {"context_id": "g", "gold": {"appropriateness": "not appropriate"}}}


def _study(tmp_path: Path, extra: str = PROLIFIC, gold: bool = False) -> Path:
    directory = write_campaign(tmp_path / "study", references=["a001"])
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text() + extra)
    if gold:  # one attention check in every main batch; one failure blocks
        spec.write_text(spec.read_text() + "attention:\n  per_batch: 1\n  max_failures: 0\n  action: block\n")
        with (directory / "items.jsonl").open("a", encoding="utf-8") as handle:
            handle.write("\n" + json.dumps(GOLD))
    return directory


def _fits(task: Task) -> str:
    return "0" if task.candidate.system in ("bot-y", "check") else "1"


def _contrary(task: Task) -> str:
    return "1" if _fits(task) == "0" else "0"


def _ready(directory: Path) -> Campaign:
    [reference] = invite(directory, 1)
    campaign = open_campaign(directory)
    answer_all(campaign, reference.id, _fits)
    return campaign


def _joined(campaign: Campaign, number: int) -> str:
    admission = campaign.join(pid(number), SESSION)
    assert admission.annotator is not None, admission
    return admission.annotator.id


def test_a_worker_refused_after_the_qualification_batch_is_paid_for_the_tasks(tmp_path: Path) -> None:
    """Observed: the fixed screen-out code after 24 tasks, with "Your time is paid"."""
    campaign = _ready(_study(tmp_path))
    person = _joined(campaign, 1)
    assert answer_all(campaign, person, _contrary) == 6
    leave = campaign.leave(person, campaign.work(person))
    assert (leave.outcome, leave.state, leave.code, leave.tasks, leave.bonus) == (
        "partial", "not_qualified", "PART1AL", 6, 0.30)
    [row] = [r for r in ledger_rows(campaign) if r.annotator == person]
    assert (row.participant_id, row.outcome, row.code_shown, row.tasks, row.action, row.bonus) == (
        pid(1), "partial", "PART1AL", 6, "approve + bonus", 0.30)
    assert row.qualification == "not_qualified" and row.kappa is not None and row.kappa < 0.21


def test_a_worker_blocked_by_gold_after_tasks_is_reviewed_not_screened_out(tmp_path: Path) -> None:
    campaign = _ready(_study(tmp_path, gold=True))
    person = _joined(campaign, 2)
    answered = 0
    while (work := campaign.work(person)).task is not None:
        gold = work.batch is not None and work.task.candidate.item_id in work.batch.gold
        answer = _contrary(work.task) if gold else _fits(work.task)
        campaign.submit(person, work.task, Submission(answer=answer))
        answered += 1
    assert work.state == "blocked"
    leave = campaign.leave(person, work)
    assert (leave.outcome, leave.code, leave.tasks) == ("partial", "PART1AL", answered)
    [row] = [r for r in ledger_rows(campaign) if r.annotator == person]
    assert row.action == "review" and row.gold_failed >= 1 and row.bonus == round(answered * 0.05, 2)
    assert prolific_bonus_lines([row]) == ""  # a bonus waits for the review


def test_a_qualified_worker_keeps_the_place_across_a_restart(tmp_path: Path) -> None:
    """Observed: qualified at kappa 1.0, then every place was taken after a restart: screen-out code.
    4 main places; the candidate is halfway through the qualification when the server restarts."""
    directory = _study(tmp_path)
    campaign = _ready(directory)
    first = _joined(campaign, 3)
    for _ in range(3):
        work = campaign.work(first)
        campaign.submit(first, work.task, Submission(answer=_fits(work.task)))
    campaign = open_campaign(directory)  # the restart: places lived in memory only
    newcomers = [campaign.join(pid(10 + n), SESSION) for n in range(4)]
    assert [a.refused for a in newcomers] == [None, None, None, "full"]  # the held place is kept
    for admission in newcomers[:3]:
        answer_all(campaign, admission.annotator.id, _fits)
    answer_all(campaign, first, _fits)
    work = campaign.work(first)
    assert work.state == "done" and work.qualification.kappa == pytest.approx(1.0)
    assert campaign.leave(first, work).code == "C0MPL3"


def test_a_qualified_worker_whose_place_is_lost_anyway_is_paid(tmp_path: Path) -> None:
    from convoscope.campaigns import Platform, exit_for

    platform = Platform(kind="prolific", completion_code="C", screen_out_code="S", partial_code="P",
                        pay_per_task=0.05)
    leave = exit_for("no_work", paid=True, tasks=6, platform=platform)
    assert (leave.outcome, leave.code, leave.bonus) == ("partial", "P", 0.30)


def test_made_up_ids_are_refused_at_the_study_link(tmp_path: Path) -> None:
    """Observed: any [A-Za-z0-9_-]{1,64} was taken as a PID; made-up ids filled max_participants."""
    campaign = _ready(_study(tmp_path))
    server = build_server(campaign, port=0)
    stop = start_background(server)
    join = f"http://127.0.0.1:{server.server_port}/join/{join_secret(campaign.directory)}"
    try:
        refused = get(f"{join}?PROLIFIC_PID=bot-0001&STUDY_ID=s&SESSION_ID=x")
        assert refused.status_code == 400 and "24 hexadecimal digits" in refused.text
        assert get(f"{join}?PROLIFIC_PID={pid(5)}&STUDY_ID=s&SESSION_ID=x").status_code == 303
    finally:
        stop()
    assert [p.external_id for p in read_annotators(campaign.directory) if p.platform] == [pid(5)]
    spec = campaign.directory / "campaign.yaml"
    spec.write_text(spec.read_text() + "  participant_ids: any\n")
    loose = open_campaign(campaign.directory)
    server = build_server(loose, port=0)
    stop = start_background(server)
    try:
        url = f"http://127.0.0.1:{server.server_port}/join/{join_secret(loose.directory)}"
        assert get(f"{url}?PROLIFIC_PID=pilot-1&STUDY_ID=s&SESSION_ID=x").status_code == 303
    finally:
        stop()


def test_consent_refused_frees_the_place_and_shows_the_way_back(tmp_path: Path) -> None:
    directory = _study(tmp_path, extra=PROLIFIC + "consent: consent.md\n")
    (directory / "consent.md").write_text("# Consent\nYour answers are used for research.")
    campaign = _ready(directory)
    server = build_server(campaign, port=0)
    stop = start_background(server)
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        with httpx.Client(timeout=30, follow_redirects=True) as client:
            page = client.get(f"{base}/join/{join_secret(directory)}?PROLIFIC_PID={pid(7)}"
                              "&STUDY_ID=s&SESSION_ID=x")
            assert 'id="decline"' in page.text
            token = str(page.url).rsplit("/", 1)[1]
            left = client.post(f"{base}/a/{token}/decline", data={"csrf": hidden_field(page.text, "csrf")})
        assert "You chose not to take part" in left.text and "Return" in left.text
        assert "C0MPL3" not in left.text and "SCR33N" not in left.text
    finally:
        stop()
    person = next(p.id for p in read_annotators(directory) if p.external_id == pid(7))
    assert campaign.work(person).state == "declined"
    assert campaign.open_places() == campaign.main_places()  # nothing held for them


def test_references_skip_the_eligibility_questionnaire(tmp_path: Path) -> None:
    """Observed: references were asked the eligibility questions; a "no" kept the study shut."""
    directory = _study(tmp_path, extra=PROLIFIC + "questionnaires:\n  before: before.yaml\n")
    (directory / "before.yaml").write_text("- id: english\n  text: Is English your first language?\n"
                                           "  kind: choice\n  choices: [yes, no]\n  accept: [yes]\n")
    [reference] = invite(directory, 1)
    campaign = open_campaign(directory)
    assert campaign.pending_questions(reference.id) is None
    assert answer_all(campaign, reference.id, _fits) == 6 and campaign.references_ready()
    newcomer = _joined(campaign, 8)
    assert campaign.pending_questions(newcomer) == "before"


def test_the_ledger_matches_what_each_person_saw_and_feeds_prolifics_bulk_tools(tmp_path: Path) -> None:
    """Through the HTTP app: a worker who completes, one refused by the qualification; the ledger
    (CLI, CSV and JSON), the bulk approve and bonus files, and the dashboard agree with the pages."""
    from click.testing import CliRunner

    from convoscope.cli._campaign import campaign_group

    directory = _study(tmp_path)
    campaign = _ready(directory)
    server = build_server(campaign, port=0)
    stop = start_background(server)
    base = f"http://127.0.0.1:{server.server_port}"
    seen = {}
    try:
        for number, rule in ((20, _fits), (21, _contrary)):
            seen[pid(number)] = _work_through_http(base, campaign, pid(number), rule)
        dashboard = get(f"{base}/r/{dashboard_secret(directory)}").text
    finally:
        stop()
    assert "All done" in seen[pid(20)] or "C0MPL3" in seen[pid(20)]
    assert "PART1AL" in seen[pid(21)] and "GBP 0.30" in seen[pid(21)] and "6 answers" in seen[pid(21)]
    out = tmp_path / "ledger.csv"
    result = CliRunner().invoke(campaign_group, ["ledger", str(directory), "--out", str(out),
                                       "--approve", str(tmp_path / "approve.txt"),
                                       "--bonus", str(tmp_path / "bonus.csv")])
    assert result.exit_code == 0, result.output
    rows = {row["participant_id"]: row for row in csv.DictReader(out.open(encoding="utf-8"))}
    assert (rows[pid(20)]["outcome"], rows[pid(20)]["code_shown"], rows[pid(20)]["action"]) == (
        "complete", "C0MPL3", "approve")
    assert (rows[pid(21)]["outcome"], rows[pid(21)]["code_shown"], rows[pid(21)]["bonus"]) == (
        "partial", "PART1AL", "0.3")
    assert rows[""]["action"] == "none"  # the reference annotator: no platform, nothing to do
    assert (tmp_path / "approve.txt").read_text() == f"{pid(20)}\n{pid(21)}\n"
    assert (tmp_path / "bonus.csv").read_text() == f"{pid(21)},0.30\n"
    assert prolific_approve_ids(ledger_rows(open_campaign(directory))) == f"{pid(20)}\n{pid(21)}\n"
    assert 'id="ledger"' in dashboard and "PART1AL" in dashboard and "approve + bonus" in dashboard
    assert CliRunner().invoke(campaign_group, ["ledger", str(directory), "--out",
                                     str(tmp_path / "ledger.json")]).exit_code == 0
    assert {r["participant_id"] for r in json.loads((tmp_path / "ledger.json").read_text())} == set(rows)


def _work_through_http(base: str, campaign: Campaign, participant: str, rule: Callable[[Task], str]) -> str:
    """Join through the study link and answer every task with ``rule``, as a browser's form posts;
    returns where the last page sends the person and its text."""
    directory = campaign.directory
    with httpx.Client(timeout=30, follow_redirects=False) as client:
        arrived = client.get(f"{base}/join/{join_secret(directory)}?PROLIFIC_PID={participant}"
                             "&STUDY_ID=s&SESSION_ID=x")
        url = f"{base}{arrived.headers['location']}"
        person = next(p.id for p in read_annotators(directory) if p.external_id == participant)
        for _ in range(40):
            page = client.get(url)
            if page.status_code != 200 or 'name="task"' not in page.text:
                return page.headers.get("location", "") + page.text
            task = campaign.work(person).task
            assert task is not None
            client.post(url, data={"csrf": hidden_field(page.text, "csrf"),
                                   "task": hidden_field(page.text, "task"), "answer": rule(task)})
    raise AssertionError("the work never ended")
