"""Prediction-powered inference (PPI and PPI++) for means and shares.

A judge scores every item; people rate a uniform random sample of them. The estimate of what
people would say on average is the judge's mean over all items, corrected by the mean of
(human - judge) on the sample where both exist. PPI++ scales the judge's part by ``lam`` chosen
to minimise the variance (Angelopoulos, Duchi and Zrnic, "PPI++: efficient prediction-powered
inference", 2023); ``lam = 1`` is plain PPI (Angelopoulos et al., Science 2023), ``lam = 0`` the
human-only (classical) estimate. The interval is the normal (CLT) interval both papers use.

The formulas follow the ``ppi-python`` reference implementation (``ppi_mean_pointestimate``,
``ppi_mean_ci``, ``_calc_lam_glm`` with one coordinate); tests pin them to it within 1e-9.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from convoscope.errors import ConfigError


@dataclass(frozen=True)
class Estimate:
    """A mean (or a share, the mean of a 0/1 indicator) as people would give it.

    ``value`` and ``ci`` are the prediction-powered estimate; ``human_only`` and
    ``human_only_ci`` the classical estimate from the ``n_human`` labels alone, for comparison.
    ``effective_n`` is how many human labels the classical estimate would need for an interval
    as narrow as the prediction-powered one (``n_human`` times the variance ratio).
    """

    value: float
    ci: tuple[float, float]
    human_only: float
    human_only_ci: tuple[float, float]
    n_human: int
    n_judged: int
    lam: float
    effective_n: float
    confidence: float = 0.95

    @property
    def width(self) -> float:
        return self.ci[1] - self.ci[0]

    @property
    def labels_gained(self) -> float:
        """Human labels saved: ``effective_n - n_human`` (negative when the judge hurt)."""
        return self.effective_n - self.n_human


def _vector(name: str, values: Any) -> np.ndarray:
    array = np.asarray(values, dtype=float).reshape(-1)
    if np.isnan(array).any():
        raise ConfigError(f"{name} has missing values; drop those items before estimating")
    return array


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must lie between 0 and 1, not {confidence}")
    return float(stats.norm.ppf(1 - (1 - confidence) / 2))


def power_tuning_lambda(y_true: Any, y_pred: Any, y_pred_unlabeled: Any) -> float:
    """The variance-minimising weight of the judge's predictions, clipped to [0, 1] (PPI++).

    ``cov(y, ŷ) / ((1 + n/N) var(ŷ))`` on the labelled sample, with var(ŷ) taken over labelled
    and unlabelled predictions together, as the reference implementation does. Given 2-D
    arrays (one column per coordinate, e.g. the share of each label) one weight serves all
    columns, minimising their total variance, so shares still sum to one."""
    y = _matrix("y_true", y_true)
    labelled = _matrix("y_pred", y_pred)
    unlabelled = _matrix("y_pred_unlabeled", y_pred_unlabeled)
    n, big_n = len(y), len(unlabelled)
    # The reference centres the gradients at the plain PPI point estimate; the centring cancels
    # in the covariance, so the plain sample moments give the same number.
    covariance = float(np.mean((y - y.mean(0)) * (labelled - labelled.mean(0)), axis=0).sum())
    variance = float(np.var(np.concatenate([labelled, unlabelled]), axis=0, ddof=1).sum())
    if variance == 0:
        return 0.0  # a constant judge carries no information: use the people alone
    lam = covariance / ((1 + n / big_n) * variance)
    return float(np.clip(lam, 0.0, 1.0))


def _matrix(name: str, values: Any) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    array = array.reshape(-1, 1) if array.ndim == 1 else array
    if np.isnan(array).any():
        raise ConfigError(f"{name} has missing values; drop those items before estimating")
    return array


def ppi_mean(y_true: Any, y_pred: Any, y_pred_unlabeled: Any, *, confidence: float = 0.95,
             lam: float | None = None) -> Estimate:
    """Prediction-powered estimate of the mean human score.

    ``y_true``: human scores on the labelled sample (a uniform random sample of the items);
    ``y_pred``: the judge's scores on the same items; ``y_pred_unlabeled``: the judge's scores on
    the items people did not rate. ``lam=None`` tunes the judge's weight (PPI++); ``lam=1`` is
    plain PPI.

    Example: ``ppi_mean([3, 4], [3.5, 3.9], [3.2, 4.1, 3.0]).ci``.
    """
    y = _vector("y_true", y_true)
    labelled = _vector("y_pred", y_pred)
    unlabelled = _vector("y_pred_unlabeled", y_pred_unlabeled)
    if len(y) != len(labelled):
        raise ConfigError(f"y_true has {len(y)} values but y_pred has {len(labelled)}: they must pair up")
    if len(y) < 2 or len(unlabelled) < 1:
        raise ConfigError("prediction-powered inference needs at least 2 human-labelled items "
                          "and 1 item the judge scored alone")
    z = _z(confidence)
    if lam is None:
        lam = power_tuning_lambda(y, labelled, unlabelled)
    n, big_n = len(y), len(unlabelled)
    value = float(lam * unlabelled.mean() + (y - lam * labelled).mean())
    # np.std with ddof=0, as the reference implementation computes both parts.
    variance = (lam * unlabelled).std() ** 2 / big_n + (y - lam * labelled).std() ** 2 / n
    half = z * float(np.sqrt(variance))
    classical = float(y.mean())
    classical_variance = y.std() ** 2 / n
    classical_half = z * float(np.sqrt(classical_variance))
    effective = n * classical_variance / variance if variance > 0 else float("inf")
    return Estimate(value=value, ci=(value - half, value + half), human_only=classical,
                    human_only_ci=(classical - classical_half, classical + classical_half),
                    n_human=n, n_judged=big_n, lam=float(lam), effective_n=float(effective),
                    confidence=confidence)


@dataclass(frozen=True)
class Difference:
    """System A minus system B, each estimated on its own items (independent samples)."""

    value: float
    ci: tuple[float, float]
    human_only: float
    human_only_ci: tuple[float, float]
    a: Estimate
    b: Estimate


def ppi_difference(a: Estimate, b: Estimate) -> Difference:
    """The difference of two independent prediction-powered estimates with its normal interval.

    Example: ``ppi_difference(ppi_mean(ya, pa, ua), ppi_mean(yb, pb, ub)).ci``."""
    if a.confidence != b.confidence:
        raise ConfigError("both estimates must use the same confidence level")

    def combine(first: tuple[float, float], second: tuple[float, float], centre: float
                ) -> tuple[float, float]:
        # Independent normal estimates: the half widths (same z) add in quadrature.
        half = float(np.hypot((first[1] - first[0]) / 2, (second[1] - second[0]) / 2))
        return centre - half, centre + half

    value = a.value - b.value
    human = a.human_only - b.human_only
    return Difference(value=value, ci=combine(a.ci, b.ci, value), human_only=human,
                      human_only_ci=combine(a.human_only_ci, b.human_only_ci, human), a=a, b=b)
