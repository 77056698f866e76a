"""Issue 35, observation 8: credentials never reach the store, the response cache, ``--out``,
logs or OpenTelemetry spans — checked with no model server at all (a closed port on
127.0.0.1), so the guard runs everywhere, not only where the llama.cpp fixture does.

The secrets: an API key given through ``--api-key-env``, the user and password in the
endpoint's URL, and a key in its query string. Before this test, making ``redact_url`` return
its input unchanged left every test in tests/models passing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from patience import PATIENT_S

pytest.importorskip("opentelemetry.sdk.trace")

ROOT = Path(__file__).parents[2]
KEY = "sk-canary-KEY-7f3a9d"
PASSWORD = "canary-PASS-41c2"
QUERY_KEY = "canary-QUERY-88e0"
SECRETS = (KEY, PASSWORD, QUERY_KEY, "alice")  # the user name is dropped too


def _closed_port() -> int:
    """A port on 127.0.0.1 that was bound and closed again: nothing listens there."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run(tmp_path: Path, spec: str, *extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    work = tmp_path / "work"
    work.mkdir()
    items = work / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{n}", "response": "Thank you, it came today."}) + "\n"
                             for n in range(3)), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "CANARY_KEY": KEY, "PYTHONWARNINGS": "default"}
    command = [sys.executable, str(Path(__file__).with_name("credential_run.py")), str(work / "spans.json"),
               str(work / "log.txt"), "--", "judge", str(items), "--criterion", "survey:effort",
               "--judge", spec, "--api-key-env", "CANARY_KEY", "--store", str(work / "run.db"),
               "--cache", str(work / "cache.db"), "--out", str(work / "verdicts.jsonl"), "--otel",
               "--timeout", "2", "--deadline", "4", "--max-retries", "0", *extra]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=work, timeout=PATIENT_S)
    return done, work


def _leaks(done: subprocess.CompletedProcess[str], work: Path) -> list[str]:
    """Every place a secret was found: each file the run left (store, its WAL, cache, --out,
    spans, log) read as bytes, and what it printed."""
    found = [f"{path.name} holds {secret!r}" for path in sorted(work.rglob("*")) if path.is_file()
             for secret in SECRETS if secret.encode() in path.read_bytes()]
    printed = (("stdout", done.stdout), ("stderr", done.stderr))
    found += [f"{stream} holds {secret!r}" for stream, text in printed
              for secret in SECRETS if secret in text]
    return found


@pytest.mark.parametrize("route", ["openai", "litellm"])
def test_no_credential_reaches_the_store_cache_out_logs_or_spans(route, tmp_path):
    if route == "litellm" and importlib.util.find_spec("litellm") is None:
        # Not importorskip: importing litellm before convoscope sets its offline switch makes
        # it fetch its price table from the network.
        pytest.skip("litellm is not installed")
    port = _closed_port()
    base = f"http://alice:{PASSWORD}@127.0.0.1:{port}/v1?api_key={QUERY_KEY}"
    spec = f"openai:smollm2@{base}" if route == "openai" else f"litellm:openai/smollm2@{base}"
    done, work = _run(tmp_path, spec)
    assert done.returncode != 0 or (work / "verdicts.jsonl").exists(), done.stderr
    assert (work / "run.db").exists() and (work / "spans.json").exists(), done.stderr[-2000:]
    spans = json.loads((work / "spans.json").read_text(encoding="utf-8"))
    names = json.dumps(spans)
    assert spans and "smollm2" in names  # spans were recorded, naming the model
    assert _leaks(done, work) == []
