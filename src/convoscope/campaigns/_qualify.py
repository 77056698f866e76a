"""The qualification decision: one candidate against each reference annotator (pure functions).

Seed 003 qualified a crowdworker when Fleiss' kappa of the internal annotators *together with the
worker* reached the internal annotators' own agreement (0.21). Pooled that way, the references'
agreement with each other carries the statistic: with two references who agree, a worker who
always clicks the first option still reaches about 0.4. So the decision here looks at the
candidate alone:

- Cohen's kappa of the candidate with EACH reference (linear-weighted when every criterion is a
  numeric range, so that 4 against 5 is a smaller miss than 1 against 5); each must reach
  ``min_kappa``. A kappa that is undefined (both used one and the same label) is left out, and
  the decision rests on accuracy; it says so.
- Accuracy against the references' majority answer (cells where the references tie are left
  out); it must reach ``min_accuracy``, as Potato's pre-study asks for a minimum share of
  correct answers.
- The references' own agreement (mean pairwise Cohen's kappa) is reported beside every decision:
  a candidate cannot be expected to agree with references who do not agree with each other.
- Enough answers to tell the candidate from chance: on a small batch a coin-flipper meets both
  minimums by luck (a third of them with 6 answers). So the candidate's hits against the
  majority must also be unlikely for someone answering at random: the chance of at least as many
  hits from Binomial(cells, 1 / number of answers on the scale) must not exceed ``max_chance_pass``
  (default 0.05). A candidate who meets the minimums but not this gets ``cannot_tell``: refused by
  default (``when_cannot_tell: refuse``), let through with ``admit``. Whatever the candidate
  does, a coin-flipper then passes at most that often.

The decision is a value: the rule, the numbers used, the outcome, and why when it cannot tell.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from itertools import combinations
from typing import Literal

from pydantic import BaseModel, ConfigDict

from convoscope.analysis import cohen_kappa
from convoscope.judges import Verdict

IDK = "idk"
Outcome = Literal["qualified", "not_qualified", "cannot_tell"]
RULE = ("Cohen's kappa with each reference >= {min_kappa} (left out where undefined) and accuracy "
        "against the references' majority >= {min_accuracy}")


class QualificationResult(BaseModel):
    """A qualification decision: the numbers used, the rule and the outcome.

    ``kappa`` is the lowest Cohen's kappa with a reference (None: undefined with every one),
    ``threshold`` the minimum it had to reach. Decisions stored before per-reference kappas
    existed have only ``kappa``, ``threshold``, ``qualified`` and ``note``.
    """

    model_config = ConfigDict(frozen=True)

    annotator: str
    kappa: float | None
    threshold: float
    qualified: bool
    note: str | None = None
    outcome: Outcome | None = None
    rule: str | None = None
    kappas: dict[str, float | None] = {}
    accuracy: float | None = None
    min_accuracy: float | None = None
    cells: int = 0
    majority_cells: int = 0
    weights: str | None = None
    references_kappa: float | None = None
    references_note: str | None = None
    chance_pass: float | None = None  # P(a random answerer gets as many majority hits), one-sided
    max_chance_pass: float | None = None


def _cells(verdicts: Sequence[Verdict], *, drop_idk: bool) -> dict[str, dict[tuple[str, str], str]]:
    """Rater -> (item, criterion) -> answer as text ("I don't know" is its own label)."""
    table: dict[str, dict[tuple[str, str], str]] = {}
    for verdict in verdicts:
        idk = verdict.unscored_reason == IDK
        if (idk and drop_idk) or (verdict.value is None and not idk):
            continue
        answer = IDK if idk else str(verdict.value)
        table.setdefault(verdict.rater, {})[(verdict.item_id, verdict.criterion)] = answer
    return table


def _kappa(first: dict[tuple[str, str], str], second: dict[tuple[str, str], str],
           labels: Sequence[str] | None) -> float | None:
    """Cohen's kappa over the cells both answered; None when undefined (one shared label, no cell)."""
    shared = sorted(set(first) & set(second))
    if not shared:
        return None
    a, b = [first[key] for key in shared], [second[key] for key in shared]
    try:
        if labels is not None:  # ordered: positions on the scale give the distance
            return cohen_kappa([labels.index(x) for x in a], [labels.index(x) for x in b],
                               weights="linear", labels=range(len(labels)))
        return cohen_kappa(a, b)
    except ValueError:
        return None


def majority_accuracy(candidate: dict[tuple[str, str], str],
                      references: Sequence[dict[tuple[str, str], str]]) -> tuple[float | None, int]:
    """Share of the candidate's answers equal to the references' majority, and the cells counted
    (cells where the references tie, or none answered, are left out)."""
    hits = counted = 0
    for key, answer in candidate.items():
        votes = Counter(ref[key] for ref in references if key in ref).most_common()
        if not votes or (len(votes) > 1 and votes[0][1] == votes[1][1]):
            continue
        counted += 1
        hits += answer == votes[0][0]
    return (hits / counted if counted else None), counted


