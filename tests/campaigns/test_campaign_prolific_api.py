"""Prolific's API, optional (issue 37): against a local stand-in of the API on 127.0.0.1 — returned
and timed-out submissions free their place; approvals and bonuses follow the ledger; pause."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from campaign_helpers import PROLIFIC_PAID, answer_all, write_campaign
from click.testing import CliRunner

from convoscope.campaigns import Campaign, Task, invite, open_campaign
from convoscope.campaigns._prolific import Prolific, ProlificError, sync_submissions
from convoscope.cli._campaign import campaign_group

PROLIFIC = PROLIFIC_PAID


def pid(number: int) -> str:
    return f"60aa{number:020x}"


class StandIn:
    """A fake of Prolific's API (scripted submissions; every request kept for the test to read)."""

    def __init__(self, submissions: list[dict[str, str]]):
        self.submissions, self.requests = submissions, []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, body: Any, status: int = 200) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                stand_in.requests.append((method, self.path, body, self.headers.get("Authorization")))
                if self.headers.get("Authorization") != "Token t0ken":
                    return self._reply({"error": "unauthorised"}, 401)
                if method == "GET":
                    return self._reply({"results": stand_in.submissions, "_links": {"next": {"href": None}}})
                if self.path == "/api/v1/submissions/bonus-payments/":
                    return self._reply({"id": "bulk-1", "study": body["study_id"]}, 201)
                return self._reply("ok")

            def do_GET(self) -> None:  # noqa: N802  (stdlib name)
                self._handle("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._handle("POST")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    api = StandIn([])
    threading.Thread(target=api.server.serve_forever, daemon=True).start()
    yield api
    api.server.shutdown()
    api.server.server_close()


def _fits(task: Task) -> str:
    return "0" if task.candidate.system == "bot-y" else "1"


def _ready(tmp_path: Path) -> Campaign:
    directory = write_campaign(tmp_path / "study", references=["a001"])
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text() + PROLIFIC)
    [reference] = invite(directory, 1)
    campaign = open_campaign(directory)
    answer_all(campaign, reference.id, _fits)
    return campaign


def test_returned_and_timed_out_submissions_free_their_place(tmp_path: Path, stand_in: StandIn) -> None:
    """Observed: returned or timed-out submissions were never read; the place stayed held."""
    campaign = _ready(tmp_path)
    people = [campaign.join(pid(n), {}).annotator.id for n in range(4)]
    for person in people:
        assert campaign.work(person).task is not None  # each holds a place
    assert campaign.open_places() == campaign.main_places() - 4
    stand_in.submissions = [{"id": "s0", "participant_id": pid(0), "status": "RETURNED"},
                            {"id": "s1", "participant_id": pid(1), "status": "TIMED-OUT"},
                            {"id": "s2", "participant_id": pid(2), "status": "ACTIVE"},
                            {"id": "s3", "participant_id": pid(3), "status": "REJECTED"}]
    freed = sync_submissions(campaign, Prolific("t0ken", base_url=stand_in.url), "study-1")
    assert freed == [people[0], people[1], people[3]]
    assert campaign.open_places() == campaign.main_places() - 1
    assert [campaign.work(p).state for p in people] == ["returned", "returned", "task", "returned"]
    assert campaign.status().annotators[-1].standing == "left: submission rejected"
    leave = campaign.exit(people[0], "returned")
    assert (leave.outcome, leave.code) == ("return", None)  # they returned it: no code to use
    assert stand_in.requests[0][:2] == ("GET", "/api/v1/studies/study-1/submissions/")


def test_approvals_bonuses_and_pause_follow_the_ledger(tmp_path: Path, stand_in: StandIn,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    campaign = _ready(tmp_path)
    done, refused = (campaign.join(pid(n), {}).annotator.id for n in (7, 8))
    answer_all(campaign, done, _fits)
    answer_all(campaign, refused, lambda task: "1" if _fits(task) == "0" else "0")
    for person in (done, refused):
        campaign.leave(person, campaign.work(person))
    monkeypatch.setenv("PROLIFIC_TOKEN", "t0ken")
    result = CliRunner().invoke(campaign_group, ["prolific", str(campaign.directory), "--study", "study-1",
                                                 "--approve", "--pay-bonuses", "--pause",
                                                 "--api-url", stand_in.url])
    assert result.exit_code == 0, result.output
    sent = [(method, path, body) for method, path, body, _ in stand_in.requests]
    assert sent == [
        ("POST", "/api/v1/submissions/bulk-approve/",
         {"study_id": "study-1", "participant_ids": [pid(7), pid(8)]}),
        ("POST", "/api/v1/submissions/bonus-payments/",
         {"study_id": "study-1", "csv_bonuses": f"{pid(8)},0.30\n"}),
        ("POST", "/api/v1/bulk-bonus-payments/bulk-1/pay/", None),
        ("POST", "/api/v1/studies/study-1/transition/", {"action": "PAUSE"})]
    assert {auth for *_, auth in stand_in.requests} == {"Token t0ken"}


def test_without_a_token_or_with_a_wrong_one_nothing_is_sent_quietly(stand_in: StandIn) -> None:
    with pytest.raises(ProlificError, match="PROLIFIC_TOKEN"):
        Prolific("")
    with pytest.raises(ProlificError, match="401"):
        Prolific("wrong", base_url=stand_in.url).submissions("study-1")
