"""The annotation app over real HTTP on 127.0.0.1: answers, resume, escaping, CSRF, idk notes."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from campaign_helpers import answer_form as _answer
from campaign_helpers import get, post, write_campaign
from campaign_helpers import hidden_field as _hidden

from convoscope.campaigns import BatchFull, Submission, invite, open_campaign, read_annotators
from convoscope.web import build_server, dashboard_secret, start_background


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, list[str]]]:
    directory = write_campaign(tmp_path / "study")
    tokens = [annotator.token for annotator in invite(directory, 3)]
    server = build_server(open_campaign(directory), port=0)
    stop = start_background(server)
    yield f"http://127.0.0.1:{server.server_port}", directory, tokens
    stop()


def test_page_layout_and_escaping(served: tuple[str, Path, list[str]]) -> None:
    base, _, tokens = served
    html = get(f"{base}/a/{tokens[0]}").text
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "안녕하세요, 반갑습니다" in html and 'charset="utf-8"' in html
    assert html.index('id="context"') < html.index('id="candidate"')
    assert "Is this response a sensible" in html and "0 of 6 answered" in html
    assert "Dialogue 1 of 1 · candidate 1 of 3" in html
    # Every option the guidelines define is offered: "coherence" after a positive answer too.
    assert 'id="options" data-after="1 0 idk"' in html and 'data-key="1"' in html
    coherence = ('<label class="answer" data-after="1">'
                 '<input type="checkbox" name="options" value="coherence">')
    assert coherence in html
    guidelines = get(f"{base}/a/{tokens[0]}/guidelines").text
    assert "<h1>Guidelines</h1>" in guidelines and "<p>Be &lt;careful&gt;.</p>" in guidelines


def test_unknown_token_and_missing_csrf(served: tuple[str, Path, list[str]]) -> None:
    base, _, tokens = served
    assert get(f"{base}/a/not-a-token").status_code == 404
    assert post(f"{base}/a/{tokens[0]}", data={"answer": "1"}).status_code == 403


def test_submit_resume_and_idk_needs_a_note(served: tuple[str, Path, list[str]]) -> None:
    base, directory, tokens = served
    url = f"{base}/a/{tokens[0]}"
    with httpx.Client(timeout=30) as client:
        assert "1 of 6 answered" in _answer(client, url, "1").text
        refused = _answer(client, url, "idk", reason="")
        assert refused.status_code == 422 and "needs a short note" in refused.text
        assert "2 of 6 answered" in _answer(client, url, "idk", reason="half of it fits").text
        assert "3 of 6 answered" in _answer(client, url, "0", options="incoherence").text
    # A new client (browser closed) resumes where the annotator stopped.
    assert "3 of 6 answered" in get(url).text
    verdicts = open_campaign(directory).store.verdicts("campaign:tiny-study")
    assert [(v.value, v.unscored_reason, v.options) for v in verdicts] == [
        (1, None, ()), (None, "idk", ()), (0, None, ("incoherence",))]
    assert {v.rater for v in verdicts} == {"human:a001"}


def test_repeated_form_is_not_stored_twice(served: tuple[str, Path, list[str]]) -> None:
    base, directory, tokens = served
    url = f"{base}/a/{tokens[1]}"
    page = get(url).text
    data = {"csrf": _hidden(page, "csrf"), "task": _hidden(page, "task"), "answer": "1"}
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: post(url, data=data), range(4)))
    assert len(open_campaign(directory).store.verdicts("campaign:tiny-study")) == 1


def test_restart_mid_batch_loses_nothing(served: tuple[str, Path, list[str]]) -> None:
    base, directory, tokens = served
    with httpx.Client(timeout=30) as client:
        _answer(client, f"{base}/a/{tokens[0]}", "1")
        stale = client.get(f"{base}/a/{tokens[0]}").text
    server = build_server(open_campaign(directory), port=0)  # a second process over the same store
    stop = start_background(server)
    try:
        url = f"http://127.0.0.1:{server.server_port}/a/{tokens[0]}"
        assert "1 of 6 answered" in get(url).text
        # A form rendered before the restart is still accepted (the CSRF secret is on disk).
        data = {"csrf": _hidden(stale, "csrf"), "task": _hidden(stale, "task"), "answer": "0"}
        assert "2 of 6 answered" in post(url, data=data, follow_redirects=True).text
    finally:
        stop()


def test_thirty_annotators_at_once_leave_exact_rows(tmp_path: Path) -> None:
    directory = write_campaign(tmp_path / "load")
    tokens = [annotator.token for annotator in invite(directory, 30)]
    server = build_server(open_campaign(directory), port=0)
    stop = start_background(server)
    base = f"http://127.0.0.1:{server.server_port}"

    def work(token: str) -> None:
        with httpx.Client(timeout=60) as client:
            for _ in range(6):
                _answer(client, f"{base}/a/{token}", "1")

    try:
        with ThreadPoolExecutor(len(tokens)) as pool:
            list(pool.map(work, tokens))
    finally:
        stop()
    verdicts = open_campaign(directory).store.verdicts("campaign:tiny-study")
    assert len(verdicts) == 6 * 30
    assert len({(v.rater, v.item_id, v.criterion) for v in verdicts}) == 6 * 30


def test_concurrent_annotators_lose_nothing(served: tuple[str, Path, list[str]]) -> None:
    base, directory, tokens = served

    def work(token: str) -> None:
        with httpx.Client(timeout=30) as client:
            for _ in range(6):
                _answer(client, f"{base}/a/{token}", "1")

    with ThreadPoolExecutor(len(tokens)) as pool:
        list(pool.map(work, tokens))
    verdicts = open_campaign(directory).store.verdicts("campaign:tiny-study")
    assert len(verdicts) == 6 * len(tokens)
    assert len({(v.rater, v.item_id, v.criterion) for v in verdicts}) == 6 * len(tokens)


def test_dashboard_needs_its_own_secret(served: tuple[str, Path, list[str]]) -> None:
    base, directory, tokens = served
    secret = dashboard_secret(directory)
    assert secret not in tokens and len(secret) >= 24
    with httpx.Client(timeout=30) as client:
        for token in tokens[:2]:
            for _ in range(6):
                _answer(client, f"{base}/a/{token}", "1")
    assert get(f"{base}/r/{tokens[0]}").status_code == 404  # an annotator link opens nothing here
    assert get(f"{base}/r/wrong-secret/report").status_code == 404
    page = get(f"{base}/r/{secret}")
    assert page.status_code == 200 and "3 invited · 2 qualified · 12 answers" in page.text
    assert "<td>qualification</td>" in page.text and "Fleiss κ" in page.text
    report = get(f"{base}/r/{secret}/report")
    assert report.status_code == 200 and "Reporting checklist" in report.text


def test_time_on_task_is_measured_on_the_server(served: tuple[str, Path, list[str]]) -> None:
    base, directory, tokens = served
    url = f"{base}/a/{tokens[0]}"
    page = get(url).text
    assert 'name="shown"' not in page  # the browser sends no time of its own any more
    time.sleep(1.0)
    data = {"csrf": _hidden(page, "csrf"), "task": _hidden(page, "task"), "answer": "1",
            "shown": "1", "seconds": "4000"}  # values a client might forge: ignored
    post(url, data=data)
    [verdict] = open_campaign(directory).answers()
    assert 1.0 <= verdict.latency_s < 30


def test_platform_id_is_kept_apart(served: tuple[str, Path, list[str]]) -> None:
    base, directory, tokens = served
    assert get(f"{base}/a/{tokens[0]}?PROLIFIC_PID=5f3e9a0c1d2b").status_code == 200
    assert read_annotators(directory)[0].external_id == "5f3e9a0c1d2b"
    refused = get(f"{base}/a/{tokens[1]}?PROLIFIC_PID=%3Cb%3Ebold%3C/b%3E")
    assert refused.status_code == 400 and "<b>bold" not in refused.text
    assert read_annotators(directory)[1].external_id is None
    assert get(f"{base}/a/{tokens[0]}?PROLIFIC_PID=someone-else").status_code == 400
    with httpx.Client(timeout=30) as client:
        _answer(client, f"{base}/a/{tokens[0]}", "1")
    assert "5f3e9a0c1d2b" not in open_campaign(directory).verdicts()[0].model_dump_json()


def test_people_arriving_together_are_spread_over_batches(tmp_path: Path) -> None:
    directory = write_campaign(tmp_path / "study")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("enabled: true", "enabled: false"))
    tokens = [annotator.token for annotator in invite(directory, 4)]
    campaign = open_campaign(directory)
    server = build_server(campaign, port=0)
    stop = start_background(server)
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        # All four open their links before anyone answers: two places per batch, two batches.
        pages = {token: get(f"{base}/a/{token}").text for token in tokens}
        for token, page in pages.items():
            data = {"csrf": _hidden(page, "csrf"), "task": _hidden(page, "task"), "answer": "1"}
            assert post(f"{base}/a/{token}", data=data, follow_redirects=True).status_code == 200
    finally:
        stop()
    shown = [re.search(r'data-batch="(batch-\d+)"', page).group(1) for page in pages.values()]
    assert shown == ["batch-001", "batch-001", "batch-002", "batch-002"]
    assert len(campaign.verdicts()) == 4  # every answer given was kept
    # A fifth person finds no place; an answer forced into a full batch is refused, not stored.
    [late] = invite(directory, 1)
    assert campaign.work(late.id).task is None
    task = campaign.tasks(campaign.batches[0])[0]
    with pytest.raises(BatchFull):
        campaign.submit(late.id, task, Submission(answer="1"))
    assert len(campaign.verdicts()) == 4


def test_guidelines_render_tables_images_and_links_and_nothing_unsafe() -> None:
    from convoscope.web import markdown_html

    text = ("# Examples\n\n| dialogue | answer |\n|---|---|\n| A: hi <b>x</b> | **appropriate** |\n\n"
            "![a screenshot](media/shot.png) [the protocol](https://example.org/protocol)\n\n"
            "[bad](javascript:alert(1)) <img src=x onerror=alert(1)> <script>alert(2)</script>\n")
    html = str(markdown_html(text, media_base="/a/tok"))
    assert '<div class="table-wrap"><table>' in html and "<td><strong>appropriate</strong></td>" in html
    assert "<td>A: hi &lt;b&gt;x&lt;/b&gt;</td>" in html
    assert '<img src="/a/tok/media/shot.png" alt="a screenshot">' in html
    assert '<a href="https://example.org/protocol" rel="noopener noreferrer">the protocol</a>' in html
    assert "javascript:" not in html.replace("[bad](javascript:alert(1))", "")
    assert "<script" not in html and "<img src=x" not in html and 'href="javascript' not in html
