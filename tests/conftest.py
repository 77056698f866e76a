"""Shared fixtures: real servers on 127.0.0.1 for the HTTP backend tests; a home of the suite's own."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest
from patience import PATIENT_S

# Where a library keeps state between runs (Ray's ~/.ray/auth_token, Hugging Face's and matplotlib's
# caches, the gemma weights joined in ~/.cache/convoscope). The suite points them all at a folder of
# its own, made before any test module is imported, so nothing left on the machine by an earlier run
# (of the suite or of the user's own work) changes a result, and the suite leaves nothing behind.
ISOLATED_ENV = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
                "MPLCONFIGDIR", "HF_HOME", "RAY_TMPDIR")
_home_of_the_suite: dict[str, str | None] = {}


def pytest_configure(config: pytest.Config) -> None:
    home = tempfile.mkdtemp(prefix="cs-home-")
    _home_of_the_suite.update({"folder": home, "user_home": os.environ.get("HOME")})
    for name in ISOLATED_ENV:
        _home_of_the_suite[f"env:{name}"] = os.environ.get(name)
    os.environ["HOME"] = home
    for name, sub in (("XDG_CACHE_HOME", ".cache"), ("XDG_CONFIG_HOME", ".config"),
                      ("XDG_DATA_HOME", ".local/share"), ("XDG_STATE_HOME", ".local/state"),
                      ("MPLCONFIGDIR", ".config/matplotlib"), ("HF_HOME", ".cache/huggingface")):
        os.environ[name] = os.path.join(home, sub)
    os.environ["RAY_TMPDIR"] = home  # Ray's session folders (short: its socket paths must fit)
    # One OpenMP thread for llama.cpp in every process the suite starts (set before any of them loads
    # it; children inherit it). llama-cpp-python evaluates prompts on as many threads as there are
    # cores, and its OpenMP threads spin at every barrier: with the suite's two workers on two cores,
    # two 900-token prompts of the embedded model took 35-38 s CPU with two threads and 16.8 s with
    # one, in the same wall time (/tmp script, machine at load 7-10). The product's own default is
    # unchanged: on idle cores the second thread halves a prompt's wall time.
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")


# The longest modules first: with `-n 2 --dist loadfile` a worker takes the next module as it frees up,
# so a long module collected last (the docs blocks sort late: tests/test_documented_*.py) would keep one
# worker busy for minutes after the other has finished. Only the order changes, never what runs.
LONGEST_FIRST = ("test_documented_readme.py", "test_documented_pages.py", "test_documented_blocks.py")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: every module keeps its own order


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = _home_of_the_suite.get("folder")
    for name in ISOLATED_ENV:
        before = _home_of_the_suite.get(f"env:{name}")
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def user_home() -> str | None:
    """The HOME the suite was started with (tests check that nothing reads or writes it)."""
    return _home_of_the_suite.get("user_home")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve_llama(*, logprobs: bool):
    """Start llama-cpp-python's OpenAI-compatible server on the embedded SmolLM2 weights; yield
    (base URL, alias) and stop it afterwards."""
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server]")
    import httpx

    from convoscope.models import embedded_model_path

    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(embedded_model_path("smollm2")),
               "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port),
               "--n_ctx", "2048", "--n_threads", "1", "--logits_all", str(logprobs)]
    # One thread: llama.cpp's threads spin at every barrier, and the suite runs two workers on two cores.
    # Fresh-clone runs: the whole suite took 20 min 29 s with one thread, over 23 min with two (each
    # endpoint block is slower alone, the whole is faster).
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


@pytest.fixture(scope="session")
def llama_server():
    """llama-cpp-python's OpenAI-compatible server on the embedded SmolLM2 weights, with
    /completions logprobs (llama-cpp-python's logits_all). Yields the base URL
    (``http://127.0.0.1:PORT/v1``) and the model alias."""
    yield from _serve_llama(logprobs=True)


@pytest.fixture(scope="session")
def llama_server_chat():
    """The same server without logprobs (logits_all off), as some real endpoints are: it answers a
    request that asks for logprobs with HTTP 500, which convoscope's capability probe notes and
    works around. Prompts are evaluated 2.3 times faster (9 dialogue-issues calls, one thread: 62
    against 26 s), so the long chat-mode tests and the documented blocks use it."""
    yield from _serve_llama(logprobs=False)


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
