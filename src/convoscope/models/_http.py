"""How an OpenAI-compatible endpoint's calls leave the process: POSTs of JSON bodies over pools.

Two senders with one interface (``post(path, body) -> Reply``):

* :class:`CoreSender`, the default: h11 over plain asyncio connections
  (:mod:`convoscope.models._net`). httpx's client adds a request and a response model, header
  merging, cookies, auth and redirect flows and content decoding to every call, and the httpcore
  pools beneath it anyio's locks, events and cancel scopes; a judge's call needs none of them.
  Measured on the plain loop of ``benchmarks/cli_overhead.py`` (10,000 POSTs at concurrency 8):
  about half the CPU per request of the same loop on httpcore's pools, which are themselves a
  quarter cheaper than one httpx client.
* :class:`HttpxSender`: ``httpx.AsyncClient``s, for a caller's own httpx transport (the
  Anthropic adapter, scripted tests) and whenever a proxy is set in the environment
  (``HTTPS_PROXY``, ``ALL_PROXY``, ...), which httpx honours as documented.

Both deal requests round-robin over several small pools: one big httpx pool scans every connection it
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

from convoscope.models._net import CONNECT_S, Pool, SendFailed, SendTimeout, Timeouts

if TYPE_CHECKING:
    import httpx

POOL_SHARDS = 8
KEEPALIVE_S = 5.0  # as httpx: an idle connection is closed after this long
_KEEPALIVE_PER_SHARD = 64

_JSON_TYPE = {"Content-Type": "application/json"}


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
    """POSTs through pools of :class:`~convoscope.models._net.Pool` (see the module's docstring)."""

    def __init__(self, base_url: str, headers: Mapping[str, str], *, timeout: float,
                 tls: ssl.SSLContext) -> None:
        from convoscope import __version__

        self._base = base_url.rstrip("/")
        self._headers = [(b"Content-Type", b"application/json"), (b"Accept", b"application/json"),
                         (b"User-Agent", f"convoscope/{__version__}".encode()),
                         *((name.encode(), value.encode()) for name, value in headers.items())]
        self._timeouts = Timeouts.of(timeout)
        self._pools = [Pool(tls, keepalive_expiry=KEEPALIVE_S, max_idle=_KEEPALIVE_PER_SHARD)
                       for _ in range(POOL_SHARDS)]
        self._turn = itertools.count()
        self._timeout = timeout

    def tls_contexts(self) -> list[ssl.SSLContext | None]:
        return [pool.ssl_context for pool in self._pools]

    async def side(self, method: str, url: str, body: Any = None, *, timeout: float) -> Reply:
        """A side request to ``url`` (absolute), with the endpoint's headers (a GET sends no
        Content-Type); ``body``: JSON, or None."""
        pool = self._pools[next(self._turn) % POOL_SHARDS]
        headers = self._headers if body is not None else self._headers[1:]
        seconds = min(timeout, self._timeout)
        status, raw, content = await pool.request(
            method.encode(), url, headers, None if body is None else encode(body),
            Timeouts.of(seconds))
        return Reply(status, content, raw)

    async def post(self, path: str, body: Any, content: bytes | None = None) -> Reply:
        """POST ``body`` as JSON (``content``: its bytes, when the caller has them already)."""
        pool = self._pools[next(self._turn) % POOL_SHARDS]
        status, raw, answer = await pool.request(
            b"POST", self._base + path, self._headers, encode(body) if content is None else content,
            self._timeouts)
        return Reply(status, answer, raw)

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
            timeout=httpx.Timeout(timeout, connect=min(CONNECT_S, timeout)),
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

