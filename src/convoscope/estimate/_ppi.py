"""Prediction-powered inference (PPI, PPI++ and cross-prediction) for means and shares.

A judge scores every item; people rate a uniform random sample of them. The estimate of what
people would say on average is the judge's mean over all items, corrected by the mean of
(human - judge) on the sample where both exist. PPI++ scales the judge's part by ``lam`` chosen
to minimise the variance (Angelopoulos, Duchi and Zrnic, "PPI++: efficient prediction-powered
inference", 2023); ``lam = 1`` is plain PPI (Angelopoulos et al., Science 2023), ``lam = 0`` the
human-only (classical) estimate. :func:`crossfit_mean` is cross-prediction-powered inference
(Zrnic and Candès, PNAS 2024): the judge's scores were calibrated on folds of the same labels,
each labelled item predicted by a map that never saw it.

Intervals. ``interval="normal"`` is the CLT interval both papers and ``ppi-python`` use (variances
with ddof 0); tests pin it to ``ppi_mean_ci`` / ``crossppi_mean_ci`` within 1e-9.
``interval="t"`` (the default) keeps the estimate and uses sample variances (ddof 1) with a
Student t quantile on n - 1 degrees of freedom: a coverage simulation
(``benchmarks/ppi_coverage.py``) found the normal interval at .87 / .91 for 10 / 20 labels and
the t interval at .94 / .93. With ``share=True`` (the share of a label, y in [0, 1]) the human
variance inside the rectifier is never taken below the Agresti–Coull one, (x + z²/2)/(n + z²),
and the interval is clipped to [0, 1]: a rare label seen 0 or 1 times in 40 labels otherwise
gets an interval of width ~0 (coverage .85 at 40 labels, .99+ with the adjustment).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats

from convoscope.errors import ConfigError

Interval = Literal["t", "normal"]
INTERVALS = ("t", "normal")


@dataclass(frozen=True)
class Estimate:
    """A mean (or a share, the mean of a 0/1 indicator) as people would give it.

    ``value`` and ``ci`` are the prediction-powered estimate; ``human_only`` and
    ``human_only_ci`` the classical estimate from the ``n_human`` labels alone, for comparison.
    ``effective_n`` is how many human labels the classical estimate would need for an interval
    as narrow as the prediction-powered one (``n_human`` times the variance ratio; NaN when the
    prediction-powered variance is zero, where the ratio says nothing). ``warnings`` says when
    an interval has no width (every label and score alike: the spread is unknown, not zero).
    ``std_error`` / ``human_only_std_error`` are the standard errors and ``interval`` how the
    intervals were made. A share (``share=True``) is clipped to [0, 1], interval and value.
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
    std_error: float = float("nan")
    human_only_std_error: float = float("nan")
    interval: str = "normal"
    warnings: tuple[str, ...] = ()  # e.g. an interval of no width: the spread is unknown, not zero

    @property
    def width(self) -> float:
        return self.ci[1] - self.ci[0]

    @property
    def labels_gained(self) -> float:
        """Human labels saved: ``effective_n - n_human`` (negative when the judge hurt; NaN when
        the estimate's variance is zero)."""
        return self.effective_n - self.n_human


def _vector(name: str, values: Any) -> np.ndarray:
    array = np.asarray(values, dtype=float).reshape(-1)
    if np.isnan(array).any():
        raise ConfigError(f"{name} has missing values; drop those items before estimating")
    return array


def _check(confidence: float, interval: str) -> None:
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must lie between 0 and 1, not {confidence}")
    if interval not in INTERVALS:
        raise ConfigError(f"interval must be one of {', '.join(INTERVALS)}, not {interval!r}")


def _quantile(confidence: float, interval: str, df: float) -> float:
    tail = 1 - (1 - confidence) / 2
    return float(stats.t.ppf(tail, df) if interval == "t" else stats.norm.ppf(tail))


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


def _rectifier_variance(y: np.ndarray, labelled: np.ndarray, lam: float, ddof: int, share: bool) -> float:
    """Variance of ``y - lam * ŷ`` on the labelled items; for a share, the human part is never
    taken below its Agresti–Coull variance (a rare label absent from the sample is not proof
    that nobody would give it)."""
    observed = float((y - lam * labelled).var(ddof=ddof))
    if not share:
        return observed
    z2 = float(stats.norm.ppf(0.975)) ** 2
    adjusted = (y.sum() + z2 / 2) / (len(y) + z2)
    covariance = float(np.cov(y, labelled, ddof=ddof)[0, 1]) if np.ptp(labelled) > 0 else 0.0
    floor = adjusted * (1 - adjusted) - 2 * lam * covariance + lam**2 * float(labelled.var(ddof=ddof))
    return max(observed, floor)


def _bounds(centre: float, half: float, share: bool) -> tuple[float, float]:
    low, high = centre - half, centre + half
    return (max(low, 0.0), min(high, 1.0)) if share else (low, high)


