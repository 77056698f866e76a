"""Scripted faults of the event loop itself, for the sender's tests."""

from __future__ import annotations

import asyncio


def cancel_as_it_completes(loop: asyncio.AbstractEventLoop, name: str) -> list[asyncio.Task]:
    """A scripted fault (not a fake server): the loop's real ``name`` (create_connection,
    start_tls) does its work, and the call waiting on it is cancelled just as it completes, before
    the call resumes. Where a stop or a failed run cancels its calls, one of them may be exactly
    there. Returns the list to put the task to cancel in."""
    real = getattr(loop, name)
    victims: list[asyncio.Task] = []

    async def scripted(*args, **kwargs):
        done = await real(*args, **kwargs)
        for task in victims:
            task.cancel()
        return done

    setattr(loop, name, scripted)
    return victims

