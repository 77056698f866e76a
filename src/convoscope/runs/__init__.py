"""Judging runs: persisted as they go, resumable, shareable by several workers; results as values.

``judge(items, criteria, "embedded")`` returns a :class:`RunResult` (verdicts, summary,
``to_pandas()``, ``matrix(criterion)``) in scripts and notebooks alike; ``judge_async`` is the one
async core. The same run spreads over a Ray cluster (``judge_dataset``, the per-batch
``JudgeBatch`` for any engine that maps a function over tables) or over the cores of one machine
(``judge(..., workers=N)``). Exit statuses for CI are on :class:`RunSummary` (``EXIT_*``).
"""

from convoscope.runs._batchfn import BatchSettings, JudgeBatch, batch_settings, verdict_schema
from convoscope.runs._build import judge, judge_async, sampled_stream
from convoscope.runs._gate import (
    EXIT_BELOW_GATE,
    GateResult,
    GateRule,
    GateTally,
    check_gates,
    gate_rules,
    parse_gate,
    resolve_gates,
)
from convoscope.runs._here import build_judge, default_cache_path, run_sync
from convoscope.runs._options import (
    BESIDE_STORE,
    EMBEDDED_DEFAULT,
    OFFLINE_WARNING,
    JudgeSpec,
    RunOptions,
    as_specs,
    is_embedded,
    judge_specs,
)
from convoscope.runs._ray import connect, items_dataset, judge_dataset, verdicts_dataset
from convoscope.runs._repeats import SelfConsistency, self_consistency
from convoscope.runs._result import RunResult
from convoscope.runs._run import (
    DEFAULT_LEASE_S,
    Task,
    applies,
    judge_items,
    plan_tasks,
    run_id_for,
    run_judge,
)
from convoscope.runs._summary import (
    DEFAULT_MAX_UNSCORED,
    EXIT_OK,
    EXIT_OUTSTANDING,
    EXIT_TOO_MANY_UNSCORED,
    RunSummary,
)

__all__ = [
    "BESIDE_STORE",
    "BatchSettings",
    "DEFAULT_LEASE_S",
    "DEFAULT_MAX_UNSCORED",
    "EMBEDDED_DEFAULT",
    "EXIT_BELOW_GATE",
    "EXIT_OK",
    "EXIT_OUTSTANDING",
    "EXIT_TOO_MANY_UNSCORED",
    "OFFLINE_WARNING",
    "GateResult",
    "GateRule",
    "GateTally",
    "JudgeBatch",
    "JudgeSpec",
    "RunOptions",
    "RunResult",
    "RunSummary",
    "SelfConsistency",
    "Task",
    "applies",
    "as_specs",
    "batch_settings",
    "build_judge",
    "check_gates",
    "connect",
    "default_cache_path",
    "gate_rules",
    "is_embedded",
    "items_dataset",
    "judge",
    "judge_async",
    "judge_dataset",
    "judge_items",
    "judge_specs",
    "parse_gate",
    "plan_tasks",
    "resolve_gates",
    "run_id_for",
    "run_judge",
    "run_sync",
    "sampled_stream",
    "self_consistency",
    "verdict_schema",
    "verdicts_dataset",
]
