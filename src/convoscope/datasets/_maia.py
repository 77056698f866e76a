"""MAIA-DQE (Mendonça et al., GEM 2023): real customer-support chats between customers writing
German or Portuguese and English-speaking agents, joined by machine translation, annotated at
sentence, turn and dialogue level (one annotation per item).

Files: ``<lang>_client_<nn>.json``, each a list of ``id``, ``turns`` and ``dialog``. A turn has
``floor`` (``inbound`` = customer, ``outbound`` = agent), ``text_src`` (the sentences as written)
and ``text_mt`` (their machine translation), sentence-level label lists ``Correctness``,
``Templated``, ``Engagement``, ``Emotion`` and turn-level ``Understanding``, ``Sensibleness``,
``Politeness``, ``IQ`` (null where not annotated). Items show the conversation as the customer
saw it (customer's own words, agent's words translated); the English side is in ``meta``.
The same dialogue id in two files (pt_br_client_02 repeats pt_br_client_04) is read once: the
first file in name order wins and ``Benchmark.notes`` counts what was skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from convoscope.datasets._benchmark import Benchmark, Dimension, Notes, describe, rate, verdict
from convoscope.datasets._source import At, find_files, parse
from convoscope.items import Item, Turn
from convoscope.judges import Verdict

SOURCE = "Mendonça et al. (2023), Dialogue Quality and Emotion Annotations for Customer Support Conversations"
EMOTIONS = ("empathy", "happiness", "neutral", "disappointment", "confusion", "frustration", "anger",
            "anxiety")
LANGUAGES = {"de": "de", "pt-br": "pt-BR", "pt": "pt-PT"}
SPEAKERS = {"inbound": "customer", "outbound": "agent"}

SENTENCE = (
    Dimension("Correctness", "Is the sentence correct as the reader sees it? 0 no, 1 partly, 2 yes.", 0, 2),
    Dimension("Templated", "Is the sentence a canned, templated phrase? 0 no, 1 yes.", 0, 1),
    Dimension("Engagement", "Does the sentence engage with the conversation? 0 no, 1 yes.", 0, 1),
    Dimension("Emotion", "The emotion the sentence expresses, a label: " + ", ".join(EMOTIONS) + "."),
)
TURN = (
    Dimension("Understanding", "Does the turn show understanding of the previous turn? 0 no, 1 yes.", 0, 1),
    Dimension("Sensibleness", "Does the turn make sense in context? 0 no, 1 yes.", 0, 1),
    Dimension("Politeness", "Is the turn polite? 0 no, 1 yes.", 0, 1),
    Dimension("IQ", "Interaction quality of the dialogue up to this turn, 1 very poor to 5 very good.", 1, 5,
              name="interaction-quality"),
)
DIALOGUE = (
    Dimension("Task Sucess", "Was the customer's problem solved? 1 not at all to 5 fully.", 1, 5,
              name="task-success"),
    Dimension("Dropped conversation", "Did the conversation end without closure? 0 no, 1 yes.", 0, 1),
)
LEVELS = {"sentence": SENTENCE, "turn": TURN, "dialogue": DIALOGUE}
RATERS = "human:1 is the single annotation MAIA-DQE gives for each item"

Built = list[tuple[Item, list[Verdict]]]


def load_maia_turn(path: Path) -> Benchmark:
    """Every annotated MAIA-DQE turn with its turn-level labels."""
    return _load(Path(path), "turn")


def load_maia_sentence(path: Path) -> Benchmark:
    """Every MAIA-DQE sentence with its sentence-level labels (granularity 'turn': a sentence is
    judged in the context of the turns before it)."""
    return _load(Path(path), "sentence")


def load_maia_dialogue(path: Path) -> Benchmark:
    """Every MAIA-DQE dialogue with its task-success and dropped-conversation labels."""
    return _load(Path(path), "dialogue")


def _load(path: Path, level: str) -> Benchmark:
    notes = Notes()
    build = {"sentence": _sentences, "turn": _turns, "dialogue": _dialogue}[level]
    seen: dict[str, Any] = {}
    items: list[Item] = []
    human: list[Verdict] = []
    for file in find_files(path, "maia-dqe", ("*_client_*.json",)):
        for item, verdicts in parse(file, partial(_unseen, seen=seen, build=build, notes=notes, file=file)):
            items.append(item)
            human.extend(verdicts)
    return Benchmark(
        name=f"maia-dqe-{level}", granularity="dialogue" if level == "dialogue" else "turn",
        items=tuple(items), human=tuple(human), criteria=describe(LEVELS[level]), source=SOURCE,
        notes=notes.as_tuple(),
        meta={"raters": RATERS, **({"emotion_labels": EMOTIONS} if level == "sentence" else {})},
    )


def _unseen(root: At, seen: dict[str, Any], build: Callable[[At, Notes], Built], notes: Notes,
            file: Path) -> Built:
    """Build the dialogues whose id no earlier file had; note the repeats."""
    found: Built = []
    for record in root.each():
        dialog_id = record["id"].text()
        if dialog_id in seen:
            differs = "" if seen[dialog_id] == record.value else "; the repeat's labels differ"
            where = f"{dialog_id} in {file.name}"
            notes.add(f"repeated dialogue id read once, first file kept{differs}", where)
            continue
        seen[dialog_id] = record.value
        found.extend(build(record, notes))
    return found


def _conversation(record: At) -> tuple[str, dict[str, Any], list[tuple[Turn, str, At]]]:
    """The dialogue id, the fields every item shares, and each turn as the customer saw it
    (with its English side and its JSON node)."""
    dialog_id = record["id"].text()
    prefix = dialog_id.split("_")
    client = re.search(r"#(CLIENT-\d+)#", dialog_id)
    shared = {
        "language": LANGUAGES.get(prefix[1].lower(), prefix[1]) if len(prefix) > 1 else None,
        "system": client.group(1).lower() if client else None,
    }
    turns = []
    for turn in record["turns"].each():
        floor = turn["floor"].text()
        if floor not in SPEAKERS:
            turn["floor"].fail(f"expected 'inbound' or 'outbound', got {floor!r}")
        seen, english = ("text_src", "text_mt") if floor == "inbound" else ("text_mt", "text_src")
        text = " ".join(sentence.text().strip() for sentence in turn[seen].each())
        text_en = " ".join(sentence.text().strip() for sentence in turn[english].each())
        turns.append((Turn(speaker=SPEAKERS[floor], text=text), text_en, turn))
    return dialog_id, shared, turns


def _turn_item(item_id: str, shared: dict[str, Any], turn: Turn, context: list[Turn], **meta: Any) -> Item:
    # The client's support service (agent plus MT) is the system; a customer turn has none.
    system = shared["system"] if turn.speaker == "agent" else None
    return Item(id=item_id, context=tuple(context), response=turn.text, language=shared["language"],
                system=system, meta={"speaker": turn.speaker, **meta})


def _turns(record: At, notes: Notes) -> Built:
    dialog_id, shared, turns = _conversation(record)
    found = []
    for index, (turn, text_en, node) in enumerate(turns):
        item = _turn_item(f"{dialog_id}:{index}", shared, turn, [t for t, _, _ in turns[:index]],
                          dialogue=dialog_id, turn_index=index, response_en=text_en)
        verdicts = [rate(item, dimension, "human:1", label, notes)
                    for dimension in TURN if (label := node.get(dimension.key)) is not None]
        if verdicts:
            found.append((item, verdicts))
    return found


def _sentences(record: At, notes: Notes) -> Built:
    dialog_id, shared, turns = _conversation(record)
    found = []
    for index, (turn, _, node) in enumerate(turns):
        floor_seen = "text_src" if turn.speaker == "customer" else "text_mt"
        sentences = [sentence.text().strip() for sentence in node[floor_seen].each()]
        context = [t for t, _, _ in turns[:index]]
        labels = _aligned_labels(node, len(sentences), notes, f"{dialog_id}:{index}")
        for number, sentence in enumerate(sentences):
            item = _turn_item(f"{dialog_id}:{index}:{number}", shared, Turn(speaker=turn.speaker,
                              text=sentence), context, dialogue=dialog_id, turn_index=index,
                              sentence_index=number, turn_text=turn.text)
            verdicts = [_sentence_verdict(item, dimension, column[number], notes)
                        for dimension, column in labels if column[number].value is not None]
            if verdicts:
                found.append((item, verdicts))
    return found


def _aligned_labels(node: At, count: int, notes: Notes, where: str) -> list[tuple[Dimension, list[At]]]:
    """The sentence-label lists that have one label per sentence; the rest cannot be aligned."""
    aligned = []
    for dimension in SENTENCE:
        column = list(node[dimension.key].each())
        if column and len(column) != count:
            notes.add(f"'{dimension.criterion}' labels not one per sentence, skipped for that turn", where)
        elif column:
            aligned.append((dimension, column))
    return aligned


def _sentence_verdict(item: Item, dimension: Dimension, label: At, notes: Notes) -> Verdict:
    if dimension.key != "Emotion":
        return rate(item, dimension, "human:1", label, notes)
    code = label.integer()
    if not 0 <= code < len(EMOTIONS):
        label.fail(f"unknown emotion id {code} (expected 0-{len(EMOTIONS) - 1})")
    return verdict(item, dimension.criterion, "human:1", EMOTIONS[code])


def _dialogue(record: At, notes: Notes) -> Built:
    dialog_id, shared, turns = _conversation(record)
    item = Item(id=dialog_id, context=tuple(turn for turn, _, _ in turns), language=shared["language"],
                system=shared["system"], meta={"dialogue": dialog_id})
    labels = record["dialog"]
    verdicts = [rate(item, dimension, "human:1", label, notes)
                for dimension in DIALOGUE if (label := labels.get(dimension.key)) is not None]
    return [(item, verdicts)]
