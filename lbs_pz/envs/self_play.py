"""A single-agent Gymnasium view of Hanabi, for single-agent RL libraries.

By default one policy plays every seat (self-play): each step is the move of whoever is to
act, and the observation is the canonical vector of the next player to act. With a
`partner` agent, the learner plays only `seat` and the partner plays the other seats
between the learner's moves. `action_masks()` returns the legal moves, as sb3-contrib's
MaskablePPO expects.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import gymnasium
import numpy as np
from gymnasium import spaces

from lbs_pz.checks import as_int
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.envs.checks import (check_action, check_illegal_action, check_render_mode,
                                check_seed, illegal_action_message)


class HanabiSelfPlayEnv(gymnasium.Env):
    """Hanabi self-play as a Gymnasium env.

    Args: the game variant, as `lbs_pz.engine.HanabiConfig` (players, colors, ranks,
    hand_size, max_information_tokens, max_life_tokens, observation_type,
    random_start_player); render_mode (None, "ansi", "human"); illegal_action:
    "terminate" (default: an illegal move ends the episode with reward `illegal_reward`
    and `info["illegal_action"] = True`, as PettingZoo's TerminateIllegalWrapper does) or
    "raise" (ValueError naming the move and the legal ones); partner: an Agent
    (`act(state, seat) -> move`, e.g. a rule bot) that plays every seat but `seat`, or
    None for self-play.

    Spaces: observation Box(0, 1, (encoding_size,), float32), the canonical observation
    of the player to act; action Discrete(num_moves). Reward: the change of score (the
    whole score is lost with the last life). `info` carries `action_mask` (int8),
    `score`, `current_player` and `legal_moves` (and `illegal_action` after an illegal move).

    Actions and seeds follow `lbs_pz.envs.checks`, as every interface: a NumPy integer is
    a move; bool, float, str, None or an integer outside [0, num_moves) is a ValueError;
    `reset(seed=)` takes None or an integer in [0, 2**64). Every bad constructor argument
    is a ValueError naming it.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 2}

    def __init__(self, render_mode: Optional[str] = None, illegal_action: str = "terminate",
                 illegal_reward: float = -1.0, partner=None, seat: int = 0,
                 **config_kwargs):
        self.illegal_reward = check_illegal_action(illegal_action, illegal_reward)
        self.illegal_action = illegal_action
        check_render_mode(render_mode, self.metadata["render_modes"])
        self.config = HanabiConfig(**config_kwargs)
        if partner is not None and not callable(getattr(partner, "act", None)):
            raise ValueError(f"partner must be an Agent with act(state, seat), got {partner!r}")
        seat = as_int(seat, "seat", 0, below=self.config.players, error=ValueError,
                      what=f"an integer in [0, {self.config.players})")
        self.partner, self.seat = partner, seat
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0.0, 1.0, (self.config.encoding_size,), np.float32)
        self.action_space = spaces.Discrete(self.config.num_moves)
        self.game: Optional[HanabiState] = None

    def _info(self):
        game = self.game
        assert game is not None         # after reset(): step() checks it first
        return {
            "action_mask": game.legal_mask(),
            "score": game.score,
            "current_player": game.current_player,
            "legal_moves": game.legal_moves(),
        }

    def reset(self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None,
              ) -> Tuple[np.ndarray, Dict[str, Any]]:
        """New game; `seed`: None (continue the env's stream) or an integer in [0, 2**64)."""
        super().reset(seed=check_seed(seed))
        # The engine's deal comes from Gymnasium's seeded generator, so reset(seed=s)
        # is reproducible and reset() without a seed continues the sequence.
        self.game = HanabiState(self.config, seed=int(self.np_random.integers(2**63)))
        self._over = False
        self._partner_moves(self.game)
        return self.game.encode(), self._info()

    def step(self, action: Any) -> Tuple[np.ndarray, float, bool, bool, Dict[str, Any]]:
        if self.game is None:
            raise RuntimeError("call reset() before step()")
        if self._over:
            raise ValueError("the game is over; call reset()")
        action = check_action(action, self.config.num_moves)
        if not self.game.is_legal(action):
            if self.illegal_action == "terminate":
                self._over = True
                return self.game.encode(), self.illegal_reward, True, False, {
                    **self._info(), "illegal_action": True}
            raise ValueError(illegal_action_message(self.config, action, self.game.legal_moves()))
        before = self.game.score
        self.game.apply(action)
        self._partner_moves(self.game)
        reward = float(self.game.score - before)
        self._over = self.game.is_terminal
        if self.render_mode == "human":
            self.render()
        return self.game.encode(), reward, self.game.is_terminal, False, self._info()

    def _partner_moves(self, game: HanabiState) -> None:
        """Let the partner play until it is the learner's seat again (or the game ends)."""
        if self.partner is None:
            return
        while not game.is_terminal and game.current_player != self.seat:
            game.apply(self.partner.act(game, game.current_player))

    def action_masks(self) -> np.ndarray:
        """Boolean mask of legal moves, shape (num_moves,) (sb3-contrib's MaskablePPO)."""
        if self.game is None:
            raise RuntimeError("call reset() before action_masks()")
        return self.game.legal_mask().astype(bool)

    # gymnasium's render returns a frame of a type variable: here the ansi text, or None
    def render(self) -> Optional[str]:  # type: ignore[override]
        if self.render_mode is None or self.game is None:
            return None
        text = self.game.render()
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None
