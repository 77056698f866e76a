"""A fault-injecting HTTP proxy on 127.0.0.1, for tests of anything that calls a model endpoint.

Real sockets, real HTTP/1.1 (keep-alive), run in a background thread with its own event loop.
Requests whose path ends with one of ``paths`` (default: ``/completions``, which covers
``/v1/chat/completions`` too) take the next scripted fault; every other request, and every
request once the script is used up, goes to ``upstream`` (e.g. the real llama.cpp server of the
``llama_server`` fixture) or, without one, gets a canned OpenAI-style answer.

API::

    from faultproxy import Fault, FaultProxy

    with FaultProxy(upstream="http://127.0.0.1:8080") as proxy:   # or use the fixture below
        proxy.script(Fault.status(500), Fault.throttle(retry_after="1"), Fault.passthrough())
        proxy.always(Fault.drop())        # after the script: every matching request (None: stop)
        model = OpenAIModel("smollm2", base_url=proxy.base_url)          # .../v1
        ...
        proxy.hold_after(4)   # answer 4 matching requests, hold the later ones until release()
        proxy.requests      # [Recorded(method, path, body, headers, fault)] of matching requests
        proxy.forwarded     # how many matching requests reached upstream (or the canned answer)

Faults: ``Fault.status(code, body=..., headers=...)`` (any status, e.g. 500, 503, 520-524, with
``{"x-should-retry": "false"}``), ``Fault.throttle(retry_after=..., retry_after_ms=...,
http_date_in=...)`` (429 with ``Retry-After`` seconds / HTTP date / ``retry-after-ms``),
``Fault.body(text, status=200, content_type=...)`` (bad bodies: invalid JSON, empty, HTML, ...),
``Fault.hang(seconds)`` (reads the request, never answers), ``Fault.drop()`` (closes the
connection without an answer), ``Fault.passthrough()``, ``Fault.slow(seconds)`` (passes, late;
``proxy.peak_in_flight`` counts the most requests held at once). ``BAD_BODIES`` holds the usual bad 200s.

Fixture: ``fault_proxy`` in ``tests/conftest.py`` is a FaultProxy in front of the real llama.cpp
server (marks nothing: the test using it should be ``@pytest.mark.slow``).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
            500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
            504: "Gateway Timeout", 520: "Unknown Error", 521: "Web Server Is Down",
            522: "Connection Timed Out", 523: "Origin Is Unreachable", 524: "A Timeout Occurred"}


@dataclass(frozen=True)
class Fault:
    kind: str  # "reply" | "hang" | "drop" | "pass"
    code: int = 200
    text: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    seconds: float = 0.0

    @staticmethod
    def status(code: int, body: str = '{"error": {"message": "injected"}}',
               headers: dict[str, str] | None = None) -> Fault:
        return Fault("reply", code, body, tuple((headers or {}).items()))

    @staticmethod
    def throttle(*, retry_after: str | None = None, retry_after_ms: str | None = None,
                 http_date_in: float | None = None) -> Fault:
        headers: dict[str, str] = {}
        if retry_after is not None:
            headers["retry-after"] = retry_after
        if retry_after_ms is not None:
            headers["retry-after-ms"] = retry_after_ms
        if http_date_in is not None:
            headers["retry-after"] = email.utils.formatdate(time.time() + http_date_in, usegmt=True)
        return Fault.status(429, '{"error": {"message": "rate limited"}}', headers)

    @staticmethod
    def body(text: str, status: int = 200, content_type: str = "application/json") -> Fault:
        return Fault("reply", status, text, (("content-type", content_type),))

    @staticmethod
    def hang(seconds: float = 30.0) -> Fault:
        return Fault("hang", seconds=seconds)

    @staticmethod
    def drop() -> Fault:
        return Fault("drop")

    @staticmethod
    def passthrough() -> Fault:
        return Fault("pass")

    @staticmethod
    def slow(seconds: float) -> Fault:
        """Answer normally, ``seconds`` late (for concurrency tests: see ``peak_in_flight``)."""
        return Fault("pass", seconds=seconds)


BAD_BODIES = {
    "invalid JSON": Fault.body('{"choices": [{"message": {"content": "unterminated'),
    "empty": Fault.body(""),
    "HTML": Fault.body("<html><body><h1>502 Bad Gateway</h1></body></html>", content_type="text/html"),
    "content object": Fault.body(json.dumps({"choices": [{"message": {"role": "assistant",
                                                                      "content": {"score": 3}}}]})),
    "choices of strings": Fault.body(json.dumps({"choices": ["x"]})),
}


@dataclass
class Recorded:
    method: str
    path: str
    body: Any
    headers: dict[str, str]
    fault: str
    raw: bytes = b""  # the body's bytes as they arrived


@dataclass
class _State:
    script: list[Fault] = field(default_factory=list)
    always: Fault | None = None


class FaultProxy:
    """See the module docstring."""

    def __init__(self, upstream: str | None = None, *, paths: tuple[str, ...] = ("/completions",)) -> None:
        self.upstream = upstream.rstrip("/").removesuffix("/v1") if upstream else None
        self.paths = paths
        self.requests: list[Recorded] = []
        self.forwarded = 0
        self.in_flight = 0
        self.peak_in_flight = 0  # most matching requests the proxy held at once
        self._state = _State()
        self._hold_after: int | None = None
        self._answering = 0
        self._released: asyncio.Event | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the fault proxy did not start")
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ------------------------------------------------------------------------------

    def script(self, *faults: Fault) -> FaultProxy:
        with self._lock:
            self._state.script.extend(faults)
        return self

    def always(self, fault: Fault | None) -> FaultProxy:
        with self._lock:
            self._state.always = fault
        return self

    def hold_after(self, count: int) -> FaultProxy:
        """Answer ``count`` more matching requests, then hold every later one (counted in
        ``in_flight``) until :meth:`release`: a run is then certainly under way, whatever the
        machine's speed (e.g. to kill a worker in the middle of a call)."""
        async def arm() -> None:
            self._hold_after, self._answering = count, 0
            self._released = asyncio.Event()

        asyncio.run_coroutine_threadsafe(arm(), self._loop).result(10)
        return self

    def release(self) -> None:
        """Answer the held requests and every later one."""
        async def open_gate() -> None:
            if self._released is not None:
                self._released.set()

        asyncio.run_coroutine_threadsafe(open_gate(), self._loop).result(10)

    def _next_fault(self) -> Fault:
        with self._lock:
            if self._state.script:
                return self._state.script.pop(0)
            return self._state.always or Fault.passthrough()

    # -- serving --------------------------------------------------------------------------------

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._client = httpx.AsyncClient(timeout=300)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
            task.add_done_callback(self._connections.discard)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                if not await self._answer(request, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _answer(self, request: tuple[str, str, dict[str, str], bytes],
                      writer: asyncio.StreamWriter) -> bool:
        method, path, headers, raw = request
        faultable = path.split("?")[0].endswith(self.paths)
        fault = self._next_fault() if faultable else Fault.passthrough()
        if faultable:
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode(errors="replace")
            self.requests.append(Recorded(method, path, body, headers, fault.kind, raw))
        if faultable:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if faultable and self._released is not None and self._hold_after is not None:
                self._answering += 1
                if self._answering > self._hold_after:
                    await self._released.wait()
            return await self._act(fault, faultable, (method, path, headers, raw), writer)
        finally:
            if faultable:
                self.in_flight -= 1

    async def _act(self, fault: Fault, faultable: bool, request: tuple[str, str, dict[str, str], bytes],
                   writer: asyncio.StreamWriter) -> bool:
        method, path, headers, raw = request
        if fault.kind == "drop":
            return False
        if fault.kind == "hang":
            await asyncio.sleep(fault.seconds)
            return False
        if fault.kind == "reply":
            _write(writer, fault.code, fault.text.encode(), dict(fault.headers))
        else:
            await asyncio.sleep(fault.seconds)
            if faultable:
                self.forwarded += 1
            status, content, reply_headers = await self._forward(method, path, headers, raw)
            _write(writer, status, content, reply_headers)
        await writer.drain()
        return True

    async def _forward(self, method: str, path: str, headers: dict[str, str],
                       raw: bytes) -> tuple[int, bytes, dict[str, str]]:
        if self.upstream is None:
            return 200, json.dumps(canned_answer(path)).encode(), {"content-type": "application/json"}
        keep = {key: value for key, value in headers.items() if key in ("content-type", "authorization")}
        response = await self._client.request(method, self.upstream + path, content=raw, headers=keep)
        return response.status_code, response.content, {
            "content-type": response.headers.get("content-type", "application/json")}

    def close(self) -> None:
        async def stop() -> None:
            self._server.close()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)
            await self._client.aclose()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def canned_answer(path: str) -> dict[str, Any]:
    """What the proxy answers without an upstream: a valid completion of the right kind."""
    usage = {"prompt_tokens": 10, "completion_tokens": 1}
    if path.endswith("/chat/completions"):
        return {"model": "canned", "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": '{"score": 1}'}}], "usage": usage}
    return {"model": "canned", "choices": [{"index": 0, "text": " 1", "finish_reason": "length",
                                            "logprobs": {"top_logprobs": [{" 1": -0.1, " 2": -2.4}]}}],
            "usage": usage}


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes] | None:
    line = await reader.readline()
    if not line.strip():
        return None
    method, path, _ = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    raw = await reader.readexactly(int(headers.get("content-length", 0) or 0))
    return method, path, headers, raw


def _write(writer: asyncio.StreamWriter, status: int, content: bytes, headers: dict[str, str]) -> None:
    head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            f"content-length: {len(content)}", "connection: keep-alive"]
    headers.setdefault("content-type", "application/json")
    head += [f"{key}: {value}" for key, value in headers.items()]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + content)
