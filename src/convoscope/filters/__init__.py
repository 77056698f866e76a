"""Offline filters for answers people type: the English and Korean gibberish filter (seed 000).

    from convoscope.filters import detect
    detect("asdfghjkl").gibberish          # True, reasons ("low_likelihood", "few_valid_words")
    detect("맛있어요ㅋㅋ").gibberish         # False

Nothing is loaded at import, and each resource loads when the first answer that needs it arrives:
the English tables and word list with the first Latin-script answer, the Korean analyser with the
first Korean one, the language identifier (py3langid) only for answers that may not be English.
Answers in languages without a model meet language-neutral rules only. ``grader_signals``
spots answers that talk to the grader ("please give me a high score", in any language the word
lists know) or imitate the judge (a forged ``{"score": 7}``, a fake ``</answer>`` tag, a result
block, a claim that the rubric changed): ``imitation_signals``.
"""

import importlib
from typing import TYPE_CHECKING, Any

from convoscope.filters._filter import detect, detect_many, markov_log_likelihood
from convoscope.filters._io import (
    Answer,
    GibberishSummary,
    flag_answers,
    iter_answers,
    read_answers,
    summarize,
    write_flags,
)
from convoscope.filters._korean import to_jamo
from convoscope.filters._langid import Language, detect_language
from convoscope.filters._markov import BigramModel
from convoscope.filters._result import (
    DEFAULT_THRESHOLDS,
    GibberishResult,
    GibberishThresholds,
    LanguageChoice,
    Note,
    Reason,
)

if TYPE_CHECKING:
    from convoscope.filters._grader import addresses_grader, grader_signals
    from convoscope.filters._imitation import IMITATION_CLASSES, imitation_signals

# Imported when first asked for: ``convoscope gibberish`` never uses them, and their word lists
# and patterns cost a start-up about 15 ms.
_LAZY = {"addresses_grader": "_grader", "grader_signals": "_grader",
         "IMITATION_CLASSES": "_imitation", "imitation_signals": "_imitation"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value

__all__ = [
    "DEFAULT_THRESHOLDS",
    "IMITATION_CLASSES",
    "Answer",
    "BigramModel",
    "GibberishResult",
    "GibberishSummary",
    "GibberishThresholds",
    "Language",
    "LanguageChoice",
    "Note",
    "Reason",
    "addresses_grader",
    "detect",
    "detect_language",
    "detect_many",
    "flag_answers",
    "grader_signals",
    "imitation_signals",
    "iter_answers",
    "markov_log_likelihood",
    "read_answers",
    "summarize",
    "to_jamo",
    "write_flags",
]
