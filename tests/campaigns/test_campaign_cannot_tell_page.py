"""The page of a candidate refused because the qualification batch cannot tell them from chance.

Observed: a ``cannot_tell`` refusal (the candidate met the agreement minimums, but a guesser does
as well too often on so short a batch: ``max_chance_pass``) was told "did not agree closely
enough", which is untrue. The page now says the batch was too short to decide, with the same pay
text and code as any refusal after work, in English and in Korean."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from campaign_helpers import PROLIFIC_PAID, answer_all, write_campaign
from leavers import right

from convoscope.campaigns import Campaign, Submission, invite, open_campaign
from convoscope.web import build_server, start_background

PROLIFIC = PROLIFIC_PAID
DISAGREED = {"en": "did not agree closely enough", "ko": "충분히 일치하지 않아"}
TOO_SHORT = {"en": "the batch was too short to tell them apart from guessing", "ko": "배치가 너무 짧아"}
PAID = {"en": "You gave 6 answers", "ko": "GBP 0.30"}


def _joined(campaign: Campaign, number: int) -> tuple[str, str]:
    admission = campaign.join(f"5f00{number:020x}", {"STUDY_ID": "st1", "SESSION_ID": "se1"})
    assert admission.annotator is not None, admission
    return admission.annotator.id, admission.annotator.token


def _one_missed(campaign: Campaign, person: str) -> None:
    """Right on every qualification task but one: 5 of 6, kappa 2/3 — a guesser does as well 7 in 64."""
    missed = False
    while (work := campaign.work(person)).task is not None:
        answer = right(work.task)
        if not missed and answer == "1":
            answer, missed = "0", True
        campaign.submit(person, work.task, Submission(answer=answer))


@pytest.mark.parametrize("language", ["en", "ko"])
def test_a_candidate_the_batch_cannot_tell_from_chance_is_not_told_they_disagreed(
        tmp_path: Path, language: str) -> None:
    directory = write_campaign(tmp_path / "study", references=["a001"])
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text() + PROLIFIC + f"language: {language}\n", encoding="utf-8")
    [reference] = invite(directory, 1)
    campaign = open_campaign(directory)
    answer_all(campaign, reference.id, right)
    undecided, undecided_token = _joined(campaign, 1)
    _one_missed(campaign, undecided)
    contrary, contrary_token = _joined(campaign, 2)
    answer_all(campaign, contrary, lambda task: "0" if right(task) == "1" else "1")
    assert campaign.decision(undecided).outcome == "cannot_tell"
    assert campaign.decision(contrary).outcome == "not_qualified"
    server = build_server(campaign, port=0)
    stop = start_background(server)
    base = f"http://127.0.0.1:{server.server_port}/a"
    try:
        with httpx.Client(timeout=30) as client:
            too_short = client.get(f"{base}/{undecided_token}").text
            disagreed = client.get(f"{base}/{contrary_token}").text
    finally:
        stop()
    assert TOO_SHORT[language] in too_short and DISAGREED[language] not in too_short
    assert DISAGREED[language] in disagreed and TOO_SHORT[language] not in disagreed
    for page in (too_short, disagreed):  # paid for the answers given, as any refusal after work
        assert "PART1AL" in page and PAID[language] in page
