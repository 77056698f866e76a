"""What the survey needs to know about its judges, whatever they are: model specs
(``JudgeSpec``, ``python:MODULE:NAME`` among them) or judges built in Python (issue 38)."""

from __future__ import annotations

from typing import Any

from convoscope.judges._python import is_python_spec
from convoscope.runs import JudgeSpec


def judge_name(spec: Any) -> str:
    """A judge's name for output: its model spec, or a built judge's rater (``python:NAME``)."""
    return spec.model if isinstance(spec, JudgeSpec) else str(getattr(spec, "rater", spec))


def model_spec(spec: Any) -> str | None:
    """The model spec of a judge that is a model (not ``python:`` code, not a built judge):
    only a model can be asked to write a follow-up question."""
    if isinstance(spec, JudgeSpec) and not is_python_spec(spec.model):
        return spec.model
    return None
