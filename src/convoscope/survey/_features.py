"""Signals a decision can use besides the judge's three dimensions (issue 26, observation 3).

Seed 000 decides on an aggregate of effort, relevance and completeness. On short human answers a
small judge can be worse than answer length alone, so ``survey fit`` may weigh the judge's
dimensions together with judge-free measurements of the answer, and reports, per feature set,
how well each separates accepted answers by cross-validation ("judge + length" against "length
alone" against "judge alone").

Every feature is a number per answer, computed the same way when a model is fitted and when it
is applied; ``survey score`` writes the judge-free ones to the scored CSV as ``feature_<name>``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from convoscope.baselines import TfidfSpace, length, tfidf_tokens
from convoscope.errors import ConfigError
from convoscope.items import Item
from convoscope.survey._fit import DIMENSIONS, FeatureSetScore, fit_model

TEXT_FEATURES: dict[str, str] = {
    "log_words": "ln(1 + the answer's length in words; Chinese and Japanese in characters)",
    "distinct_ratio": "lexical diversity: distinct tokens / tokens (1 for one word, 0 for none)",
    "tfidf": "question-answer TF-IDF cosine similarity (idf over the scored file's texts)",
    "gibberish": "1 when the offline gibberish filter flagged the answer, else 0",
}
FEATURES: dict[str, str] = {
    **{name: f"the judge's {name} score, normalised to 0-1" for name in DIMENSIONS},
    **TEXT_FEATURES,
}
FEATURE_SETS: dict[str, tuple[str, ...]] = {
    "judge": DIMENSIONS,
    "length": ("log_words",),
    "judge+length": (*DIMENSIONS, "log_words"),
    "text": tuple(TEXT_FEATURES),
    "all": (*DIMENSIONS, *TEXT_FEATURES),
}


def parse_features(spec: str | Sequence[str]) -> tuple[str, ...]:
    """Feature names from a set name (``judge+length``), a comma list (``effort,log_words``) or
    a mix (``judge,tfidf``); order follows :data:`FEATURES`, duplicates collapse."""
    parts = spec.split(",") if isinstance(spec, str) else list(spec)
    chosen: set[str] = set()
    for part in (part.strip() for part in parts):
        if part in FEATURE_SETS:
            chosen.update(FEATURE_SETS[part])
        elif part in FEATURES:
            chosen.add(part)
        else:
            raise ConfigError(f"unknown feature {part!r}: use a set ({', '.join(FEATURE_SETS)}) or "
                              f"feature names ({', '.join(FEATURES)})")
    if not chosen:
        raise ConfigError("no features named")
    return tuple(name for name in FEATURES if name in chosen)


def text_features(items: Sequence[Item], gibberish: Mapping[str, bool]) -> dict[str, dict[str, float]]:
    """The judge-free features of every answer (``item.response``), by item id.

    TF-IDF weights come from the questions and answers of ``items`` together, as the ``tfidf``
    baseline computes them, so its scale depends a little on the batch; the others do not."""
    texts = [text for item in items for text in (item.question or "", item.response or "") if text]
    space = TfidfSpace(texts or [""])
    return {item.id: answer_features(item.response or "", item.question,
                                     gibberish=gibberish.get(item.id, False), space=space)
            for item in items}


def answer_features(answer: str, question: str | None, *, gibberish: bool,
                    space: TfidfSpace | None = None) -> dict[str, float]:
    """The judge-free features of one answer (``space``: the TF-IDF space of its batch)."""
    tokens = tfidf_tokens(answer)
    similarity = 0.0
    if question and answer.strip():
        similarity = (space or TfidfSpace([question, answer])).cosine(question, answer)
    return {"log_words": math.log1p(length(answer)),
            "distinct_ratio": len(set(tokens)) / len(tokens) if tokens else 0.0,
            "tfidf": round(similarity, 6), "gibberish": 1.0 if gibberish else 0.0}


def compare_feature_sets(columns: Mapping[str, Sequence[float]], labels: Sequence[str] | None, *,
                         overall: Sequence[float] | None = None, overall_max: float = 4.0,
                         accept_min: float | None = None, folds: int = 5,
                         sets: Mapping[str, tuple[str, ...]] = FEATURE_SETS,
                         ) -> tuple[FeatureSetScore, ...]:
    """Cross-validated AUC / EER of every feature set whose features are all in ``columns``
    (one value per labelled answer, by feature name): ridge weights refitted without the
    held-out answers, plus the judge's Sum, which has no weights to fit."""
    rows = []
    for name, features in sets.items():
        if not all(feature in columns for feature in features):
            continue
        x = np.column_stack([np.asarray(columns[feature], dtype=float) for feature in features])
        for aggregate in ("sum", "ridge") if features == DIMENSIONS else ("ridge",):
            fitted = fit_model(x, labels, overall=overall, overall_max=overall_max,
                               accept_min=accept_min, aggregate=aggregate,
                               folds=folds, features=features)
            summed = aggregate == "sum"
            rows.append(FeatureSetScore(
                name=f"{name} (Sum)" if summed else name, features=features, aggregate=fitted.aggregate,
                auc_cv=fitted.auc_in_sample if summed else fitted.auc_cv,
                eer_cv=fitted.eer_in_sample if summed else fitted.eer_cv,
                auc_in_sample=fitted.auc_in_sample, eer_in_sample=fitted.eer_in_sample,
                out_of_fold=() if summed else fitted.out_of_fold))
    return tuple(rows)
