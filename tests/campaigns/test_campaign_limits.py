"""Abuse and exposure (issue 24, observation 7): connections per client, participants per study
link, requests per participant, and files readable by their owner only. Over real sockets."""

from __future__ import annotations

import selectors
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from campaign_helpers import answer_form, get, write_campaign

from convoscope.campaigns import (
    export_questionnaires,
    export_verdicts,
    invite,
    open_campaign,
    read_annotators,
    write_campaign_report,
)
from convoscope.web import build_server, join_secret, start_background

PROLIFIC = "platform:\n  kind: prolific\n  completion_code: C0MPL3\n  screen_out_code: SCR33N\n"


def _keep_alive_connection(port: int) -> socket.socket:
    """A connection that made one whole request, read its answer and now sits idle (kept alive)."""
    connection = socket.create_connection(("127.0.0.1", port))
    connection.sendall(b"GET /static/campaign.css HTTP/1.1\r\nHost: x\r\n\r\n")
    connection.settimeout(30)
    received = b""
    while b"\r\n\r\n" not in received:
        received += connection.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += connection.recv(65536)
    return connection


def test_one_client_with_many_idle_connections_does_not_lock_out_the_others(tmp_path: Path) -> None:
    """Observed: 1,010 idle connections from one client gave every annotator a 503."""
    directory = write_campaign(tmp_path / "study")
    [person] = invite(directory, 1)
    server = build_server(open_campaign(directory), port=0, max_connections=120, keep_alive=60,
                          header_timeout=60)
    stop = start_background(server)
    port = server.server_port
    flood: list[socket.socket] = []
    try:
        for _ in range(130):  # more than the server takes in all, from one address
            flood.append(_keep_alive_connection(port))
        other = httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2"), timeout=30)
        with other:
            assert other.get(f"http://127.0.0.1:{port}/a/{person.token}").status_code == 200
        flood[0].settimeout(5)
        assert flood[0].recv(1024) == b""  # the flooding client's oldest idle connection was closed
    finally:
        for connection in flood:
            connection.close()
        stop()


@pytest.fixture
def prolific_served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    directory = write_campaign(tmp_path / "study")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("enabled: true", "enabled: false") + PROLIFIC)
    server = build_server(open_campaign(directory), port=0, rate=1000.0, burst=1000)
    stop = start_background(server)
    yield f"http://127.0.0.1:{server.server_port}", directory
    stop()


def test_the_study_link_stops_adding_people(prolific_served: tuple[str, Path]) -> None:
    """Observed: the study link created unlimited participants (300 in 3.5 s)."""
    base, directory = prolific_served
    join = f"{base}/join/{join_secret(directory)}"
    with httpx.Client(timeout=30) as client:
        pages = [client.get(f"{join}?PROLIFIC_PID=5f00{n:04d}0000000000000000&STUDY_ID=s&SESSION_ID=x{n}")
                 for n in range(60)]
    # 4 main places (2 batches x 2 people), one batch each: 4 planned, at most 4 + 2 taken in.
    added = read_annotators(directory)
    assert 1 <= len(added) <= 6
    turned_away = [page for page in pages if page.status_code == 200 and "This study is full" in page.text]
    assert len(turned_away) == 60 - len(added)
    assert all("Please return your submission on Prolific" in page.text for page in turned_away)
    assert all("SCR33N" not in page.text and "C0MPL3" not in page.text for page in turned_away)


def test_requests_per_participant_are_limited(tmp_path: Path) -> None:
    directory = write_campaign(tmp_path / "study")
    first, second = invite(directory, 2)
    server = build_server(open_campaign(directory), port=0, rate=0.001, burst=5)  # no refill in the test
    stop = start_background(server)
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        answers = [get(f"{base}/a/{first.token}") for _ in range(8)]
        assert [a.status_code for a in answers] == [200] * 5 + [429] * 3
        assert int(answers[-1].headers["retry-after"]) >= 1 and "Too many requests" in answers[-1].text
        assert "default-src 'none'" in answers[-1].headers["content-security-policy"]
        assert get(f"{base}/a/{second.token}").status_code == 200  # someone else is not slowed down
    finally:
        stop()


