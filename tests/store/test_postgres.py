"""The same store code on a real PostgreSQL server, started for this test on 127.0.0.1."""

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from convoscope.judges import Verdict
from convoscope.store import Store

pytest.importorskip("psycopg")


def find(binary):
    found = shutil.which(binary)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{binary}"))
    return str(candidates[-1]) if candidates else None


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def postgres_url():
    initdb, pg_ctl = find("initdb"), find("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL server binaries not installed (scripts/test.sh installs them)")
    # Not under pytest's tmp dir: as root, initdb runs as 'postgres', who cannot enter it.
    home = Path(tempfile.mkdtemp(prefix="convoscope-pg-"))
    data = home / "data"
    as_user = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        shutil.chown(home, user="postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    subprocess.run([*as_user, initdb, "-D", str(data), "-U", "postgres", "-A", "trust"],
                   check=True, capture_output=True)
    port = free_port()
    options = f"-h 127.0.0.1 -p {port} -k {data}"
    subprocess.run([*as_user, pg_ctl, "-D", str(data), "-o", options, "-w", "start",
                    "-l", str(data / "log")], check=True, capture_output=True)
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, pg_ctl, "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def test_store_on_postgres(postgres_url):
    store = Store(postgres_url)
    assert store.start_run("r", {"x": 1}) and not store.start_run("r", {})
    store.add("r", "k1", Verdict(item_id="1", criterion="c", rater="model:m", value=2))
    store.add_many("r", [("k1", Verdict(item_id="1", criterion="c", rater="model:m", value=0)),
                         ("k2", Verdict(item_id="2", criterion="c", rater="human:a", value=None,
                                        unscored_reason="idk"))])
    assert store.done_keys("r") == {"k1", "k2"}
    assert [(v.item_id, v.value) for v in store.verdicts("r")] == [("1", 2), ("2", None)]
    store.close()
    reopened = Store(postgres_url)  # migrations run once
    assert len(reopened.verdicts()) == 2
    reopened.close()
