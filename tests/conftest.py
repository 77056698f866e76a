"""Shared fixtures: real servers on 127.0.0.1 for the HTTP backend tests."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time

import pytest
from patience import PATIENT_S


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server():
    """llama-cpp-python's OpenAI-compatible server on the embedded SmolLM2 weights.

    Yields the base URL (``http://127.0.0.1:PORT/v1``) and the model alias.
    """
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server]")
    import httpx

    from convoscope.models import embedded_model_path

    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(embedded_model_path("smollm2")),
               "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port),
               "--n_ctx", "2048", "--n_threads", "2"]  # logits_all stays on: /completions logprobs need it
    # The server logs a lot; a file (not a pipe nobody reads) keeps it from blocking.
    log = tempfile.TemporaryFile()
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + PATIENT_S
    try:
        while True:
            if server.poll() is not None:
                log.seek(0)
                pytest.fail(f"llama.cpp server exited: {log.read().decode(errors='replace')[-2000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama.cpp server did not start within {PATIENT_S:g} s")
            time.sleep(0.3)
        yield f"http://127.0.0.1:{port}/v1", "smollm2"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture
def fault_proxy(llama_server):
    """A fault-injecting proxy (tests/faultproxy.py) in front of the real llama.cpp server:
    script faults with ``fault_proxy.script(Fault...)``; point models at ``fault_proxy.base_url``."""
    from faultproxy import FaultProxy

    with FaultProxy(upstream=llama_server[0]) as proxy:
        yield proxy


@pytest.fixture
def canned_proxy():
    """The fault proxy without an upstream: a valid canned completion for every request (real HTTP
    on 127.0.0.1), for tests of how work is divided rather than of what a model says."""
    from faultproxy import FaultProxy

    with FaultProxy() as proxy:
        yield proxy
