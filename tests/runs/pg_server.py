"""A throwaway PostgreSQL server on 127.0.0.1 for tests (as tests/store/test_postgres.py starts it);
None when the server binaries are not installed (scripts/test.sh installs them)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _find(binary: str) -> str | None:
    found = shutil.which(binary)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{binary}"))
    return str(candidates[-1]) if candidates else None


@contextlib.contextmanager
def postgres_server() -> Iterator[str | None]:
    initdb, pg_ctl = _find("initdb"), _find("pg_ctl")
    if not initdb or not pg_ctl:
        yield None
        return
    home = Path(tempfile.mkdtemp(prefix="convoscope-pg-"))  # not under pytest's tmp: see test_postgres
    data = home / "data"
    as_user: list[str] = []
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
