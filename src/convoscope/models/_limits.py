"""How many requests one endpoint gets at once, and how many per minute.

The in-flight limit adapts as TCP's congestion window does. It starts at one request and, until
the first sign of congestion, grows by one per answer (doubling each round: slow start); after
that, each answer adds ``1/limit`` (about one per round) and each sign of congestion halves it
(additive increase, multiplicative decrease). It never exceeds the user's ceiling. Congestion is
a 429, an attempt that timed out, or an answer slower than ``slow_s`` (the HTTP backend passes a
quarter of its per-attempt timeout): a server that takes one request at a time (llama-cpp-python's)
queues the rest, and their wait counts against their timeout. Slow start overshoots by about two
rounds before the first slow answer shows, so the queue's longest wait stays near three times
``slow_s``: short of the timeout. Only the first sign of a round cuts: requests already in flight
when the limit was cut do not cut it again. Requests- and tokens-per-minute budgets are
aiolimiter's leaky buckets.
"""

from __future__ import annotations

import asyncio
import collections
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiolimiter import AsyncLimiter

UNBOUNDED = 1024  # "no ceiling given": the run's own concurrency is then the limit


class AdaptiveLimit:
    """An in-flight limit between 1 and ``ceiling`` that backs off on congestion and grows back.

    ``start``: the first limit (None: the ceiling, no slow start); ``slow_s``: an answer slower
    than this counts as congestion (None: only 429s and timeouts do). ``cuts`` counts the halvings
    and ``lowest`` is the lowest limit a cut left (None before any), to see how the endpoint kept up."""

    def __init__(self, ceiling: int | None = None, *, start: int | None = None,
                 slow_s: float | None = None) -> None:
        if ceiling is not None and ceiling < 1:
            raise ValueError(f"max_concurrency must be at least 1, not {ceiling}")
        self.ceiling = ceiling or UNBOUNDED
        self.limit = float(self.ceiling if start is None else max(1, min(start, self.ceiling)))
        self.slow_start = start is not None
        self.slow_s = slow_s
        self.in_flight = 0
        self.peak = 0
        self.cuts = 0
        self.lowest: float | None = None
        self._last_cut = 0.0
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()

    def slot(self) -> _Slot:
        """``async with limit.slot() as started``: hold one in-flight slot; ``started`` is the
        time the request started (for :meth:`throttled`). Requests that find the limit reached
        wait in turn; a free slot is taken without a lock, a wait or an async generator (issue
        39: the condition's lock taken twice per call, and the generator, were a tenth of the
        client's own CPU per call)."""
        return _Slot(self)

    def _free(self) -> bool:
        return self.in_flight < max(1, int(self.limit))

    async def _acquire(self) -> None:
        if not self._waiting and self._free():
            self.in_flight += 1
        else:
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
            try:
                await waiter  # the slot is taken for this request when it is woken (_release)
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self._release()  # handed a slot while being cancelled: give it on
                elif waiter in self._waiting:
                    self._waiting.remove(waiter)
                raise
        self.peak = max(self.peak, self.in_flight)

    def _release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        """Hand free slots to the requests waiting, in turn (also after the limit grew)."""
        while self._waiting and self._free():
            waiter = self._waiting.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)

    def succeeded(self, started: float | None = None) -> None:
        """An answer came for a request sent at ``started`` (the time :meth:`slot` yielded)."""
        if started is not None and self.slow_s is not None and time.monotonic() - started > self.slow_s:
            self.throttled(started)  # answered, but so late that the next in the queue may time out
            return
        step = 1.0 if self.slow_start else 1.0 / max(self.limit, 1.0)
        self.limit = min(float(self.ceiling), self.limit + step)
        if self._waiting:
            self._wake()

    def throttled(self, started: float) -> None:
        """A sign of congestion (429, timeout, a slow answer) for a request sent at ``started``."""
        if started < self._last_cut:
            return  # sent before the last cut: that cut already answered this congestion
        self._last_cut = time.monotonic()
        self.slow_start = False
        self.limit = max(1.0, min(self.limit, float(self.in_flight)) / 2)
        self.cuts += 1
        self.lowest = self.limit if self.lowest is None else min(self.lowest, self.limit)


class _Slot:
    """One request's hold on an :class:`AdaptiveLimit` (see :meth:`AdaptiveLimit.slot`)."""

    __slots__ = ("_limit",)

    def __init__(self, limit: AdaptiveLimit) -> None:
        self._limit = limit

    async def __aenter__(self) -> float:
        await self._limit._acquire()
        return time.monotonic()

    async def __aexit__(self, *_exc: object) -> None:
        self._limit._release()


class RateBudget:
    """Optional requests-per-minute and tokens-per-minute budgets of one endpoint."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None) -> None:
        for label, value in (("rpm", rpm), ("tpm", tpm)):
            if value is not None and value <= 0:
                raise ValueError(f"{label} must be positive, not {value}")
        # Per-second buckets of a sixtieth of the minute's budget: requests are spread over the
        # minute instead of spent in one burst at its start.
        self._requests = _spread(rpm) if rpm else None
        self._tokens = _spread(tpm) if tpm else None

    @property
    def counts_tokens(self) -> bool:
        return self._tokens is not None

    async def spend(self, tokens: int) -> None:
        """Wait until one more request of about ``tokens`` tokens fits both budgets."""
        if self._requests is not None:
            await self._requests.acquire()
        if self._tokens is not None:
            await self._tokens.acquire(min(float(tokens), self._tokens.max_rate))


def _spread(per_minute: float) -> AsyncLimiter:
    """A bucket holding at least one unit that refills at ``per_minute / 60`` a second (aiolimiter
    is imported only when a budget is set: most runs have none)."""
    from aiolimiter import AsyncLimiter

    capacity = max(1.0, per_minute / 60)
    return AsyncLimiter(capacity, capacity * 60 / per_minute)


def estimated_tokens(text_bytes: int, max_tokens: int) -> int:
    """What a request may cost against a tokens-per-minute budget, as OpenAI counts it: the
    prompt (about four bytes a token) plus the most the answer may use."""
    return text_bytes // 4 + max_tokens
