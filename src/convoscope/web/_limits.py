"""Request rate per participant: a token bucket per private link (and per client address on the
study link), answered 429 with ``Retry-After`` when empty.

A person answers every few seconds at most, and one answer is three requests (the form, its
redirect, the next page): the default, 10 requests a second with bursts of 30, never touches a
person, only a script hammering one link. Buckets are kept for the most recent 10,000 keys, so
random links cannot make the table grow without end.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict

from starlette.types import ASGIApp, Receive, Scope, Send

RATE = 10.0  # requests per second, sustained
BURST = 30  # requests at once
KEYS = 10_000


class TokenBuckets:
    """One bucket per key: ``burst`` tokens, refilled at ``rate`` per second."""

    def __init__(self, *, rate: float = RATE, burst: int = BURST, keys: int = KEYS):
        self.rate, self.burst, self.keys = rate, burst, keys
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, when)
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """0 when the request may go on, else the seconds until a token is back."""
        now = time.monotonic()
        with self._lock:
            tokens, when = self._buckets.pop(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - when) * self.rate)
            wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate if self.rate > 0 else math.inf
            self._buckets[key] = (tokens - 1 if wait == 0 else tokens, now)
            while len(self._buckets) > self.keys:
                self._buckets.popitem(last=False)
            return wait


class RateLimit:
    """Pure ASGI middleware: the bucket of ``/a/<token>…`` is the token's, of ``/join/…`` the
    client address's; other paths are not limited."""

    def __init__(self, app: ASGIApp, *, buckets: TokenBuckets, refuse: ASGIApp):
        self.app, self.buckets, self.refuse = app, buckets, refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = _key(scope) if scope["type"] == "http" else None
        wait = self.buckets.take(key) if key is not None else 0.0
        if wait > 0:
            scope = {**scope, "retry_after": str(max(1, math.ceil(min(wait, 3600))))}
            await self.refuse(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _key(scope: Scope) -> str | None:
    parts = str(scope.get("path", "")).split("/")
    if len(parts) > 2 and parts[1] == "a":
        return "a:" + parts[2]
    if len(parts) > 1 and parts[1] == "join":
        client = scope.get("client")
        return "join:" + (client[0] if client else "?")
    return None