def chance_of_hits(hits: int, cells: int, chance: float) -> float:
    """P(X >= hits) for X ~ Binomial(cells, chance): how often someone answering at random, right
    with probability ``chance`` on each cell, matches the majority at least ``hits`` times."""
    if not 0 <= hits <= cells or not 0 < chance <= 1:
        raise ValueError(f"need 0 <= hits <= cells and 0 < chance <= 1, got {hits}, {cells}, {chance}")
    return min(1.0, sum(math.comb(cells, k) * chance ** k * (1 - chance) ** (cells - k)
                        for k in range(hits, cells + 1)))


def references_agreement(tables: Sequence[dict[tuple[str, str], str]],
                         labels: Sequence[str] | None) -> tuple[float | None, str | None]:
    """Mean pairwise Cohen's kappa among the references, or None with the reason."""
    if len(tables) < 2:
        return None, "one reference: its own agreement cannot be measured"
    values = [_kappa(a, b, labels) for a, b in combinations(tables, 2)]
    defined = [value for value in values if value is not None]
    if not defined:
        return None, "the references' kappa is undefined (one shared label)"
    return sum(defined) / len(defined), None


def qualify(annotator: str, verdicts: Sequence[Verdict], references: Sequence[str], *,
            threshold: float, min_accuracy: float = 0.0,
            ordinal_labels: Sequence[str] | None = None, chance: float | None = None,
            max_chance_pass: float = 0.05, admit_cannot_tell: bool = False) -> QualificationResult:
    """Decide whether ``annotator`` qualifies against each of ``references`` (see the module text).

    ``threshold``: the minimum Cohen's kappa with each reference; ``min_accuracy``: the minimum
    share of answers equal to the references' majority; ``ordinal_labels``: the scale in order
    (weighted kappa; "I don't know" answers are then left out); ``chance``: the probability that
    a random answer equals the majority (1 / answers on the scale; None: not checked), and
    ``max_chance_pass`` the most a random answerer may have of doing as well as the candidate;
    ``admit_cannot_tell``: let a candidate through whom the batch cannot tell from chance. With
    no reference annotators, everyone qualifies.
    """
    rule = RULE.format(min_kappa=threshold, min_accuracy=min_accuracy)
    base: dict[str, object] = {"annotator": annotator, "threshold": threshold, "min_accuracy": min_accuracy,
                               "rule": rule, "weights": "linear" if ordinal_labels is not None else None}
    names = [name for name in references if name != annotator]
    if not names:
        return QualificationResult.model_validate({**base, "kappa": None, "qualified": True,
                                                   "outcome": "qualified",
                                                   "note": "no reference annotators configured"})
    table = _cells(verdicts, drop_idk=ordinal_labels is not None)
    mine = table.get(f"human:{annotator}", {})
    theirs = [table.get(f"human:{name}", {}) for name in names]
    kappas = {name: _kappa(mine, ref, ordinal_labels) for name, ref in zip(names, theirs, strict=True)}
    accuracy, counted = majority_accuracy(mine, theirs)
    own, own_note = references_agreement(theirs, ordinal_labels)
    defined = [value for value in kappas.values() if value is not None]
    luck = (chance_of_hits(round(accuracy * counted), counted, chance)
            if chance is not None and accuracy is not None else None)
    base |= {"kappas": kappas, "accuracy": accuracy, "cells": len(mine), "majority_cells": counted,
             "references_kappa": own, "references_note": own_note,
             "kappa": min(defined) if defined else None, "chance_pass": luck,
             "max_chance_pass": max_chance_pass if chance is not None else None}
    decided = _outcome(defined, accuracy, threshold, min_accuracy, kappas)
    if decided["outcome"] == "qualified" and luck is not None and luck > max_chance_pass:
        hits = round((accuracy or 0.0) * counted)
        decided = {"qualified": admit_cannot_tell, "outcome": "cannot_tell",
                   "note": f"cannot tell from chance: {hits} of {counted} answers equal the references' "
                           f"majority, which someone answering at random reaches with probability "
                           f"{luck:.3f} (more than {max_chance_pass}); the qualification batch is too "
                           "small for this rule, " + ("let through" if admit_cannot_tell else "refused")}
    return QualificationResult.model_validate({**base, **decided})


def _outcome(defined: list[float], accuracy: float | None, threshold: float, min_accuracy: float,
             kappas: dict[str, float | None]) -> dict[str, object]:
    if accuracy is None:
        return {"qualified": True, "outcome": "cannot_tell",
                "note": "cannot tell: the references agree by majority on none of the candidate's "
                        "answers; let through, to be reviewed (gold checks still apply)"}
    low = [f"{name} {value:.3f}" for name, value in kappas.items() if value is not None and value < threshold]
    reasons = [f"kappa below {threshold} with " + ", ".join(low)] if low else []
    if accuracy < min_accuracy:
        reasons.append(f"accuracy {accuracy:.3f} below {min_accuracy}")
    undefined = [name for name, value in kappas.items() if value is None]
    notes = list(reasons)
    if undefined:
        notes.append("kappa undefined with " + ", ".join(undefined) + " (one shared label or no shared "
                     "answer): decided " + ("by accuracy" if not defined else "without it"))
    qualified = not reasons and not math.isnan(accuracy)
    return {"qualified": qualified, "outcome": "qualified" if qualified else "not_qualified",
            "note": "; ".join(notes) or None}
