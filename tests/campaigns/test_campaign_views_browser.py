"""The views of issue 37 (observation 5) in real headless Chromium: Korean words kept whole in
tables on a 375 px phone, batch and speaker labels in the annotators' language, "other" refused
without words, and the dashboard showing who left and why.

Needs Debian's ``chromium`` and ``fonts-nanum``; skipped cleanly without them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from campaign_helpers import CHROMIUM, write_campaign
from leavers import BLOCK_REASON, right, study_with_leavers

from convoscope.campaigns import Campaign, Submission, invite, open_campaign
from convoscope.web import build_server, dashboard_secret, start_background

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")

KOREAN = """\
name: korean-views
language: ko
criteria:
  - response-candidates:appropriateness
contexts_per_batch: 2
annotators_per_batch: 2
guidelines_summary: 대화를 읽고 테두리 안의 후보만 평가하세요.
items: items.jsonl
qualification:
  contexts: 1
  reference_annotators: [a001]
  references_in_main: true
"""
# A table of long Korean words: squeezed into a phone's width, a browser breaks them between any
# two syllables unless told to keep words whole.
GUIDELINES = """\
# 평가 지침

| 대화 | 후보 응답 | 판단 | 설명 |
|---|---|---|---|
| 주말에 무엇을 하셨어요? | 한강공원에서 자전거를 탔어요 | 적절함 | 자연스럽게 대답합니다 |
| 어떤 책을 읽으세요? | 저는 피자를 좋아합니다 | 적절하지않음 | 관계없는 이야기를 꺼냅니다 |
"""
SPLIT_WORDS = """(selector) => {
  // Every run of Hangul syllables (a word, or a word's part between punctuation) whose glyphs sit
  // on more than one line: a word broken mid-syllable.
  const broken = [];
  for (const cell of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.data.matchAll(/[\\uAC00-\\uD7A3]+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        if (lines.size > 1) broken.push(match[0]);
      }
    }
  }
  return broken;
}"""


def _korean(directory: Path) -> Path:
    directory.mkdir(parents=True)
    (directory / "campaign.yaml").write_text(KOREAN, encoding="utf-8")
    (directory / "guidelines.md").write_text(GUIDELINES, encoding="utf-8")
    rows = [{"id": f"k{n}-{s}", "system": s, "language": "ko", "meta": {"context_id": f"k{n}"},
             "context": [{"speaker": "user", "text": f"{n}번째 대화: 요즘 어떤 책 읽고 있어?"},
                         {"speaker": "System", "text": "소설을 읽고 있어요."},
                         {"speaker": "민지", "text": "나도 읽어 볼래."}],
             "response": "정말 재미있겠다!" if s == "bot-x" else "저는 피자를 좋아해요."}
            for n in range(3) for s in ("bot-x", "bot-y")]
    (directory / "items.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows),
                                           encoding="utf-8")
    return directory


@pytest.fixture
def korean(tmp_path: Path) -> Iterator[tuple[str, Campaign, list[str]]]:
    directory = _korean(tmp_path / "study")
    people = invite(directory, 2)  # a001: the reference annotator
    campaign = open_campaign(directory)
    server = build_server(campaign, port=0)
    stop = start_background(server)
    yield f"http://127.0.0.1:{server.server_port}", campaign, [p.token for p in people]
    stop()


def _phone(browser: Any) -> Any:
    return browser.new_context(viewport={"width": 375, "height": 740}, device_scale_factor=2,
                               is_mobile=True, has_touch=True)


def test_korean_words_stay_whole_in_tables_at_375_px(korean: tuple[str, Campaign, list[str]],
                                                      browser: Any) -> None:
    """Observed: Korean table cells broke words mid-syllable on a 375 px phone."""
    base, _, tokens = korean
    context = _phone(browser)
    try:
        page = context.new_page()
        page.goto(f"{base}/a/{tokens[0]}/guidelines")
        assert page.locator("html").get_attribute("lang") == "ko"
        assert page.locator("table td").count() == 8
        assert page.evaluate(SPLIT_WORDS, "table td, table th") == []
        assert int(page.evaluate("document.documentElement.scrollWidth")) <= 375  # scrolls in its box
    finally:
        context.close()


def test_batch_and_speaker_labels_are_in_the_annotators_language(
        korean: tuple[str, Campaign, list[str]], browser: Any) -> None:
    """Observed: "batch-001" and "user:" were shown untranslated on a Korean page."""
    base, campaign, tokens = korean
    context = _phone(browser)
    try:
        page = context.new_page()
        page.goto(f"{base}/a/{tokens[0]}")
        with page.expect_navigation():
            page.locator("#accept").click()  # the instructions, once
        assert page.locator("#batch").inner_text() == "자격 배치"
        speakers = page.locator("#context .speaker").all_inner_texts()
        assert speakers == ["사용자:", "시스템:", "민지:"]  # roles translated, a person's name as written
        while (work := campaign.work("a001")).batch is not None and work.batch.kind == "qualification":
            assert work.task is not None  # the reference finishes the qualification batch ...
            campaign.submit("a001", work.task, Submission(answer=right(work.task)))
        page.reload()
        assert page.locator("#batch").inner_text() == "배치 1"  # ... and goes on to a main batch
        assert "batch-" not in page.locator("header").inner_text()
        page.keyboard.press("2")  # not appropriate, with "other" and no words: refused, in Korean
        page.locator("#options input[value=other]").check()
        with page.expect_navigation():
            page.keyboard.press("Enter")
        refused = page.get_by_role("alert").inner_text()
        assert refused == "\"기타\"을(를) 고르면 무엇이 해당하는지 메모에 적어 주세요."
    finally:
        context.close()


def test_other_needs_words_in_the_browser(tmp_path: Path, browser: Any) -> None:
    """Observed: "other" was saved with no words although the option asks for them."""
    directory = write_campaign(tmp_path / "study")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("enabled: true", "enabled: false"))
    [person] = invite(directory, 1)
    campaign = open_campaign(directory)
    server = build_server(campaign, port=0)
    stop = start_background(server)
    try:
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{server.server_port}/a/{person.token}")
        page.keyboard.press("2")  # negative: the options appear
        page.locator("#options input[value=other]").check()
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.get_by_role("alert").inner_text() == "\"other\" needs a note saying what applies."
        assert campaign.answers() == []
        assert page.locator("#options input[value=other]").is_checked()  # what was sent is kept
        page.fill("textarea[name=reason]", "It thanks the user for a gift never mentioned.")
        with page.expect_navigation():
            page.get_by_role("button", name="Save and next").click()
        [saved] = campaign.answers()
        assert saved.options == ("other",)
        assert saved.reason == "It thanks the user for a gift never mentioned."
        page.close()
    finally:
        stop()


def test_the_dashboard_shows_who_left_and_why(tmp_path: Path, browser: Any) -> None:
    """Observed: the eligibility screen-out showed as "not decided · active" and the count of the
    qualified included blocked people."""
    campaign, who = study_with_leavers(tmp_path / "study")
    server = build_server(campaign, port=0)
    stop = start_background(server)
    try:
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{server.server_port}/r/{dashboard_secret(campaign.directory)}")
        totals = page.locator("#totals").inner_text()
        assert "5 invited · 1 qualified (1 more qualified, then were blocked) · " in totals
        assert totals.endswith(" · left: 3")
        table = page.locator("table", has=page.locator("th", has_text="standing"))
        rows = {person: table.locator(f"tr:has(td:first-child:text-is('{person}'))")
                for person in who.values()}
        screened = rows[who["screened"]].locator("td").all_inner_texts()
        assert "not reached" in screened
        assert "left: screened out (eligibility question 'first_language')" in screened
        assert f"left: blocked ({BLOCK_REASON})" in rows[who["blocked"]].locator("td").all_inner_texts()
        assert "left: did not qualify" in rows[who["failed"]].locator("td").all_inner_texts()
        assert rows[who["stays"]].locator("td.standing").inner_text() == "active"
        page.close()
    finally:
        stop()
