"""httpcore's network streams on plain asyncio, for :class:`~convoscope.models._http.CoreSender`.

httpcore reads and writes through a network backend (its documented ``network_backend=``). Its
default on asyncio goes through anyio: every read and every write opens an ``anyio.fail_after``
cancel scope for its timeout, and a read waits on anyio's socket stream, itself a layer over an
asyncio protocol. This backend is that protocol used directly:

* a read that finds bytes already received returns them without a wait or a timer;
* a read that must wait, waits on one future, with one ``loop.call_later`` for its timeout;
* writes are held until the answer is read (or 64 KiB are held), then handed to the transport
  as one: httpcore writes a request's head and its body apart, two sends and two TCP segments
  where one does; a write waits only while the transport asks the writer to pause.

The plain loop of ``benchmarks/cli_overhead.py`` (10,000 POSTs over 8 httpcore pools, an nginx
mock) spent a fifth to a third less CPU on this backend than on httpcore's default, at
concurrency 8 and 32 (``python benchmarks/cli_overhead.py --items 10000 --repeats 3 --mock
nginx``: the "httpcore x8 aio" cell against "httpcore x8"). Nothing else changes:
the same pools, the same HTTP/1.1 code (h11), the same TLS context, the same exceptions
(``httpcore.ReadTimeout``, ``ConnectError``, ...) as the default raises.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore

_HIGH_WATER = 1 << 20  # received bytes held before the socket stops being read (1 MiB)
_HOLD = 1 << 16  # written bytes held back to leave with the next write, or when the answer is read


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


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection: an asyncio transport and what it has received."""

    def __init__(self, transport: asyncio.Transport, received: _Received) -> None:
        self._transport = transport
        self._received = received
        self._held: list[bytes] = []  # written, not yet handed to the transport
        self._held_bytes = 0

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._held:
            self._flush()
        received = self._received
        if not received.buffer and not received.ended:
            try:
                await received.wait(False, timeout)
            except TimeoutError:
                raise httpcore.ReadTimeout("no bytes received within the read timeout") from None
        if received.buffer:
            return received.take(max_bytes)
        if received.error is not None:
            raise httpcore.ReadError(str(received.error) or type(received.error).__name__)
        return b""  # the server closed the connection

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        received = self._received
        if self._transport.is_closing() or received.ended:
            raise httpcore.WriteError("the connection is closed")
        self._held.append(buffer)
        self._held_bytes += len(buffer)
        if self._held_bytes < _HOLD:
            return  # sent with what follows it, at the latest when the answer is read
        self._flush()
        if received.paused:
            try:
                await received.wait(True, timeout)
            except TimeoutError:
                raise httpcore.WriteTimeout("the bytes were not sent within the write timeout") from None
            if received.error is not None:
                raise httpcore.WriteError(str(received.error) or type(received.error).__name__)

    def _flush(self) -> None:
        held = self._held
        self._transport.write(held[0] if len(held) == 1 else b"".join(held))
        held.clear()
        self._held_bytes = 0

    async def aclose(self) -> None:
        self._held.clear()
        self._transport.close()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        if self._held:
            self._flush()
        loop = asyncio.get_running_loop()
        try:
            transport = await asyncio.wait_for(
                loop.start_tls(self._transport, self._received, ssl_context,
                               server_hostname=server_hostname), timeout)
        except TimeoutError:
            self._transport.close()
            raise httpcore.ConnectTimeout("no TLS handshake within the connect timeout") from None
        except (OSError, ssl.SSLError) as error:
            self._transport.close()
            raise httpcore.ConnectError(str(error) or type(error).__name__) from None
        if transport is None:  # pragma: no cover - asyncio returns None only when the loop closes
            raise httpcore.ConnectError("the TLS handshake was abandoned")
        self._received.transport = transport
        return AsyncioStream(transport, self._received)

    def get_extra_info(self, info: str) -> Any:
        transport = self._transport
        if info == "ssl_object":
            return transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return transport.get_extra_info("sockname")
        if info == "server_addr":
            return transport.get_extra_info("peername")
        if info == "socket":
            return transport.get_extra_info("socket")
        if info == "is_readable":  # an idle keep-alive connection the server has closed or written to
            return bool(self._received.buffer) or self._received.ended
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """TCP connections as :class:`AsyncioStream` (no Unix sockets: the senders never ask for one)."""

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            transport, received = await asyncio.wait_for(loop.create_connection(
                _Received, host, port, local_addr=(local_address, 0) if local_address else None),
                timeout)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"no connection to {host}:{port} within the timeout") from None
        except OSError as error:
            raise httpcore.ConnectError(str(error) or type(error).__name__) from None
        raw = transport.get_extra_info("socket")
        for option in socket_options or ():
            raw.setsockopt(*option)
        return AsyncioStream(transport, received)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
