"""Judges (model rubric judges, panels, judges written in Python), the Verdict they produce, and
reading verdict files back."""

from convoscope.judges._joint import JointJudge, joint_request
from convoscope.judges._judge import Judge, JudgeMode, RubricJudge, judge_key
from convoscope.judges._panel import Panel, PoolRule, TieRule, pool_values
from convoscope.judges._parse import Answer, parse_answer, score_distribution
from convoscope.judges._personas import PERSONAS, resolve_persona
from convoscope.judges._prompt import (
    build_request,
    render_completion_prompt,
    render_item,
    render_messages,
)
from convoscope.judges._python import PythonJudge, Unscored, load_judge, make_judge, python_judge
from convoscope.judges._quote import fenced, quote, quote_for_scoring, quote_object
from convoscope.judges._rater import RaterKind
from convoscope.judges._read import read_verdicts
from convoscope.judges._verdict import RETRYABLE_ON_REQUEST, TRANSIENT, UnscoredReason, Verdict

__all__ = [
    "PERSONAS",
    "RETRYABLE_ON_REQUEST",
    "TRANSIENT",
    "Answer",
    "JointJudge",
    "Judge",
    "JudgeMode",
    "Panel",
    "PoolRule",
    "PythonJudge",
    "RaterKind",
    "RubricJudge",
    "TieRule",
    "Unscored",
    "UnscoredReason",
    "Verdict",
    "build_request",
    "fenced",
    "joint_request",
    "judge_key",
    "load_judge",
    "make_judge",
    "parse_answer",
    "pool_values",
    "python_judge",
    "quote",
    "quote_for_scoring",
    "quote_object",
    "read_verdicts",
    "render_completion_prompt",
    "render_item",
    "render_messages",
    "resolve_persona",
    "score_distribution",
]
