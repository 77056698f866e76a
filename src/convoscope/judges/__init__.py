"""Judges, panels and the Verdict they produce."""

from convoscope.judges._verdict import UnscoredReason, Verdict

__all__ = ["UnscoredReason", "Verdict"]
