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
