"""The campaign in real headless Chromium, end to end.

Needs Debian's ``chromium`` (and ``fonts-nanum`` for Korean glyphs) and the ``playwright`` Python
package, driven with ``executable_path`` (no ``playwright install``). Skipped cleanly when either
is absent. Set CONVOSCOPE_SCREENSHOTS=docs to refresh the screenshots linked from the README.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from campaign_helpers import CHROMIUM, write_campaign

from convoscope.campaigns import Campaign, Submission, invite, open_campaign, read_annotators
from convoscope.web import build_server, dashboard_secret, join_secret, start_background

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")

STUDY = """\
name: companion-study
title: Companion chatbot, response candidates
criteria:
  - response-candidates:appropriateness
  - response-candidates:contextualization
contexts_per_batch: 2
annotators_per_batch: 2
expected_minutes_per_batch: 10
max_minutes_per_batch: 30
guidelines_summary: Read the dialogue, then judge only the framed candidate as its next turn.
items: items.jsonl
qualification:
  contexts: 1
  reference_annotators: [a001]
  kappa_threshold: 0.21
reporting:
  sampling: Fluent Korean and English speakers; internal pilot with one reference annotator.
  payment: 12 EUR per hour (test setting)
  platform: convoscope web app on 127.0.0.1
"""
DIALOGUES = [
    [("A", "주말에 뭐 했어?"), ("B", "친구들이랑 한강에서 자전거 탔어. 날씨가 정말 좋더라.")],
    [("A", "I finally finished the marathon <in 4 hours>!"), ("B", "Wow, how do your legs feel?")],
    [("A", "我明天要去北京出差。"), ("B", "是坐高铁还是坐飞机？")],
]
CANDIDATES = {"bot-x": ["재밌었겠다! 어느 구간을 달렸어?", "Sore, but I'm so proud of it.",
                        "坐高铁，四个小时就到了。"],
              "bot-y": ["저는 피자를 좋아해요.", "What is your favourite colour?", "我喜欢猫。"]}
GOLD = ["와, 부럽다. 나도 다음에 같이 가자!", "Like jelly! But it was worth every step.", "高铁，比较方便。"]


def _write_study(directory: Path) -> Path:
    write_campaign(directory)  # guidelines.md
    (directory / "campaign.yaml").write_text(STUDY, encoding="utf-8")
    rows = [{"id": f"d{n}-{system}", "system": system, "language": "ko" if n == 0 else None,
             "context": [{"speaker": s, "text": t} for s, t in turns], "response": CANDIDATES[system][n],
             "reference": GOLD[n], "meta": {"context_id": f"d{n}"}}
            for n, turns in enumerate(DIALOGUES) for system in ("bot-x", "bot-y")]
    (directory / "items.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows),
                                           encoding="utf-8")
    return directory


def _expected(system: str | None) -> str:
    """The reference annotator's rule: bot-y's turns are off, the others fine."""
    return "0" if system == "bot-y" else "1"


@pytest.fixture
def study(tmp_path: Path) -> Iterator[tuple[str, Campaign, list[str]]]:
    directory = _write_study(tmp_path / "study")
    people = invite(directory, 3)  # a001 is the internal reference annotator
    campaign = open_campaign(directory)
    while (work := campaign.work("a001")).task is not None:  # the internal pilot, answered beforehand
        campaign.submit("a001", work.task, Submission(answer=_expected(work.task.candidate.system)))
    server = build_server(campaign, port=0)
    stop = start_background(server)
    yield f"http://127.0.0.1:{server.server_port}", campaign, [p.token for p in people]
    stop()


def _answer_page(page: Any, answer: str, *, note: str = "") -> None:
    """Choose an answer with its keyboard shortcut (1 positive, 2 negative, 3 I don't know), then save."""
    page.keyboard.press({"1": "1", "0": "2", "idk": "3"}[answer])
    if answer == "0":
        page.locator("#options input[type=checkbox]:visible").first.check()
    if note:
        page.fill("textarea[name=reason]", note)  # Enter in the note is a new line, so click
    with page.expect_navigation():
        if note:
            page.get_by_role("button", name="Save and next").click()
        else:
            page.keyboard.press("Enter")


def _system(page: Any, campaign: Campaign) -> str | None:
    text = page.locator("#candidate").inner_text()
    candidates = [c for b in campaign.batches for x in b.contexts for c in x.candidates]
    return next(c.system for c in candidates if c.text == text)


def test_qualify_annotate_and_watch(study: tuple[str, Campaign, list[str]], browser: Any) -> None:
    base, campaign, tokens = study
    shots = Path(os.environ.get("CONVOSCOPE_SCREENSHOTS", "")) if os.environ.get("CONVOSCOPE_SCREENSHOTS") \
        else None
    _fail_qualification(browser.new_page(), base, tokens[2], campaign)
    _pass_and_finish_batch(browser, base, tokens[1], campaign, shots)
    page = browser.new_page()
    page.goto(f"{base}/r/{tokens[1]}")
    assert "not valid" in page.content()  # an annotator's token opens no researcher page
    page.goto(f"{base}/r/{dashboard_secret(campaign.directory)}")
    row = page.locator("tr", has=page.locator("td", has_text="qualification"))
    fleiss = float(row.locator("td").all_inner_texts()[4])
    assert -1.0 < fleiss < 1.0  # the reference, a002 (agrees) and a003 (disagrees everywhere)
    cells = page.locator("tr", has=page.locator("td", has_text="batch-001")).locator("td").all_inner_texts()
    assert cells[1] == "12" and cells[2] == "1/1/2" and cells[4] == "—"  # no place for the reference
    assert "3 invited · 1 qualified" in page.locator("#totals").inner_text()
    # The note written with "I don't know" is on the dashboard.
    assert "ignores the brackets" in page.locator("#notes").inner_text()
    page.get_by_role("link", name="Report with the reporting checklist").click()
    assert page.locator("h2", has_text="Reporting checklist").is_visible()
    assert "12 EUR per hour" in page.content() and "1 of the 2 who finished" in page.content()
    assert "ignores the brackets" in page.locator("#notes").inner_text()
    assert "60aa1b2c3d" not in page.content()  # the platform id stays out of the report
    if shots:
        page.set_viewport_size({"width": 1100, "height": 900})
        page.screenshot(path=str(shots / "campaign-report.png"), full_page=True)
    page.close()


def _start(page: Any) -> None:
    """Read the instructions (shown once, before the first task) and start."""
    assert page.locator("h1").first.inner_text() == "Instructions"
    with page.expect_navigation():
        page.locator("#accept").click()


def _fail_qualification(page: Any, base: str, token: str, campaign: Campaign) -> None:
    page.goto(f"{base}/a/{token}?PROLIFIC_PID=60aa1b2c3d")
    _start(page)
    assert page.locator("#progress").inner_text() == "0 of 6 answered"
    for _ in range(6):  # the opposite of the reference every time
        _answer_page(page, "1" if _expected(_system(page, campaign)) == "0" else "0")
    assert "no further work for you" in page.content(), page.locator("body").inner_text()[:600]
    assert not page.locator("#completion-code").count()  # no platform in this study: no code


def _pass_and_finish_batch(browser: Any, base: str, token: str, campaign: Campaign,
                           shots: Path | None) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 700})
    page.goto(f"{base}/a/{token}")
    _start(page)
    assert "주말에 뭐 했어?" in page.locator("#context").inner_text()
    assert page.locator("#candidate").get_attribute("lang") == "ko"
    assert page.locator("#options").is_hidden()
    for done in range(6):
        system = _system(page, campaign)
        if done == 1:
            assert system == "bot-y"
            page.keyboard.press("2")  # negative: the explanation options appear at once
            assert page.locator("#options").is_visible() and page.get_by_text("incoherence").is_visible()
            if shots:
                page.screenshot(path=str(shots / "campaign-annotator.png"))
        _answer_page(page, _expected(system))
    assert page.locator("#batch").inner_text() == "Batch 1"
    assert page.locator("#progress").inner_text() == "0 of 12 answered"
    # Markup typed in a dialogue is shown as text, never interpreted.
    assert "<in 4 hours>" in page.locator("#context").inner_text()
    page.keyboard.press("3")  # "I don't know" without a note is refused by the server
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.get_by_role("alert").inner_text() == "\"I don't know\" needs a short note saying why."
    _answer_page(page, "idk", note="It answers the question but ignores the brackets.")
    page.context.close()  # the browser is closed; the link opened again resumes where it stopped
    page = browser.new_page()
    page.goto(f"{base}/a/{token}")
    assert page.locator("#progress").inner_text() == "1 of 12 answered"
    for _ in range(11):
        _answer_page(page, _expected(_system(page, campaign)))
    assert "everything assigned to you" in page.content()
    page.context.close()


