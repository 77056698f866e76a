"""The same campaign app on a real PostgreSQL server, started for this test on 127.0.0.1.

Starts a throw-away cluster from Debian's ``postgresql`` package, as tests/store/test_postgres.py
does; skipped when the server binaries or psycopg are missing.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from campaign_helpers import answer_form, get, hidden_field, post, write_campaign

from convoscope.campaigns import invite, open_campaign
from convoscope.web import build_server, start_background

pytest.importorskip("psycopg")


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    return found or (str(candidates[-1]) if candidates else None)


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL server binaries not installed (scripts/test.sh installs them)")
    home = Path(tempfile.mkdtemp(prefix="convoscope-campaign-pg-"))  # 'postgres' must be able to enter it
    data, as_user = home / "data", []
    if os.geteuid() == 0:  # initdb refuses to run as root
        shutil.chown(home, user="postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    subprocess.run([*as_user, initdb, "-D", str(data), "-U", "postgres", "-A", "trust"],
                   check=True, capture_output=True)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    subprocess.run([*as_user, pg_ctl, "-D", str(data), "-o", f"-h 127.0.0.1 -p {port} -k {data}", "-w",
                    "start", "-l", str(data / "log")], check=True, capture_output=True)
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def test_campaign_on_postgres(tmp_path: Path, postgres_url: str) -> None:
    directory = write_campaign(tmp_path / "study")
    tokens = [annotator.token for annotator in invite(directory, 8)]
    server = build_server(open_campaign(directory, store=postgres_url), port=0)
    stop = start_background(server)
    base = f"http://127.0.0.1:{server.server_port}"

    def work(token: str) -> None:
        with httpx.Client(timeout=60) as client:
            for _ in range(3):
                answer_form(client, f"{base}/a/{token}", "1")

    try:
        with ThreadPoolExecutor(len(tokens)) as pool:
            list(pool.map(work, tokens))
        page = get(f"{base}/a/{tokens[0]}").text  # a form left open across the restart
    finally:
        stop()
    restarted = open_campaign(directory, store=postgres_url)  # a new process: state comes from the server
    assert len(restarted.verdicts()) == 3 * 8
    server = build_server(restarted, port=0)
    stop = start_background(server)
    try:
        url = f"http://127.0.0.1:{server.server_port}/a/{tokens[0]}"
        data = {"csrf": hidden_field(page, "csrf"), "task": hidden_field(page, "task"), "answer": "0"}
        for _ in range(2):  # the same form twice: stored once
            post(url, data=data)
        assert "4 of 6 answered" in get(url).text
    finally:
        stop()
    verdicts = open_campaign(directory, store=postgres_url).verdicts()
    assert len(verdicts) == 3 * 8 + 1
    assert len({(v.rater, v.item_id, v.criterion) for v in verdicts}) == 3 * 8 + 1
    assert open_campaign(directory, store=postgres_url).status().batches[0].started == 8


def test_an_event_committed_late_is_still_seen(tmp_path: Path, postgres_url: str) -> None:
    """Found by the load benchmark: on PostgreSQL, ids are handed out at insert, not at commit, so
    reading only events "newer than the last id seen" missed one that committed late (a
    participant was shown the instructions again and again)."""
    import json
    import time

    import sqlalchemy as sa

    from convoscope.campaigns._events import events_table

    directory = write_campaign(tmp_path / "study")
    first, second = invite(directory, 2)
    campaign = open_campaign(directory, store=postgres_url)
    with campaign.store.engine.connect() as slow:
        transaction = slow.begin()  # the first insert takes an id, then waits to commit
        slow.execute(sa.insert(events_table).values(
            run_id=campaign.run_id, kind="instructions", annotator=first.id, key="instructions",
            data=json.dumps({}), created_at=time.time()))
        campaign.mark(second.id, "instructions")  # a later id, committed at once
        assert campaign.has(second.id, "instructions") and not campaign.has(first.id, "instructions")
        transaction.commit()
    time.sleep(0.3)  # events are read again at most every quarter of a second
    assert campaign.has(first.id, "instructions")
