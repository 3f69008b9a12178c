"""Hanabi as a PettingZoo AEC environment, on the lbs_pz engine.

A drop-in replacement for PettingZoo's classic `hanabi_v5`: the same keyword arguments
and the same observation layout (HLE's canonical vector plus an action mask), with the
engine's extras (hand sizes up to 8).

    agents             `player_0` ... `player_{players-1}`
    action space       `Discrete(num_moves)`: HLE move ids (discards, plays, color hints,
                       rank hints); 20 for 2 players
    observation space  `Dict(observation=Box(0, 1, (encoding_size,), float32),
                       action_mask=Box(0, 1, (num_moves,), int8))`; 658 floats for 2 players
    rewards            every agent receives the change of score after each move, as HLE's
                       rl_env: +1 per card added to the fireworks, minus the whole score when
                       the last life is lost (the score becomes 0)
    infos              `action_mask` (int8 (num_moves,), as hanabi_v5's: the legal moves of
                       the agent to act, zeros for the others), `score` (current game score)
                       and `legal_moves` (the move ids of the agent to act, empty for the
                       others)

Actions follow `lbs_pz.envs.checks` (the same rule in every interface): NumPy integers are
accepted; bool, float, str and None (for an agent still playing) raise ValueError, and so
does an integer outside [0, num_moves). An illegal in-range move: `env()` ends the game
with reward -1 for its author (PettingZoo's TerminateIllegalWrapper, as hanabi_v5) and sets
`infos[author]["illegal_action"] = True`; `raw_env` raises ValueError naming the move and
the legal ones (hanabi_v5's raw_env raises too). `illegal_action="terminate"|"raise"`
switches either.

Differences from hanabi_v5 (same layout and values otherwise): the observation is float32
in Box(0, 1) (hanabi_v5: float64 in Box(-inf, inf); every entry is 0 or 1 in both); infos
carry `score` and `legal_moves` besides `action_mask`; an out-of-range or non-integer
action is a ValueError (hanabi_v5's env(): AssertionError "action is not in action space");
`reset(seed=)` takes None or an integer in [0, 2**64) (hanabi_v5: [0, 2**63), other seeds
fail inside OpenSpiel); hand sizes up to 8; render modes "ansi" as well.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Union

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.engine.render import render_rgb
from lbs_pz.envs.checks import (check_action, check_illegal_action, check_render_mode,
                                check_seed, illegal_action_message)


# Attributes every AEC step reads. PettingZoo's wrappers forward them through
# BaseWrapper.__getattr__ at each layer, which costs more than a whole engine move; the
# subclasses below read them straight from the raw env, which owns them. Behaviour is
# otherwise the wrappers' own.
_STEP_ATTRIBUTES = ("agent_selection", "rewards", "terminations", "truncations", "infos",
                    "_cumulative_rewards", "agents")


def _direct_access(wrapper_class, check_reset: bool = False):
    def make(name):
        def read(self):
            if check_reset and not self._has_reset and name != "_cumulative_rewards":
                raise AttributeError(f"{name} cannot be accessed before reset")
            return getattr(self._raw, name)
        return property(read)

    def __init__(self, environment, *args, **kwargs):
        self._raw = environment.unwrapped
        wrapper_class.__init__(self, environment, *args, **kwargs)

    namespace = {name: make(name) for name in _STEP_ATTRIBUTES}
    namespace["__init__"] = __init__
    return type(wrapper_class.__name__, (wrapper_class,), namespace)


# classes made at run time, over PettingZoo's (which has no type information)
_TerminateIllegalWrapper: Any = _direct_access(wrappers.TerminateIllegalWrapper)
_AssertOutOfBoundsWrapper: Any = _direct_access(wrappers.AssertOutOfBoundsWrapper)
OrderEnforcingWrapper: Any = _direct_access(wrappers.OrderEnforcingWrapper, check_reset=True)


class TerminateIllegalWrapper(_TerminateIllegalWrapper):
    """PettingZoo's TerminateIllegalWrapper; also marks `infos[author]["illegal_action"]`,
    as the Gymnasium env and the VecEnv do."""

    def step(self, action: Any) -> None:
        author, was_terminated = self._raw.agent_selection, self._terminated
        super().step(action)
        if self._terminated and not was_terminated:
            raw = self._raw
            raw.rewards = {a: float(r) for a, r in raw.rewards.items()}
            if author in raw.infos:
                raw.infos[author] = {**raw.infos[author], "illegal_action": True}


class AssertOutOfBoundsWrapper(_AssertOutOfBoundsWrapper):
    """PettingZoo's AssertOutOfBoundsWrapper with the shared action check: a non-integer or
    out-of-range action is a ValueError naming it (not a bare AssertionError)."""

    def step(self, action: Any) -> None:
        raw = self._raw
        agent = raw.agent_selection
        if action is None and (raw.terminations[agent] or raw.truncations[agent]):
            return self.env.step(action)
        # check_action's result is in the action space: no second Discrete.contains check.
        self.env.step(check_action(action, raw.config.num_moves))


def env(**kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's standard wrappers (as hanabi_v5's env()); keyword
    arguments as `raw_env`, with `illegal_action` defaulting to "terminate"."""
    kwargs.setdefault("illegal_action", "terminate")
    environment = raw_env(**kwargs)
    if environment.illegal_action == "terminate":
        environment = TerminateIllegalWrapper(environment,
                                              illegal_reward=environment.illegal_reward)
    environment = AssertOutOfBoundsWrapper(environment)
    environment = OrderEnforcingWrapper(environment)
    return environment


