"""How an OpenAI-compatible endpoint's calls leave the process: POSTs of JSON bodies over pools.

Two senders with one interface (``post(path, body) -> Reply``):

* :class:`CoreSender`, the default: httpcore's connection pools, which httpx itself sends
  through, used directly. httpx's client adds a request and a response model, header merging,
  cookies, auth and redirect flows and content decoding to every call; a judge's call needs none
  of them, and skipping them costs about a quarter less CPU per call (measured: the plain loop of
  ``benchmarks/cli_overhead.py`` sent through httpcore, 2.0 against 2.7 ms per request). The
  pools' connections are plain asyncio protocols (:mod:`convoscope.models._net`), not httpcore's
  default anyio streams, for a fifth to a third less CPU again.
* :class:`HttpxSender`: ``httpx.AsyncClient``s, for a caller's own httpx transport (the
  Anthropic adapter, scripted tests) and whenever a proxy is set in the environment
  (``HTTPS_PROXY``, ``ALL_PROXY``, ...), which httpx honours as documented.

Both deal requests round-robin over several small pools: one big pool scans every connection it
holds on each request, so its cost per request grows with its size (encode/httpx#3215). The pools
share one TLS context; building one loads the CA bundle (tens of milliseconds). A plain http://
endpoint needs none and gets an empty context that would trust nothing (fails closed).

Both also send the model's side requests (``side``: ``/props``, ``/tokenize``) over the same pools.
httpx itself is imported only where it is used (an https endpoint's CA bundle, a proxy, a caller's
transport): its import, with the command-line tool it brings along, was a tenth of the CPU spent
before ``convoscope judge`` sent its first request (issue 39).
"""

from __future__ import annotations

import itertools
import json
import os
import ssl
import sys
from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

import httpcore

from convoscope.models._net import AsyncioBackend

if TYPE_CHECKING:
    import httpx

POOL_SHARDS = 8
KEEPALIVE_S = 5.0  # as httpx: an idle connection is closed after this long
_KEEPALIVE_PER_SHARD = 64

_FAILED = (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol,
           httpcore.ProxyError, httpcore.ConnectionNotAvailable)


_JSON_TYPE = {"Content-Type": "application/json"}


class SendTimeout(Exception):
    """No answer (or no connection) within the timeout."""


class SendFailed(Exception):
    """The request did not get an answer: connection refused or dropped, broken protocol, ...
    ``no_connection``: no connection could be made at all (refused, unknown host)."""

    def __init__(self, message: str, *, no_connection: bool = False) -> None:
        super().__init__(message)
        self.no_connection = no_connection


class Reply:
    """A whole HTTP answer: ``status``, ``content`` (bytes), ``headers`` and ``text`` on demand."""

    __slots__ = ("status", "content", "_raw", "__dict__")

    def __init__(self, status: int, content: bytes, raw_headers: Any) -> None:
        self.status, self.content, self._raw = status, content, raw_headers

    @cached_property
    def headers(self) -> Mapping[str, str]:
        import httpx

        return self._raw if isinstance(self._raw, httpx.Headers) else httpx.Headers(self._raw)

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")


def tls_context(base_url: str) -> ssl.SSLContext:
    """The CA bundle for https (honours SSL_CERT_FILE / SSL_CERT_DIR, as httpx does); for plain
    http, a context that verifies and trusts nothing, so it can never be used by mistake."""
    if base_url.startswith("https:"):
        import httpx

        return httpx.create_ssl_context()
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def proxied(base_url: str) -> bool:
    """Whether the environment sets a proxy that httpx would apply to ``base_url``."""
    if sys.platform not in ("darwin", "win32") and not any(
            name.lower().endswith("_proxy") for name in os.environ):
        return False  # all getproxies() reads here: nothing to import urllib.request for
    import urllib.request

    import httpx

    proxies = urllib.request.getproxies()
    scheme = base_url.split(":", 1)[0].lower()
    if not (proxies.get(scheme) or proxies.get("all")):
        return False
    host = httpx.URL(base_url).host
    return not urllib.request.proxy_bypass(host)


