"""GRADE (Huang et al., EMNLP 2020): coherence of responses from four dialogue models on
DailyDialog, ConvAI2 and EmpatheticDialogues contexts, rated 1-5 by 8-11 AMT workers each.

File: ``human_judgement.json``, a list of ``ID``, ``Dataset``, ``DialogModel``, ``Context``
(utterances joined by ``|||``), ``Response`` and ``HumanScores`` — a *string* holding a JSON
list of the workers' scores.
"""

from __future__ import annotations

import json
from pathlib import Path

from convoscope.datasets._benchmark import (
    Benchmark,
    Dimension,
    Notes,
    alternate_speakers,
    describe,
    rate,
)
from convoscope.datasets._source import At, find_files, parse
from convoscope.items import Item
from convoscope.judges import Verdict

SOURCE = "Huang et al. (2020), GRADE: Automatic Graph-Enhanced Coherence Metric"
COHERENCE = Dimension(
    "coherence", "Does the response cohere with the conversation so far? 1 not at all to 5 fully.", 1, 5
)
RATERS = "human:<n> is the n-th AMT score of an item, not the same worker across items"


def load_grade(path: Path) -> Benchmark:
    """GRADE's 1,200 context-response pairs with every worker's coherence score."""
    notes = Notes()
    items: list[Item] = []
    human: list[Verdict] = []
    for file in find_files(Path(path), "grade", ("human_judgement.json",)):
        for item, verdicts in parse(file, lambda root: _records(root, notes)):
            items.append(item)
            human.extend(verdicts)
    return Benchmark(
        name="grade", granularity="turn", items=tuple(items), human=tuple(human),
        criteria=describe((COHERENCE,)), source=SOURCE, notes=notes.as_tuple(), meta={"raters": RATERS},
    )


def _records(root: At, notes: Notes) -> list[tuple[Item, list[Verdict]]]:
    found = []
    for record in root.each():
        utterances = [part.strip() for part in record["Context"].text().split("|||") if part.strip()]
        item = Item(
            id=f"grade:{record['ID'].integer()}", context=alternate_speakers(utterances),
            response=record["Response"].text().strip(),
            language="en", system=record["DialogModel"].text(),
            meta={"dataset": record["Dataset"].text()},
        )
        scores = _scores(record["HumanScores"])
        found.append((item, [rate(item, COHERENCE, f"human:{number}", score, notes)
                             for number, score in enumerate(scores.each(), start=1)]))
    return found


def _scores(at: At) -> At:
    """The scores are a JSON list inside a string; parse it and keep the field's path."""
    try:
        scores = json.loads(at.text())
    except json.JSONDecodeError as error:
        at.fail(f"expected a JSON list of scores inside the string ({error.msg})")
    if not isinstance(scores, list) or not scores:
        at.fail("expected a non-empty JSON list of scores inside the string")
    return At(scores, at.path)
