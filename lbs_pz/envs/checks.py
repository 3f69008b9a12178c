"""Argument checks shared by every environment interface, so that `raw_env`, `env()`, the
Gymnasium self-play env and the SB3 VecEnv accept and refuse the same things with the same
words.

Actions (one rule everywhere):
- a move id is a Python int or a NumPy integer (a 0-d integer array too) in [0, num_moves);
- bool, float, str, None (for an agent still playing) and anything else: ValueError
  "action must be an integer move id in [0, N), got X (type)";
- an integer outside [0, num_moves): ValueError "illegal action X: out of range [0, N)";
- an integer in range that is illegal in the position: `illegal_action` decides, in every
  interface: "terminate" ends the game, the mover's reward is `illegal_reward` (-1) and
  `info["illegal_action"]` is True (PettingZoo's TerminateIllegalWrapper rule, hanabi_v5's
  env()); "raise" raises ValueError naming the move and the legal ones, nothing changes.
  `env()`, the Gymnasium env and the VecEnv default to "terminate", `raw_env` to "raise"
  (as hanabi_v5's raw_env, which raises on an illegal move).

Seeds: None, or an integer in [0, 2**64) (Python or NumPy; not bool, not float).
"""

from __future__ import annotations

import reprlib
from typing import Optional, Sequence

import numpy as np

from lbs_pz.checks import as_int, as_real, is_int
from lbs_pz.engine import move_name
from lbs_pz.engine.seeds import check_engine_seed

ILLEGAL_ACTION_MODES = ("terminate", "raise")


def check_action(action, num_moves: int) -> int:
    """`action` as a Python int in [0, num_moves); ValueError (naming it) otherwise. O(1)."""
    if type(action) is int:                      # the common case first
        value = action
    elif is_int(action):                         # a bool is not: it falls to the error
        value = int(action)
    elif isinstance(action, np.ndarray) and action.ndim == 0 and action.dtype.kind in "iu":
        value = int(action)
    else:
        raise ValueError(f"action must be an integer move id in [0, {num_moves}), got "
                         f"{_short(action)} ({type(action).__name__})")
    if not 0 <= value < num_moves:
        raise ValueError(f"illegal action {value}: out of range [0, {num_moves})")
    return value


def check_actions(actions, num_envs: int, num_moves: int) -> np.ndarray:
    """`actions` (N integers) as int64 (N,) in [0, num_moves); ValueError naming the first
    bad entry. An integer array (shape (N,) or any shape of N elements) is checked with
    NumPy in O(N); a list is checked entry by entry with `check_action`."""
    if isinstance(actions, np.ndarray):
        if actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array of {num_envs} move ids, got "
                             f"dtype {actions.dtype}")
        if actions.size != num_envs:
            raise ValueError(f"actions must hold {num_envs} move ids (one per game), got shape "
                             f"{actions.shape}")
        flat = actions.reshape(num_envs)
        # One unsigned comparison finds negatives and values >= num_moves together.
        if flat.dtype.kind == "u":
            unsigned = flat
        else:
            unsigned = flat.astype(np.int64, copy=False).view(np.uint64)
        if (unsigned >= num_moves).any():
            bad = int(np.flatnonzero((flat < 0) | (flat >= num_moves))[0])
            raise ValueError(f"game {bad}: illegal action {flat[bad]}: out of range "
                             f"[0, {num_moves})")
        return flat.astype(np.int64, copy=False)
    if isinstance(actions, (str, bytes)) or not isinstance(actions, Sequence):
        raise ValueError(f"actions must be {num_envs} move ids (an integer array), got "
                         f"{_short(actions)} ({type(actions).__name__})")
    if len(actions) != num_envs:
        raise ValueError(f"actions must hold {num_envs} move ids (one per game), got "
                         f"{len(actions)}")
    checked = []
    for i, action in enumerate(actions):
        try:
            checked.append(check_action(action, num_moves))
        except ValueError as err:
            raise ValueError(f"game {i}: {err}") from None
    return np.asarray(checked, dtype=np.int64)


def illegal_action_message(config, action: int, legal: Sequence[int], who: str = "") -> str:
    """The words every interface uses for an illegal in-range move."""
    return (f"illegal action {action} {move_name(config, action)}{who}; "
            f"legal actions: {list(legal)}")


def check_illegal_action(mode, illegal_reward) -> float:
    """Validate the `illegal_action` mode and return `illegal_reward` as a finite float."""
    if not isinstance(mode, str) or mode not in ILLEGAL_ACTION_MODES:
        raise ValueError(f"illegal_action must be 'terminate' or 'raise', got {_short(mode)}")
    return as_real(illegal_reward, "illegal_reward", error=ValueError)


def check_seed(seed) -> Optional[int]:
    """`seed` as None or a Python int in [0, 2**64); ValueError naming the range otherwise."""
    if seed is None:
        return None
    seed = as_int(seed, "seed", what="None or an integer in [0, 2**64)", error=ValueError)
    return check_engine_seed(seed)          # the engine's range rule, one place


def check_render_mode(render_mode, modes) -> None:
    if render_mode is not None and (not isinstance(render_mode, str) or render_mode not in modes):
        raise ValueError(f"render_mode must be None or one of {list(modes)}, got "
                         f"{_short(render_mode)}")


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 2, 40, 40


def _short(value) -> str:
    """A short repr that never recurses deeply and survives a hostile __repr__."""
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape} and dtype {value.dtype}"
    try:
        return _REPR.repr(value)
    except Exception:
        return f"<{type(value).__name__}>"
