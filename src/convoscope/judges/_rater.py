"""Who made a verdict: the kind of rater, typed, over the rater string kept in files.

A rater string is ``<kind>:<name>`` (``model:embedded:smollm2[completion]``,
``panel:majority``, ``human:ann3``, ``metric:latency``, ``baseline:length``). Files keep the
string; code asks :attr:`Verdict.rater_kind` (or :meth:`RaterKind.of`) instead of testing
prefixes by hand.
"""

from __future__ import annotations

from enum import StrEnum


class RaterKind(StrEnum):
    """The kinds of rater a verdict can come from."""

    MODEL = "model"  # one LLM judge (possibly with a persona, or calibrated)
    PANEL = "panel"  # several judges pooled into one verdict
    HUMAN = "human"  # a person, e.g. an annotator in a campaign
    METRIC = "metric"  # a KPI computed from the log (latency, answer length), no model
    BASELINE = "baseline"  # a judge-free reference score (length, TF-IDF, embeddings)
    PYTHON = "python"  # a judge written in Python: rules, a classifier, a house client

    @property
    def prefix(self) -> str:
        """The rater string's prefix, e.g. ``"human:"``."""
        return f"{self.value}:"

    def rater(self, name: str) -> str:
        """The rater string for ``name``: ``RaterKind.HUMAN.rater("ann3") == "human:ann3"``."""
        return self.prefix + name

    def name_of(self, rater: str) -> str:
        """``rater`` without this kind's prefix (unchanged when it has another kind)."""
        return rater.removeprefix(self.prefix)

    @classmethod
    def of(cls, rater: str) -> RaterKind | None:
        """The kind a rater string names, or None for a string without a known kind (e.g. an
        annotator id read from a CSV column with no prefix).

        >>> RaterKind.of("human:ann3"), RaterKind.of("model:embedded[completion]"), RaterKind.of("ann3")
        (<RaterKind.HUMAN: 'human'>, <RaterKind.MODEL: 'model'>, None)
        """
        kind, separator, _ = str(rater).partition(":")
        if not separator:
            return None
        try:
            return cls(kind)
        except ValueError:
            return None
