"""The server's edges over real sockets on 127.0.0.1 (uvicorn + Starlette), one test per edge that
issue 14 observed on the old stdlib server."""

from __future__ import annotations

import csv
import logging
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from campaign_helpers import answer_form, get, hidden_field, post, write_campaign

from convoscope.campaigns import export_verdicts, import_verdicts, invite, open_campaign
from convoscope.web import build_server, start_background


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, list[str]]]:
    directory = write_campaign(tmp_path / "study")
    tokens = [annotator.token for annotator in invite(directory, 2)]
    server = build_server(open_campaign(directory), port=0, header_timeout=1.0, body_timeout=1.0)
    stop = start_background(server)
    yield f"http://127.0.0.1:{server.server_port}", directory, tokens
    stop()


def _form(base: str, token: str) -> dict[str, str]:
    page = get(f"{base}/a/{token}").text
    return {"csrf": hidden_field(page, "csrf"), "task": hidden_field(page, "task")}


def test_stalled_connections_are_closed_and_others_still_served(served: tuple[str, Path, list[str]]) -> None:
    base, _, tokens = served
    port = int(base.rsplit(":", 1)[1])
    stalled = []
    for _ in range(100):  # each sends half a request head, then nothing
        connection = socket.create_connection(("127.0.0.1", port))
        connection.sendall(b"GET /a/x HTTP/1.1\r\nHost: x\r\n")
        stalled.append(connection)
    assert get(f"{base}/a/{tokens[0]}").status_code == 200  # served while they hang
    time.sleep(1.5)  # the request-head deadline (1 s here, 10 s by default) has passed
    for connection in stalled:
        connection.settimeout(60)  # the deadline is the server's; this only bounds a hung test
        try:
            # Closed by the server: an orderly end (FIN), or a reset when the kernel still held
            # unread bytes of the half head as the server closed it (seen on a loaded machine).
            assert connection.recv(1024) == b""
        except ConnectionResetError:
            pass
        connection.close()


def test_a_body_over_the_limit_is_refused_413(served: tuple[str, Path, list[str]]) -> None:
    base, directory, tokens = served
    url = f"{base}/a/{tokens[0]}"
    big = {**_form(base, tokens[0]), "answer": "1", "reason": "x" * 10_000_000}
    refused = post(url, data=big)
    assert refused.status_code == 413 and "too large" in refused.text

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit holds on the stream too
        yield b"csrf=x&reason="
        for _ in range(100):
            yield b"y" * 1000

    streamed = httpx.post(url, content=chunks(), timeout=30,
                          headers={"content-type": "application/x-www-form-urlencoded"})
    assert streamed.status_code == 413
    assert open_campaign(directory).answers() == []  # nothing stored, nothing cut short


def test_a_note_longer_than_allowed_is_refused_not_cut(served: tuple[str, Path, list[str]]) -> None:
    base, directory, tokens = served
    with httpx.Client(timeout=30) as client:
        refused = answer_form(client, f"{base}/a/{tokens[0]}", "idk", reason="z" * 5001)
        assert refused.status_code == 422
        assert "at most 5000 characters, this one has 5001" in refused.text
        assert answer_form(client, f"{base}/a/{tokens[0]}", "idk", reason="z" * 5000).status_code == 200
    [verdict] = open_campaign(directory).answers()
    assert verdict.reason == "z" * 5000


def test_undecodable_body_is_400(served: tuple[str, Path, list[str]]) -> None:
    base, _, tokens = served
    form = _form(base, tokens[0])
    for body in (f"csrf={form['csrf']}&answer=1&reason=%FF%FE".encode(), b"csrf=\xff\xfe&answer=1"):
        response = httpx.post(f"{base}/a/{tokens[0]}", content=body, timeout=30,
                              headers={"content-type": "application/x-www-form-urlencoded"})
        assert response.status_code == 400 and "UTF-8" in response.text


def test_a_body_that_trickles_in_times_out_408(served: tuple[str, Path, list[str]]) -> None:
    base, _, tokens = served
    port = int(base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)) as connection:
        connection.sendall(f"POST /a/{tokens[0]} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n"
                           "Content-Type: application/x-www-form-urlencoded\r\n\r\ncsrf=".encode())
        connection.settimeout(10)
        assert connection.recv(1024).startswith(b"HTTP/1.1 408")


