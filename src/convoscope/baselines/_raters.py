"""Baselines as raters: cheap scores computed from the items themselves, written as ratings
(``rater="baseline:<name>"``) so a meta-evaluation puts them in the same table as the judges.

What each baseline scores, for an item with a response (survey answer or chatbot turn):

* ``length`` — the response's length in words (characters in Chinese and Japanese).
* ``embedding`` — cosine between the mean-pooled embeddings of the context and the response
  (reference-free: the item's ``reference`` is never read).
* ``tfidf`` — cosine between their TF-IDF vectors, fitted on the texts of the same items.

The context is the question (if any) followed by the last ``context_turns`` turns. For a whole
dialogue (no response), length counts every turn and the similarities are the mean over each
pair of adjacent turns: how closely each turn follows the one before. An item with no context
(or a dialogue of one turn) has no similarity: that rating is missing, never zero.

A baseline has one score per item whatever the criterion; it is repeated for each criterion
asked for so that it lines up with the judges criterion by criterion.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from convoscope.analysis import Rating
from convoscope.baselines._embedding import Embedder, LlamaEmbedder
from convoscope.baselines._text import TfidfSpace, cosine, length
from convoscope.errors import ConfigError
from convoscope.items import Item
from convoscope.judges import RaterKind

BASELINE_PREFIX = RaterKind.BASELINE.prefix
RATERS = {name: RaterKind.BASELINE.rater(rater) for name, rater in
          (("length", "length"), ("embedding", "embedding-sim"), ("tfidf", "tfidf-sim"))}
BASELINES = tuple(RATERS)

Pair = tuple[str, str]
Similarity = Callable[[list[Pair]], list[float]]


def item_pairs(item: Item, *, context_turns: int = 3) -> list[Pair]:
    """The (earlier text, later text) pairs a similarity baseline compares for one item:
    (context, response), or every pair of adjacent turns of a whole dialogue."""
    if context_turns < 1:
        raise ValueError(f"context_turns must be at least 1, got {context_turns}")
    if item.response is None:
        texts = [turn.text for turn in item.context if turn.text.strip()]
        return list(zip(texts, texts[1:], strict=False))
    parts = [item.question] if item.question else []
    parts += [turn.text for turn in item.context[-context_turns:]]
    context = "\n".join(part for part in parts if part and part.strip())
    return [(context, item.response)] if context and item.response.strip() else []


def item_length(item: Item) -> int:
    """Words in the response, or in every turn of a whole dialogue."""
    if item.response is not None:
        return length(item.response)
    return sum(length(turn.text) for turn in item.context)


def baseline_scores(items: Sequence[Item], baseline: str, *, context_turns: int = 3,
                    embedder: Embedder | None = None) -> dict[str, float | None]:
    """Score of every item under one baseline (None where it is undefined).

    ``embedder`` is used by ``embedding`` (default: a :class:`LlamaEmbedder` on SmolLM2, closed
    afterwards). Example: ``baseline_scores(items, "tfidf")``.
    """
    if baseline not in RATERS:
        raise ConfigError(f"unknown baseline {baseline!r}: use one of {', '.join(BASELINES)}")
    if baseline == "length":
        return {item.id: float(item_length(item)) for item in items}
    pairs = {item.id: item_pairs(item, context_turns=context_turns) for item in items}
    everything = [pair for compared in pairs.values() for pair in compared]
    if baseline == "tfidf":
        similarity = _tfidf_similarity(everything)
        return _mean_per_item(pairs, similarity)
    own = embedder is None
    chosen = embedder if embedder is not None else LlamaEmbedder()
    try:
        return _mean_per_item(pairs, _embedding_similarity(chosen))
    finally:
        if own and isinstance(chosen, LlamaEmbedder):
            chosen.close()


def _mean_per_item(pairs: dict[str, list[Pair]], similarity: Similarity) -> dict[str, float | None]:
    scores: dict[str, float | None] = {}
    for item_id, compared in pairs.items():
        values = similarity(compared) if compared else []
        scores[item_id] = float(np.mean(values)) if values else None
    return scores


def _tfidf_similarity(everything: list[Pair]) -> Similarity:
    documents = list(dict.fromkeys(text for pair in everything for text in pair))
    space = TfidfSpace(documents or [""])
    return lambda pairs: [space.cosine(first, second) for first, second in pairs]


def _embedding_similarity(embedder: Embedder) -> Similarity:
    def similarity(pairs: list[Pair]) -> list[float]:
        vectors = embedder.embed([text for pair in pairs for text in pair])
        return [cosine(vectors[2 * index], vectors[2 * index + 1]) for index in range(len(pairs))]

    return similarity


def baseline_ratings(items: Sequence[Item], baselines: Sequence[str], criteria: Sequence[str], *,
                     context_turns: int = 3, embedder: Embedder | None = None) -> list[Rating]:
    """One rating per baseline, item and criterion, for :func:`convoscope.analysis.metaeval`.

    Example: ``metaeval([*verdicts, *baseline_ratings(items, ["length"], ["overall"])], humans)``.
    """
    if not criteria:
        raise ConfigError("baseline_ratings: name at least one criterion to line the baselines up with")
    ratings: list[Rating] = []
    for baseline in dict.fromkeys(baselines):
        scores = baseline_scores(items, baseline, context_turns=context_turns, embedder=embedder)
        for criterion in criteria:
            ratings.extend(Rating(item_id=item.id, criterion=criterion, rater=RATERS[baseline],
                                  value=scores[item.id], language=item.language, system=item.system)
                           for item in items)
    return ratings
