"""The retry loop itself (unit tests, scripted attempts): the first attempt runs outside tenacity,
and what follows keeps every rule of the policy (attempts, waits, the server's hint, the deadline)."""

from __future__ import annotations

import asyncio

import pytest

from convoscope.models._retry import RetryPolicy, TransientError, call_with_retries


def scripted(outcomes):
    """An attempt that fails with each TransientError in ``outcomes`` in turn, then answers."""
    calls = []

    async def attempt():
        calls.append(asyncio.get_running_loop().time())
        if len(calls) <= len(outcomes):
            raise outcomes[len(calls) - 1]
        return "answer"

    return attempt, calls


async def test_an_answer_at_once_is_one_attempt():
    attempt, calls = scripted([])
    assert await call_with_retries(attempt, RetryPolicy()) == "answer" and len(calls) == 1


@pytest.mark.parametrize("retries", [0, 1, 3])
async def test_max_retries_counts_the_attempts_after_the_first(retries):
    attempt, calls = scripted([TransientError(f"fail {n}") for n in range(10)])
    with pytest.raises(TransientError, match=f"fail {retries}"):
        await call_with_retries(attempt, RetryPolicy(max_retries=retries, backoff_s=0.001))
    assert len(calls) == retries + 1


async def test_a_failure_then_an_answer_waits_as_the_server_asked():
    attempt, calls = scripted([TransientError("busy", retry_after=0.2)])
    assert await call_with_retries(attempt, RetryPolicy(max_retries=2)) == "answer"
    assert len(calls) == 2 and calls[1] - calls[0] >= 0.2


async def test_a_wait_past_the_deadline_is_not_taken():
    attempt, calls = scripted([TransientError("busy", retry_after=30)])
    with pytest.raises(TransientError, match="busy"):
        await call_with_retries(attempt, RetryPolicy(max_retries=3, deadline=1.0))
    assert len(calls) == 1


async def test_other_errors_are_not_retried():
    async def attempt():
        raise ValueError("not transient")

    with pytest.raises(ValueError):
        await call_with_retries(attempt, RetryPolicy(max_retries=3))


async def test_a_retry_waiting_in_the_callers_own_queue_is_not_charged_the_deadline():
    # Issue 35: after a 429 or a timeout the in-flight limit is cut, and the retry waits for a
    # slot behind the other calls; that wait is the caller's, not the endpoint's. The queue here
    # holds the retry 2.5 times the deadline; the requests themselves take no time.
    calls = []

    async def attempt(clock):
        clock.stop()
        if calls:
            await asyncio.sleep(0.5)  # queued for an in-flight slot
        clock.start()
        calls.append("sent")
        if len(calls) == 1:
            raise TransientError("HTTP 429")
        return "answer"

    policy = RetryPolicy(max_retries=2, deadline=0.2, backoff_s=0.001)
    assert await call_with_retries(attempt, policy, clock_starts_in_attempt=True) == "answer"
    assert calls == ["sent", "sent"]


async def test_time_at_the_endpoint_still_counts_against_the_deadline_across_attempts():
    calls = []

    async def attempt(clock):
        clock.stop()
        clock.start()
        calls.append("sent")
        await asyncio.sleep(0.15)  # at the endpoint
        raise TransientError("HTTP 503")

    policy = RetryPolicy(max_retries=50, deadline=0.4, backoff_s=0.001)
    with pytest.raises((TimeoutError, TransientError)):
        await call_with_retries(attempt, policy, clock_starts_in_attempt=True)
    assert len(calls) <= 3  # 0.15 s each within 0.4 s, not the 51 attempts allowed
