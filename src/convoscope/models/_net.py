"""The default sender's HTTP/1.1: keep-alive connections on plain asyncio, spoken with h11.

A judge's call is one POST of a JSON body and one whole JSON answer. httpcore's pools, which
httpx sends through and which convoscope used directly until issue 39, wrap each such call in
layers it does not need: a request and a response object, URL and header models, trace hooks,
and anyio's locks, events and cancel scopes (every uncontended lock yields to the event loop
once; every read and write opened a timeout scope on anyio's default streams). The plain loop of
``benchmarks/cli_overhead.py`` (10,000 POSTs, concurrency 8, an nginx mock) spends about half
the CPU on these pools that it spends on httpcore's (``python benchmarks/cli_overhead.py --items
10000 --repeats 3 --mock nginx``: the "_net pools x8" cell against "httpcore x8").

What is here:

* :class:`Stream`, one connection as an asyncio protocol used directly: a read that finds bytes
  already received returns them without a wait or a timer; a read that must wait has one
  future and one ``loop.call_later`` for its timeout; received bytes are capped at 1 MiB before
  the socket stops being read; writes are held until the answer is read (or 64 KiB are held),
  so a request's head and body leave as one write and one TCP segment;
* :class:`Pool`, idle keep-alive connections per origin. h11 (the HTTP/1.1 state machine
  httpcore itself uses) frames requests and parses answers; a connection goes back to the
  pool only when h11 says both sides finished their messages, and is dropped when the server
  closed it or wrote to it while idle, when it idled longer than the keep-alive expiry, or when
  a call on it failed or was cancelled. Nothing here retries: a failed call is the caller's
  to retry (``_openai``'s policy), so a request is never sent twice behind its back.

Failures are :class:`SendTimeout` (no connection, no bytes sent or no answer within the
timeout) and :class:`SendFailed` (refused, dropped, a broken answer), as both senders raise.
This module imports nothing of convoscope's, so the benchmark's loop loads it alone.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Sequence
from typing import NamedTuple
from urllib.parse import urlsplit

import h11

_HIGH_WATER = 1 << 20  # received bytes held before the socket stops being read (1 MiB)
_HOLD = 1 << 16  # written bytes held back to leave with the next write, or when the answer is read
_READ = 1 << 16  # bytes taken from a connection's buffer per h11 step
Headers = Sequence[tuple[bytes, bytes]]
_NO_HEADERS: Headers = ()


class SendTimeout(Exception):
    """No answer (or no connection) within the timeout."""


class SendFailed(Exception):
    """The request did not get an answer: connection refused or dropped, broken protocol, ...
    ``no_connection``: no connection could be made at all (refused, unknown host)."""

    def __init__(self, message: str, *, no_connection: bool = False) -> None:
        super().__init__(message)
        self.no_connection = no_connection


CONNECT_S = 10.0  # the most a connection (TLS handshake included) may take, whatever the timeout


class Timeouts(NamedTuple):
    """Seconds allowed to connect (TLS handshake included), to send, and for each read."""

    connect: float | None
    write: float | None
    read: float | None

    @classmethod
    def of(cls, seconds: float) -> Timeouts:
        """``seconds`` to send and for each read; to connect, at most :data:`CONNECT_S`."""
        return cls(min(CONNECT_S, seconds), seconds, seconds)


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


class _Received(asyncio.Protocol):
    """What a connection has received and not yet been read, and whether it ended."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.ended = False
        self.error: BaseException | None = None
        self.paused = False  # the transport asked the writer to wait
        self.transport: asyncio.Transport | None = None
        self._reading = True
        self._waiter: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # a stream transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > _HIGH_WATER and self._reading and self.transport is not None:
            self._reading = False
            self.transport.pause_reading()
        self._wake(self._waiter)

    def eof_received(self) -> bool:
        self.ended = True
        self._wake(self._waiter)
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self.error = exc
        self._wake(self._waiter)
        self._wake(self._drained)

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._wake(self._drained)

    @staticmethod
    def _wake(waiter: asyncio.Future[None] | None) -> None:
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def take(self, max_bytes: int) -> bytes:
        buffer = self.buffer
        if len(buffer) <= max_bytes:
            data = bytes(buffer)
            buffer.clear()
        else:
            data = bytes(buffer[:max_bytes])
            del buffer[:max_bytes]
        if not self._reading and len(buffer) <= _HIGH_WATER // 4 and self.transport is not None:
            self._reading = True
            self.transport.resume_reading()
        return data

    async def wait(self, drained: bool, timeout: float | None) -> None:
        """Until something is received (or, ``drained``, until writing may go on); TimeoutError
        after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        if drained:
            self._drained = waiter
        else:
            self._waiter = waiter
        timer = None if timeout is None else loop.call_later(timeout, _expire, waiter)
        try:
            await waiter
        finally:
            if drained:
                self._drained = None
            else:
                self._waiter = None
            if timer is not None:
                timer.cancel()


class Stream:
    """One connection: an asyncio transport and what it has received."""

    __slots__ = ("_transport", "_received", "_held", "_held_bytes")

    def __init__(self, transport: asyncio.Transport, received: _Received) -> None:
        self._transport = transport
        self._received = received
        self._held: list[bytes] = []  # written, not yet handed to the transport
        self._held_bytes = 0

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        """Bytes received (at most ``max_bytes``); b"" once the server closed the connection."""
        if self._held:
            self._flush()
        received = self._received
        if not received.buffer and not received.ended:
            try:
                await received.wait(False, timeout)
            except TimeoutError:
                raise SendTimeout("ReadTimeout: no bytes received within the read timeout") from None
        if received.buffer:
            return received.take(max_bytes)
        if received.error is not None:
            raise SendFailed(f"ReadError: {received.error or type(received.error).__name__}")
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        received = self._received
        if self._transport.is_closing() or received.ended:
            raise SendFailed("WriteError: the connection is closed")
        self._held.append(buffer)
        self._held_bytes += len(buffer)
        if self._held_bytes < _HOLD:
            return  # sent with what follows it, at the latest when the answer is read
        self._flush()
        if received.paused:
            try:
                await received.wait(True, timeout)
            except TimeoutError:
                raise SendTimeout("WriteTimeout: the bytes were not sent within the write timeout") from None
            if received.error is not None:
                raise SendFailed(f"WriteError: {received.error or type(received.error).__name__}")

    def _flush(self) -> None:
        held = self._held
        self._transport.write(held[0] if len(held) == 1 else b"".join(held))
        held.clear()
        self._held_bytes = 0

    def close(self) -> None:
        self._held.clear()
        self._transport.close()

    def is_readable(self) -> bool:
        """Whether the server closed this idle connection or wrote to it (it is then not reused)."""
        return bool(self._received.buffer) or self._received.ended

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str,
                        timeout: float | None) -> Stream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):  # not wait_for: see connect
                transport = await loop.start_tls(self._transport, self._received, ssl_context,
                                                 server_hostname=server_hostname)
        except TimeoutError:
            self._transport.close()
            raise SendTimeout("ConnectTimeout: no TLS handshake within the connect timeout") from None
        except (OSError, ssl.SSLError) as error:
            self._transport.close()
            raise SendFailed(f"ConnectError: {error or type(error).__name__}", no_connection=True) from None
        if transport is None:  # pragma: no cover - asyncio returns None only when the loop closes
            raise SendFailed("ConnectError: the TLS handshake was abandoned", no_connection=True)
        self._received.transport = transport
        return Stream(transport, self._received)


async def connect(host: str, port: int, timeout: float | None) -> Stream:
    """A TCP connection to ``host``:``port``. Within ``asyncio.timeout``, not ``asyncio.wait_for``:
    on Python 3.11 a call cancelled just as its connection opened got the connection from wait_for
    and lost the cancellation (CPython gh-86296), so a stopped run waited for that call's answer."""
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(timeout):
            transport, received = await loop.create_connection(_Received, host, port)
    except TimeoutError:
        raise SendTimeout(f"ConnectTimeout: no connection to {host}:{port} within the timeout") from None
    except OSError as error:
        raise SendFailed(f"ConnectError: {error or type(error).__name__}", no_connection=True) from None
    return Stream(transport, received)


