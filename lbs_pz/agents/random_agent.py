"""`RandomAgent`: a uniformly random legal move, reproducible from the public history."""

from __future__ import annotations

import numpy as np

from lbs_pz.agents.base import ViewAgent
from lbs_pz.engine import PlayerView


class RandomAgent(ViewAgent):
    """Plays a uniformly random legal move.

    The move is drawn from a generator seeded with (`seed`, the public move history), so
    it is a deterministic function of what every player has seen: a valid (if weak)
    Blueprint that a search can replay in sampled worlds. Different seeds give different,
    independent-looking players.

    >>> from lbs_pz.engine import HanabiConfig, HanabiState
    >>> state = HanabiState(HanabiConfig(players=2), seed=1)
    >>> agent = RandomAgent(seed=7)
    >>> agent.act(state) in state.legal_moves()
    True
    >>> agent.act(state) == agent.act(state.clone())
    True
    """

    name = "random"

    def __init__(self, seed: int = 0):
        self.seed = int(seed)

    def act_view(self, view: PlayerView) -> int:
        if not view.legal_moves:
            raise ValueError("no legal move: the game is over or it is not this seat's turn")
        history = [past.move_id for past in view.history]
        rng = np.random.default_rng([self.seed & 0xFFFFFFFF, len(history), *history])
        return int(view.legal_moves[rng.integers(len(view.legal_moves))])
