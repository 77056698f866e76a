"""Random rating data shared by the analysis tests. Small on purpose: the whole directory runs
in seconds."""

import numpy as np

SEEDS = [0, 1, 2, 3, 4]


def likert_pair(seed: int, n: int = 60, *, missing: float = 0.0):
    """A human score on 1-5 and a noisy judge score, with ties, optionally with NaN holes."""
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, n).astype(float)
    judge = np.clip(human + rng.integers(-2, 3, n), 1, 5).astype(float)
    if missing:
        human[rng.random(n) < missing] = np.nan
        judge[rng.random(n) < missing] = np.nan
    return human, judge


def rating_matrix(seed: int, *, raters: int = 4, items: int = 40, categories: int = 5,
                  missing: float = 0.0):
    """Raters x items on 1..categories, correlated through a shared true value per item."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, categories + 1, items)
    noise = rng.integers(-1, 2, (raters, items)) * (rng.random((raters, items)) < 0.4)
    matrix = np.clip(truth + noise, 1, categories).astype(float)
    if missing:
        matrix[rng.random(matrix.shape) < missing] = np.nan
    return matrix
