"""A native Stable-Baselines3 VecEnv over the engine's batched API.

All N games live in one `HanabiBatch`; stepping, observing and masking are single C calls
over the batch, so training never steps games one at a time in Python. One shared policy
plays every seat (self-play): each env step is the move of the player to act in that game.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvStepReturn

from lbs_pz.engine import HanabiBatch, HanabiConfig


class HanabiVecEnv(VecEnv):
    """N self-play games as an SB3 VecEnv, with `action_masks()` for MaskablePPO.

    Args:
        num_envs: N games stepped together.
        config: the variant (default: standard 2 players), or keyword arguments of
            HanabiConfig via `**config_kwargs`.
        seed: seeds the deals; finished games restart with fresh deals from the same stream.

    Shapes: observations (N, encoding_size) float32 (the player to act), rewards (N,)
    float32 (score change), dones (N,) bool, action masks (N, num_moves) bool. A finished
    game is reset at once; its last observation is in `infos[i]["terminal_observation"]`
    and `infos[i]["episode"] = {"r": return, "l": length, "score": final score}`.
    """

    def __init__(self, num_envs: int = 256, config: Optional[HanabiConfig] = None,
                 seed: Optional[int] = None, **config_kwargs):
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

    def _new_seeds(self, count: int) -> np.ndarray:
        return self._rng.integers(0, 2**63, size=count, dtype=np.uint64)

    def reset(self):
        if self._seeds[0] is not None:
            self._rng = np.random.default_rng(self._seeds[0])
        self._reset_seeds()
        self.batch.reset(self._new_seeds(self.num_envs))
        self._returns[:] = 0
        self._lengths[:] = 0
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self.batch.encode(self._obs).copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self) -> VecEnvStepReturn:
        rewards = self.batch.step(self._actions, self._rewards)
        self._returns += rewards
        self._lengths += 1
        dones = self.batch.terminals()
        infos: List[dict] = [{} for _ in range(self.num_envs)]
        finished = np.flatnonzero(dones)
        if finished.size:
            final_obs = self.batch.encode(np.empty((self.num_envs, self._obs.shape[1]), np.float32))
            scores = self.batch.scores()
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
        return self.batch.legal_masks(self._masks).astype(bool)

    def close(self) -> None:
        pass

    # VecEnv plumbing: the "sub-environments" are slots of one batch.
    def get_attr(self, attr_name: str, indices=None) -> List[Any]:
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> List[Any]:
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            return list(self.action_masks()[idx])
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in idx]

    def env_is_wrapped(self, wrapper_class, indices=None) -> List[bool]:
        return [False for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        from lbs_pz.engine.render import render_rgb

        return [render_rgb(self.batch.get_state(i)) for i in range(self.num_envs)]
