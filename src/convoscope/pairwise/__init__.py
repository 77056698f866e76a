"""Pairwise judging: which of two responses to the same context is better.

* :func:`make_pairs` turns items (one per system and context) into pair items.
* :class:`PairwiseJudge` asks a model in both orders; an answer that follows the order is a
  tie marked ``position_flip``. It is a Judge like any other, so runs resume and cache as usual.
* :func:`win_rates`, :func:`bradley_terry` and :func:`position_bias_rates` read the verdicts.
* :func:`judge_pairs` does it all through the resumable run engine (``convoscope pairwise``).
"""

from convoscope.pairwise._judge import FLIP, TIE, PairwiseJudge, pairwise_criterion_name, resolve
from convoscope.pairwise._pairs import make_pairs, pair_sides
from convoscope.pairwise._run import (
    JudgeAgreement,
    JudgeSection,
    PairwiseReport,
    PeopleSection,
    compare_with_people,
    judge_pairs,
    judge_pairs_async,
)
from convoscope.pairwise._stats import (
    JudgePositionBias,
    Outcome,
    Strength,
    WinRate,
    bradley_terry,
    majority,
    majority_outcomes,
    outcomes,
    position_bias_rates,
    win_rates,
)

__all__ = [
    "FLIP",
    "TIE",
    "JudgePositionBias",
    "JudgeAgreement",
    "JudgeSection",
    "PeopleSection",
    "compare_with_people",
    "Outcome",
    "PairwiseJudge",
    "PairwiseReport",
    "Strength",
    "WinRate",
    "bradley_terry",
    "judge_pairs",
    "judge_pairs_async",
    "majority",
    "majority_outcomes",
    "make_pairs",
    "outcomes",
    "pair_sides",
    "pairwise_criterion_name",
    "position_bias_rates",
    "resolve",
    "win_rates",
]
