"""Judging runs: persisted as they go, resumable, summarised."""

from convoscope.runs._run import RunSummary, applies, judge_items, run_id_for

__all__ = ["RunSummary", "applies", "judge_items", "run_id_for"]
