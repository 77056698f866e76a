"""Judges (model rubric judges, panels, judges written in Python), the Verdict they produce, and
reading verdict files back."""

from convoscope.judges._joint import JointJudge, joint_request
from convoscope.judges._judge import Judge, JudgeMode, RubricJudge, judge_key
from convoscope.judges._panel import Panel, PoolRule, TieRule, pool_values
from convoscope.judges._parse import Answer, parse_answer, score_distribution
from convoscope.judges._personas import PERSONA_RULES, PERSONAS, persona_rules, resolve_persona
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
from convoscope.judges._safety import SAFETY_RULES_VERSION, SafetyFlag, apply_offline_rules, safety_flags
from convoscope.judges._verdict import RETRYABLE_ON_REQUEST, TRANSIENT, UnscoredReason, Verdict

__all__ = [
    "PERSONAS",
    "PERSONA_RULES",
    "RETRYABLE_ON_REQUEST",
    "SAFETY_RULES_VERSION",
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
    "SafetyFlag",
    "TieRule",
    "Unscored",
    "UnscoredReason",
    "Verdict",
    "apply_offline_rules",
    "build_request",
    "fenced",
    "joint_request",
    "judge_key",
    "load_judge",
    "make_judge",
    "parse_answer",
    "persona_rules",
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
    "safety_flags",
    "score_distribution",
]
