"""People judge pairs in real headless Chromium: two responses side by side in the order drawn for
this person, keyboard shortcuts, a changed answer, "I don't know" with a note, then the export read
by convoscope.pairwise. Skipped cleanly without Debian's chromium or the playwright package."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from campaign_helpers import CHROMIUM

from convoscope.campaigns import export_verdicts, invite, open_campaign, pair_order
from convoscope.judges import read_verdicts
from convoscope.pairwise import outcomes, win_rates
from convoscope.web import build_server, start_background

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")

SPEC = """\
name: head-to-head
title: Two companion bots, head to head
pairwise: true
include_reference: false
criteria: [response-candidates:appropriateness]
contexts_per_batch: 4
annotators_per_batch: 2
instructions: false
language: {language}
guidelines_summary: Which of the two replies fits the conversation better?
qualification:
  enabled: false
items: items.jsonl
"""
TURNS = [("I ran my first marathon today!", "bot-x: Congratulations! How do your legs feel?",
          "bot-y: <b>Buy</b> our new shoes </textarea><script>alert(1)</script>"),
         ("주말에 뭐 했어?", "bot-x: 한강에서 자전거 탔어.", "bot-y: 저는 피자를 좋아해요."),
         ("My cat is sick.", "bot-x: I'm sorry, have you seen a vet?", "bot-y: Cats are mammals."),
         ("Any film tips?", "bot-x: Try 'Past Lives', it's gentle and moving.", "bot-y: Film is a medium.")]


def _write(directory: Path, language: str = "en") -> Path:
    directory.mkdir(parents=True)
    (directory / "campaign.yaml").write_text(SPEC.format(language=language), encoding="utf-8")
    rows = [{"id": f"d{n}-{system}", "system": system, "context": [{"speaker": "user", "text": said}],
             "response": reply.split(": ", 1)[1], "meta": {"context_id": f"d{n}"}}
            for n, (said, *replies) in enumerate(TURNS)
            for system, reply in zip(("bot-x", "bot-y"), replies, strict=True)]
    (directory / "items.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows),
                                           encoding="utf-8")
    return directory


def _save(page: Any, key: str, note: str = "") -> None:
    page.keyboard.press(key)
    with page.expect_navigation():
        if note:
            page.fill("textarea[name=reason]", note)
            page.get_by_role("button", name="Save and next").click()
        else:
            page.keyboard.press("Enter")


def test_a_person_judges_pairs_and_the_export_feeds_win_rates(tmp_path: Path, browser: Any) -> None:
    directory = _write(tmp_path / "study")
    person = invite(directory, 1)[0]
    campaign = open_campaign(directory)
    server = build_server(campaign, port=0)
    stop = start_background(server)
    try:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(f"http://127.0.0.1:{server.server_port}/a/{person.token}")
        tasks = campaign.tasks(campaign.batches[0])
        shown_first = []
        for number, task in enumerate(tasks):
            first, second = pair_order(person.id, task.candidate)
            left, right = page.locator("#response-1"), page.locator("#response-2")
            assert (left.inner_text(), right.inner_text()) == (first.text, second.text)  # this person's order
            box_left, box_right = left.bounding_box(), right.bounding_box()
            assert box_left["x"] + box_left["width"] <= box_right["x"]  # side by side
            assert abs(box_left["y"] - box_right["y"]) < 2
            assert page.locator("#position").inner_text() == f"Dialogue {number + 1} of 4 · pair 1 of 1"
            shown_first.append(first.system)
            if number == 1 and os.environ.get("CONVOSCOPE_SCREENSHOTS"):
                shots = Path(os.environ["CONVOSCOPE_SCREENSHOTS"])
                page.screenshot(path=str(shots / "campaign-pairwise.png"), full_page=True)
            if number == 0:  # markup in a response is shown as text, never run
                assert "<script>alert(1)</script>" in left.inner_text() + right.inner_text()
                assert page.locator("b").count() == 0
                # 1 and 2 name the two sides, 3 is a tie, 4 "I don't know".
                labels = page.locator("label.answer").all_inner_texts()
                assert [label.split()[0] for label in labels] == ["1", "2", "3", "4"]
            # Always choose bot-x, whichever side it is on; the last pair: "I don't know".
            key = "1" if first.system == "bot-x" else "2"
            if number == len(tasks) - 1:
                _save(page, "4", note="Both replies ignore the question.")
            else:
                _save(page, key)
            if number == 0:  # go back: the answer is shown where it was given, then changed to a tie
                with page.expect_navigation():
                    page.locator("#back").click()
                assert page.locator(f"input[name=answer][value='{key}']").is_checked()
                _save(page, "3")
        assert page.locator("h1").inner_text() == "All done"
        out = tmp_path / "people.jsonl"
        export_verdicts(campaign, out)
        verdicts = {v.item_id: v for v in read_verdicts(out)}
        assert [verdicts[t.candidate.item_id].value for t in tasks] == ["tie", "bot-x", "bot-x", None]
        assert verdicts[tasks[-1].candidate.item_id].reason == "Both replies ignore the question."
        for task, first in zip(tasks, shown_first, strict=True):
            assert json.loads(verdicts[task.candidate.item_id].raw)["shown_first"] == first
        # The first answer is kept in the history; the changed one stands.
        [(changed, _)] = campaign.history(person.id)
        assert changed.value == "tie" and changed.item_id == tasks[0].candidate.item_id
        table = {row.system: row.rate for row in win_rates(outcomes(list(verdicts.values())), n_resamples=50)}
        assert table == {"bot-x": pytest.approx(5 / 6), "bot-y": pytest.approx(1 / 6)}
        page.close()
    finally:
        stop()


def test_korean_pairs_on_a_phone(tmp_path: Path, browser: Any) -> None:
    directory = _write(tmp_path / "ko", language="ko")
    person = invite(directory, 1)[0]
    campaign = open_campaign(directory)
    server = build_server(campaign, port=0)
    stop = start_background(server)
    try:
        context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{server.server_port}/a/{person.token}")
        assert page.locator("figcaption").all_inner_texts() == ["응답 1", "응답 2"]  # shortcuts hidden
        assert page.get_by_text("어느 쪽도 낫지 않음 (동점)").is_visible()
        top, below = page.locator("#response-1").bounding_box(), page.locator("#response-2").bounding_box()
        assert top["y"] + top["height"] <= below["y"]  # one above the other on a phone
        assert int(page.evaluate("document.documentElement.scrollWidth")) <= 375
        context.close()
    finally:
        stop()