def ppi_mean(y_true: Any, y_pred: Any, y_pred_unlabeled: Any, *, confidence: float = 0.95,
             lam: float | None = None, interval: Interval = "t", share: bool = False) -> Estimate:
    """Prediction-powered estimate of the mean human score.

    ``y_true``: human scores on the labelled sample (a uniform random sample of the items);
    ``y_pred``: the judge's scores on the same items; ``y_pred_unlabeled``: the judge's scores on
    the items people did not rate. ``lam=None`` tunes the judge's weight (PPI++); ``lam=1`` is
    plain PPI. ``interval`` and ``share`` are described in the module docstring.

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
    _check(confidence, interval)
    if lam is None:
        lam = power_tuning_lambda(y, labelled, unlabelled)
    value = float(lam * unlabelled.mean() + (y - lam * labelled).mean())
    return _estimate(value, y, labelled, unlabelled[:, None], float(lam), confidence, interval, share)


def crossfit_mean(y_true: Any, y_pred: Any, y_pred_unlabeled: Any, *, confidence: float = 0.95,
                  interval: Interval = "t", share: bool = False) -> Estimate:
    """Cross-prediction-powered estimate of the mean (``ppi-python``'s ``crossppi_mean_ci``).

    ``y_pred``: each labelled item's prediction from a model fitted without its fold;
    ``y_pred_unlabeled``: an (N, K) array, the K fold models' predictions on the N unlabelled
    items (averaged). The judge's weight is 1, as in the reference.

    Example: ``crossfit_mean(y, out_of_fold, np.column_stack(fold_predictions)).ci``."""
    y = _vector("y_true", y_true)
    labelled = _vector("y_pred", y_pred)
    unlabelled = np.asarray(y_pred_unlabeled, dtype=float)
    if unlabelled.ndim != 2:
        raise ConfigError("y_pred_unlabeled must be 2-dimensional: one column per fold model")
    if np.isnan(unlabelled).any():
        raise ConfigError("y_pred_unlabeled has missing values; drop those items before estimating")
    if len(y) != len(labelled) or len(y) < 2 or len(unlabelled) < 1:
        raise ConfigError("cross-prediction needs at least 2 paired labelled items and 1 unlabelled item")
    _check(confidence, interval)
    value = float(unlabelled.mean(axis=1).mean() + (y - labelled).mean())
    return _estimate(value, y, labelled, unlabelled, 1.0, confidence, interval, share)


def _estimate(value: float, y: np.ndarray, labelled: np.ndarray, unlabelled: np.ndarray, lam: float,
              confidence: float, interval: str, share: bool) -> Estimate:
    """The interval around ``value`` and the people-only estimate beside it. ``unlabelled`` has
    one column per model (one for PPI, K for cross-prediction; they are averaged)."""
    ddof = 1 if interval == "t" else 0
    n, big_n = len(y), len(unlabelled)
    imputed = lam * unlabelled.mean(axis=1)
    variance = float(imputed.var(ddof=ddof)) / big_n + _rectifier_variance(y, labelled, lam, ddof, share) / n
    classical_variance = _rectifier_variance(y, labelled, 0.0, ddof, share) / n
    q = _quantile(confidence, interval, n - 1)
    se, classical_se = float(np.sqrt(variance)), float(np.sqrt(classical_variance))
    classical = float(y.mean())
    # A zero variance is a spread nobody has seen, not a known one: no ratio, and a warning.
    effective = n * classical_variance / variance if variance > 0 else float("nan")
    shown = min(max(value, 0.0), 1.0) if share else value
    ci, human_ci = _bounds(value, q * se, share), _bounds(classical, q * classical_se, share)
    return Estimate(value=shown, ci=ci, human_only=classical, human_only_ci=human_ci, n_human=n,
                    n_judged=big_n, lam=float(lam), effective_n=float(effective),
                    confidence=confidence, std_error=se, human_only_std_error=classical_se,
                    interval=interval, warnings=_collapsed(ci, human_ci, share))


def _collapsed(ci: tuple[float, float], human_ci: tuple[float, float], share: bool) -> tuple[str, ...]:
    if ci[1] - ci[0] > 1e-12 and human_ci[1] - human_ci[0] > 1e-12:
        return ()
    hint = "" if share else "; for a 0/1 or categorical criterion estimate shares (target='shares')"
    return ("the interval has no width: every label and judge score on the sample was the same, so "
            f"their spread is unknown, not zero — label more items{hint}",)


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
    """The difference of two independent prediction-powered estimates with its interval: the
    standard errors add in quadrature; t intervals take Welch–Satterthwaite degrees of freedom.

    Example: ``ppi_difference(ppi_mean(ya, pa, ua), ppi_mean(yb, pb, ub)).ci``."""
    if a.confidence != b.confidence:
        raise ConfigError("both estimates must use the same confidence level")
    if a.interval != b.interval:
        raise ConfigError(f"both estimates must use the same interval, not {a.interval} and {b.interval}")

    def combine(se_a: float, se_b: float, centre: float) -> tuple[float, float]:
        se = float(np.hypot(se_a, se_b))
        df = (se**4 / (se_a**4 / (a.n_human - 1) + se_b**4 / (b.n_human - 1))
              if se > 0 and a.interval == "t" else float("inf"))
        half = _quantile(a.confidence, a.interval, df) * se
        return centre - half, centre + half

    value = a.value - b.value
    human = a.human_only - b.human_only
    return Difference(value=value, ci=combine(a.std_error, b.std_error, value), human_only=human,
                      human_only_ci=combine(a.human_only_std_error, b.human_only_std_error, human), a=a, b=b)
