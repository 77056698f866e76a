"""Judging runs: persisted as they go, resumable, summarised."""

from convoscope.runs._build import (
    EMBEDDED_DEFAULT,
    OFFLINE_WARNING,
    JudgeSpec,
    build_judge,
    is_embedded,
    judge,
    judge_async,
)
from convoscope.runs._run import RunSummary, applies, judge_items, run_id_for

__all__ = [
    "EMBEDDED_DEFAULT",
    "OFFLINE_WARNING",
    "JudgeSpec",
    "RunSummary",
    "applies",
    "build_judge",
    "is_embedded",
    "judge",
    "judge_async",
    "judge_items",
    "run_id_for",
]