def test_qualification_is_decided_once_and_never_makes_anyone_wait(tmp_path: Path, browser: Any) -> None:
    """Observed first: a candidate was accepted after the references had given 6 of 120 answers and
    the decision was taken again on every page load. Then (issue 24): candidates were told to
    "come back later" after their qualification work until the references finished. Now a
    candidate arriving before the references are complete is told so before any work; afterwards
    the decision is made the moment the candidate finishes, stored once with its kappa."""
    directory = _write_study(tmp_path / "study")
    reference, candidate = invite(directory, 2)
    campaign = open_campaign(directory)
    server = build_server(campaign, port=0)
    stop = start_background(server)
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        qualification = campaign.batches[0]
        first = campaign.tasks(qualification)[0]  # the reference has answered one task of six
        campaign.submit(reference.id, first, Submission(answer=_expected(first.candidate.system)))
        page = browser.new_page()
        page.goto(f"{base}/a/{candidate.token}")
        assert page.locator("h1").inner_text() == "This study is not open yet"  # before the instructions
        assert not page.locator("#candidate").count() and len(campaign.answers()) == 1
        while (work := campaign.work(reference.id)).task is not None:
            campaign.submit(reference.id, work.task, Submission(answer=_expected(work.task.candidate.system)))
        page.reload()
        _start(page)
        for _ in range(6):  # the candidate agrees with the reference's rule everywhere
            _answer_page(page, _expected(_system(page, campaign)))
        assert page.locator("#batch").inner_text() == "Batch 1"  # decided at once: qualified
        [decision] = campaign.events.all("decision")
        assert decision.annotator == candidate.id and decision.data["qualified"] is True
        assert decision.data["kappa"] == pytest.approx(1.0)
        page.reload()
        campaign.status()  # neither a page load nor the status decides again
        assert campaign.events.all("decision") == [decision]
        page.close()
    finally:
        stop()


