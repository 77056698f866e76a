"""Progress of a long command: a bar on a terminal, a plain line every few seconds elsewhere.

Logs of CI jobs, ``nohup`` and ``| tee`` get one line per ``every`` seconds — done / total, rate,
ETA, unscored so far by reason — instead of a bar they cannot show. The total is counted in a
background thread (a million-line file takes a second), so the work starts at once.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from rich.console import Console

if TYPE_CHECKING:
    from rich.progress import Progress


class RunProgress:
    """Counts done tasks (``advance``) and unscored final verdicts (``unscored``)."""

    def __init__(self, console: Console, *, label: str = "judging", every: float = 30.0,
                 count_total: Callable[[], int | None] | None = None) -> None:
        self.console, self.label, self.every = console, label, every
        self.done = 0
        self.total: int | None = None
        self.unscored: Counter[str] = Counter()
        self._started = self._last = time.monotonic()
        self._terminal = console.is_terminal or sys.stderr.isatty()
        self._bar: Progress | None = None
        self._task: Any = None
        if count_total is not None:
            threading.Thread(target=self._count, args=(count_total,), daemon=True,
                             name="count-items").start()

    def _count(self, count_total: Callable[[], int | None]) -> None:
        try:
            self.total = count_total()
        except Exception:  # the work itself reports a bad input; the total is only a nicety
            self.total = None
        if self._bar is not None and self.total is not None:
            self._bar.update(self._task, total=self.total)

    def __enter__(self) -> RunProgress:
        if self._terminal:
            # Imported here: logs, CI and pipes never draw a bar (issue 39: judge's start-up).
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            columns = ("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), "eta", TimeRemainingColumn())
            self._bar = Progress(*columns, console=self.console, transient=False)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.label, total=self.total)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.__exit__(kind, error, trace)
        elif self.done:
            self._line()

    def advance(self, count: int) -> None:
        self.done += count
        if self._bar is not None:
            self._bar.advance(self._task, count)
        elif time.monotonic() - self._last >= self.every:
            self._line()

    def _line(self) -> None:
        self._last = now = time.monotonic()
        rate = self.done / max(now - self._started, 1e-9)
        total = f"/{self.total}" if self.total else ""
        eta = ""
        if self.total and rate > 0 and self.done < self.total:
            eta = f", eta {_duration((self.total - self.done) / rate)}"
        unscored = ", ".join(f"{reason} {count}" for reason, count in sorted(self.unscored.items()))
        self.console.print(f"{self.label}: {self.done}{total} tasks, {rate:.1f}/s{eta}"
                           + (f"; unscored: {unscored}" if unscored else ""), markup=False,
                           highlight=False, soft_wrap=True)


def _duration(seconds: float) -> str:
    minutes, second = divmod(int(seconds), 60)
    hours, minute = divmod(minutes, 60)
    return f"{hours}:{minute:02d}:{second:02d}" if hours else f"{minute}:{second:02d}"
