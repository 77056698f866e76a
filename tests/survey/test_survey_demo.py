"""The README demo with the offline default gets decisions that mean something (issue 26,
observation 3: with the plain thresholds the embedded judge accepted 0 of the demo's 10 answers
and 0 of 18 'accept' answers of a held-out set)."""

from __future__ import annotations

from convoscope.survey import shipped_model
from convoscope.survey._shipped import prompt_fingerprint


def test_the_shipped_model_was_fitted_on_the_prompts_the_judge_sends_today() -> None:
    # When this fails the embedded judge's prompts changed (a rubric, the quoting, the few-shot
    # examples): refit with `python benchmarks/survey_labelled.py --write-shipped judge+length`.
    assert shipped_model().prompt_fingerprint == prompt_fingerprint()


# The demo's own decisions (README: `convoscope survey score examples/survey_answers.csv`) are
# checked on the run tests/survey/test_survey_issue13.py makes anyway: the same command, on the
# same rows and a few more, so the embedded judge scores them once for both.
