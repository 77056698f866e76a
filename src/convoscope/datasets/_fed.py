"""FED (Mehri & Eskenazi, SIGDIAL 2020): turn- and dialogue-level ratings by 5 AMT workers.

File: ``fed_data.json``, a list of records with ``context`` ("User: ..."/"System: ..." lines),
``system``, ``annotations`` (quality -> list of 5 ratings) and, for turn-level records only,
``response``. Workers sometimes wrote "N/A (reason)" instead of a score: such a rating becomes
an unscored verdict (``not_applicable``) that keeps the worker's words as its reason.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from convoscope.datasets._benchmark import Benchmark, Dimension, Notes, describe, rate
from convoscope.datasets._source import At, find_files, parse
from convoscope.items import Item, Turn
from convoscope.judges import Verdict

SOURCE = "Mehri & Eskenazi (2020), Unsupervised Evaluation of Interactive Dialog with DialoGPT"
RATERS = "human:<n> is the n-th of the 5 AMT ratings of an item, not the same worker across items"

TURN = (
    Dimension("Interesting", "Would most people find the response interesting? 0 no, 1 a bit, 2 yes.", 0, 2),
    Dimension("Engaging", "Is the response engaging? 0 no, 1 somewhat, 2 yes.", 0, 2),
    Dimension("Specific", "Is the response specific to the conversation rather than generic? 0-2.", 0, 2),
    Dimension("Relevant", "Is the response relevant to the conversation? 0 no, 1 somewhat, 2 yes.", 0, 2),
    Dimension("Correct", "Is the response correct, free of misunderstanding of the conversation? 0-2.", 0, 2),
    Dimension("Semantically appropriate", "Is the response semantically appropriate? 0-2.", 0, 2),
    Dimension("Understandable", "Can the response be understood? 0 no, 1 yes.", 0, 1),
    Dimension("Fluent", "Is the response fluently written? 0 no, 1 somewhat, 2 yes.", 0, 2),
    Dimension("Overall", "Overall impression of the response, 0 very poor to 4 very good.", 0, 4),
)
DIALOGUE = (
    Dimension("Coherent", "Does the system stay coherent and keep a good flow throughout? 0-2.", 0, 2),
    Dimension("Error recovery", "Does the system recover from its own errors? 0-2 ('N/A' when none).", 0, 2),
    Dimension("Consistent", "Is the information the system gives consistent throughout? 0 no, 1 yes.", 0, 1),
    Dimension("Diverse", "Are the system's responses diverse? 0-2.", 0, 2),
    Dimension("Depth", "Does the system discuss topics in depth? 0-2.", 0, 2, name="topic-depth"),
    Dimension("Likeable", "Does the system show a likeable personality? 0-2.", 0, 2),
    Dimension("Understanding", "Does the system understand the user well? 0-2.", 0, 2),
    Dimension("Flexible", "Does the system adapt to the user and their interests? 0-2.", 0, 2),
    Dimension("Informative", "Is the system informative throughout? 0-2.", 0, 2),
    Dimension("Inquisitive", "Does the system ask questions and show curiosity? 0-2.", 0, 2),
    Dimension("Overall", "Overall impression of the dialogue, 0 very poor to 4 very good.", 0, 4),
)


def load_fed_turn(path: Path) -> Benchmark:
    """The 375 rated system turns of FED, each with its conversation so far."""
    return _load(Path(path), "turn")


def load_fed_dialogue(path: Path) -> Benchmark:
    """The 125 rated whole dialogues of FED."""
    return _load(Path(path), "dialogue")


def _load(path: Path, granularity: str) -> Benchmark:
    dimensions = TURN if granularity == "turn" else DIALOGUE
    notes = Notes()
    items: list[Item] = []
    human: list[Verdict] = []
    for file in find_files(path, "fed", ("fed_data.json",)):
        found = parse(file, partial(_records, stem=file.stem, granularity=granularity, notes=notes))
        for item, verdicts in found:
            items.append(item)
            human.extend(verdicts)
    return Benchmark(
        name=f"fed-{granularity}", granularity=granularity,  # type: ignore[arg-type]
        items=tuple(items), human=tuple(human), criteria=describe(dimensions),
        source=SOURCE, notes=notes.as_tuple(), meta={"raters": RATERS},
    )


def _records(root: At, stem: str, granularity: str, notes: Notes) -> list[tuple[Item, list[Verdict]]]:
    dimensions = {dimension.key: dimension for dimension in (TURN if granularity == "turn" else DIALOGUE)}
    found = []
    for record in root.each():
        is_turn = record.get("response") is not None
        if is_turn != (granularity == "turn"):
            continue
        item = Item(
            id=f"fed:{record.path[0]}" if stem == "fed_data" else f"fed:{stem}:{record.path[0]}",
            context=parse_lines(record["context"]),
            response=_strip_speaker(record["response"].text()) if is_turn else None,
            language="en", system=record["system"].text(),
            meta={"source_index": record.path[0]},
        )
        verdicts = []
        for key, ratings in record["annotations"].entries():
            if key not in dimensions:
                ratings.fail(f"unknown quality '{key}' for {granularity}-level FED "
                             f"(expected one of: {', '.join(dimensions)})")
            for number, rating in enumerate(ratings.each(), start=1):
                verdicts.append(rate(item, dimensions[key], f"human:{number}", rating, notes))
        found.append((item, verdicts))
    return found


def parse_lines(at: At) -> tuple[Turn, ...]:
    """'User: hi\\nSystem: hello' -> turns; a line without a speaker continues the turn before."""
    turns: list[Turn] = []
    for line in at.text().splitlines():
        speaker, sep, said = line.partition(": ")
        if sep and speaker in ("User", "System"):
            turns.append(Turn(speaker=speaker.lower(), text=said.strip()))
        elif turns:
            turns[-1] = Turn(speaker=turns[-1].speaker, text=f"{turns[-1].text}\n{line}".strip())
        elif line.strip():
            at.fail(f"the first line must start with 'User: ' or 'System: ', got {line[:40]!r}")
    return tuple(turns)


def _strip_speaker(text: str) -> str:
    return text.partition(": ")[2].strip() if text.startswith("System: ") else text.strip()
