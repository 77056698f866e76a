"""The decision model shipped with convoscope (issue 26, observation 3).

With the embedded judge and no fitted model, the plain thresholds on the Sum accepted no answer
at all (its scores bunch low), so offline users got no decision worth reading. The package
therefore ships a rule fitted on the project's own labelled answers (``benchmarks/data/
survey_labelled*.csv``, written and labelled by the convoscope authors, Apache-2.0 like the
code) with the embedded judge's own scores: the weights are only meaningful for that judge, in
its default (completion) mode, with no persona. ``benchmarks/survey_labelled.py --write-shipped``
refits it; ``survey score`` says when it is used.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from importlib.resources import files
from typing import Any

from convoscope.errors import ConfigError
from convoscope.survey._fit import DIMENSIONS, FittedModel

SHIPPED_FILE = "decision-embedded.json"
# The judge spec(s) the shipped weights were fitted with: the default embedded model.
SHIPPED_JUDGES = ("embedded", "embedded:smollm2")


def shipped_model() -> FittedModel:
    """The shipped decision model (read from the package on each call; it is small)."""
    text = files("convoscope.survey").joinpath("data", SHIPPED_FILE).read_text(encoding="utf-8")
    return FittedModel.model_validate(json.loads(text))


def shipped_model_applies(specs: Sequence[Any]) -> bool:
    """True when every judge is the embedded model the shipped weights were fitted for, in its
    default mode and without a persona (``specs``: :class:`~convoscope.runs.JudgeSpec`)."""
    return bool(specs) and all(
        getattr(spec, "model", None) in SHIPPED_JUDGES and spec.mode in (None, "completion")
        and not spec.persona for spec in specs)


def prompt_fingerprint() -> str:
    """A hash of the embedded judge's prompts for the three dimensions (English and Korean
    rubrics) on a fixed probe answer: when it changes, the shipped weights need refitting."""
    from convoscope.criteria import get_criterion
    from convoscope.items import Item
    from convoscope.judges import build_request

    probe = Item(id="probe", question="What did you like?", response="The staff, 10/10.")
    prompts = [build_request(get_criterion(f"{suite}/{name}"), probe, mode="completion").prompt or ""
               for suite in ("survey", "survey-ko") for name in DIMENSIONS]
    return hashlib.sha256("\n".join(prompts).encode("utf-8")).hexdigest()[:16]


def describe_shipped(model: FittedModel) -> str:
    """One line for the CLI and the report: what decided, on what evidence. The figure is the
    cross-validated one (never the in-sample fit) with its 95% interval, beside answer length
    alone on the same labels with its own, and the line says plainly when the intervals show the
    rule is mostly length (issue 38; ``_interval``)."""
    from convoscope.survey._interval import compare_with_length, method

    evidence = compare_with_length(model)
    if evidence:
        evidence = f"; on those answers {evidence}; EER {model.eer_cv:.2f} (intervals: {method(model)})"
    return (f"decision: the model shipped with convoscope, fitted for the {model.fitted_for} on "
            f"{model.labelled} answers the project labelled ({model.source}){evidence}; inputs "
            f"{', '.join(model.dimensions)}. Fit your own on your labels with 'survey fit'.")


def decision_model(choice: str | None, specs: Sequence[Any], *,
                   thresholds_given: bool = False) -> tuple[FittedModel | None, str]:
    """The model ``survey score`` decides with, and one line saying so.

    ``choice``: a fitted model's path, ``"shipped"``, ``"none"`` (the plain thresholds) or None
    (automatic: the shipped model when it applies to ``specs`` and no threshold was given)."""
    from convoscope.survey._fit import load_model

    if choice == "none" or (choice is None and thresholds_given):
        return None, _PLAIN
    applies = shipped_model_applies(specs)
    if choice is None and not applies:
        # Another judge's scores sit elsewhere on the scales: the shipped weights and edges would
        # decide on numbers they were never fitted to, so the plain thresholds decide instead.
        return None, (f"{_PLAIN} (the shipped model was fitted on the embedded judge's scores, not "
                      f"{_judges(specs)}'s: fit one on your labels with 'survey fit' and pass --model)")
    if choice is not None and choice != "shipped":
        return load_model(choice), f"decision: the fitted model {choice}"
    if not applies:
        raise ConfigError(f"--model shipped: its weights were fitted on the embedded judge's scores "
                          f"(default mode, no persona), not {_judges(specs)}'s; fit a model on your "
                          "labels with 'survey fit', or use --model none for the plain thresholds")
    model = shipped_model()
    line = describe_shipped(model)
    if model.prompt_fingerprint != prompt_fingerprint():
        line += (" Note: the judge's prompts changed since it was fitted; refit it with "
                 "'python benchmarks/survey_labelled.py --write-shipped judge+length'.")
    return model, line


_PLAIN = "decision: the plain thresholds on the Sum of the three dimensions"


def _judges(specs: Sequence[Any]) -> str:
    from convoscope.survey._judges import judge_name

    named = [judge_name(spec) + (f" as {spec.persona_name or 'a persona'}" if getattr(spec, "persona", None)
                                 else "") for spec in specs]
    return " + ".join(named) or "no judge"
