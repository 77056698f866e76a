"""Judges and people together: what people would say, estimated with honest intervals.

* :func:`ppi_mean` — prediction-powered inference (PPI, and PPI++ with power tuning) for a mean
  or a share from a few human labels and many judge scores; :func:`ppi_difference` for two
  systems; :func:`crossfit_mean` when the judge was calibrated on folds of the same labels.
* :func:`fit_isotonic` / :func:`cross_validate` — calibrate a judge's score onto the human scale
  with a monotone map, and measure agreement before and after out of fold.
* :func:`estimate` — the same, read straight from a verdict table, per system and language.
* :func:`select_items` — what people should judge: disagreements, flat distributions, chosen
  values (a survey "hold"), always with a uniform random sample; each item says why.
* :func:`bias_diagnostics` / :func:`position_bias` — length, language, self-preference and
  position bias of a judge, measured against people.
"""

from convoscope.estimate._bias import (
    BiasReport,
    GroupGap,
    LengthBias,
    PositionBias,
    bias_diagnostics,
    position_bias,
    study_bias,
)
from convoscope.estimate._calibrate import (
    AgreementScores,
    Calibration,
    CalibrationReport,
    apply_calibration,
    cross_validate,
    fit_isotonic,
)
from convoscope.estimate._crossfit import CrossFit, cross_fit
from convoscope.estimate._ppi import (
    Difference,
    Estimate,
    crossfit_mean,
    power_tuning_lambda,
    ppi_difference,
    ppi_mean,
)
from convoscope.estimate._route import RANDOM, Selected, select_items, selected_items
from convoscope.estimate._verdicts import (
    MIN_LABELS,
    Estimates,
    GroupEstimate,
    Pairs,
    calibration_pairs,
    estimate,
)

__all__ = [
    "BiasReport",
    "GroupGap",
    "LengthBias",
    "PositionBias",
    "bias_diagnostics",
    "position_bias",
    "study_bias",
    "RANDOM",
    "Selected",
    "select_items",
    "selected_items",
    "AgreementScores",
    "Calibration",
    "CalibrationReport",
    "CrossFit",
    "MIN_LABELS",
    "Difference",
    "Estimate",
    "Estimates",
    "GroupEstimate",
    "Pairs",
    "apply_calibration",
    "calibration_pairs",
    "cross_fit",
    "cross_validate",
    "crossfit_mean",
    "estimate",
    "fit_isotonic",
    "power_tuning_lambda",
    "ppi_difference",
    "ppi_mean",
]
