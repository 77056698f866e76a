"""ABC-Eval behaviour labels (Finch et al., ACL 2023; GPT-ABCEval, SIGDIAL 2023): nine binary
behaviours of every bot turn in 108 test dialogues, labelled by two people, by GPT-3.5 and, for
six behaviours, by a specialised classifier.

File: ``behavior-classification-results.json``, an object ``"(a,b)_<bot>" -> [turn, ...]``,
each turn ``{"user", "system", "behaviors": {name: {"human": [0|1, 0|1], "gpt": 0|1,
"specialized": 0|1 (optional)}}}``, in dialogue order. The automatic labels are kept apart from
the human ones, in ``Benchmark.published``.
"""

from __future__ import annotations

import re
from pathlib import Path

from convoscope.datasets._benchmark import Benchmark, Dimension, Notes, describe, rate
from convoscope.datasets._source import At, find_files, parse
from convoscope.items import Item, Turn
from convoscope.judges import Verdict

SOURCE = "Finch, Finch & Choi (2023), Don't Forget Your ABC's; Finch, Paek & Choi (2023), GPT-ABCEval"
PUBLISHED_RATERS = {"gpt": "model:gpt-3.5-turbo", "specialized": "model:abc-eval-specialized"}
_KEY = re.compile(r"^\((\d+),(\d+)\)_(.+)$")


def _behaviour(key: str, description: str) -> Dimension:
    return Dimension(key, f"{description} 1 = the turn shows it, 0 = it does not.", 0, 1)


BEHAVIOURS = (
    _behaviour("self contradiction", "The bot contradicts something it said earlier."),
    _behaviour("empathetic", "The bot responds to the user's feelings with understanding."),
    _behaviour("lack of empathy", "The bot misreads or ignores the user's feelings."),
    _behaviour("irrelevant", "The response has nothing to do with the conversation."),
    _behaviour("ignore", "The bot ignores what the user just said."),
    _behaviour("incorrect fact", "The bot states something factually wrong."),
    _behaviour("commonsense contradiction", "The bot says something against common sense."),
    _behaviour("partner contradiction", "The bot misremembers or contradicts what the user said."),
    _behaviour("redundant", "The bot needlessly repeats itself."),
)


def load_abc_eval(path: Path) -> Benchmark:
    """ABC-Eval's 1,634 bot turns with both people's label for each behaviour."""
    notes = Notes()
    items: list[Item] = []
    human: list[Verdict] = []
    published: list[Verdict] = []
    for file in find_files(Path(path), "abc-eval-gpt", ("behavior-classification-results.json",)):
        for item, people, machines in parse(file, lambda root: _dialogues(root, notes)):
            items.append(item)
            human.extend(people)
            published.extend(machines)
    return Benchmark(
        name="abc-eval", granularity="turn", items=tuple(items), human=tuple(human),
        criteria=describe(BEHAVIOURS), published=tuple(published), source=SOURCE, notes=notes.as_tuple(),
        meta={"raters": "human:1 and human:2 are the first and second label of a turn (Surge AI "
                        "annotators), not the same people across dialogues"},
    )


def _dialogues(root: At, notes: Notes) -> list[tuple[Item, list[Verdict], list[Verdict]]]:
    dimensions = {dimension.key: dimension for dimension in BEHAVIOURS}
    found = []
    for key, turns in root.entries():
        match = _KEY.match(key)
        if match is None:
            turns.fail(f"dialogue key {key!r} is not of the form '(a,b)_<bot>'")
        history: list[Turn] = []
        for index, turn in enumerate(turns.each()):
            history.append(Turn(speaker="user", text=turn["user"].text().strip()))
            response = turn["system"].text().strip()
            item = Item(id=f"abc:{key}:{index}", context=tuple(history), response=response,
                        language="en", system=match.group(3), meta={"dialogue": key, "turn_index": index})
            people: list[Verdict] = []
            machines: list[Verdict] = []
            for name, labels in turn["behaviors"].entries():
                if name not in dimensions:
                    labels.fail(f"unknown behaviour '{name}' (expected one of: {', '.join(dimensions)})")
                dimension = dimensions[name]
                for number, label in enumerate(labels["human"].each(), start=1):
                    people.append(rate(item, dimension, f"human:{number}", label, notes))
                for source, rater in PUBLISHED_RATERS.items():
                    if labels.get(source) is not None:
                        machines.append(rate(item, dimension, rater, labels[source], notes))
            found.append((item, people, machines))
            history.append(Turn(speaker="system", text=response))
    return found
