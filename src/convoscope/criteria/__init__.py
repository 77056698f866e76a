"""Criteria, scales and the built-in suites (survey, dialogue-issues, response-candidates, kpi)."""

from convoscope.criteria._load import (
    CriteriaError,
    Suite,
    get_criterion,
    list_suites,
    load_criteria,
    load_suite,
    load_yaml,
)
from convoscope.criteria._model import Criterion, Evaluation, ExplanationOption, Level, Scale
from convoscope.criteria._render import (
    IDK,
    answer_schema,
    answer_words,
    describe_scale,
    missing_free_text,
    render_rubric,
)
from convoscope.criteria._select import select_criteria, suite_criteria

__all__ = [
    "IDK",
    "CriteriaError",
    "Criterion",
    "Evaluation",
    "ExplanationOption",
    "Level",
    "Scale",
    "Suite",
    "answer_schema",
    "answer_words",
    "describe_scale",
    "get_criterion",
    "list_suites",
    "load_criteria",
    "load_suite",
    "load_yaml",
    "missing_free_text",
    "render_rubric",
    "select_criteria",
    "suite_criteria",
]
