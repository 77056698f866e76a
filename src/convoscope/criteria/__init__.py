"""Criteria, scales and the built-in suites."""

from convoscope.criteria._model import Criterion, ExplanationOption, Level, Scale

__all__ = ["Criterion", "ExplanationOption", "Level", "Scale"]
