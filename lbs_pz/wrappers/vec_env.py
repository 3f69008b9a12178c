"""A native Stable-Baselines3 VecEnv over the engine's batched API.

All N games live in one `HanabiBatch`; stepping, observing and masking are single C calls
over the batch, so training never steps games one at a time in Python. One shared policy
plays every seat (self-play): each env step is the move of the player to act in that game.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence

import numpy as np
from gymnasium import spaces

from lbs_pz.checks import as_int
from lbs_pz.engine import HanabiBatch, HanabiConfig
from lbs_pz.engine.render import render_rgb
from lbs_pz.envs.checks import (check_actions, check_illegal_action, check_seed,
                                illegal_action_message)
from lbs_pz.optional import require

if TYPE_CHECKING:           # SB3's own types for the checker; at run time, the gate
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvStepReturn
else:
    _base_vec_env = require("stable_baselines3.common.vec_env.base_vec_env", "HanabiVecEnv")
    VecEnv, VecEnvStepReturn = _base_vec_env.VecEnv, _base_vec_env.VecEnvStepReturn


class HanabiVecEnv(VecEnv):
    """N self-play games as an SB3 VecEnv, with `action_masks()` for MaskablePPO.

    Args:
        num_envs: N games stepped together.
        config: the variant (default: standard 2 players), or keyword arguments of
            HanabiConfig via `**config_kwargs`.
        seed: None or an integer in [0, 2**64): seeds the deals; finished games restart
            with fresh deals from the same stream (`seed(s)` then `reset()` restarts it).
        illegal_action, illegal_reward: as every lbs_pz env (`lbs_pz.envs.checks`):
            "terminate" (default) ends a game whose action is illegal, with reward
            `illegal_reward` (-1) and `infos[i]["illegal_action"] = True`, and resets it;
            "raise" raises ValueError naming the game, the move and the legal ones before
            any game moves.

    Actions: N move ids, an integer array (or a list of ints / NumPy integers); a bool,
    float or out-of-range entry is a ValueError naming the game, before any game moves.
    Legality is checked against the masks of the last `action_masks()` call when no step
    came between (MaskablePPO's loop), else against fresh ones: a few microseconds a step.

    Shapes: observations (N, encoding_size) float32 (the player to act), rewards (N,)
    float32 (score change), dones (N,) bool, action masks (N, num_moves) bool. A finished
    game is reset at once; its last observation is in `infos[i]["terminal_observation"]`
    and `infos[i]["episode"] = {"r": return, "l": length, "score": final score}`.
    """

    def __init__(self, num_envs: int = 256, config: Optional[HanabiConfig] = None,
                 seed: Optional[int] = None, illegal_action: str = "terminate",
                 illegal_reward: float = -1.0, **config_kwargs):
        num_envs = as_int(num_envs, "num_envs", 1, 2**24, what="an integer in [1, 2**24]",
                          error=ValueError)
        if config is not None and not isinstance(config, HanabiConfig):
            raise ValueError(f"config must be a HanabiConfig or None, got {config!r}")
        if config is not None and config_kwargs:
            raise ValueError(f"pass either config or its keyword arguments, not both "
                             f"(got config and {sorted(config_kwargs)})")
        seed = check_seed(seed)
        self.illegal_reward = check_illegal_action(illegal_action, illegal_reward)
        self.illegal_action = illegal_action
        self.config = config if config is not None else HanabiConfig(**config_kwargs)
        n, e, m = num_envs, self.config.encoding_size, self.config.num_moves
        self.render_mode = None
        super().__init__(n, spaces.Box(0.0, 1.0, (e,), np.float32), spaces.Discrete(m))
        self.batch = HanabiBatch(self.config, n, seeds=0)
        self._rng = np.random.default_rng(seed)
        self._obs = np.zeros((n, e), np.float32)
        self._masks = np.zeros((n, m), np.int8)
        self._rewards = np.zeros(n, np.float32)
        self._returns = np.zeros(n, np.float64)
        self._lengths = np.zeros(n, np.int64)
        self._actions: Optional[np.ndarray] = None
        self._no_games = self._illegal = np.zeros(0, np.int64)
        self._offsets = np.arange(n) * m          # row starts in the flattened (N, M) masks
        self._masks_fresh = False                 # self._masks holds the current legal moves

    def _new_seeds(self, count: int) -> np.ndarray:
        return self._rng.integers(0, 2**63, size=count, dtype=np.uint64)

    def seed(self, seed: Optional[int] = None) -> Sequence[Optional[int]]:
        """Seed the deals of the next `reset()`: None or an integer in [0, 2**64)."""
        return super().seed(check_seed(seed))

    def reset(self) -> np.ndarray:
        if self._seeds[0] is not None:
            self._rng = np.random.default_rng(self._seeds[0])
        self._reset_seeds()
        self.batch.reset(self._new_seeds(self.num_envs))
        self._returns[:] = 0
        self._lengths[:] = 0
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._masks_fresh = False
        return self.batch.encode(self._obs).copy()

    def step_async(self, actions: np.ndarray) -> None:
        """Check `actions` (N move ids) now, so that a bad one raises at `step()`."""
        actions = check_actions(actions, self.num_envs, self.config.num_moves)
        if not self._masks_fresh:                # action_masks() since the last step: reuse
            self.batch.legal_masks(self._masks)
        masks = self._masks
        if masks.reshape(-1).take(self._offsets + actions).all():
            self._actions, self._illegal = actions, self._no_games
            return
        illegal = np.flatnonzero(masks.reshape(-1).take(self._offsets + actions) == 0)
        if self.illegal_action == "raise":
            i = int(illegal[0])
            raise ValueError(f"game {i}: " + illegal_action_message(
                self.config, int(actions[i]), np.flatnonzero(masks[i]).tolist()))
        self._actions, self._illegal = actions, illegal

    def step_wait(self) -> VecEnvStepReturn:
        illegal = self._illegal
        self._masks_fresh = False
        if illegal.size:
            # Those games end without their move: keep what the player saw and the score,
            # and step them with any legal move (they are reset below, so it never shows).
            illegal_obs, illegal_scores = self._obs[illegal].copy(), self.batch.scores()[illegal]
            self._actions = self._actions.copy()  # type: ignore[union-attr]  # set with them
            self._actions[illegal] = self._masks[illegal].argmax(axis=1)
        # no step_async before: the actions are None, which step refuses (ValueError)
        rewards = self.batch.step(self._actions, self._rewards)  # type: ignore[arg-type]
        dones = self.batch.terminals()
        infos: List[dict] = [{} for _ in range(self.num_envs)]
        if illegal.size:
            rewards[illegal] = self.illegal_reward
            dones[illegal] = True
        self._returns += rewards
        self._lengths += 1
        finished = np.flatnonzero(dones)
        if finished.size:
            final_obs = self.batch.encode(np.empty((self.num_envs, self._obs.shape[1]), np.float32))
            scores = self.batch.scores()
            if illegal.size:
                final_obs[illegal], scores[illegal] = illegal_obs, illegal_scores
                for i in illegal:
                    infos[i]["illegal_action"] = True
            for i, seed in zip(finished, self._new_seeds(finished.size)):
                infos[i]["terminal_observation"] = final_obs[i]
                infos[i]["episode"] = {"r": float(self._returns[i]), "l": int(self._lengths[i]),
                                       "score": int(scores[i])}
                self.batch.reset_game(int(i), int(seed))
            self._returns[finished] = 0
            self._lengths[finished] = 0
        return self.batch.encode(self._obs).copy(), rewards.copy(), dones, infos

    def action_masks(self) -> np.ndarray:
        """(N, num_moves) bool: legal moves of the player to act in each game."""
        self.batch.legal_masks(self._masks)
        self._masks_fresh = True
        return self._masks.astype(bool)

    def close(self) -> None:
        pass

    # VecEnv plumbing: the "sub-environments" are slots of one batch.
    def get_attr(self, attr_name: str, indices=None) -> List[Any]:
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None,
                   **method_kwargs) -> List[Any]:
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            return list(self.action_masks()[idx])
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in idx]

    def env_is_wrapped(self, wrapper_class, indices=None) -> List[bool]:
        return [False for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        return [render_rgb(self.batch.get_state(i)) for i in range(self.num_envs)]
