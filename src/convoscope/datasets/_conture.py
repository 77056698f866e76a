"""ConTurE (Ghazarian et al., Findings of ACL 2022): DSTC9 interactive dialogues with a turn-level
"overall impression" of every chatbot turn and the original DSTC9 dialogue-level ratings.

File: ``data.json``, a list of ``dialog_id``, ``turns`` (``user`` "User: ...", ``chatbot``
"Chatbot: ...", ``overall impression`` 0-2) and ``dialog_ratings`` (one dict per AMT worker).
The turn label is already aggregated (majority of three workers, ties settled by an expert), so
it becomes a single ``human:majority`` verdict; dialogue ratings stay one verdict per worker.
"""

from __future__ import annotations

from pathlib import Path

from convoscope.datasets._benchmark import Benchmark, Dimension, Notes, describe, rate
from convoscope.datasets._source import At, find_files, parse
from convoscope.items import Item, Turn
from convoscope.judges import Verdict

SOURCE = "Ghazarian et al. (2022), What is wrong with you?: Leveraging User Sentiment (ConTurE)"
IMPRESSION = Dimension(
    "overall impression",
    "Did the annotators like the chatbot's turn? 0 dislike, 1 kind of like, 2 like "
    "(majority of 3 workers, ties settled by an expert).", 0, 2,
)
DIALOGUE = (
    Dimension("consistent", "Does the chatbot avoid contradicting itself? 0 no, 1 yes.", 0, 1),
    Dimension("likeable", "Does the chatbot come across as likeable? 1 low to 3 high.", 1, 3),
    Dimension("diverse", "Are the chatbot's responses varied? 1 low to 3 high.", 1, 3),
    Dimension("informative", "Does the chatbot share useful information? 1 low to 3 high.", 1, 3),
    Dimension("coherent", "Does the conversation hang together and flow? 1 low to 3 high.", 1, 3),
    Dimension("understanding", "Does the chatbot understand the user? 1 low to 3 high.", 1, 3),
    Dimension("flexible", "Does the chatbot adapt to the user's interests? 1 low to 3 high.", 1, 3),
    Dimension("topic depth", "Does the chatbot go into topics in depth? 1 low to 3 high.", 1, 3),
    Dimension("error recovery", "Does the chatbot recover from its errors? 1 low to 3 high ('N/A' when "
              "there were none).", 1, 3),
    Dimension("inquisitive", "Does the chatbot ask questions and show curiosity? 1 low to 3 high.", 1, 3),
    Dimension("human (overall)", "Overall rating of the dialogue, 1 very poor to 5 very good.", 1, 5,
              name="overall"),
)


def load_conture_turn(path: Path) -> Benchmark:
    """ConTurE's 1,066 chatbot turns with their overall-impression label."""
    return _load(Path(path), "turn")


def load_conture_dialogue(path: Path) -> Benchmark:
    """ConTurE's 119 dialogues with the DSTC9 dialogue-level ratings of each worker."""
    return _load(Path(path), "dialogue")


def _load(path: Path, granularity: str) -> Benchmark:
    notes = Notes()
    items: list[Item] = []
    human: list[Verdict] = []
    build = _turns if granularity == "turn" else _dialogues
    for file in find_files(path, "conture", ("data.json",)):
        for item, verdicts in parse(file, lambda root: build(root, notes)):
            items.append(item)
            human.extend(verdicts)
    dimensions = (IMPRESSION,) if granularity == "turn" else DIALOGUE
    raters = ("human:majority is the aggregated turn label" if granularity == "turn"
              else "human:<n> is the n-th DSTC9 rating of a dialogue, not the same worker across dialogues")
    return Benchmark(
        name=f"conture-{granularity}", granularity=granularity,  # type: ignore[arg-type]
        items=tuple(items), human=tuple(human), criteria=describe(dimensions), source=SOURCE,
        notes=notes.as_tuple(), meta={"raters": raters, "systems": "chatbot identities are not given"},
    )


def _exchanges(dialogue: At) -> list[tuple[Turn, Turn, At]]:
    exchanges = []
    for turn in dialogue["turns"].each():
        user = Turn(speaker="user", text=_unprefix(turn["user"].text(), "User:"))
        bot = Turn(speaker="chatbot", text=_unprefix(turn["chatbot"].text(), "Chatbot:"))
        exchanges.append((user, bot, turn))
    return exchanges


def _turns(root: At, notes: Notes) -> list[tuple[Item, list[Verdict]]]:
    found = []
    for dialogue in root.each():
        dialog_id = dialogue["dialog_id"].integer()
        history: list[Turn] = []
        for index, (user, bot, turn) in enumerate(_exchanges(dialogue)):
            history.append(user)
            item = Item(id=f"conture:{dialog_id}:{index}", context=tuple(history), response=bot.text,
                        language="en", meta={"dialog_id": dialog_id, "turn_index": index})
            label = rate(item, IMPRESSION, "human:majority", turn["overall impression"], notes)
            found.append((item, [label]))
            history.append(bot)
    return found


def _dialogues(root: At, notes: Notes) -> list[tuple[Item, list[Verdict]]]:
    dimensions = {dimension.key: dimension for dimension in DIALOGUE}
    found = []
    for dialogue in root.each():
        dialog_id = dialogue["dialog_id"].integer()
        turns = tuple(turn for user, bot, _ in _exchanges(dialogue) for turn in (user, bot))
        item = Item(id=f"conture:{dialog_id}", context=turns, language="en", meta={"dialog_id": dialog_id})
        verdicts = []
        for number, ratings in enumerate(dialogue["dialog_ratings"].each(), start=1):
            for key, rating in ratings.entries():
                if key not in dimensions:
                    rating.fail(f"unknown DSTC9 quality '{key}' (expected one of: {', '.join(dimensions)})")
                verdicts.append(rate(item, dimensions[key], f"human:{number}", rating, notes))
        found.append((item, verdicts))
    return found


def _unprefix(text: str, prefix: str) -> str:
    return text[len(prefix):].strip() if text.startswith(prefix) else text.strip()