class _Connection:
    """A connection and h11's state of the messages on it."""

    __slots__ = ("stream", "state", "idle_since", "loop")

    def __init__(self, stream: Stream, loop: asyncio.AbstractEventLoop) -> None:
        self.stream = stream
        self.state = h11.Connection(h11.CLIENT)
        self.idle_since = 0.0
        self.loop = loop  # its transport's: a later asyncio.run (a notebook's next cell) has another

    async def exchange(self, request: h11.Request, content: bytes | None, timeouts: Timeouts
                       ) -> tuple[int, Headers, bytes]:
        """Send ``request`` and its body; the answer's status, headers and whole body."""
        state, stream = self.state, self.stream
        try:
            data = state.send(request)
            if content:
                data += state.send(h11.Data(data=content))
            await stream.write(data + state.send(h11.EndOfMessage()), timeouts.write)
            status, headers, chunks = 0, _NO_HEADERS, []
            while True:
                event = state.next_event()
                if event is h11.NEED_DATA:
                    state.receive_data(await stream.read(_READ, timeouts.read))
                elif type(event) is h11.Data:
                    chunks.append(event.data)
                elif type(event) is h11.Response:
                    status, headers = event.status_code, event.headers
                elif type(event) is h11.EndOfMessage:
                    return status, headers, b"".join(chunks)
                elif type(event) is h11.ConnectionClosed:
                    raise SendFailed("RemoteProtocolError: the server closed the connection")
        except h11.ProtocolError as error:
            raise SendFailed(f"{type(error).__name__}: {error}") from None

    def reusable(self) -> bool:
        """Whether both sides finished their messages and the connection may carry another call."""
        state = self.state
        if state.our_state is not h11.DONE or state.their_state is not h11.DONE:
            return False
        state.start_next_cycle()
        return True