def encode(body: Any) -> bytes:
    """A JSON body as httpx encodes ``json=``: UTF-8, compact, no NaN."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class CoreSender:
    """POSTs through httpcore pools (see the module's docstring)."""

    def __init__(self, base_url: str, headers: Mapping[str, str], *, timeout: float,
                 tls: ssl.SSLContext) -> None:
        from convoscope import __version__

        self._base = base_url.rstrip("/")
        self._headers = [(b"Content-Type", b"application/json"), (b"Accept", b"application/json"),
                         (b"User-Agent", f"convoscope/{__version__}".encode()),
                         *((name.encode(), value.encode()) for name, value in headers.items())]
        self._extensions = {"timeout": {"connect": min(10.0, timeout), "read": timeout,
                                        "write": timeout, "pool": timeout}}
        network = AsyncioBackend()
        self._pools = [httpcore.AsyncConnectionPool(
            ssl_context=tls, max_connections=None, max_keepalive_connections=_KEEPALIVE_PER_SHARD,
            keepalive_expiry=KEEPALIVE_S, network_backend=network) for _ in range(POOL_SHARDS)]
        self._turn = itertools.count()
        self._timeout = timeout

    def tls_contexts(self) -> list[ssl.SSLContext | None]:
        return [pool._ssl_context for pool in self._pools]

    async def side(self, method: str, url: str, body: Any = None, *, timeout: float) -> Reply:
        """A side request to ``url`` (absolute), with the endpoint's headers (a GET sends no
        Content-Type); ``body``: JSON, or None."""
        pool = self._pools[next(self._turn) % POOL_SHARDS]
        headers = self._headers if body is not None else self._headers[1:]
        seconds = min(timeout, self._timeout)
        extensions = {"timeout": {"connect": min(10.0, seconds), "read": seconds, "write": seconds,
                                  "pool": seconds}}
        try:
            response = await pool.request(method, url, headers=headers, extensions=extensions,
                                          content=None if body is None else encode(body))
        except httpcore.TimeoutException as error:
            raise SendTimeout(type(error).__name__) from None
        except _FAILED as error:
            raise SendFailed(f"{type(error).__name__}: {error or 'the connection failed'}") from None
        return Reply(response.status, response.content, response.headers)

    async def post(self, path: str, body: Any, content: bytes | None = None) -> Reply:
        """POST ``body`` as JSON (``content``: its bytes, when the caller has them already)."""
        pool = self._pools[next(self._turn) % POOL_SHARDS]
        try:
            response = await pool.request("POST", self._base + path, headers=self._headers,
                                          content=encode(body) if content is None else content,
                                          extensions=self._extensions)
        except httpcore.TimeoutException as error:
            raise SendTimeout(type(error).__name__) from None
        except _FAILED as error:
            raise SendFailed(f"{type(error).__name__}: {error or 'the connection failed'}",
                             no_connection=isinstance(error, httpcore.ConnectError)) from None
        return Reply(response.status, response.content, response.headers)

    async def aclose(self) -> None:
        for pool in self._pools:
            await pool.aclose()


class HttpxSender:
    """POSTs through ``httpx.AsyncClient``s: a caller's transport, or the environment's proxy."""

    def __init__(self, base_url: str, headers: Mapping[str, str], *, timeout: float,
                 tls: ssl.SSLContext, transport: httpx.AsyncBaseTransport | None = None) -> None:
        import httpx

        self._clients = [httpx.AsyncClient(
            base_url=base_url, headers=dict(headers), transport=transport, verify=tls,
            timeout=httpx.Timeout(timeout, connect=min(10.0, timeout)),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=_KEEPALIVE_PER_SHARD))
            for _ in range(POOL_SHARDS)]
        self._turn = itertools.count()

    def tls_contexts(self) -> list[ssl.SSLContext]:
        return [client._transport._pool._ssl_context for client in self._clients]  # type: ignore[attr-defined]

    async def post(self, path: str, body: Any, content: bytes | None = None) -> Reply:
        import httpx

        client = self._clients[next(self._turn) % POOL_SHARDS]
        try:
            if content is None:
                response = await client.post(path, json=body)
            else:
                response = await client.post(path, content=content, headers=_JSON_TYPE)
        except httpx.TimeoutException as error:
            raise SendTimeout(type(error).__name__) from None
        except httpx.RequestError as error:
            raise SendFailed(f"{type(error).__name__}: {error or 'the connection failed'}",
                             no_connection=isinstance(error, httpx.ConnectError)) from None
        return Reply(response.status_code, response.content, response.headers)

    async def side(self, method: str, url: str, body: Any = None, *, timeout: float) -> Reply:
        """A side request to ``url`` (absolute) through the first client (its transport, proxy)."""
        import httpx

        try:
            response = await self._clients[0].request(method, url, json=body, timeout=timeout)
        except httpx.TimeoutException as error:
            raise SendTimeout(type(error).__name__) from None
        except httpx.HTTPError as error:
            raise SendFailed(f"{type(error).__name__}: {error}") from None
        return Reply(response.status_code, response.content, response.headers)

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()