KOREAN_STUDY = """\
name: korean-study
title: 한국어 챗봇 응답 평가
language: ko
criteria:
  - response-candidates:appropriateness
contexts_per_batch: 2
annotators_per_batch: 3
guidelines_summary: 대화를 읽고 테두리 안의 후보만 다음 차례로 평가하세요.
items: items.jsonl
consent: consent.md
qualification:
  enabled: false
platform:
  kind: prolific
  completion_code: C0DE42
  screen_out_code: SCR33N
  completion_url: "{prolific}/submissions/complete?cc={{code}}"
attention:
  per_batch: 1
  max_failures: 0
  action: block
"""
KOREAN_GUIDELINES = """\
# 평가 지침

| 대화 | 후보 | 판단 |
|---|---|---|
| A: 주말에 뭐 했어? | B: 등산 다녀왔어, 정상에서 본 경치가 정말 아름다웠어 | 적절함 |
| A: 주말에 뭐 했어? | B: 저는 피자를 좋아해요 | 적절하지 않음 (비일관성) |

자세한 내용은 [프로토콜](https://example.org/protocol)을 보세요.
"""
GOLD_TEXT = "[확인 문항] 이 후보에는 '적절하지 않음'을 고르세요."


def _write_korean(directory: Path, prolific: str) -> Path:
    directory.mkdir(parents=True)
    (directory / "campaign.yaml").write_text(KOREAN_STUDY.format(prolific=prolific), encoding="utf-8")
    (directory / "guidelines.md").write_text(KOREAN_GUIDELINES, encoding="utf-8")
    consent = "# 연구 참여 동의\n\n답은 연구 목적으로만 쓰입니다."
    (directory / "consent.md").write_text(consent, encoding="utf-8")
    rows = [{"id": f"k{n}-{s}", "system": s, "language": "ko", "meta": {"context_id": f"k{n}"},
             "context": [{"speaker": "A", "text": f"{n}번째 대화: 요즘 어떤 책 읽고 있어? "
                                                  "아주아주아주아주긴단어를끊지않고써도화면이옆으로밀리면안됩니다"}],
             "response": "요즘 소설을 읽고 있어, 정말 재미있어." if s == "bot-x" else "저는 피자를 좋아해요."}
            for n in range(2) for s in ("bot-x", "bot-y")]
    rows.append({"id": "gold-1", "system": "check", "language": "ko", "response": GOLD_TEXT,
                 "context": [{"speaker": "A", "text": "오늘 날씨 어때?"}],
                 "meta": {"context_id": "gold", "gold": {"appropriateness": "not appropriate"}}})
    (directory / "items.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows),
                                           encoding="utf-8")
    return directory


