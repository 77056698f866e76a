"""convoscope: measure the quality of conversational responses.

The flow is carried by four nouns: an :class:`Item` is judged on a :class:`Criterion` by a judge
(or a person), producing a :class:`Verdict`. Everything else consumes or produces them.

The front door offers the verbs a notebook needs::

    import convoscope as cs

    items = cs.read_items("examples/survey_answers.csv", columns=cs.ColumnMap(response="answer"))
    result = cs.judge(items, [cs.criterion("survey:effort")], judge="embedded")
    result.to_pandas()                      # one row per verdict
    cs.agree(result.verdicts)               # agreement between the raters, per criterion

Every name is imported on first use (PEP 562), so ``import convoscope`` stays light: the models,
the statistics and the store load only when a verb that needs them is called.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name offered here -> (package it comes from, name there)
_EXPORTS: dict[str, tuple[str, str]] = {
    # the nouns
    "Item": ("convoscope.items", "Item"),
    "Turn": ("convoscope.items", "Turn"),
    "ColumnMap": ("convoscope.items", "ColumnMap"),
    "Criterion": ("convoscope.criteria", "Criterion"),
    "Scale": ("convoscope.criteria", "Scale"),
    "Verdict": ("convoscope.judges", "Verdict"),
    "RaterKind": ("convoscope.judges", "RaterKind"),
    "JudgeSpec": ("convoscope.runs", "JudgeSpec"),
    "RunResult": ("convoscope.runs", "RunResult"),
    "Store": ("convoscope.store", "Store"),
    # the verbs: read, choose criteria, judge, compare
    "read_items": ("convoscope.items", "read_items"),
    "items_from_table": ("convoscope.items", "items_from_table"),  # a DataFrame or a Dataset
    "items_to_table": ("convoscope.items", "items_to_table"),
    "verdicts_to_table": ("convoscope.items", "verdicts_to_table"),
    "write_jsonl": ("convoscope.items", "write_jsonl"),
    "write_csv": ("convoscope.items", "write_csv"),
    "criterion": ("convoscope.criteria", "get_criterion"),
    "suite": ("convoscope.criteria", "suite_criteria"),
    "select_criteria": ("convoscope.criteria", "select_criteria"),
    "list_suites": ("convoscope.criteria", "list_suites"),
    "load_criteria": ("convoscope.criteria", "load_criteria"),
    "judge": ("convoscope.runs", "judge"),
    "judge_async": ("convoscope.runs", "judge_async"),
    "open_model": ("convoscope.models", "open_model"),
    # judges written in Python (docs/python-judges.md)
    "python_judge": ("convoscope.judges", "python_judge"),
    "make_judge": ("convoscope.judges", "make_judge"),
    "PythonJudge": ("convoscope.judges", "PythonJudge"),
    "Unscored": ("convoscope.judges", "Unscored"),
    "read_verdicts": ("convoscope.judges", "read_verdicts"),
    "read_ratings": ("convoscope.analysis", "read_ratings"),
    "agree": ("convoscope.analysis", "agreement_table"),
    "metaeval": ("convoscope.analysis", "metaeval"),
    "metaeval_study": ("convoscope.analysis", "metaeval_study"),
    "judge_card": ("convoscope.card", "judge_card"),
    "compare": ("convoscope.comparison", "compare"),  # two runs side by side (docs/compare.md)
    "read_run_archive": ("convoscope.archive", "read_run_archive"),  # export-run's file (docs/compare.md)
    "JudgeCard": ("convoscope.card", "JudgeCard"),
    "rater_matrices": ("convoscope.analysis", "rater_matrices"),
    "write_report": ("convoscope.reports", "write_report"),
    # errors a caller may want to catch
    "ConvoscopeError": ("convoscope.errors", "ConvoscopeError"),
    "LocatedError": ("convoscope.errors", "LocatedError"),
    "ConfigError": ("convoscope.errors", "ConfigError"),
    "ModelError": ("convoscope.models", "ModelError"),
}

__all__ = [  # the keys of _EXPORTS (tests/test_front_door.py checks they agree)
    "ColumnMap",
    "ConfigError",
    "ConvoscopeError",
    "Criterion",
    "Item",
    "JudgeCard",
    "JudgeSpec",
    "LocatedError",
    "ModelError",
    "PythonJudge",
    "RaterKind",
    "RunResult",
    "Scale",
    "Store",
    "Turn",
    "Unscored",
    "Verdict",
    "agree",
    "compare",
    "criterion",
    "items_from_table",
    "items_to_table",
    "judge",
    "judge_async",
    "judge_card",
    "list_suites",
    "load_criteria",
    "make_judge",
    "metaeval",
    "metaeval_study",
    "open_model",
    "python_judge",
    "rater_matrices",
    "read_items",
    "read_ratings",
    "read_run_archive",
    "read_verdicts",
    "select_criteria",
    "suite",
    "verdicts_to_table",
    "write_csv",
    "write_jsonl",
    "write_report",
]


def __getattr__(name: str) -> Any:
    """Import a front-door name on first use and keep it (PEP 562)."""
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'convoscope' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names only (not the helpers this module imports for itself)."""
    return sorted([*__all__, "__version__"])


if TYPE_CHECKING:  # what type checkers and editors see; nothing is imported at run time
    from convoscope.analysis import agreement_table as agree
    from convoscope.analysis import metaeval, metaeval_study, rater_matrices, read_ratings
    from convoscope.archive import read_run_archive
    from convoscope.criteria import Criterion, Scale, list_suites, load_criteria, select_criteria
    from convoscope.criteria import get_criterion as criterion
    from convoscope.criteria import suite_criteria as suite
    from convoscope.errors import ConfigError, ConvoscopeError, LocatedError
    from convoscope.items import (
        ColumnMap,
        Item,
        Turn,
        items_from_table,
        items_to_table,
        read_items,
        verdicts_to_table,
        write_csv,
        write_jsonl,
    )
    from convoscope.judges import (
        PythonJudge,
        RaterKind,
        Unscored,
        Verdict,
        make_judge,
        python_judge,
        read_verdicts,
    )
    from convoscope.models import ModelError, open_model
    from convoscope.reports import write_report
    from convoscope.runs import JudgeSpec, RunResult, judge, judge_async
    from convoscope.store import Store
