"""Helpers shared by the benchmark scripts (imported as a sibling module: Python puts a
script's folder first on its path, so `python benchmarks/NAME.py` finds it)."""

from __future__ import annotations

import gc
import os
import time
from typing import Callable, Optional

THREAD_ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                   "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def limit_threads() -> None:
    """One thread for OpenMP/BLAS (effective for subprocesses, and for numpy only if
    set before numpy is first imported, as benchmarks/engine_throughput.py does)."""
    for var in THREAD_ENV_VARS:
        os.environ[var] = "1"


def pin_to_one_core(core: Optional[int] = None) -> Optional[int]:
    """Pin this process (and the children it starts) to one CPU core: `core`, or the
    lowest core currently allowed. Returns the core, or None where pinning is unsupported."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        if core is None:
            core = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
        return core
    except OSError:
        return None


def timed_rates(fn: Callable[[], int], repeats: int,
                warmup: Optional[Callable[[], int]] = None) -> list:
    """Call `warmup` (default: `fn`) once, then time `repeats` calls of `fn` (each
    returning how many operations it did); returns operations per second of each call."""
    (warmup or fn)()
    rates = []
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter()
            n = fn()
            dt = time.perf_counter() - t0
            rates.append(n / dt)
    finally:
        if gc_was_enabled:
            gc.enable()
    return rates


def play_random_aec_game(env, seed: int, rng) -> int:
    """One game of uniformly random legal moves through a PettingZoo AEC env (ours or
    hanabi_v5), reset with `seed`; returns the moves made."""
    import numpy as np

    env.reset(seed=seed)
    moves = 0
    for _ in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[int(rng.integers(len(legal)))]))
        moves += 1
    return moves
