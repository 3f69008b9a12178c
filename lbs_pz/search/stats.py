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
