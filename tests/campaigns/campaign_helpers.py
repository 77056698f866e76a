"""Test helpers: a small campaign (4 contexts x 2 candidates + reference, 2 criteria, 1 qualification
context) and form posting as a browser does it. Imported by name: pytest puts this folder on sys.path."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx

# Debian's Chromium, driven by playwright with executable_path (no `playwright install`).
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

# A Prolific study that pays per task (and a partial code for work done before a screen-out).
PROLIFIC_PAID = """\
platform:
  kind: prolific
  completion_code: C0MPL3
  screen_out_code: SCR33N
  partial_code: PART1AL
  pay_per_task: 0.05
"""

SPEC = """\
name: tiny-study
criteria:
  - response-candidates:appropriateness
  - response-candidates:contextualization
contexts_per_batch: 2
annotators_per_batch: 2
guidelines_summary: Judge the highlighted turn.
instructions: false
items: items.jsonl
store: study.db
qualification:
  enabled: true
  contexts: 1
  reference_annotators: {references}
  kappa_threshold: 0.21
"""


def _items() -> list[dict[str, object]]:
    rows = []
    for number in range(1, 5):
        context = [{"speaker": "A", "text": f"<script>alert({number})</script> hello"},
                   {"speaker": "B", "text": "안녕하세요, 반갑습니다"}]
        for system in ("bot-x", "bot-y"):
            rows.append({"id": f"c{number}-{system}", "context": context, "system": system,
                         "response": f"{system} says hi to context {number}",
                         "reference": f"gold turn {number}", "meta": {"context_id": f"c{number}"}})
    return rows


def write_campaign(directory: Path, references: list[str] | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "campaign.yaml").write_text(SPEC.format(references=json.dumps(references or [])),
                                             encoding="utf-8")
    (directory / "guidelines.md").write_text("# Guidelines\nBe <careful>.", encoding="utf-8")
    (directory / "items.jsonl").write_text("\n".join(json.dumps(row) for row in _items()), encoding="utf-8")
    return directory


# Generous timeouts: the suite may share two cores with other work, and httpx's default is 5 s.
get = partial(httpx.get, timeout=30)
post = partial(httpx.post, timeout=30)


def hidden_field(html: str, name: str) -> str:
    """The value of a hidden form field in a rendered page."""
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert found, f"no hidden field {name}"
    return found.group(1)


def answer_form(client: httpx.Client, url: str, answer: str, **extra: object) -> httpx.Response:
    """Load the annotator's page and post one answer, as the browser's form would."""
    page = client.get(url).text
    data = {"csrf": hidden_field(page, "csrf"), "task": hidden_field(page, "task"), "answer": answer, **extra}
    return client.post(url, data=data, follow_redirects=True)


def answer_all(campaign: Any, person: str, rule: Callable[[Any], Any]) -> int:
    """Answer every task offered to ``person`` through the library, as the web app would;
    ``rule(task)`` gives a Submission or the form's answer value. Returns how many were answered."""
    from convoscope.campaigns import Submission

    count = 0
    while (work := campaign.work(person)).task is not None:
        choice = rule(work.task)
        submission = choice if isinstance(choice, Submission) else Submission(answer=choice)
        campaign.submit(person, work.task, submission)
        count += 1
    return count
