"""The default sender's connections on plain asyncio (``models/_net.py``), against real servers
on 127.0.0.1 started by each test with ``asyncio.start_server``: what httpcore's default (anyio)
streams did, they still do — timeouts, refused and dropped connections, a keep-alive connection
the server closed while idle, bodies larger than the buffers on either side — without an anyio
cancel scope per read and write (issue 39: client CPU per verdict)."""

from __future__ import annotations

import asyncio
import json

import anyio
import pytest

from convoscope.models._http import POOL_SHARDS, CoreSender, SendFailed, SendTimeout

ANSWER = json.dumps({"choices": [{"message": {"content": "{\"score\": 2}"}}]}).encode()


async def _read_request(reader: asyncio.StreamReader) -> bytes | None:
    """One request's body, or None when the client closed the connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    return await reader.readexactly(length)


def _response(body: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n\r\n" + body)


class Server:
    """An HTTP/1.1 server whose connection handler the test writes; counts its connections."""

    def __init__(self, handle) -> None:
        self.handle, self.connections = handle, 0

    async def __aenter__(self) -> Server:
        async def accept(reader, writer):
            self.connections += 1
            try:
                await self.handle(reader, writer)
            finally:
                writer.close()

        self._server = await asyncio.start_server(accept, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/v1"
        return self

    async def __aexit__(self, *_exc) -> None:
        self._server.close()


async def answer_each(reader, writer, body: bytes = ANSWER) -> None:
    while await _read_request(reader) is not None:
        writer.write(_response(body))
        await writer.drain()


def sender(url: str, timeout: float = 10.0) -> CoreSender:
    import ssl

    return CoreSender(url, {}, timeout=timeout, tls=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))


async def test_calls_through_the_default_sender_open_no_anyio_timeout_scope(monkeypatch):
    opened = []
    fail_after = anyio.fail_after

    def counted(*args, **kwargs):
        opened.append(args)
        return fail_after(*args, **kwargs)

    monkeypatch.setattr(anyio, "fail_after", counted)
    async with Server(answer_each) as server:
        client = sender(server.url)
        replies = [await client.post("/chat/completions", {"n": n}) for n in range(20)]
        await client.aclose()
    assert [reply.status for reply in replies] == [200] * 20
    assert json.loads(replies[-1].content) == json.loads(ANSWER)
    assert opened == []  # httpcore's default streams opened one per read and per write


async def test_a_request_leaves_in_one_write_to_the_socket(monkeypatch):
    from asyncio.selector_events import _SelectorSocketTransport

    writes = []
    write = _SelectorSocketTransport.write

    def counted(self, data):
        writes.append(len(data))
        return write(self, data)

    monkeypatch.setattr(_SelectorSocketTransport, "write", counted)
    async with Server(answer_each) as server:
        client = sender(server.url)
        for n in range(10):
            await client.post("/chat/completions", {"text": "w" * 3000, "n": n})
        await client.aclose()
    client_writes = [size for size in writes if size > len(_response(ANSWER))]
    assert len(client_writes) == 10  # httpcore writes a request's head and its body apart


async def test_no_answer_within_the_timeout_is_a_send_timeout():
    async def silent(reader, writer):
        await _read_request(reader)
        await asyncio.sleep(30)

    async with Server(silent) as server:
        client = sender(server.url, timeout=0.3)
        with pytest.raises(SendTimeout):
            await asyncio.wait_for(client.post("/chat/completions", {"n": 1}), 10)
        await client.aclose()


async def test_a_refused_connection_is_a_failure_with_no_connection():
    async with Server(answer_each) as server:
        url = server.url
    client = sender(url)  # the server is gone: its port refuses
    with pytest.raises(SendFailed) as failed:
        await client.post("/chat/completions", {"n": 1})
    await client.aclose()
    assert failed.value.no_connection


async def test_a_connection_dropped_mid_answer_is_a_failure():
    async def drop(reader, writer):
        await _read_request(reader)
        writer.write(_response(ANSWER)[:40])
        await writer.drain()
        writer.transport.abort()

    async with Server(drop) as server:
        client = sender(server.url)
        with pytest.raises(SendFailed) as failed:
            await client.post("/chat/completions", {"n": 1})
        await client.aclose()
    assert not failed.value.no_connection


async def test_a_keep_alive_connection_the_server_closed_while_idle_is_not_reused():
    async def answer_once(reader, writer):  # says nothing of closing, then closes
        if await _read_request(reader) is not None:
            writer.write(_response(ANSWER))
            await writer.drain()

    calls = 2 * POOL_SHARDS + 1  # requests are dealt over the pools: each pool's connection comes again
    async with Server(answer_once) as server:
        client = sender(server.url)
        for n in range(calls):
            reply = await client.post("/chat/completions", {"n": n})
            assert reply.status == 200
            await asyncio.sleep(0.02)  # the close reaches the client's idle connection
        await client.aclose()
    assert server.connections == calls


async def test_bodies_larger_than_the_buffers_go_and_come_whole():
    big_answer = json.dumps({"choices": [{"message": {"content": "x" * (5 << 20)}}]}).encode()
    seen = []

    async def slow_reader(reader, writer):
        while (body := await _read_request(reader)) is not None:
            seen.append(len(body))
            await asyncio.sleep(0.05)
            writer.write(_response(big_answer))
            await writer.drain()

    async with Server(slow_reader) as server:
        client = sender(server.url)
        body = {"text": "y" * (8 << 20)}
        replies = [await client.post("/chat/completions", body) for _ in range(2)]
        await client.aclose()
    assert seen == [len(json.dumps(body, separators=(",", ":")))] * 2
    assert all(reply.content == big_answer for reply in replies)


async def test_a_write_that_cannot_drain_within_the_timeout_is_a_send_timeout():
    async def never_reads(reader, writer):
        await asyncio.sleep(30)

    async with Server(never_reads) as server:
        client = sender(server.url, timeout=0.5)
        with pytest.raises(SendTimeout):
            await asyncio.wait_for(client.post("/chat/completions", {"text": "z" * (64 << 20)}), 20)
        await client.aclose()
