"""Mean and standard error of the mean: the one helper every estimate in lbs_pz uses
(search's per-move returns and paired gains, evaluation scores, compare's paired
differences, training's greedy self-play score).

    >>> mean, sem = mean_sem([1.0, 2.0, 3.0])
    >>> round(mean, 3), round(sem, 3)
    (2.0, 0.577)
"""

from __future__ import annotations

from typing import Tuple

import numpy as np


def mean_sem_from_sums(sums, sq_sums, counts) -> Tuple[np.ndarray, np.ndarray]:
    """Means and standard errors from running sums, element-wise (arrays of one shape):
    sums = sum x, sq_sums = sum x^2, counts = n. The s.e. uses the sample variance
    (n - 1 in the denominator); both are 0 where n = 0 and the s.e. is 0 where n = 1."""
    sums = np.asarray(sums, dtype=np.float64)
    counts = np.asarray(counts)
    n = np.maximum(counts, 1)
    means = sums / n
    var = np.maximum(np.asarray(sq_sums, dtype=np.float64) / n - means ** 2, 0.0)
    return means, np.sqrt(var / np.maximum(counts - 1, 1))


def mean_sem(values) -> Tuple[float, float]:
    """(mean, standard error of the mean) of a 1-D sample; s.e. 0 for one value.
    ValueError for an empty sample."""
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size == 0:
        raise ValueError("mean_sem of an empty sample")
    mean, sem = mean_sem_from_sums(x.sum(), np.square(x).sum(), x.size)
    return float(mean), float(sem)


def weighted_mean_sem_from_sums(wx, w2x, w2x2, w1, w2) -> Tuple[np.ndarray, np.ndarray]:
    """Self-normalised importance-sampling means and standard errors from running sums,
    element-wise: wx = sum w x, w2x = sum w^2 x, w2x2 = sum w^2 x^2, w1 = sum w,
    w2 = sum w^2. The mean is wx / w1; its variance is sum w^2 (x - mean)^2 / w1^2, times
    ess / (ess - 1) (ess = w1^2 / w2, the effective sample size), which for equal weights
    is exactly `mean_sem_from_sums`'s sample variance. Both are 0 where w1 = 0; the s.e.
    is 0 where ess <= 1."""
    w1 = np.asarray(w1, dtype=np.float64)
    w2 = np.asarray(w2, dtype=np.float64)
    safe = np.where(w1 > 0, w1, 1.0)
    means = np.where(w1 > 0, np.asarray(wx, dtype=np.float64) / safe, 0.0)
    spread = np.maximum(np.asarray(w2x2, dtype=np.float64) - 2 * means * w2x
                        + means ** 2 * w2, 0.0)
    ess = effective_sample_size(w1, w2)
    factor = np.where(ess > 1, ess / np.maximum(ess - 1, 1e-12), 0.0)
    return means, np.sqrt(spread / safe ** 2 * factor)


def effective_sample_size(w1, w2) -> np.ndarray:
    """Kish's effective sample size (sum w)^2 / sum w^2 from the two sums, element-wise
    (0 where sum w^2 = 0): the number of equally weighted samples that estimate a mean as
    precisely as these weighted ones."""
    w1 = np.asarray(w1, dtype=np.float64)
    w2 = np.asarray(w2, dtype=np.float64)
    return np.where(w2 > 0, w1 ** 2 / np.where(w2 > 0, w2, 1.0), 0.0)


def weighted_rows_mean_sem(x, w) -> Tuple[np.ndarray, np.ndarray]:
    """Self-normalised importance-weighted mean and s.e. along the last axis of x (..., n)
    under non-negative weights w (n,) (`weighted_mean_sem_from_sums`)."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    ww = w * w
    return weighted_mean_sem_from_sums(x @ w, x @ ww, (x * x) @ ww, w.sum(), ww.sum())


def weighted_mean_sem(values, weights) -> Tuple[float, float]:
    """(mean, s.e.) of a 1-D sample under non-negative importance weights
    (`weighted_rows_mean_sem`). ValueError for an empty sample or a shape mismatch."""
    x = np.asarray(values, dtype=np.float64).ravel()
    w = np.asarray(weights, dtype=np.float64).ravel()
    if x.size == 0 or w.shape != x.shape:
        raise ValueError(f"weighted_mean_sem needs as many weights as values (>= 1), got "
                         f"{w.size} and {x.size}")
    mean, sem = weighted_rows_mean_sem(x, w)
    return float(mean), float(sem)


def weights_ess(w) -> float:
    """Kish's effective sample size of a weight vector (`effective_sample_size`)."""
    w = np.asarray(w, dtype=np.float64)
    return float(effective_sample_size(w.sum(), (w * w).sum()))
