"""Prolific participants in real headless Chromium (issue 24): one screened out by the
qualification, one who completes (questionnaires before and after), one who arrives when the study
is full; and the report at 1,280 px. Prolific itself is a local stand-in (no outside connection)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from campaign_helpers import CHROMIUM

from convoscope.campaigns import Campaign, Submission, invite, open_campaign, read_annotators
from convoscope.web import build_server, join_secret, start_background

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")

STUDY = """\
name: exits
criteria:
  - response-candidates:appropriateness
contexts_per_batch: 2
annotators_per_batch: 1
items: items.jsonl
consent: consent.md
qualification:
  contexts: 1
  reference_annotators: [a001]
  max_chance_pass: 1  # three answers cannot tell anyone from chance: this test is about the exits
platform:
  kind: prolific
  completion_code: C0MPL3
  screen_out_code: SCR33N
  completion_url: "{prolific}/submissions/complete?cc={{code}}"
questionnaires:
  before: before.yaml
  after: after.yaml
"""
BEFORE = "- id: age\n  text: Your age group\n  kind: choice\n  choices: [18-29, 30-49, 50+]\n"
AFTER = "- id: comments\n  text: Anything we should know?\n  kind: text\n  required: false\n"


def _write(directory: Path, prolific: str) -> Path:
    directory.mkdir(parents=True)
    (directory / "campaign.yaml").write_text(STUDY.format(prolific=prolific), encoding="utf-8")
    (directory / "guidelines.md").write_text("# Guidelines\nJudge the framed turn.", encoding="utf-8")
    (directory / "consent.md").write_text("# Consent\nYour answers are used for research.", encoding="utf-8")
    (directory / "before.yaml").write_text(BEFORE, encoding="utf-8")
    (directory / "after.yaml").write_text(AFTER, encoding="utf-8")
    rows = [{"id": f"c{n}-{s}", "system": s,
             "context": [{"speaker": "A", "text": f"Dialogue {n}: any plans?"}],
             "response": "Hiking, if the weather holds." if s == "bot-x" else "I like turtles.",
             "reference": "Maybe a trip to the coast.", "meta": {"context_id": f"c{n}"}}
            for n in range(1, 4) for s in ("bot-x", "bot-y")]
    (directory / "items.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return directory


def _fitting(text: str) -> str:
    """The reference's rule: bot-y's turns are off."""
    return "0" if text == "I like turtles." else "1"


def _through_the_gates(page: Any) -> None:
    """Consent, the questionnaire before the task (an age group), the instructions."""
    assert page.locator("h1").first.inner_text() == "Consent"
    with page.expect_navigation():
        page.locator("#accept").click()
    assert page.locator("h1").inner_text() == "A few questions first"
    assert page.locator("input[name=age][value='18-29']").get_attribute("required") is not None
    page.get_by_label("30-49").check()
    with page.expect_navigation():
        page.locator("#send-questions").click()
    assert page.locator("h1").first.inner_text() == "Instructions"
    with page.expect_navigation():
        page.locator("#accept").click()


def _answer(page: Any, answer: str) -> None:
    page.keyboard.press("1" if answer == "1" else "2")
    if answer == "0":
        page.locator("#options input[type=checkbox]:visible").first.check()
    with page.expect_navigation():
        page.keyboard.press("Enter")


def test_prolific_participants_leave_screened_out_complete_or_turned_away(
        tmp_path: Path, browser: Any, prolific_stand_in: str) -> None:
    directory = _write(tmp_path / "study", prolific_stand_in)
    [reference] = invite(directory, 1)
    campaign = open_campaign(directory)
    while (work := campaign.work(reference.id)).task is not None:  # the internal pilot, beforehand
        campaign.submit(reference.id, work.task, Submission(answer=_fitting(work.task.candidate.text)))
    server = build_server(campaign, port=0)
    stop = start_background(server)
    join = f"http://127.0.0.1:{server.server_port}/join/{join_secret(directory)}"
    try:
        _screened_out(browser.new_page(), join, campaign)
        _completes(browser.new_page(), join, campaign, prolific_stand_in)
        _turned_away(browser.new_page(), join, directory)
    finally:
        stop()


def _screened_out(page: Any, join: str, campaign: Campaign) -> None:
    """Fails the qualification: the screen-out code at once, and the way back to Prolific with it."""
    page.goto(f"{join}?PROLIFIC_PID=5f00aa010000000000000000&STUDY_ID=st1&SESSION_ID=se1")
    _through_the_gates(page)
    for _ in range(3):  # the qualification batch: the opposite of the reference every time
        _answer(page, "1" if _fitting(page.locator("#candidate").inner_text()) == "0" else "0")
    assert page.locator("h1").inner_text() == "Thank you"
    assert "did not agree closely enough" in page.content()
    assert page.locator("#completion-code").inner_text() == "SCR33N"
    assert "One last thing" not in page.content()  # no questionnaire after: leave at once
    href = page.locator("#continue").get_attribute("href")
    assert href.endswith("/submissions/complete?cc=SCR33N")
    with page.expect_navigation():
        page.locator("#continue").click()
    assert page.locator("h1").inner_text() == "Prolific: submission complete"
    person = next(p for p in campaign.people() if p.external_id == "5f00aa010000000000000000")
    assert campaign.work(person.id).state == "not_qualified"
    page.close()


def _completes(page: Any, join: str, campaign: Campaign, prolific: str) -> None:
    """Qualifies, does the assigned batch, answers the questionnaire after, and is sent back with the
    completion code."""
    page.goto(f"{join}?PROLIFIC_PID=5f00aa020000000000000000&STUDY_ID=st1&SESSION_ID=se2")
    _through_the_gates(page)
    answered = 0
    while page.locator("#candidate").count():
        _answer(page, _fitting(page.locator("#candidate").inner_text()))
        answered += 1
    assert answered == 3 + 6  # the qualification batch, then the one main batch assigned
    assert page.locator("h1").inner_text() == "One last thing"
    page.fill("textarea[name=comments]", "Clear task. <b>bold</b> stays text.")
    with page.expect_navigation():
        page.locator("#send-questions").click()
    assert page.url == f"{prolific}/submissions/complete?cc=C0MPL3"
    person = next(p for p in campaign.people() if p.external_id == "5f00aa020000000000000000")
    assert campaign.questionnaire(person.id, "before") == {"age": "30-49"}
    assert campaign.questionnaire(person.id, "after") == {"comments": "Clear task. <b>bold</b> stays text."}
    page.close()


def _turned_away(page: Any, join: str, directory: Path) -> None:
    """Arrives when the one main place is taken: told at once, no consent page, no code, nobody added."""
    before = read_annotators(directory)
    page.goto(f"{join}?PROLIFIC_PID=5f00aa030000000000000000&STUDY_ID=st1&SESSION_ID=se3")
    assert page.locator("h1").inner_text() == "This study is full"
    assert "Please return your submission on Prolific" in page.content()
    assert not page.locator("#completion-code").count() and "C0MPL3" not in page.content()
    assert read_annotators(directory) == before
    page.close()


def test_the_report_fits_1280_px(tmp_path: Path, browser: Any, prolific_stand_in: str) -> None:
    """Observed: report tables overflowed at 1,280 px."""
    directory = _write(tmp_path / "study", prolific_stand_in)
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("annotators_per_batch: 1", "annotators_per_batch: 3").replace(
        "  - response-candidates:appropriateness\n", "".join(f"  - response-candidates:{name}\n" for name in (
            "appropriateness", "contextualization", "listening", "correctness"))))
    items = directory / "items.jsonl"  # the seed's long system names
    items.write_text(items.read_text().replace('"bot-x"', '"gepetto-knowledge-grounded"').replace(
        '"bot-y"', '"it5-base-knowledge-grounded"'))
    people = invite(directory, 4)
    campaign = open_campaign(directory)
    note = "The candidate_answer_without_any_spaces_" * 6 + " ends here."
    for number, person in enumerate(people):
        campaign.answer_questions(person.id, "before", {"age": "18-29"})
        while (work := campaign.work(person.id)).task is not None:
            idk = number == 2 and work.done == 1
            campaign.submit(person.id, work.task, Submission(
                answer="idk" if idk else _fitting(work.task.candidate.text), reason=note if idk else "",
                seconds=42.0))
    campaign.block(people[3].id, "copied one note everywhere, " * 4)
    out = tmp_path / "report.html"
    from convoscope.campaigns import write_campaign_report

    write_campaign_report(campaign, out)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(out.as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    wider = page.evaluate("""[...document.querySelectorAll('table')]
        .filter(t => t.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5
                  || (t.parentElement.scrollWidth > t.parentElement.clientWidth + 0.5))
        .map(t => t.querySelector('th') ? t.querySelector('th').innerText : '?')""")
    assert wider == []
    page.close()
