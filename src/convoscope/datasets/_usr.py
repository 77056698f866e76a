"""USR (Mehri & Eskenazi, ACL 2020): responses to Topical-Chat and PersonaChat contexts, each
rated on six qualities by the same three expert annotators per context.

Files: ``usr_topical_chat.json`` (also distributed as ``tc_usr_data.json``) and
``pc_usr_data.json``: a list of contexts with ``context`` (one utterance per line), ``fact``
(the knowledge snippet, or the responder's persona), ``annotators`` (ids) and ``responses``
(``response``, ``model``, and per quality one rating per annotator, in annotator order).
"""

from __future__ import annotations

from pathlib import Path

from convoscope.datasets._benchmark import (
    Benchmark,
    Dimension,
    Notes,
    alternate_speakers,
    describe,
    kebab,
    rate,
)
from convoscope.datasets._source import At, find_files, parse
from convoscope.items import Item, Turn
from convoscope.judges import Verdict

SOURCE = "Mehri & Eskenazi (2020), USR: An Unsupervised and Reference Free Evaluation Metric"
GROUND_TRUTH = "Original Ground Truth"

DIMENSIONS = (
    Dimension("Understandable", "Can the response be understood on its own? 0 no, 1 yes.", 0, 1),
    Dimension("Natural", "Is it something a person would naturally say? 1 no, 2 somewhat, 3 yes.", 1, 3),
    Dimension("Maintains Context", "Does it follow on from the conversation so far? 1 no, 2 somewhat, 3 yes.",
              1, 3),
    Dimension("Engaging", "Is it dull (1), somewhat interesting (2) or interesting (3)?", 1, 3),
    Dimension("Uses Knowledge", "Does it use the given fact or persona? 0 no, 1 yes (the fact is in "
              "item.meta).", 0, 1),
    Dimension("Overall", "Overall quality of the response, 1 very bad to 5 very good.", 1, 5),
)
SETS = {
    "tc": ("usr-topicalchat", ("usr_topical_chat.json", "tc_usr_data.json"), "knowledge"),
    "pc": ("usr-personachat", ("pc_usr_data.json",), "persona"),
}


def load_usr_topicalchat(path: Path) -> Benchmark:
    """USR's 360 rated responses to 60 Topical-Chat contexts."""
    return _load(Path(path), "tc")


def load_usr_personachat(path: Path) -> Benchmark:
    """USR's 300 rated responses to 60 PersonaChat contexts."""
    return _load(Path(path), "pc")


def _load(path: Path, part: str) -> Benchmark:
    name, patterns, fact_key = SETS[part]
    notes = Notes()
    items: list[Item] = []
    human: list[Verdict] = []
    for file in find_files(path, "usr", patterns):
        for item, verdicts in parse(file, lambda root: _contexts(root, part, fact_key, notes)):
            items.append(item)
            human.extend(verdicts)
    return Benchmark(
        name=name, granularity="turn", items=tuple(items), human=tuple(human),
        criteria=describe(DIMENSIONS), source=SOURCE, notes=notes.as_tuple(),
        meta={"raters": "human:<annotator id> as given in the file's 'annotators' list"},
    )


def _contexts(root: At, part: str, fact_key: str, notes: Notes) -> list[tuple[Item, list[Verdict]]]:
    found = []
    for record in root.each():
        index = record.path[0]
        context = split_utterances(record["context"].text())
        annotators = [annotator.text() for annotator in record["annotators"].each()]
        responses = list(record["responses"].each())
        truth = [r for r in responses if r["model"].text() == GROUND_TRUTH]
        reference = truth[0]["response"].text().strip() if truth else None
        for response in responses:
            model = response["model"].text()
            item = Item(
                id=f"usr-{part}:{index}:{kebab(model)}", context=context,
                response=response["response"].text().strip(),
                reference=None if model == GROUND_TRUTH else reference,
                language="en", system=model,
                meta={fact_key: record["fact"].text().strip(), "context_index": index},
            )
            found.append((item, _ratings(item, response, annotators, notes)))
    return found


def _ratings(item: Item, response: At, annotators: list[str], notes: Notes) -> list[Verdict]:
    verdicts = []
    for dimension in DIMENSIONS:
        ratings = list(response[dimension.key].each())
        if len(ratings) != len(annotators):
            response[dimension.key].fail(
                f"{len(ratings)} ratings for {len(annotators)} annotators {annotators}")
        for annotator, rating in zip(annotators, ratings, strict=True):
            verdicts.append(rate(item, dimension, f"human:{annotator}", rating, notes))
    return verdicts


def split_utterances(text: str) -> tuple[Turn, ...]:
    return alternate_speakers([line.strip() for line in text.split("\n") if line.strip()])