def test_wrong_methods_are_405(served: tuple[str, Path, list[str]]) -> None:
    base, _, tokens = served
    for method in ("PUT", "DELETE", "PATCH"):
        response = httpx.request(method, f"{base}/a/{tokens[0]}", timeout=30)
        assert response.status_code == 405 and "GET" in response.headers["allow"]
    assert httpx.post(f"{base}/a/{tokens[0]}/guidelines", timeout=30).status_code == 405
    assert get(f"{base}/nothing/here").status_code == 404


def test_csp_has_no_inline_script_and_forbids_framing(served: tuple[str, Path, list[str]]) -> None:
    base, _, tokens = served
    for response in (get(f"{base}/a/{tokens[0]}"), get(f"{base}/a/nope"),
                     httpx.put(f"{base}/a/{tokens[0]}", timeout=30)):
        policy = response.headers["content-security-policy"]
        script = next(part for part in policy.split(";") if part.strip().startswith("script-src"))
        assert "'unsafe-inline'" not in script and "frame-ancestors 'none'" in policy
        assert response.headers["x-frame-options"] == "DENY"
    page = get(f"{base}/a/{tokens[0]}").text
    assert '<script src="/static/campaign.js" defer></script>' in page
    assert "<script>" not in page  # no inline script at all
    script = get(f"{base}/static/campaign.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")


def test_store_and_secrets_are_readable_by_their_owner_only(served: tuple[str, Path, list[str]]) -> None:
    base, directory, tokens = served
    with httpx.Client(timeout=30) as client:
        answer_form(client, f"{base}/a/{tokens[0]}", "1")
    for name in ("study.db", "study.db-wal", "server-secret.txt", "dashboard-secret.txt", "annotators.json"):
        path = directory / name
        if path.exists():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, name
    assert (directory / "study.db").exists()


def test_csv_export_escapes_formulas_and_import_reads_them_back(tmp_path: Path) -> None:
    directory = write_campaign(tmp_path / "study")
    spec = directory / "campaign.yaml"
    spec.write_text(spec.read_text().replace("enabled: true", "enabled: false"))
    [person] = invite(directory, 1)
    campaign = open_campaign(directory)
    from convoscope.campaigns import Submission

    notes = ['=HYPERLINK("http://evil.example","click")', "+1+2", "-3", "@SUM(A1)", "plain note"]
    for note in notes:
        task = campaign.work(person.id).task
        campaign.submit(person.id, task, Submission(answer="idk", reason=note))
    out = tmp_path / "human.csv"
    export_verdicts(campaign, out)
    cells = [row["reason"] for row in csv.DictReader(out.open(encoding="utf-8"))]
    assert cells == ["'" + note for note in notes[:4]] + ["plain note"]
    copy = write_campaign(tmp_path / "copy")
    copy_spec = copy / "campaign.yaml"
    copy_spec.write_text(copy_spec.read_text().replace("enabled: true", "enabled: false"))
    invite(copy, 1)
    target = open_campaign(copy)
    import_verdicts(target, out)
    assert [v.reason for v in target.answers()] == notes  # the guard is undone on import


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.seen.set()


def test_a_client_that_leaves_mid_form_leaves_no_traceback(
        served: tuple[str, Path, list[str]], capfd: pytest.CaptureFixture[str]) -> None:
    """Observed: a client disconnecting before its form arrived printed a ClientDisconnect traceback."""
    base, directory, tokens = served
    port = int(base.rsplit(":", 1)[1])
    records = _Records()
    # uvicorn's errors (the traceback it printed) at the level the server set; ours down to debug.
    watched = [logging.getLogger(name) for name in ("uvicorn.error", "convoscope.web")]
    levels = [logger.level for logger in watched]
    for logger in watched:
        logger.addHandler(records)
    watched[1].setLevel(logging.DEBUG)
    try:
        with socket.create_connection(("127.0.0.1", port)) as connection:
            connection.sendall(f"POST /a/{tokens[0]} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n"
                               "Content-Type: application/x-www-form-urlencoded\r\n\r\ncsrf=".encode())
        # The server says, once, what happened to the request: an error with a traceback (before),
        # or a quiet debug line (now). Waiting for that word is what orders the test.
        assert records.seen.wait(30), "the server said nothing about the request that was cut short"
        assert get(f"{base}/a/{tokens[1]}").status_code == 200  # and serves others as before
    finally:
        for logger, level in zip(watched, levels, strict=True):
            logger.removeHandler(records)
            logger.setLevel(level)
    assert [r.levelno for r in records.records] == [logging.DEBUG]
    assert "went away" in records.records[0].getMessage()
    assert "Traceback" not in capfd.readouterr().err
    assert open_campaign(directory).answers() == []