def test_korean_prolific_run_at_375_px(tmp_path: Path, browser: Any, prolific_stand_in: str) -> None:
    """A Prolific participant on a phone: Korean interface, consent, instructions with a table,
    no sideways scrolling, one answer changed, a gold item, and the completion redirect."""
    directory = _write_korean(tmp_path / "study", prolific_stand_in)
    campaign = open_campaign(directory)
    server = build_server(campaign, port=0)
    stop = start_background(server)
    base = f"http://127.0.0.1:{server.server_port}"
    join = f"{base}/join/{join_secret(directory)}"
    try:
        context = browser.new_context(viewport={"width": 375, "height": 740}, device_scale_factor=2,
                                      is_mobile=True, has_touch=True)
        page = context.new_page()
        page.goto(f"{join}?PROLIFIC_PID=5f9aa1b2c3d4e50000000000&STUDY_ID=st1&SESSION_ID=se1")
        assert page.locator("h1").first.inner_text() == "참여 동의"
        with page.expect_navigation():
            page.locator("#accept").click()
        assert page.locator("h1").first.inner_text() == "안내"
        assert page.locator("#gate-text table td", has_text="비일관성").is_visible()
        assert page.locator("#gate-text a[href='https://example.org/protocol']").is_visible()
        assert _page_width(page) <= 375
        with page.expect_navigation():
            page.locator("#accept").click()
        assert page.get_by_role("button", name="저장하고 다음으로").is_visible()
        assert page.locator("#progress").inner_text() == "5개 중 0개 답함"
        assert page.get_by_text("모르겠음", exact=True).is_visible()
        assert _page_width(page) <= 375  # no sideways scrolling on a phone
        if os.environ.get("CONVOSCOPE_SCREENSHOTS"):  # a test writes nothing outside its tmp folder
            page.screenshot(path=str(Path(os.environ["CONVOSCOPE_SCREENSHOTS"]) / "campaign-korean-375.png"),
                            full_page=True)
        given: list[str] = []
        while page.locator("#candidate").count():
            text = page.locator("#candidate").inner_text()
            if len(given) == 2 and not page.locator("#editing").count():  # go back one answer, change it
                with page.expect_navigation():
                    page.locator("#back").click()
                assert page.locator("#editing").is_visible()
                assert page.locator(f"input[name=answer][value='{given[-1]}']").is_checked()
                _answer_page(page, "1" if given[-1] == "0" else "0")
                given.append("changed")
                continue
            given.append("0" if text in (GOLD_TEXT, "저는 피자를 좋아해요.") else "1")
            _answer_page(page, given[-1])
        assert page.url == f"{prolific_stand_in}/submissions/complete?cc=C0DE42"
        assert page.locator("h1").inner_text() == "Prolific: submission complete"
        person = next(p for p in read_annotators(directory) if p.external_id == "5f9aa1b2c3d4e50000000000")
        [(changed, _)] = campaign.history(person.id)
        assert changed.value == 1 - int(given[1])  # the changed answer stands ...
        assert [v.value for v in campaign.answers() if v.item_id == changed.item_id] == [changed.value]
        first = [v for v in campaign.store.verdicts(campaign.run_id) if v.item_id == changed.item_id]
        assert [v.value for v in first] == [int(given[1])]  # ... and the first answer is kept
        assert all(v.latency_s is not None for v in campaign.answers())  # timed on the server
        _fail_gold(context, join, campaign)
        context.close()
    finally:
        stop()


def _fail_gold(context: Any, join: str, campaign: Campaign) -> None:
    """A second participant answers the gold item wrongly: blocked, answers out of the results."""
    page = context.new_page()
    page.goto(f"{join}?PROLIFIC_PID=60bb22cc33dd440000000000&STUDY_ID=st1&SESSION_ID=se2")
    for _ in range(2):
        with page.expect_navigation():
            page.locator("#accept").click()
    while page.locator("#candidate").count():
        _answer_page(page, "1")  # "appropriate" everywhere, the gold item too
    # Screened out at once, in Korean, with the screen-out code and the way back to Prolific.
    assert page.locator("h1").inner_text() == "감사합니다"
    assert "참여가 종료되었습니다" in page.content()
    assert page.locator("#completion-code").inner_text() == "SCR33N"
    with page.expect_navigation():
        page.locator("#continue").click()
    assert page.url.endswith("/submissions/complete?cc=SCR33N")
    page.go_back()
    person = next(p for p in read_annotators(campaign.directory)
                  if p.external_id == "60bb22cc33dd440000000000")
    status = {a.annotator: a for a in campaign.status().annotators}[person.id]
    assert status.blocked == "failed 1 attention check(s)" and status.answers > 0 and status.counted == 0
    assert all(v.rater != f"human:{person.id}" for v in campaign.verdicts())
    page.close()




def _page_width(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth"))
