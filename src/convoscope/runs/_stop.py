"""Stopping a run on SIGTERM as on Ctrl-C: the run's task is cancelled, the engine gives the calls
in flight a bounded time to be answered and stored (:data:`~convoscope.runs._engine.STOP_GRACE_S`),
commits everything judged, and :class:`Terminated` tells the caller to exit 3. The command line
and the worker processes of ``--workers`` stop the same way."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Terminated(Exception):
    """The process got SIGTERM while judging."""


async def until_terminated(work: Coroutine[Any, Any, T]) -> T:
    """``work``, cancelled on SIGTERM (a second SIGTERM cancels the grace period too)."""
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    signalled = False

    def stop() -> None:
        nonlocal signalled
        # A SIGTERM after a Ctrl-C (a worker's parent passing the stop on) leaves the grace
        # period running; a second SIGTERM ends it.
        if signalled or not task.cancelling():
            task.cancel()
        signalled = True

    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread
        loop.add_signal_handler(signal.SIGTERM, stop)
    try:
        return await task
    except asyncio.CancelledError:
        if signalled:
            raise Terminated from None
        raise
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signal.SIGTERM)
