"""The OpenAI-compatible mock as nginx: fixed replies for a fraction of the Python mock's CPU (issue 39).

``benchmarks/mock_openai.py`` is plain asyncio, yet on a 2-core machine it takes a good part of a
core at a few hundred requests a second: a benchmark of a client that wants both cores (``judge
--workers 2``) then measures the mock as much as the client. This starts nginx (Debian
``nginx-light``; ``libnginx-mod-http-echo`` too for a latency) on 127.0.0.1 from a configuration
and prefix in a temporary folder of its own, one worker process, no access log, keep-alive
without a request limit, answering every POST to ``.../chat/completions`` and
``.../completions`` with the same bodies as the Python mock (:data:`mock_openai._CHAT`,
:data:`mock_openai._COMPLETION`), anything else with 404.

    from nginx_mock import start_nginx        # with benchmarks/ on sys.path
    mock, base_url = start_nginx(0.05)        # the same shape as judge_overhead.start_mock
    ...                                       # mock.cpu(): CPU seconds nginx has used so far
    mock.kill()

or alone: ``python benchmarks/nginx_mock.py --port 8099 [--delay 0.05]`` (Ctrl-C stops), or
``python benchmarks/nginx_mock.py --compare 20000``: CPU per request of nginx and of the Python
mock under the same load (the plain httpcore loop of ``cli_overhead.py``, in its own process).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from judge_overhead import free_port  # noqa: E402
from mock_openai import _CHAT, _COMPLETION  # noqa: E402

NGINX = "/usr/sbin/nginx"
ECHO_MODULE = "/usr/lib/nginx/modules/ngx_http_echo_module.so"


def _quoted(body: bytes) -> str:
    """A reply body as an nginx single-quoted string: nginx reads ``\\\\`` as one backslash and
    ``\\'`` as a quote inside quotes, and ``$`` would start a variable (the bodies have none)."""
    text = body.decode()
    if "$" in text:
        raise ValueError("nginx would read '$' in a reply as a variable")
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _reply(body: bytes, delay: float) -> str:
    if not delay:
        return f"return 200 {_quoted(body)};"
    # echo_sleep holds the request without a thread or a timer per connection of its own
    return f"echo_sleep {delay:g}; echo -n {_quoted(body)};"


def config(folder: Path, port: int, delay: float) -> str:
    load = f"load_module {ECHO_MODULE};\n" if delay else ""
    temp = "\n".join(f"    {name}_temp_path {folder / name};"
                     for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return f"""{load}worker_processes 1;
daemon off;
master_process on;
pid {folder / 'nginx.pid'};
error_log {folder / 'error.log'} warn;
events {{ worker_connections 4096; multi_accept on; }}
http {{
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 600s;
    client_body_buffer_size 1m;
    client_max_body_size 100m;
{temp}
    default_type application/json;
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location ~ /chat/completions$ {{ {_reply(_CHAT, delay)} }}
        location ~ /completions$ {{ {_reply(_COMPLETION, delay)} }}
        location / {{ return 404 '{{"detail": "Not Found"}}'; }}
    }}
}}
"""


class NginxMock:
    """A running nginx mock; :meth:`kill` stops it (by its own process id) and removes its folder."""

    def __init__(self, delay: float = 0.0, port: int = 0) -> None:
        if not Path(NGINX).exists():
            raise RuntimeError("nginx is not installed: apt-get install -y nginx-light")
        if delay and not Path(ECHO_MODULE).exists():
            raise RuntimeError("a latency needs nginx's echo module: "
                               "apt-get install -y libnginx-mod-http-echo")
        self.folder = Path(tempfile.mkdtemp(prefix="nginx-mock-"))
        self.port = port or free_port()
        (self.folder / "nginx.conf").write_text(config(self.folder, self.port, delay))
        argv = [NGINX, "-p", str(self.folder), "-c", str(self.folder / "nginx.conf")]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._wait_until_up()

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode() if self.process.stderr else ""
                self.kill()
                raise RuntimeError(f"nginx did not start: {error.strip()}")
            try:
                reply = httpx.post(f"{self.base_url}/chat/completions", json={}, timeout=5)
                if json.loads(reply.content) != json.loads(_CHAT):
                    self.kill()
                    raise RuntimeError(f"nginx answers something else than the mock's reply: {reply.text!r}")
                return
            except httpx.HTTPError:
                time.sleep(0.05)
        self.kill()
        raise RuntimeError("nginx did not start in 20 s")

    def pids(self) -> list[int]:
        """nginx's master and its worker (the worker is the master's child)."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        found = [self.process.pid]
        if children.exists():
            found += [int(pid) for pid in children.read_text().split()]
        return found

    def cpu(self) -> float:
        """User + system CPU seconds the master and worker have used so far."""
        return sum(_proc_cpu(pid) for pid in self.pids())

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # the master stops its worker
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def _proc_cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_nginx(delay: float = 0.0) -> tuple[NginxMock, str]:
    """Like ``judge_overhead.start_mock``: (the mock, its base URL)."""
    mock = NginxMock(delay)
    return mock, mock.base_url


def start(kind: str, delay: float) -> tuple[object, str, object]:
    """(mock, base URL, a function giving the mock's CPU seconds so far) for ``--mock python|nginx``."""
    if kind == "nginx":
        mock = NginxMock(delay)
        return mock, mock.base_url, mock.cpu
    from judge_overhead import start_mock

    process, base_url = start_mock(delay)
    return process, base_url, lambda: _proc_cpu(process.pid)


def compare(requests: int, concurrency: int) -> None:
    """CPU per request of each mock under the same load, in this order: python, nginx, python, nginx."""
    from cli_overhead import PLAIN_CORE

    body = {"model": "mock", "messages": [{"role": "user", "content": "x" * 4000}], "max_tokens": 64}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "bodies.jsonl").write_text((json.dumps(body) + "\n") * requests)
        (folder / "loop.py").write_text(PLAIN_CORE)
        for kind in ("python", "nginx", "python", "nginx"):
            mock, base_url, cpu = start(kind, 0.0)
            try:
                before, started = cpu(), time.perf_counter()  # type: ignore[operator]
                subprocess.run([sys.executable, str(folder / "loop.py"), base_url,
                                str(folder / "bodies.jsonl"), str(concurrency), "8"], check=True)
                used, wall = cpu() - before, time.perf_counter() - started  # type: ignore[operator]
            finally:
                mock.kill()  # type: ignore[attr-defined]
            print(f"{kind:6} {requests} requests at c {concurrency}: wall {wall:.2f} s, "
                  f"mock CPU {used:.2f} s "
                  f"= {1e6 * used / requests:.0f} µs per request   load {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8099)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--compare", type=int, metavar="N", help="CPU per request of both mocks, N requests")
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    if args.compare:
        compare(args.compare, args.concurrency)
        return
    mock = NginxMock(args.delay, args.port)
    print(f"nginx mock at {mock.base_url} (Ctrl-C stops)")
    try:
        mock.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        mock.kill()


if __name__ == "__main__":
    main()
