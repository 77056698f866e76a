"""When to try an HTTP model call again, and how long to wait first.

The signals are the ones OpenAI-compatible servers and the proxies in front of them send:
408 / 409 / 425 / 429 and 5xx (Cloudflare's 520-524 included, 501 and 505 excluded),
``x-should-retry: true|false`` (overrides the status), ``retry-after-ms``, and ``Retry-After`` as
seconds or as an HTTP date. A 200 whose body is not a completion is retried too: it is usually a
proxy's error page or a server restarting. The loop itself is tenacity's.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # tenacity is imported on the first retry: most runs never retry (start-up CPU)
    from tenacity import RetryCallState

T = TypeVar("T")

_RETRY_STATUS = {408, 409, 425, 429}
_NEVER_RETRY_5XX = {501, 505}


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try one call. ``timeout`` bounds each attempt; ``deadline`` the whole call,
    waits included; ``max_retries`` counts attempts after the first."""

    timeout: float = 60.0
    deadline: float = 180.0
    max_retries: int = 3
    backoff_s: float = 0.5
    max_backoff_s: float = 20.0
    max_retry_after_s: float = 60.0

    def __post_init__(self) -> None:
        if self.timeout <= 0 or self.deadline <= 0 or self.max_retries < 0:
            raise ValueError("timeout and deadline must be positive and max_retries at least 0")


class TransientError(Exception):
    """One attempt failed in a way worth trying again (``retry_after``: the server's hint;
    ``status``: the HTTP status, None when no answer came; ``no_connection``: not even a
    connection was made)."""

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None,
                 no_connection: bool = False) -> None:
        super().__init__(message)
        self.status, self.retry_after, self.no_connection = status, retry_after, no_connection


def should_retry(status: int, headers: Mapping[str, str]) -> bool:
    """Whether an HTTP error status is worth another attempt (``x-should-retry`` decides first)."""
    explicit = (headers.get("x-should-retry") or "").strip().lower()
    if explicit in ("true", "false"):
        return explicit == "true"
    return status in _RETRY_STATUS or (status >= 500 and status not in _NEVER_RETRY_5XX)


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """The wait the server asked for: ``retry-after-ms``, else ``Retry-After`` (seconds or date)."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _wait(policy: RetryPolicy) -> Callable[[RetryCallState], float]:
    from tenacity import wait_random_exponential

    backoff = wait_random_exponential(multiplier=policy.backoff_s, max=policy.max_backoff_s)  # full jitter

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        hinted = getattr(error, "retry_after", None)
        if hinted is not None:
            return min(float(hinted), policy.max_retry_after_s)
        return float(backoff(state))

    return wait


class DeadlineClock:
    """The deadline of one call: it runs while a request is at the endpoint and during the waits
    between attempts, and stands still while the call queues behind the caller's own limits (an
    in-flight slot, a per-minute budget) -- that wait is not the endpoint's time."""

    def __init__(self, window: asyncio.Timeout, deadline: float) -> None:
        self._window, self._left = window, deadline
        self._loop = asyncio.get_running_loop()

    def start(self) -> None:
        """The request leaves now (a no-op while the clock runs)."""
        if self._window.when() is None:
            self._window.reschedule(self._loop.time() + self._left)

    def stop(self) -> None:
        """The call queues in the caller's own limits from now until :meth:`start`."""
        ends = self._window.when()
        if ends is not None:
            self._left = max(0.0, ends - self._loop.time())
            self._window.reschedule(None)

    def past(self, upcoming_sleep: float) -> bool:
        ends = self._window.when()
        return ends is not None and self._loop.time() + upcoming_sleep >= ends


async def call_with_retries(attempt: Callable[..., Awaitable[T]], policy: RetryPolicy, *,
                            clock_starts_in_attempt: bool = False) -> T:
    """Run ``attempt()`` until it returns, retrying :class:`TransientError` within the policy.

    With ``clock_starts_in_attempt`` it is called as ``attempt(clock)`` with a
    :class:`DeadlineClock`: it calls ``clock.stop()`` before queueing behind the caller's own
    limits (in-flight slots, per-minute budgets) and ``clock.start()`` when its request actually
    leaves, so that queueing does not count against the deadline, on a retry either. Otherwise
    the deadline runs from the start.

    Raises the last :class:`TransientError` when attempts run out or the next wait would cross
    the deadline, and :class:`TimeoutError` when the deadline passes during an attempt."""
    async with asyncio.timeout(None) as window:
        clock = DeadlineClock(window, policy.deadline)

        def past_deadline(state: RetryCallState) -> bool:
            return clock.past(state.upcoming_sleep or 0.0)

        if not clock_starts_in_attempt:
            clock.start()
        try:  # the first attempt outside tenacity: most calls end here, for a tenth of the CPU
            return await (attempt(clock) if clock_starts_in_attempt else attempt())
        except TransientError as error:
            failed: TransientError | None = error
        from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt

        attempts = stop_after_attempt(policy.max_retries + 1)
        retrying = AsyncRetrying(stop=lambda state: attempts(state) or past_deadline(state),
                                 wait=_wait(policy), retry=retry_if_exception_type(TransientError),
                                 reraise=True)
        async for trial in retrying:
            with trial:
                if failed is not None:  # tenacity's first attempt is the one that just failed
                    first, failed = failed, None
                    raise first
                return await (attempt(clock) if clock_starts_in_attempt else attempt())
    raise AssertionError("unreachable: tenacity either returns or raises")
