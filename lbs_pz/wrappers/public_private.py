"""PettingZoo wrapper that splits each observation into public and private parts."""

from __future__ import annotations

from typing import Dict

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

from lbs_pz.engine import PlayerView
from lbs_pz.engine.features import private_features, private_size, public_features, public_size
from lbs_pz.envs.hanabi_v0 import raw_env


class PublicPrivateObservation(BaseWrapper):
    """Observations become {"public", "private", "action_mask"} (see
    `lbs_pz.engine.features`): `public` is identical for every agent of a game,
    `private` holds exactly the other players' cards. Works on `hanabi_v0.env()` or
    `raw_env()`.

    `view(agent)` returns the agent's structured `PlayerView`, free of hidden information.
    """

    def __init__(self, env):
        if not isinstance(getattr(env, "unwrapped", None), raw_env):
            raise ValueError(f"env must be an lbs_pz hanabi_v0 env (env() or raw_env()), got "
                             f"{type(env).__name__}")
        super().__init__(env)
        config = self.env.unwrapped.config
        mask_space = spaces.Box(0, 1, (config.num_moves,), np.int8)
        self._spaces = {
            agent: spaces.Dict({
                "public": spaces.Box(0.0, 1.0, (public_size(config),), np.float32),
                "private": spaces.Box(0.0, 1.0, (private_size(config),), np.float32),
                "action_mask": mask_space,
            })
            for agent in self.env.possible_agents
        }

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._spaces[agent]

    def observe(self, agent: str) -> Dict[str, np.ndarray]:
        base = self.env.unwrapped
        game = base.game
        return {
            "public": public_features(game),
            "private": private_features(game, base.seat(agent)),
            "action_mask": self.env.observe(agent)["action_mask"],
        }

    def view(self, agent: str) -> PlayerView:
        base = self.env.unwrapped
        return base.game.view(base.seat(agent))
