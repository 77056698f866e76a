"""The default sender's HTTP/1.1 on plain asyncio (``models/_net.py``: h11 over asyncio
protocols), against real servers on 127.0.0.1 started by each test with ``asyncio.start_server``:
what httpcore's pools did, it still does — timeouts, refused and dropped connections, a
keep-alive connection the server closed while idle, bodies larger than the buffers on either
side, chunked answers, ``Connection: close``, the keep-alive expiry, a cancelled call's
connection never reused — without anyio's cancel scopes, locks and events per call (issue 39:
client CPU per verdict)."""

from __future__ import annotations

import asyncio
import json

import anyio
import pytest
from loop_faults import cancel_as_it_completes

from convoscope.models._http import POOL_SHARDS, CoreSender, SendFailed, SendTimeout
from convoscope.models._net import Pool, Timeouts

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


def pool(expiry: float = 5.0) -> Pool:
    import ssl

    return Pool(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), keepalive_expiry=expiry, max_idle=4)


TIMEOUTS = Timeouts(5.0, 5.0, 5.0)
JSON = [(b"Content-Type", b"application/json")]


async def test_a_chunked_answer_is_read_whole_and_its_connection_carries_the_next_call():
    async def chunked(reader, writer):
        while await _read_request(reader) is not None:
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for part in (ANSWER[:10], ANSWER[10:30], ANSWER[30:]):
                writer.write(b"%x\r\n%s\r\n" % (len(part), part))
                await writer.drain()
            writer.write(b"0\r\n\r\n")

    async with Server(chunked) as server:
        client = pool()
        answers = [await client.request(b"POST", server.url + "/chat/completions", JSON, b"{}", TIMEOUTS)
                   for _ in range(3)]
        await client.aclose()
    assert [(status, body) for status, _, body in answers] == [(200, ANSWER)] * 3
    assert server.connections == 1


async def test_an_answer_that_says_connection_close_is_not_reused():
    async def closing(reader, writer):
        await _read_request(reader)
        writer.write(_response(ANSWER).replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1))
        await writer.drain()
        await asyncio.sleep(0.5)  # the client must not wait for this close to open another

    async with Server(closing) as server:
        client = pool()
        for _ in range(3):
            status, _, body = await client.request(b"POST", server.url + "/x", JSON, b"{}", TIMEOUTS)
            assert (status, body) == (200, ANSWER)
        await client.aclose()
    assert server.connections == 3


async def test_a_call_cancelled_mid_answer_leaves_no_bytes_for_the_next_call():
    async def half_then_whole(reader, writer):
        await _read_request(reader)
        writer.write(_response(b'{"first": true}')[:-5])  # the rest never comes
        await writer.drain()
        await asyncio.sleep(30)

    async def whole(reader, writer):
        await answer_each(reader, writer)

    handlers = [half_then_whole, whole]

    async def next_handler(reader, writer):
        await handlers.pop(0)(reader, writer)

    async with Server(next_handler) as server:
        client = pool()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(client.request(b"POST", server.url + "/x", JSON, b"{}", TIMEOUTS), 0.3)
        status, _, body = await client.request(b"POST", server.url + "/x", JSON, b"{}", TIMEOUTS)
        await client.aclose()
    assert (status, body) == (200, ANSWER)
    assert server.connections == 2


@pytest.mark.parametrize(("expiry", "connections"), [(0.05, 2), (30.0, 1)])
async def test_a_connection_idle_longer_than_the_keep_alive_expiry_is_closed_not_reused(expiry, connections):
    async with Server(answer_each) as server:
        client = pool(expiry)
        await client.request(b"POST", server.url + "/x", JSON, b"{}", TIMEOUTS)
        await asyncio.sleep(0.2)
        status, _, _ = await client.request(b"POST", server.url + "/x", JSON, b"{}", TIMEOUTS)
        await client.aclose()
    assert status == 200 and server.connections == connections


async def test_a_call_carries_host_length_and_the_endpoints_headers_and_its_answer_headers_come_back():
    heads = []

    async def busy(reader, writer):
        head = await reader.readuntil(b"\r\n\r\n")
        heads.append(head.decode())
        await reader.readexactly(int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0]))
        writer.write(b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 2\r\n\r\n{}")
        await writer.drain()

    async with Server(busy) as server:
        client = CoreSender(server.url, {"Authorization": "Bearer k"}, timeout=5.0,
                            tls=__import__("ssl").SSLContext(__import__("ssl").PROTOCOL_TLS_CLIENT))
        reply = await client.post("/chat/completions", {"n": 1})
        await client.aclose()
    port = server.url.split(":")[2].split("/")[0]
    head = heads[0].lower()
    assert heads[0].startswith("POST /v1/chat/completions HTTP/1.1\r\n")
    assert f"host: 127.0.0.1:{port}\r\n" in head and "content-length: 7\r\n" in head
    assert "authorization: bearer k\r\n" in head and "content-type: application/json" in head
    assert reply.status == 429 and reply.headers["retry-after"] == "7" and reply.content == b"{}"


def test_a_sender_used_again_under_a_new_event_loop_opens_new_connections():
    # A notebook's cells: each asyncio.run has its own loop; the last one's connections are not its.
    import threading

    started, stop, urls = threading.Event(), threading.Event(), []

    def serve():
        async def main():
            async with Server(answer_each) as server:
                urls.append(server.url)
                started.set()
                while not stop.is_set():
                    await asyncio.sleep(0.02)
        asyncio.run(main())

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        assert started.wait(10)
        client = sender(urls[0])

        async def calls():
            return [(await client.post("/chat/completions", {"n": n})).status for n in range(2 * POOL_SHARDS)]

        assert asyncio.run(calls()) == [200] * 2 * POOL_SHARDS
        assert asyncio.run(calls()) == [200] * 2 * POOL_SHARDS  # before: "Event loop is closed"
        asyncio.run(client.aclose())
    finally:
        stop.set()
        thread.join(10)


async def test_a_header_that_cannot_be_sent_is_a_failure_not_a_crash():
    async with Server(answer_each) as server:
        client = CoreSender(server.url, {"Authorization": "Bearer k\r\nX-Injected: 1"}, timeout=5.0,
                            tls=__import__("ssl").SSLContext(__import__("ssl").PROTOCOL_TLS_CLIENT))
        with pytest.raises(SendFailed, match="LocalProtocolError"):
            await client.post("/chat/completions", {"n": 1})
        await client.aclose()
    assert server.connections == 0


async def test_a_call_cancelled_just_as_its_connection_opens_is_cancelled_not_sent():
    # Before: asyncio.wait_for on Python 3.11 returned the new connection and dropped the
    # cancellation (CPython gh-86296), so the call went on to wait for an answer: a run stopped
    # by a duplicate id waited out the 180 s deadline of a call the server held, then stored it.
    async def holding(reader, writer):
        await _read_request(reader)
        await asyncio.sleep(30)  # never answers

    async with Server(holding) as server:
        client = pool()
        victims = cancel_as_it_completes(asyncio.get_running_loop(), "create_connection")
        call = asyncio.ensure_future(client.request(b"POST", server.url + "/x", JSON, b"{}", TIMEOUTS))
        victims.append(call)
        try:
            async with asyncio.timeout(10):  # only reached when the cancellation was lost
                with pytest.raises(asyncio.CancelledError):
                    await call
        finally:
            del asyncio.get_running_loop().create_connection  # the loop's own method again
            await client.aclose()
    assert call.cancelled()
