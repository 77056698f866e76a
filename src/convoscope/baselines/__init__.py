"""Baselines for meta-evaluation: response length and reference-free context–response
similarity (model embeddings, TF-IDF), scored as raters ``baseline:<name>``.

A judge is only worth its cost if it beats what needs no judge at all; these rows sit beside
the judges and the human ceiling in ``convoscope metaeval --baseline``.

Example::

    from convoscope.baselines import baseline_ratings
    rows = metaeval([*verdicts, *baseline_ratings(items, ["length", "tfidf"], ["overall"])], humans)
"""

from convoscope.baselines._embedding import Embedder, LlamaEmbedder
from convoscope.baselines._raters import (
    BASELINE_PREFIX,
    BASELINES,
    RATERS,
    baseline_ratings,
    baseline_scores,
    item_length,
    item_pairs,
)
from convoscope.baselines._text import TfidfSpace, cosine, length, tfidf_tokens

__all__ = [
    "BASELINES",
    "BASELINE_PREFIX",
    "RATERS",
    "Embedder",
    "LlamaEmbedder",
    "TfidfSpace",
    "baseline_ratings",
    "baseline_scores",
    "cosine",
    "item_length",
    "item_pairs",
    "length",
    "tfidf_tokens",
]
