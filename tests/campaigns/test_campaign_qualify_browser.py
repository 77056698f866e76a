"""Simulated Prolific workers in real headless Chromium (issue 37, acceptance): a careless worker
(always the first option), a constant one (always the other option), a coin-flipper and a good
worker against two reference annotators. Each decision is checked against the per-reference
figures recomputed with sklearn from the answers the browser gave; each person's last page says
truthfully what they will be paid, and the ledger says what each one saw."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from campaign_helpers import CHROMIUM, PROLIFIC_PAID, write_campaign
from sklearn.metrics import cohen_kappa_score

from convoscope.analysis import fleiss_kappa
from convoscope.campaigns import Campaign, Submission, invite, ledger_rows, open_campaign, read_annotators
from convoscope.web import build_server, join_secret, start_background

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")

PLATFORM = PROLIFIC_PAID + """\
  max_participants: 10
  completion_url: "{prolific}/submissions/complete?cc={{code}}"
"""


def _fits(text: str) -> str:
    """The references' rule: bot-y's turns are off."""
    return "0" if "bot-y" in text else "1"


def _study(tmp_path: Path, prolific: str) -> Campaign:
    directory = write_campaign(tmp_path / "study", references=["a001", "a002"])
    spec = directory / "campaign.yaml"
    text = spec.read_text().replace("contexts: 1", "contexts: 2")
    spec.write_text(text + PLATFORM.format(prolific=prolific))
    references = invite(directory, 2)
    campaign = open_campaign(directory)
    for person in references:  # the internal pilot, before the study opens
        while (work := campaign.work(person.id)).task is not None:
            campaign.submit(person.id, work.task, Submission(answer=_fits(work.task.candidate.text)))
    return campaign


def _answer(page: Any, answer: str) -> None:
    page.keyboard.press("1" if answer == "1" else "2")
    if answer == "0":
        page.locator("#options input[type=checkbox]:visible").first.check()
    with page.expect_navigation():
        page.keyboard.press("Enter")


def _work(page: Any, join: str, pid: str, rule: Callable[[str], str]) -> int:
    """Answer the qualification batch (12 tasks) in the browser; the tasks answered."""
    page.goto(f"{join}?PROLIFIC_PID={pid}&STUDY_ID=st1&SESSION_ID=se1")
    for count in range(12):
        assert page.locator("#candidate").count() == 1, f"no task after {count} answers"
        _answer(page, rule(page.locator("#candidate").inner_text()))
    return 12


def _figures(campaign: Campaign, person: str) -> tuple[list[float], float, float]:
    """Cohen's kappa with each reference (sklearn), accuracy against their majority, and the old
    rule's pooled Fleiss' kappa, from the answers stored for the qualification batch."""
    trial = campaign.qualification_batch()
    cells: dict[str, dict[tuple[str, str], str]] = {}
    for verdict in campaign.answers():
        if campaign.owner.get(verdict.item_id) is trial:
            cells.setdefault(verdict.rater, {})[(verdict.item_id, verdict.criterion)] = str(verdict.value)
    keys = sorted(cells["human:a001"])
    first, second = ([cells[f"human:{r}"][k] for k in keys] for r in ("a001", "a002"))
    mine = [cells[f"human:{person}"][k] for k in keys]
    kappas = [cohen_kappa_score(reference, mine) for reference in (first, second)]
    accuracy = sum(m == f for m, f in zip(mine, first, strict=True)) / len(keys)  # the references agree
    return kappas, accuracy, fleiss_kappa([first, second, mine])


def test_simulated_workers_are_qualified_or_refused_and_told_their_pay(
        tmp_path: Path, browser: Any, prolific_stand_in: str) -> None:
    campaign = _study(tmp_path, prolific_stand_in)
    # The coin-flipper is right on exactly half of the 12 answers (a coin's expected share), at
    # positions drawn at random; a luckier one passes as often as docs/campaigns.md measures
    # (about a fifth of coin-flippers on 12 answers: such a batch is too small).
    right = [True] * 6 + [False] * 6
    random.Random(37).shuffle(right)

    def coin(text: str) -> str:
        return _fits(text) if right.pop() else ("0" if _fits(text) == "1" else "1")

    workers: dict[str, Callable[[str], str]] = {
        f"5f00{n:020x}": rule for n, rule in enumerate([
            lambda text: "1",  # careless: always the first option
            lambda text: "0",  # constant: always the other one
            coin,
            _fits])}  # good
    server = build_server(campaign, port=0)
    stop = start_background(server)
    join = f"http://127.0.0.1:{server.server_port}/join/{join_secret(campaign.directory)}"
    pages = {}
    try:
        for pid, rule in workers.items():
            page = browser.new_page()
            _work(page, join, pid, rule)
            pages[pid] = page.content()
            page.close()
    finally:
        stop()
    ids = {p.external_id: p.id for p in read_annotators(campaign.directory) if p.external_id}
    careless, constant, coin, good = (ids[pid] for pid in workers)
    decisions = campaign.standing().decisions
    for person in (careless, constant, coin, good):
        kappas, accuracy, _ = _figures(campaign, person)
        decision = decisions[person]
        assert decision.kappas == {"a001": pytest.approx(kappas[0]), "a002": pytest.approx(kappas[1])}
        assert decision.accuracy == pytest.approx(accuracy)
        assert decision.qualified == (min(kappas) >= 0.21 and accuracy >= 0.6)
    assert _figures(campaign, careless)[2] >= 0.21  # the old pooled rule let the careless worker through
    assert [decisions[p].qualified for p in (careless, constant, coin, good)] == [False, False, False, True]
    for pid in list(workers)[:3]:  # refused after 12 answers: paid for them, and told so
        assert "PART1AL" in pages[pid] and "You gave 12 answers" in pages[pid] and "GBP 0.60" in pages[pid]
        assert "Your time is paid" not in pages[pid]
    assert 'id="candidate"' in pages[list(workers)[3]]  # the good worker goes on to a main batch
    rows = {row.participant_id: row for row in ledger_rows(campaign)}
    for pid in list(workers)[:3]:
        assert (rows[pid].outcome, rows[pid].code_shown, rows[pid].action, rows[pid].bonus) == (
            "partial", "PART1AL", "approve + bonus", 0.60)
        kappas = _figures(campaign, ids[pid])[0]  # the per-reference figures, as sklearn gives them
        assert rows[pid].kappas == f"a001 {kappas[0]:.3f}; a002 {kappas[1]:.3f}"
        assert rows[pid].references_kappa == pytest.approx(1.0)  # the two references agree
    assert (rows[list(workers)[3]].outcome, rows[list(workers)[3]].action) == ("working", "wait")