def test_exports_and_reports_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    """Observed: exports and reports were world-readable (644) while the database was 600."""
    directory = write_campaign(tmp_path / "study")
    campaign = open_campaign(directory)
    old = tmp_path / "human.csv"
    old.write_text("left from before")
    old.chmod(0o644)
    written = [tmp_path / "human.jsonl", old, tmp_path / "report.html", tmp_path / "people.csv"]
    export_verdicts(campaign, written[0])
    export_verdicts(campaign, written[1])
    write_campaign_report(campaign, written[2])
    export_questionnaires(campaign, written[3])
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert not list(tmp_path.glob(".*.part"))  # written through a temporary file, moved into place


def _closed_by_server(connections: list[socket.socket], wanted: int) -> set[int]:
    """Indexes of the connections the server has closed (an end of stream or a reset), read until
    ``wanted`` are closed; the deadline only bounds a hung test, the closing is the server's."""
    closed: set[int] = set()
    with selectors.DefaultSelector() as selector:
        for index, connection in enumerate(connections):
            selector.register(connection, selectors.EVENT_READ, index)
        deadline = time.monotonic() + 60
        while len(closed) < wanted and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=1):
                try:
                    data = key.fileobj.recv(1024)  # type: ignore[union-attr]
                except ConnectionResetError:
                    data = b""
                if not data:
                    closed.add(key.data)
                    selector.unregister(key.fileobj)
    return closed


def _hold_the_loop(server: Any) -> threading.Event:
    """Keep the server's event loop busy until the returned event is set: connections made
    meanwhile wait in the listening queue and are taken in together, in one turn of the loop,
    as a fast client's burst is (so the test does not hang on the machine's speed)."""
    loop = server.uvicorn.servers[0].get_loop()
    entered, gate = threading.Event(), threading.Event()

    def wait() -> None:
        entered.set()
        gate.wait(60)  # the bound only keeps a failed test from hanging the server

    loop.call_soon_threadsafe(wait)
    assert entered.wait(30)
    return gate


def test_a_burst_of_connections_from_one_address_leaves_another_annotator_served(tmp_path: Path) -> None:
    """Observed: 1,100 connections opened back to back from one address all stayed open (the cap
    closed the same, already closing, connection again and again) and another client got 503."""
    directory = write_campaign(tmp_path / "study")
    [person] = invite(directory, 1)
    cap, blocks, per_block = 16, 5, 220  # 1,100 in all; a block stays under the listening backlog
    server = build_server(open_campaign(directory), port=0, max_per_client=cap, keep_alive=120,
                          header_timeout=120, rate=1000.0, burst=1000)  # default max_connections: 1000
    stop = start_background(server)
    port, burst, gates = server.server_port, [], []
    url = f"http://127.0.0.1:{port}/a/{person.token}"
    other = httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2"), timeout=30)
    try:
        with other:
            served = []
            for _ in range(blocks):
                gates.append(gate := _hold_the_loop(server))
                burst.extend(socket.create_connection(("127.0.0.1", port), timeout=30)
                             for _ in range(per_block))  # back to back, nothing sent on them
                gate.set()
                served += [other.get(url).status_code for _ in range(2)]  # the other annotator works
            assert served == [200] * 10
            assert answer_form(other, url, "1").status_code == 200  # and answers
        assert len(open_campaign(directory).answers()) == 1
        closed = _closed_by_server(burst, len(burst) - cap)
        assert len(closed) >= len(burst) - cap  # the burst's connections over the cap were closed
        newest = burst[-1]  # the newest are the ones kept, and they work
        newest.sendall(b"GET /static/campaign.css HTTP/1.1\r\nHost: x\r\n\r\n")
        assert newest.recv(1024).startswith(b"HTTP/1.1 200")
    finally:
        for gate in gates:
            gate.set()  # a test failing while the loop is held must not hold it
        for connection in burst:
            connection.close()
        stop()
