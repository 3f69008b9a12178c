"""Deal streams: evaluation never replays a training deal.

Every command that plays games draws its deals from a named stream: `EVAL` (`lbs-pz eval`,
`compare`, benchmarks) or `TRAIN` (data generation for beliefs, values and blueprints).
Game `i` of a run seeded `seed` in stream `s` gets the 64-bit engine seed

    mix64((s << 63 | seed << 32 | i) ^ SALT)        0 <= seed < 2**31, 0 <= i < 2**32

where `mix64` is splitmix64's finaliser, a bijection of 64-bit integers (the salt keeps
these seeds away from small ones such as `HanabiState(config, seed=0)`). Distinct
(stream, seed, game) triples therefore give distinct engine seeds: no evaluation game of
any seed shares its seed with a training game of any seed.

Engine seeds themselves (`HanabiState(seed=)`, `HanabiBatch(seeds=)`, `reset`, `set_hand(seed=)`,
...) are integers in [0, 2**64): one rule, `check_engine_seed`, everywhere; a negative seed or
one >= 2**64 raises ValueError (never wrapped or hashed), and so does a run seed outside
[0, MAX_SEED) here.

    >>> from lbs_pz.engine import HanabiConfig, HanabiState
    >>> seeds = deal_seeds(EVAL, seed=0, first=0, count=3)
    >>> state = HanabiState(HanabiConfig(), seed=int(seeds[0]))   # evaluation game 0
"""

from __future__ import annotations

import numpy as np

from lbs_pz.checks import as_choice, as_int, is_real

EVAL = "eval"
TRAIN = "train"
STREAMS = (EVAL, TRAIN)
MAX_SEED = 2**31          # run seeds are in [0, MAX_SEED)
MAX_GAMES = 2**32         # games per run and stream
SALT = 0x5851F42D4C957F2D
ENGINE_SEED_LIMIT = 2**64  # engine seeds (HanabiState, HanabiBatch) are in [0, ENGINE_SEED_LIMIT)


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's output function on uint64 (wrapping arithmetic); invertible."""
    x = x.copy()
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def check_run_seed(seed) -> int:
    """`seed` as an int in [0, MAX_SEED); ValueError otherwise."""
    return as_int(seed, "seed", 0, below=MAX_SEED, error=ValueError)


def check_engine_seed(seed, name: str = "seed") -> int:
    """`seed` as an int in [0, 2**64): the one rule for every engine seed
    (`HanabiState(seed=)`, `shuffle_deck`, `set_hand`, `HanabiBatch(seeds=)`, `reset`,
    `reset_game`, `set_hands(seeds=)`, `game_seeds`). Python and numpy integers are
    accepted; anything else, and any value outside the range (negative, >= 2**64), raises
    ValueError: seeds are never wrapped or hashed, so two different accepted seeds are two
    different seeds."""
    seed = as_int(seed, name, what="an integer in [0, 2**64)", error=ValueError)
    if not 0 <= seed < ENGINE_SEED_LIMIT:   # the range alone: every interface's words
        raise ValueError(f"{name} must be in [0, 2**64), got {seed}")
    return seed


def check_engine_seeds(seeds, n: int, name: str = "seeds") -> np.ndarray:
    """`seeds` as a C-contiguous uint64 array of shape (n,), each in [0, 2**64) as
    `check_engine_seed` requires; ValueError otherwise (a negative entry is refused, not
    wrapped)."""
    arr = np.asarray(seeds)
    if arr.shape != (n,) or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        if arr.dtype == object and arr.shape == (n,):
            return np.array([check_engine_seed(s, name) for s in arr], dtype=np.uint64)
        raise ValueError(f"{name} must be {n} integers in [0, 2**64) (shape ({n},)), got an "
                         f"array of shape {arr.shape} and dtype {arr.dtype}")
    if arr.dtype.kind == "i" and arr.size and arr.min() < 0:
        bad = arr[arr < 0][0]
        raise ValueError(f"{name} must be in [0, 2**64), got {bad} at index "
                         f"{int(np.flatnonzero(arr < 0)[0])}")
    return np.ascontiguousarray(arr, dtype=np.uint64)


def deal_seeds(stream: str, seed: int, first: int, count: int) -> np.ndarray:
    """uint64 (count,): engine seeds of games first .. first+count-1 of run `seed` in
    `stream` (EVAL or TRAIN). Pass one to `HanabiState(config, seed=int(s))` or the
    array to `HanabiBatch(config, count, seeds=...)`."""
    as_choice(stream, "stream", STREAMS)
    seed = check_run_seed(seed)
    # any number in range is taken, as it always was; a bool is refused
    if not (is_real(first) and is_real(count)) or first < 0 or count < 0 \
            or first + count > MAX_GAMES:
        raise ValueError(f"games {first} .. {first + count - 1} out of range [0, {MAX_GAMES})")
    prefix = (int(stream == TRAIN) << 63) | (seed << 32)
    counters = np.uint64(prefix) + np.arange(first, first + count, dtype=np.uint64)
    return _mix64(counters ^ np.uint64(SALT))
