"""An instant OpenAI-compatible mock server on 127.0.0.1, for throughput benchmarks.

Answers ``POST /v1/chat/completions`` with a valid judgement (``{"score": 3, ...}``) and
``POST /v1/completions`` with next-token log-probabilities, after an optional fixed ``delay``
(seconds, to stand for a server's latency). Plain asyncio streams, HTTP/1.1 keep-alive: as
little work per request as Python allows, so the client is what gets measured.

Importable (other benchmarks start it in a thread)::

    from mock_openai import MockServer          # with benchmarks/ on sys.path
    with MockServer(delay=0.05) as mock:        # mock.base_url == "http://127.0.0.1:PORT/v1"
        ...                                      # mock.requests counts answered requests

or run alone: ``python benchmarks/mock_openai.py --port 8099 --delay 0.05``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
from collections.abc import Callable

_CHAT = json.dumps({
    "id": "mock", "object": "chat.completion", "model": "mock-1", "system_fingerprint": "fp_mock",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": '{"score": 3, "reason": "mock"}'}}],
    "usage": {"prompt_tokens": 120, "completion_tokens": 12}}).encode()
_COMPLETION = json.dumps({
    "id": "mock", "object": "text_completion", "model": "mock-1",
    "choices": [{"index": 0, "text": " 3", "finish_reason": "length", "logprobs": {
        "top_logprobs": [{" 1": -3.0, " 2": -1.6, " 3": -0.4, " 4": -2.2, " 5": -4.0}]}}],
    "usage": {"prompt_tokens": 120, "completion_tokens": 1}}).encode()


def _response(body: bytes, status: str = "200 OK") -> bytes:
    return (f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: keep-alive\r\n\r\n").encode() + body


class MockServer:
    """The mock in a background thread (its own event loop)."""

    def __init__(self, *, delay: float = 0.0, port: int = 0) -> None:
        self.delay = delay
        self.requests = 0
        # Called with each request's body before it is answered (from the server's thread): a
        # benchmark reads the client's CPU at its first request there.
        self.on_request: Callable[[bytes], None] | None = None
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._port = port
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        serving = asyncio.start_server(self._serve, "127.0.0.1", self._port)
        self._server = self._loop.run_until_complete(serving)
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                length = 0
                while (header := await reader.readline()) not in (b"\r\n", b""):
                    if header[:15].lower() == b"content-length:":
                        length = int(header[15:])
                body = await reader.readexactly(length)
                if self.on_request is not None:
                    self.on_request(body)
                if self.delay:
                    await asyncio.sleep(self.delay)
                path = line.split(b" ", 2)[1]
                if path.endswith(b"/chat/completions"):
                    writer.write(_response(_CHAT))
                elif path.endswith(b"/completions"):
                    writer.write(_response(_COMPLETION))
                else:
                    writer.write(_response(b'{"detail": "Not Found"}', "404 Not Found"))
                self.requests += 1
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._server.close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def __enter__(self) -> MockServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8099)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    args = parser.parse_args()
    with MockServer(delay=args.delay, port=args.port) as mock:
        print(f"mock OpenAI-compatible server at {mock.base_url} (Ctrl-C stops)")
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
