"""Calibration and estimation on the same labels, without losing the guarantee: cross-fitting.

The labelled items are split into K folds; fold k's items are predicted by an isotonic map fitted
on every other human-rated item (the other folds and any items people rated for another reason,
e.g. routed ones), so no labelled item is predicted by a map that saw its label. The items only
the judge scored are predicted by all K maps, averaged — cross-prediction-powered inference
(Zrnic and Candès, PNAS 2024; ``ppi-python``'s ``crossppi_mean_ci``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from convoscope.errors import ConfigError
from convoscope.estimate._calibrate import Calibration, fit_isotonic


@dataclass(frozen=True)
class CrossFit:
    """The fold maps and, for every labelled item, the prediction of the map that did not see it."""

    out_of_fold: dict[str, float]
    maps: tuple[Calibration, ...]

    @property
    def name(self) -> str:
        return f"isotonic, cross-fitted in {len(self.maps)} folds"

    def unlabelled(self, scores: Sequence[float]) -> np.ndarray:
        """(N, K): each fold map's prediction for the N unlabelled items."""
        return np.column_stack([calibration.apply(scores) for calibration in self.maps])


def cross_fit(judge: Mapping[str, float], human: Mapping[str, float], labelled: Sequence[str], *,
              folds: int, seed: int = 0) -> CrossFit:
    """Fold maps from ``judge`` (item -> score) to ``human`` (item -> people's mean), with the
    ``labelled`` items split into ``folds`` folds (seeded); human-rated items outside
    ``labelled`` train every fold."""
    if folds < 2:
        raise ConfigError(f"cross-fitting needs at least 2 folds, not {folds}")
    if len(labelled) < folds:
        raise ConfigError(f"cross-fitting in {folds} folds needs at least {folds} labelled items, "
                          f"got {len(labelled)}")
    order = np.random.default_rng(seed).permutation(len(labelled))
    parts = [[labelled[i] for i in part] for part in np.array_split(order, folds)]
    rated = [item for item in human if item in judge]
    out_of_fold: dict[str, float] = {}
    maps = []
    for part in parts:
        held_out = set(part)
        train = [item for item in rated if item not in held_out]
        calibration = fit_isotonic([judge[i] for i in train], [human[i] for i in train],
                                   name="isotonic fold", item_ids=train)
        out_of_fold.update(zip(part, calibration.apply([judge[i] for i in part]).tolist(), strict=True))
        maps.append(calibration)
    return CrossFit(out_of_fold, tuple(maps))
