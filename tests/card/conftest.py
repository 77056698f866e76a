"""A small study the card tests share: 20 contexts x 3 systems, English and Korean, three
annotators whose ratings follow a hidden quality, and Python judges of known quality."""

from __future__ import annotations

import random

import pytest

import convoscope as cs
from convoscope.analysis import Rating
from convoscope.judges import python_judge

OVERALL = cs.Criterion(name="overall", question="How good is the response?",
                       definition="Overall quality of the response, 1 very poor to 5 very good.",
                       scale=cs.Scale(kind="range", minimum=1, maximum=5))
RESAMPLES = 200
WORDS = ("tea", "rain", "city", "train", "book")


def study(n_contexts: int = 20, annotators: int = 3, systems: tuple[str, ...] = ("alpha", "beta", "gamma"),
          seed: int = 0) -> tuple[list[cs.Item], list[Rating]]:
    rng = random.Random(seed)
    items, humans = [], []
    for context in range(n_contexts):
        language = "en" if context % 2 else "ko"
        for system in systems:
            quality = rng.randint(1, 5)
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 30)))
            item = cs.Item(id=f"c{context:02d}-{system}", response=words, system=system or None,
                           context=[cs.Turn(speaker="user", text=f"topic {context}")], language=language,
                           meta={"quality": quality})
            items.append(item)
            for annotator in range(annotators):
                value = min(5, max(1, quality + rng.choice([-1, 0, 0, 0, 1])))
                humans.append(Rating(item_id=item.id, criterion="overall", rater=f"human:a{annotator}",
                                     value=value))
    return items, humans


@python_judge(name="oracle", version="1")
def oracle(item, criterion):
    """Knows the hidden quality (a judge of known, high quality); 3 for the probes."""
    return item.meta.get("quality", 3)


@python_judge(name="wordy", version="1")
def wordy(item, criterion):
    """Scores length: one point per six words (fooled by padding)."""
    return min(5, 1 + len((item.response or "").split()) // 6)


@pytest.fixture(scope="module")
def card_and_store(tmp_path_factory):
    """One card of the oracle, the length-lover and the length baseline (computed once)."""
    store = tmp_path_factory.mktemp("card") / "card.db"
    items, humans = study()
    card = cs.judge_card([oracle, wordy, "baseline:length"], items, humans, criteria=[OVERALL], store=store,
                         n_resamples=RESAMPLES, cache_path=None)
    return card, store, items, humans