class _Origin(NamedTuple):
    secure: bool
    host: str
    port: int


class Pool:
    """Keep-alive HTTP/1.1 connections to the origins of the URLs asked for (see the module's
    docstring). ``max_idle``: idle connections kept per origin; more are closed."""

    def __init__(self, ssl_context: ssl.SSLContext, *, keepalive_expiry: float, max_idle: int) -> None:
        self.ssl_context = ssl_context
        self._expiry = keepalive_expiry
        self._max_idle = max_idle
        self._idle: dict[_Origin, list[_Connection]] = {}
        self._targets: dict[str, tuple[_Origin, bytes, bytes]] = {}
        self._busy: set[_Connection] = set()

    def _target(self, url: str) -> tuple[_Origin, bytes, bytes]:
        """``url``'s origin, request target and Host header (kept: a sender asks for few URLs)."""
        found = self._targets.get(url)
        if found is None:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise SendFailed(f"UnsupportedProtocol: cannot send to {url!r}", no_connection=True)
            secure = parts.scheme == "https"
            origin = _Origin(secure, parts.hostname, parts.port or (443 if secure else 80))
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            found = origin, target.encode(), parts.netloc.rpartition("@")[2].encode()
            if len(self._targets) < 64:
                self._targets[url] = found
        return found

    async def request(self, method: bytes, url: str, headers: Headers, content: bytes | None,
                      timeouts: Timeouts) -> tuple[int, Headers, bytes]:
        """One call: the answer's status, headers and body. ``headers`` without Host and
        Content-Length, which are added."""
        origin, target, host = self._target(url)
        sized = [(b"Host", host), *headers]
        if content is not None:
            sized.append((b"Content-Length", b"%d" % len(content)))
        try:
            request = h11.Request(method=method, target=target, headers=sized)
        except h11.LocalProtocolError as error:  # a header h11 will not send (a line break in a key)
            raise SendFailed(f"LocalProtocolError: {error}") from None
        connection = self._reused(origin) or await self._connected(origin, timeouts.connect)
        self._busy.add(connection)
        try:
            answer = await connection.exchange(request, content, timeouts)
        except BaseException:  # cancelled too: a connection mid-message is never reused
            connection.stream.close()
            raise
        finally:
            self._busy.discard(connection)
        idle = self._idle.setdefault(origin, [])
        if connection.reusable() and len(idle) < self._max_idle:
            connection.idle_since = asyncio.get_running_loop().time()
            idle.append(connection)
        else:
            connection.stream.close()
        return answer

    def _reused(self, origin: _Origin) -> _Connection | None:
        """The most recently idle connection to ``origin`` still fit to use; expired ones, and
        those of an event loop no longer running, closed."""
        idle = self._idle.get(origin)
        if not idle:
            return None
        loop = asyncio.get_running_loop()
        if idle[0].loop is not loop:
            _drop(idle)
            return None
        oldest = loop.time() - self._expiry
        while idle and idle[0].idle_since < oldest:
            idle.pop(0).stream.close()
        while idle:
            connection = idle.pop()
            if not connection.stream.is_readable():
                return connection
            connection.stream.close()
        return None

    async def _connected(self, origin: _Origin, timeout: float | None) -> _Connection:
        stream = await connect(origin.host, origin.port, timeout)
        if origin.secure:
            self.ssl_context.set_alpn_protocols(["http/1.1"])  # as httpcore: no HTTP/2 spoken here
            stream = await stream.start_tls(self.ssl_context, origin.host, timeout)
        return _Connection(stream, asyncio.get_running_loop())

    async def aclose(self) -> None:
        for idle in self._idle.values():
            _drop(idle)
        _drop(list(self._busy))
        self._idle.clear()
        self._busy.clear()


def _drop(connections: list[_Connection]) -> None:
    """Close ``connections`` (those of a closed event loop are only let go: closing a transport
    schedules a call on its loop)."""
    for connection in connections:
        if not connection.loop.is_closed():
            connection.stream.close()
    connections.clear()
