"""Batching and assignment: contexts into batches, batches into ordered tasks, people into batches.

The order of tasks follows seed 003 (appendix C): inside one context, every candidate is judged for
the first criterion, then every candidate for the next, so the dialogue on the left never changes
while its candidates are judged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from convoscope.campaigns._spec import CampaignSpec
from convoscope.items import REFERENCE_SYSTEM, Item, Turn, context_key


class Candidate(BaseModel):
    """One judged text for a context: a system's response, or the ground-truth turn.

    In a pairwise campaign a candidate is a *pair*: ``pair`` holds system A's and system B's
    responses (A < B), ``system`` is ``A~B`` and ``text`` is empty.
    """

    model_config = ConfigDict(frozen=True)

    item_id: str
    text: str
    system: str | None = None
    language: str | None = None
    pair: tuple[Candidate, Candidate] | None = None


class Context(BaseModel):
    """A dialogue context and every candidate proposed for it."""

    model_config = ConfigDict(frozen=True)

    id: str
    turns: tuple[Turn, ...]
    candidates: tuple[Candidate, ...]


class Task(BaseModel):
    """One answer asked of an annotator: a candidate under a criterion."""

    model_config = ConfigDict(frozen=True)

    batch: str
    context_id: str
    criterion: str
    candidate: Candidate


class Batch(BaseModel):
    """Contexts given together to one annotator."""

    model_config = ConfigDict(frozen=True)

    id: str
    kind: Literal["qualification", "main"]
    contexts: tuple[Context, ...]
    gold: dict[str, dict[str, str]] = {}  # gold candidate id -> criterion -> expected answer

    def tasks(self, criteria: Sequence[str]) -> list[Task]:
        """Context by context; inside a context criterion by criterion, then candidate by candidate.

        A gold candidate is asked only on the criteria it checks (its expected answers)."""
        return [Task(batch=self.id, context_id=context.id, criterion=criterion, candidate=candidate)
                for context in self.contexts for criterion in criteria for candidate in context.candidates
                if candidate.item_id not in self.gold or criterion in self.gold[candidate.item_id]]

    def is_gold(self, context: Context) -> bool:
        """A gold (attention-check) context: its candidates are checks, not samples."""
        return all(candidate.item_id in self.gold for candidate in context.candidates)

    def samples(self) -> list[Context]:
        """The contexts whose candidates are samples (every context but the gold ones)."""
        return [context for context in self.contexts if not self.is_gold(context)]


def group_contexts(items: Iterable[Item], *, include_reference: bool = True) -> list[Context]:
    """Contexts in the order first seen, each with its candidates and, last, its reference (once)."""
    turns: dict[str, tuple[Turn, ...]] = {}
    candidates: dict[str, list[Candidate]] = {}
    references: dict[str, Candidate] = {}
    for item in items:
        key = context_key(item)
        turns.setdefault(key, item.context)
        found = candidates.setdefault(key, [])
        if item.response is not None:
            found.append(Candidate(item_id=item.id, text=item.response, system=item.system,
                                   language=item.language))
        if include_reference and item.reference and key not in references:
            references[key] = Candidate(item_id=f"{key}:reference", text=item.reference,
                                        system=REFERENCE_SYSTEM, language=item.language)
    contexts = [Context(id=key, turns=turns[key],
                        candidates=(*found, *([references[key]] if key in references else [])))
                for key, found in candidates.items()]
    return [context for context in contexts if context.candidates]


def pair_contexts(items: Iterable[Item], *, include_reference: bool = True,
                  systems: Sequence[str] = (), per_context: int | None = None) -> list[Context]:
    """Pairwise campaigns: per context, one candidate per pair of systems answering it.

    Pairs come from :func:`convoscope.pairwise.make_pairs` (ids ``<context>:A~B``, A < B), so
    people's verdicts and judges' verdicts on the same pair share an item id. With
    ``include_reference`` the ground-truth turn takes part as the system ``reference``.
    """
    from convoscope.pairwise import make_pairs, pair_sides

    answers = list(items)
    if include_reference:
        answers += _reference_answers(answers)
    contexts: dict[str, list[Candidate]] = {}
    turns: dict[str, tuple[Turn, ...]] = {}
    for pair in make_pairs(answers, systems=[*systems, REFERENCE_SYSTEM] if systems else None,
                           per_context=per_context):
        key = context_key(pair)
        turns.setdefault(key, pair.context)
        a, b = pair_sides(pair)
        first, second = (Candidate(item_id=side["item_id"], text=side["response"], system=side["system"],
                                   language=pair.language) for side in (a, b))
        contexts.setdefault(key, []).append(Candidate(item_id=pair.id, text="", system=pair.system,
                                                      language=pair.language, pair=(first, second)))
    return [Context(id=key, turns=turns[key], candidates=tuple(found)) for key, found in contexts.items()]


def _reference_answers(items: list[Item]) -> list[Item]:
    """The ground-truth turn of each context (once) as an answer of the system ``reference``."""
    seen: dict[str, Item] = {}
    for item in items:
        key = context_key(item)
        if item.reference and key not in seen:
            seen[key] = item.model_copy(update={
                "id": f"{key}:reference", "response": item.reference, "reference": None,
                "system": REFERENCE_SYSTEM, "meta": {**item.meta, "context_id": key}})
    return list(seen.values())


def dialogue_contexts(items: Iterable[Item]) -> list[Context]:
    """Dialogue granularity: each item is one whole dialogue, judged as it stands (one candidate)."""
    return [Context(id=item.id, turns=(*item.context, *([Turn(speaker="response", text=item.response)]
                                                       if item.response else [])),
                    candidates=(Candidate(item_id=item.id, text="", system=item.system,
                                          language=item.language),))
            for item in items]


def make_batches(items: Iterable[Item], spec: CampaignSpec) -> list[Batch]:
    """The qualification batch (when enabled) from the first contexts, then main batches.

    Items whose ``meta.gold`` maps criteria to expected answers are attention checks: they are
    not batched themselves; ``attention.per_batch`` of them go into the middle of every main batch
    (under ids made unique per batch, ``<item id>@<batch id>``).
    """
    everything = list(items)
    gold_items = [item for item in everything if item.meta.get("gold")]
    regular = [item for item in everything if not item.meta.get("gold")]
    contexts = _contexts(regular, spec)
    batches: list[Batch] = []
    if spec.qualification.enabled:
        head = spec.qualification.contexts
        batches.append(Batch(id="qualification", kind="qualification", contexts=tuple(contexts[:head])))
        contexts = contexts[head:]
    gold = _contexts(gold_items, spec.model_copy(update={"include_reference": False})) if gold_items else []
    expected = {item.id: {spec.task_criterion(str(k)): str(v) for k, v in item.meta["gold"].items()}
                for item in gold_items}
    size, per = spec.contexts_per_batch, spec.attention.per_batch if gold else 0
    for number, start in enumerate(range(0, len(contexts), size)):
        batch_id = f"batch-{number + 1:03d}"
        checks = [_placed(gold[(number * per + j) % len(gold)], batch_id) for j in range(per)]
        chunk = list(contexts[start:start + size])
        middle = (len(chunk) + 1) // 2
        answers = {c.item_id: _expected(c, expected) for x in checks for c in x.candidates}
        batches.append(Batch(id=batch_id, kind="main", contexts=(*chunk[:middle], *checks, *chunk[middle:]),
                             gold=answers))
    return batches


def _contexts(items: list[Item], spec: CampaignSpec) -> list[Context]:
    if spec.pairwise:
        return pair_contexts(items, include_reference=spec.include_reference, systems=spec.pair_systems,
                             per_context=spec.pairs_per_context)
    return (dialogue_contexts(items) if spec.granularity == "dialogue"
            else group_contexts(items, include_reference=spec.include_reference))


def _expected(candidate: Candidate, expected: Mapping[str, dict[str, str]]) -> dict[str, str]:
    """A gold candidate's expected answers; a pair's are those written on either of its items."""
    if candidate.pair is None:
        return expected[candidate.item_id.rsplit("@", 1)[0]]
    return {k: v for side in candidate.pair for k, v in expected.get(side.item_id, {}).items()}


def _placed(context: Context, batch_id: str) -> Context:
    """A gold context under ids unique to one batch (the same check appears in several batches)."""
    return Context(id=f"{context.id}@{batch_id}", turns=context.turns,
                   candidates=tuple(c.model_copy(update={"item_id": f"{c.item_id}@{batch_id}"})
                                    for c in context.candidates))


def choose_batch(annotator: str, batches: Sequence[Batch], workers: Mapping[str, set[str]],
                 finished: set[str], *, per_batch: int) -> Batch | None:
    """The main batch an annotator should work on next.

    ``workers`` maps a batch id to the annotators who started it; ``finished`` holds the batch ids
    this annotator completed. A started, unfinished batch comes first (resume); otherwise the first
    batch that still needs people. None when nothing is left for this annotator.
    """
    mains = [batch for batch in batches if batch.kind == "main" and batch.id not in finished]
    for batch in mains:
        if annotator in workers.get(batch.id, set()):
            return batch
    for batch in mains:
        if len(workers.get(batch.id, set())) < per_batch:
            return batch
    return None
