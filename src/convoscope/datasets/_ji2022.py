"""Ji et al. (ACL 2022), "Achieving Reliable Human Assessment of Open-Domain Dialogue Systems":
AMT workers chatted with ParlAI systems and a deliberately broken quality-control bot, then rated
each whole conversation on seven criteria with 0-100 sliders.

Files: ``pass_*.json`` / ``fail_*.json`` (workers who did / did not tell the quality-control bot
apart), each a list of HITs ``{AssignmentId, HITId, WorkerId, data: [conversation, ...]}``; a
conversation has ``model`` (letter A-E, ``_p`` = with persona, or ``QualityControl``),
``dialogue`` (``{round, user, bot}``), ``raw scores`` (criterion -> 0-100), ``z scores``,
``topic``, ``change of topic`` and ``feedback``. Each conversation is rated by the worker who had
it, so agreement can only be studied across workers of the same system, not per item.
Worker ids are replaced by a stable pseudonym (a hash), so per-worker analysis still works
without publishing the AMT ids.
"""

from __future__ import annotations

import hashlib
import re
from functools import partial
from pathlib import Path

from convoscope.analysis import Rating
from convoscope.datasets._benchmark import Benchmark, Dimension, Notes, describe, rate
from convoscope.datasets._source import At, find_files, parse
from convoscope.items import Item, Turn
from convoscope.judges import Verdict

SOURCE = "Ji et al. (2022), Achieving Reliable Human Assessment of Open-Domain Dialogue Systems"
_FILE = re.compile(r"^(pass|fail)_(.+)$")


def _slider(key: str, description: str) -> Dimension:
    return Dimension(key, f"{description} 0-100 slider (agreement with the statement).", 0, 100)


# "robotic" and "repetitive" were asked as negative statements; the released scores are already
# reversed (100 - answer), so every criterion reads higher = better: the z-scores shipped in the
# files equal the per-worker standardisation of the raw scores as stored (to 2e-7), and not of
# their reversal (max difference 6.7); "robotic" correlates +.41 with "interesting".
CRITERIA = (
    _slider("robotic", "The chatbot did not come across as a machine (reversed negative statement: "
                       "higher is better)."),
    _slider("interesting", "The conversation with the chatbot was interesting."),
    _slider("fun", "Talking to the chatbot was fun."),
    _slider("consistent", "The chatbot's replies were consistent with each other."),
    _slider("fluent", "The chatbot's English was fluent."),
    _slider("repetitive", "The chatbot did not repeat itself (reversed negative statement: higher is "
                          "better)."),
    _slider("topic", "The chatbot stayed on the topic of the conversation."),
)
NULL_Z = ("conversations without z-scores (the worker gave every conversation the same score, so no "
          "per-worker z exists; skipped in derived['z'] as in the authors' analysis)")


def load_ji2022(path: Path) -> Benchmark:
    """The conversations rated by workers who passed the quality control (the paper's reliable
    set). Given a single file, that file is read whatever its name."""
    return _load(Path(path), "ji2022", ("pass_*.json",))


def load_ji2022_all(path: Path) -> Benchmark:
    """Every rated conversation, from workers who passed and who failed the quality control
    (``item.meta['qc']``), for studying annotator screening. In the public release some failed
    workers have null z-scores (constant ratings): their raw ratings are kept, their z-scores are
    skipped and counted in ``notes``."""
    return _load(Path(path), "ji2022-all", ("pass_*.json", "fail_*.json"))


def _load(path: Path, name: str, patterns: tuple[str, ...]) -> Benchmark:
    notes = Notes()
    items: list[Item] = []
    human: list[Verdict] = []
    z_scores: list[Rating] = []
    for file in find_files(path, "ji2022-dialogue-eval", patterns):
        for item, verdicts, standardised in parse(file, partial(_hits, stem=file.stem, notes=notes)):
            items.append(item)
            human.extend(verdicts)
            z_scores.extend(standardised)
    return Benchmark(
        name=name, granularity="dialogue", items=tuple(items), human=tuple(human),
        criteria=describe(CRITERIA), source=SOURCE, notes=notes.as_tuple(),
        meta={"raters": "human:w-<hash> is a stable pseudonym of the AMT worker who had the conversation",
              "systems": "letters A-E are anonymised ParlAI models (_p = with persona); "
                         "QualityControl is the deliberately broken bot",
              "derived": "z: the authors' per-worker z-scores of the raw 0-100 ratings, one Rating "
                         "per verdict (same item, criterion and rater)"},
        derived={"z": tuple(z_scores)},
    )


def pseudonym(worker_id: str) -> str:
    return "w-" + hashlib.sha256(worker_id.encode("utf-8")).hexdigest()[:12]


def _hits(root: At, stem: str, notes: Notes) -> list[tuple[Item, list[Verdict], list[Rating]]]:
    dimensions = {dimension.key: dimension for dimension in CRITERIA}
    match = _FILE.match(stem)
    qc, run = (match.group(1), match.group(2)) if match else (None, stem)
    found = []
    for hit in root.each():
        rater = "human:" + pseudonym(hit["WorkerId"].text())
        for conversation in hit["data"].each():
            item = _conversation_item(conversation, stem, qc, run, hit["HITId"].text())
            verdicts = []
            for key, score in conversation["raw scores"].entries():
                if key not in dimensions:
                    score.fail(f"unknown criterion '{key}' (expected one of: {', '.join(dimensions)})")
                verdicts.append(rate(item, dimensions[key], rater, score, notes))
            found.append((item, verdicts, _z_scores(item, conversation, rater, dimensions, notes)))
    return found


def _z_scores(item: Item, conversation: At, rater: str, dimensions: dict[str, Dimension],
              notes: Notes) -> list[Rating]:
    """The per-worker z-scores the file ships beside the raw scores (absent in some copies); a
    conversation whose z-scores are all null is skipped and counted."""
    if conversation.get("z scores") is None:
        return []
    if all(score.value is None for _, score in conversation["z scores"].entries()):
        notes.add(NULL_Z, item.id)
        return []
    found = []
    for key, score in conversation["z scores"].entries():
        if key not in dimensions:
            score.fail(f"unknown criterion '{key}' (expected one of: {', '.join(dimensions)})")
        if isinstance(score.value, bool) or not isinstance(score.value, int | float):
            score.fail(f"a z-score must be a number, got {score.value!r}"[:120])
        found.append(Rating(item_id=item.id, criterion=dimensions[key].criterion, rater=rater,
                            value=float(score.value), language=item.language, system=item.system))
    return found


def _conversation_item(conversation: At, stem: str, qc: str | None, run: str, hit_id: str) -> Item:
    hit_index, index = conversation.path[0], conversation.path[2]
    turns = []
    for exchange in conversation["dialogue"].each():
        turns.append(Turn(speaker="user", text=exchange["user"].text().strip()))
        turns.append(Turn(speaker="bot", text=exchange["bot"].text().strip()))
    feedback = conversation.get("feedback")
    return Item(
        id=f"ji2022:{stem}:{hit_index}:{index}", context=tuple(turns), language="en",
        system=conversation["model"].text(),
        meta={"qc": qc, "run": run, "hit": hit_id, "topic": conversation.value.get("topic"),
              "change_of_topic": conversation.value.get("change of topic"),
              "feedback": feedback.text() if feedback else None},
    )