class raw_env(AECEnv, EzPickle):
    """Hanabi for `players` agents; see the module docstring for spaces and rewards.

    Args:
        colors, ranks, players, hand_size, max_information_tokens, max_life_tokens,
        observation_type, random_start_player: as `lbs_pz.engine.HanabiConfig`
        (hand_size None = 5, or 4 with 4+ players).
        render_mode: None, "ansi" (render() returns the table as text), "human" (prints
        it) or "rgb_array" (returns an image array of shape (H, W, 3)).
        illegal_action: "raise" (default: ValueError naming the move and the legal ones)
        or "terminate" (the game ends, the author's reward is `illegal_reward`, the others'
        0, `infos[author]["illegal_action"]` True); see `lbs_pz.envs.checks`.
        illegal_reward: a finite number, -1 by default.

    Every bad argument is a ValueError naming it.
    """

    metadata = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "hanabi_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        colors: int = 5,
        ranks: int = 5,
        players: int = 2,
        hand_size: Optional[int] = None,
        max_information_tokens: int = 8,
        max_life_tokens: int = 3,
        observation_type: str = "card_knowledge",
        random_start_player: bool = False,
        render_mode: Optional[str] = None,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
    ):
        EzPickle.__init__(
            self, colors=colors, ranks=ranks, players=players, hand_size=hand_size,
            max_information_tokens=max_information_tokens, max_life_tokens=max_life_tokens,
            observation_type=observation_type, random_start_player=random_start_player,
            render_mode=render_mode, illegal_action=illegal_action, illegal_reward=illegal_reward,
        )
        super().__init__()
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.illegal_reward = check_illegal_action(illegal_action, illegal_reward)
        self.illegal_action = illegal_action
        self.config = HanabiConfig(
            players=players, colors=colors, ranks=ranks, hand_size=hand_size,
            max_information_tokens=max_information_tokens, max_life_tokens=max_life_tokens,
            random_start_player=random_start_player, observation_type=observation_type,
        )
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(players)]
        self._seat = {agent: i for i, agent in enumerate(self.possible_agents)}
        n, e = self.config.num_moves, self.config.encoding_size
        self.action_spaces: Dict[str, spaces.Discrete] = {a: spaces.Discrete(n)
                                                          for a in self.possible_agents}
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(0.0, 1.0, (e,), np.float32),
                "action_mask": spaces.Box(0, 1, (n,), np.int8),
            })
            for a in self.possible_agents
        }
        self.state_: Optional[HanabiState] = None

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    @property
    def game(self) -> HanabiState:
        """The engine state of the current game (hidden information included)."""
        if self.state_ is None:
            raise RuntimeError("call reset() before using the environment")
        return self.state_

    def seat(self, agent: str) -> int:
        return self._seat[agent]

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        """Deal a new game; `seed`: None (fresh entropy) or an integer in [0, 2**64)."""
        self.state_ = HanabiState(self.config, seed=check_seed(seed))
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.agent_selection = self.possible_agents[self.state_.current_player]
        self._update_infos()

    def _update_infos(self):
        game = self.game
        score, current = game.score, game.current_player
        mask, legal, n = game.legal_mask(), game.legal_moves(), self.config.num_moves
        self.infos = {
            a: {"action_mask": mask, "score": score, "legal_moves": legal}
            if self._seat[a] == current else
            {"action_mask": np.zeros(n, np.int8), "score": score, "legal_moves": []}
            for a in self.agents
        }

    def observe(self, agent: str) -> Dict[str, np.ndarray]:
        game, seat = self.game, self._seat[agent]
        if seat == game.current_player and not game.is_terminal:
            mask = game.legal_mask()
        else:
            mask = np.zeros(self.config.num_moves, dtype=np.int8)
        return {"observation": game.encode(seat), "action_mask": mask}

    def step(self, action: Any) -> None:
        game = self.game
        author = self.agent_selection
        if self.terminations[author] or self.truncations[author]:
            return self._was_dead_step(action)
        action = check_action(action, self.config.num_moves)
        if not game.is_legal(action):
            if self.illegal_action == "raise":
                raise ValueError(illegal_action_message(self.config, action, game.legal_moves(),
                                                        f" for {author}"))
            # As PettingZoo's TerminateIllegalWrapper: the author loses illegal_reward.
            self._cumulative_rewards[author] = 0.0
            self.terminations = {a: True for a in self.agents}
            self.truncations = {a: True for a in self.agents}
            self.rewards = {a: 0.0 for a in self.agents}
            self.rewards[author] = self.illegal_reward
            self.infos[author] = {**self.infos[author], "illegal_action": True}
            self._accumulate_rewards()
            self._deads_step_first()
            return
        before = game.score
        game.apply(action)
        reward = float(game.score - before)
        self._cumulative_rewards[self.agent_selection] = 0.0
        self.rewards = {a: reward for a in self.agents}
        if game.is_terminal:
            self.terminations = {a: True for a in self.agents}
        self._update_infos()
        self.agent_selection = self.possible_agents[game.current_player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> Union[str, np.ndarray, None]:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode= "
                                  "to the environment")
            return None
        if self.render_mode == "rgb_array":
            return render_rgb(self.game)
        text = self.game.render()  # a spectator's view: every hand shown
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        pass
