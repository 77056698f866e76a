"""Every participant leaves paid or screened out (issue 24, observations 3 and 4): a completion code
only after the assigned work, a screen-out code the moment someone is screened out, a return request
(no code) when there is nothing to do, no code for staff, and a qualification that never waits."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from campaign_helpers import answer_all, write_campaign

from convoscope.campaigns import (
    Campaign,
    CampaignError,
    Submission,
    Task,
    invite,
    open_campaign,
    read_annotators,
)

PROLIFIC = """\
platform:
  kind: prolific
  completion_code: C0MPL3
  screen_out_code: SCR33N
"""
SESSION = {"STUDY_ID": "st1", "SESSION_ID": "se1"}


def _study(tmp_path: Path, *, references: list[str] | None = None, extra: str = PROLIFIC) -> Path:
    directory = write_campaign(tmp_path / "study", references=references)
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text() + extra)
    return directory


def _bot_y_is_off(task: Task) -> str:
    return "0" if task.candidate.system == "bot-y" else "1"


def _contrary(task: Task) -> str:
    return "1" if _bot_y_is_off(task) == "0" else "0"


def _answer_all(campaign: Campaign, person: str, rule: Callable[[Task], str] = _bot_y_is_off) -> int:
    return answer_all(campaign, person, rule)


def _reference_ready(tmp_path: Path, extra: str = PROLIFIC) -> tuple[Campaign, str]:
    directory = _study(tmp_path, references=["a001"], extra=extra)
    [reference] = invite(directory, 1)
    campaign = open_campaign(directory)
    _answer_all(campaign, reference.id)  # the internal pilot answers the qualification batch first
    return campaign, reference.id


def _joined(campaign: Campaign, pid: str) -> str:
    admission = campaign.join(pid, SESSION)
    assert admission.refused is None, admission
    assert admission.annotator is not None
    return admission.annotator.id


def test_failed_qualification_gets_a_code_at_once(tmp_path: Path) -> None:
    """Observed: a Prolific participant who failed qualification got no code and no redirect. Their
    six answers are work done: the code is for work done before leaving (issue 37)."""
    campaign, _ = _reference_ready(tmp_path)
    person = _joined(campaign, "5f00aa11")
    assert _answer_all(campaign, person, _contrary) == 6  # the qualification batch only
    work = campaign.work(person)
    assert work.state == "not_qualified"
    leave = campaign.exit(person, work)
    assert (leave.outcome, leave.code, leave.tasks) == ("partial", "SCR33N", 6)
    assert leave.redirect == "https://app.prolific.com/submissions/complete?cc=SCR33N"


def test_blocked_participant_gets_a_code(tmp_path: Path) -> None:
    """Observed: a blocked Prolific participant got no code, after unpaid work."""
    campaign, _ = _reference_ready(tmp_path)
    person = _joined(campaign, "5f00aa12")
    work = campaign.work(person)
    campaign.submit(person, work.task, Submission(answer="1"))
    campaign.block(person, "copied one note everywhere")
    work = campaign.work(person)
    assert work.state == "blocked"
    leave = campaign.exit(person, work)
    assert (leave.outcome, leave.code, leave.tasks) == ("partial", "SCR33N", 1)


def test_completion_code_only_after_the_assigned_work(tmp_path: Path) -> None:
    campaign, _ = _reference_ready(tmp_path)
    person = _joined(campaign, "5f00aa13")
    answered = _answer_all(campaign, person)
    assert answered == 6 + 12  # the qualification batch, then one main batch: the assigned work
    work = campaign.work(person)
    assert work.state == "done"
    leave = campaign.exit(person, work)
    assert (leave.outcome, leave.code) == ("complete", "C0MPL3")
    assert leave.redirect == "https://app.prolific.com/submissions/complete?cc=C0MPL3"


def test_arrival_when_every_place_is_taken_is_turned_away_before_any_work(tmp_path: Path) -> None:
    """Observed: a participant arriving when every batch was full was redirected with the completion
    code after zero tasks. Now nobody is added, and the answer is a return request, not a code."""
    directory = _study(tmp_path, extra=PROLIFIC)
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("enabled: true", "enabled: false"))
    campaign = open_campaign(directory)  # 4 contexts, 2 per batch, 2 people per batch: 4 places
    for number in range(4):
        person = _joined(campaign, f"5f00bb{number:02d}")
        assert campaign.work(person).task is not None  # each holds a place from the first task shown
    late = campaign.join("5f00bbff", SESSION)
    assert late.annotator is None and late.refused == "full"
    assert len(read_annotators(directory)) == 4
    assert campaign.join("5f00bb00", SESSION).annotator is not None  # someone already in comes back


def test_references_and_invited_staff_get_no_code(tmp_path: Path) -> None:
    """Observed: reference annotators were shown the Prolific completion code."""
    campaign, reference = _reference_ready(tmp_path)
    work = campaign.work(reference)
    assert work.state == "done"
    assert campaign.exit(reference, work).code is None
    [staff] = invite(campaign.directory, 1)
    _answer_all(campaign, staff.id)
    leave = campaign.exit(staff.id, campaign.work(staff.id))
    assert (leave.outcome, leave.code, leave.redirect) == ("thanks", None, None)


def test_qualification_never_asks_a_paid_participant_to_wait(tmp_path: Path) -> None:
    """Observed: qualification told paid participants to "come back later" until the references
    finished. Now the study link turns people away (before any work) until the references have
    answered the whole qualification batch, and each decision is made the moment it is due."""
    directory = _study(tmp_path, references=["a001"])
    [reference] = invite(directory, 1)
    campaign = open_campaign(directory)
    early = campaign.join("5f00cc01", SESSION)
    assert early.annotator is None and early.refused == "not_open"
    assert read_annotators(directory) == [reference]
    _answer_all(campaign, reference.id)
    person = _joined(campaign, "5f00cc01")
    for _ in range(6):
        work = campaign.work(person)
        assert work.state == "task" and work.batch is not None and work.batch.kind == "qualification"
        campaign.submit(person, work.task, Submission(answer=_bot_y_is_off(work.task)))
    work = campaign.work(person)
    assert work.batch is not None and work.batch.kind == "main"  # decided at once: qualified
    assert work.qualification is not None and work.qualification.kappa == pytest.approx(1.0)


def test_unknown_reference_ids_are_refused(tmp_path: Path) -> None:
    """Observed: `reference_annotators: [a999]` passed the config check and everyone waited forever."""
    directory = _study(tmp_path, references=["a001", "a999"])
    invite(directory, 2)
    with pytest.raises(CampaignError) as caught:
        open_campaign(directory)
    assert caught.value.field == "qualification.reference_annotators.1"
    assert caught.value.line is not None and "a999" in str(caught.value)


def test_screen_out_code_is_required_where_someone_can_be_screened_out(tmp_path: Path) -> None:
    without = PROLIFIC.replace("  screen_out_code: SCR33N\n", "")
    directory = _study(tmp_path, references=["a001"], extra=without)
    invite(directory, 1)
    with pytest.raises(CampaignError) as caught:
        open_campaign(directory)
    assert caught.value.field == "platform.screen_out_code"


def test_the_study_link_adds_at_most_the_planned_people_plus_a_margin(tmp_path: Path) -> None:
    """Observed: the study link created unlimited participants (300 in 3.5 s)."""
    directory = _study(tmp_path, extra=PROLIFIC + "  max_participants: 5\n")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("enabled: true", "enabled: false"))
    campaign = open_campaign(directory)
    refused = [campaign.join(f"5f00dd{n:03d}", SESSION).refused for n in range(300)]
    assert len(read_annotators(directory)) <= 5
    assert refused.count(None) <= 5 and set(refused) - {None} == {"full"}


def test_questionnaires_before_and_after_are_stored_and_exported(tmp_path: Path) -> None:
    directory = _study(tmp_path, extra=PROLIFIC + "questionnaires:\n  before: before.yaml\n"
                                                  "  after: after.yaml\n")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("enabled: true", "enabled: false"))
    (directory / "before.yaml").write_text(
        "- id: first_language\n  text: Is English your first language?\n  kind: choice\n"
        "  choices: [yes, no]\n  accept: [yes]\n"
        "- id: age\n  text: Your age group\n  kind: choice\n  choices: [18-29, 30-49, 50+]\n")
    (directory / "after.yaml").write_text(
        "- id: comments\n  text: Anything we should know?\n  kind: text\n  required: false\n")
    campaign = open_campaign(directory)
    person = _joined(campaign, "5f00ee01")
    assert [q.id for q in campaign.questions("before")] == ["first_language", "age"]
    problems = campaign.answer_questions(person, "before", {"first_language": "yes"})
    assert problems == {"age": "required"}
    assert campaign.answer_questions(person, "before", {"first_language": "yes", "age": "30-49"}) == {}
    _answer_all(campaign, person)
    assert campaign.work(person).state == "done" and campaign.pending_questions(person) == "after"
    comment = "=HYPERLINK(\"http://x\") was a fine task"
    assert campaign.answer_questions(person, "after", {"comments": comment}) == {}
    assert campaign.pending_questions(person) is None
    screened = _joined(campaign, "5f00ee02")
    assert campaign.answer_questions(screened, "before", {"first_language": "no", "age": "50+"}) == {}
    work = campaign.work(screened)
    assert work.state == "screened_out" and campaign.exit(screened, work).code == "SCR33N"
    from convoscope.campaigns import export_questionnaires

    out = tmp_path / "answers.csv"
    assert export_questionnaires(campaign, out) == 5
    text = out.read_text(encoding="utf-8")
    assert "5f00ee01" not in text and "'=HYPERLINK" in text  # campaign ids only; no formula runs
    from convoscope.campaigns import render_campaign_report

    html = render_campaign_report(campaign)  # the written answer is listed, escaped, never run
    assert "=HYPERLINK(&#34;http://x&#34;) was a fine task" in html
    assert "Your age group 18-29 0, 30-49 1, 50+ 0" in html  # only people whose answers count
    rows = [json.loads(line) for line in _jsonl(campaign, tmp_path)]
    assert {(r["annotator"], r["question"], r["answer"]) for r in rows} >= {
        (person, "age", "30-49"), (screened, "first_language", "no")}


def _jsonl(campaign: Campaign, tmp_path: Path) -> list[str]:
    from convoscope.campaigns import export_questionnaires

    out = tmp_path / "answers.jsonl"
    export_questionnaires(campaign, out)
    return out.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize(("state", "paid", "tasks", "outcome", "code"), [
    ("done", True, 18, "complete", "C0MPL3"),
    ("not_qualified", True, 6, "partial", "SCR33N"),  # work done before leaving (issue 37)
    ("blocked", True, 9, "partial", "SCR33N"),
    ("blocked", True, 0, "screen_out", "SCR33N"),
    ("screened_out", True, 0, "screen_out", "SCR33N"),  # an eligibility question, before any task
    ("no_work", True, 6, "partial", "SCR33N"),  # qualified, then every place was taken
    ("no_work", True, 0, "return", None),
    ("not_open", True, 0, "return", None),
    ("declined", True, 0, "return", None),  # consent refused
    ("done", False, 18, "thanks", None),  # a reference annotator or invited staff
    ("not_qualified", False, 6, "thanks", None),
])
def test_the_way_out_of_every_situation(state: str, paid: bool, tasks: int, outcome: str,
                                        code: str | None) -> None:
    from convoscope.campaigns import Platform, exit_for

    prolific = Platform(kind="prolific", completion_code="C0MPL3", screen_out_code="SCR33N")
    leave = exit_for(state, paid=paid, tasks=tasks, platform=prolific)  # type: ignore[arg-type]
    assert (leave.outcome, leave.code) == (outcome, code)
    assert leave.redirect == (f"https://app.prolific.com/submissions/complete?cc={code}" if code else None)
    mturk = Platform(kind="mturk", completion_code="C0MPL3", screen_out_code="SCR33N")
    on_mturk = exit_for(state, paid=paid, tasks=tasks, platform=mturk)  # type: ignore[arg-type]
    assert (on_mturk.outcome, on_mturk.code, on_mturk.redirect) == (outcome, code, None)  # a form instead
