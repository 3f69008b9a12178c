"""The `Agent` and `Blueprint` protocols.

An **Agent** chooses the move of one seat from what that seat may see. Agents receive the
engine's `HanabiState` (so they can be driven from any game, a search's sampled world or a
PettingZoo env alike) and a seat, and promise to read only what the seat may see: the
seat's `PlayerView` (`state.view(seat)`). `ViewAgent` makes that promise structural: it
hands subclasses the view and nothing else.

A **Blueprint** is an agent search can simulate (SPARTA, LBS). Beyond `act` it is

- deterministic given (public history, the seat's private observation): the same inputs
  always give the same move, so a search can replay it in sampled worlds;
- batchable: `act_batch` acts in many worlds at once and `rollout` plays many worlds
  forward (k moves or to the end) with the blueprint in every seat;
- optionally a value estimator (`value`, for bootstrapping truncated rollouts);
- explicit about memory: `has_private_memory` is False when its decisions depend on
  nothing but the public history and the seat's own observation (rule bots, public-LSTM
  nets re-run from the history); a blueprint with hidden recurrent state sets it True,
  and a search must then replay the whole history to restore that state.

Example: a blueprint that always plays its oldest card, checked against the protocol::

    >>> import numpy as np
    >>> from lbs_pz.agents import Blueprint, BlueprintBase
    >>> class OldestCard(BlueprintBase):
    ...     name = "oldest"
    ...     def act(self, state, seat=None):
    ...         return state.config.hand_size          # move id of "play slot 0"
    >>> isinstance(OldestCard(), Blueprint)
    True

The C rule bots (`lbs_pz.agents.RuleBot`) implement the same protocol with batched,
GIL-free `act_batch` and `rollout`.
"""

from __future__ import annotations

from typing import Optional, Protocol, Sequence, Union, runtime_checkable

import numpy as np

from lbs_pz.engine import HanabiBatch, HanabiState, PlayerView

States = Union[HanabiBatch, Sequence[HanabiState]]


@runtime_checkable
class Agent(Protocol):
    """Chooses a move for one seat.

    `act(state, seat)` returns a legal move id (HLE numbering) for `seat`, which must be
    the player to move (`seat=None` means `state.current_player`). It may read only what
    `seat` may see, i.e. `state.view(seat)`; tests check this by changing the seat's own
    hidden cards (`state.set_hand`) and expecting the same move.
    """

    name: str

    def act(self, state: HanabiState, seat: Optional[int] = None) -> int:
        ...


@runtime_checkable
class Blueprint(Agent, Protocol):
    """An Agent that search can simulate (see the module docstring).

    Attributes:
        deterministic: True: the move is a function of (public history, private view).
        has_private_memory: True if decisions depend on memory beyond that (then a search
            must replay the whole history to restore it).
        has_value: True if `value` returns estimates.
    """

    deterministic: bool
    has_private_memory: bool
    has_value: bool

    def act_batch(self, states: States) -> np.ndarray:
        """Move of each world's player to move: int64 array (N,), -1 where it is over."""
        ...

    def rollout(self, states: States, max_moves: int = -1) -> np.ndarray:
        """Self-play every world in place with this blueprint in every seat, for at most
        `max_moves` moves (to the end if negative). Returns moves made per world (N,)."""
        ...

    def value(self, states: States) -> Optional[np.ndarray]:
        """Expected final score of each world from its player to move's view, float32
        (N,), or None if this blueprint has no value estimate."""
        ...


def _as_list(states: States):
    if isinstance(states, HanabiBatch):
        return [states.get_state(i) for i in range(len(states))]
    return list(states)


def counterfactual_mask(blueprint, before: HanabiState, seat: int, move: int,
                        hands: np.ndarray) -> np.ndarray:
    """bool (N,): True where `blueprint`, acting for the player to move in `before`, makes
    `move` when `seat` (another player) holds hands[r] (int (N, hand_len)).

    This is the counterfactual filter of SPARTA and LBS beliefs: the partners see the
    seat's hand, so a hand under which the blueprint would have moved otherwise is ruled
    out. A blueprint may provide a fast `counterfactual_mask(before, seat, move, hands)`
    of its own (the C rule bots do); otherwise the blueprint acts in copies of `before`."""
    own = getattr(blueprint, "counterfactual_mask", None)
    if own is not None:
        return np.asarray(own(before, seat, move, hands), dtype=bool)
    keep = np.zeros(len(hands), dtype=bool)
    chunk = 4096
    for lo in range(0, len(hands), chunk):
        worlds = []
        for h in hands[lo:lo + chunk]:
            w = before.clone()
            w.set_hand(seat, [int(c) for c in h])
            worlds.append(w)
        keep[lo:lo + chunk] = np.asarray(blueprint.act_batch(worlds)) == move
    return keep


class BlueprintBase:
    """Generic `act_batch`, `rollout` and `value` for blueprints written in Python: a
    subclass only implements `act(state, seat)`. Deterministic, memoryless by default."""

    name = "blueprint"
    deterministic = True
    has_private_memory = False
    has_value = False

    def act(self, state: HanabiState, seat: Optional[int] = None) -> int:  # pragma: no cover
        raise NotImplementedError

    def act_batch(self, states: States) -> np.ndarray:
        return np.array([-1 if st.is_terminal else self.act(st) for st in _as_list(states)],
                        dtype=np.int64)

    def rollout(self, states: States, max_moves: int = -1) -> np.ndarray:
        is_batch = isinstance(states, HanabiBatch)
        worlds = _as_list(states)
        moves = np.zeros(len(worlds), dtype=np.int32)
        for i, st in enumerate(worlds):
            while not st.is_terminal and (max_moves < 0 or moves[i] < max_moves):
                st.apply(self.act(st))
                moves[i] += 1
            if is_batch:
                states.set_state(i, st)
        return moves

    def value(self, states: States) -> Optional[np.ndarray]:
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class ViewAgent(BlueprintBase):
    """Base class for agents that decide from the seat's `PlayerView` only: implement
    `act_view(view)`; `act(state, seat)` builds the view and calls it, so such an agent
    cannot peek at hidden information."""

    def act_view(self, view: PlayerView) -> int:  # pragma: no cover
        raise NotImplementedError

    def act(self, state: HanabiState, seat: Optional[int] = None) -> int:
        seat = state.current_player if seat is None else seat
        if seat != state.current_player:
            raise ValueError(f"it is seat {state.current_player}'s turn, not seat {seat}'s")
        return self.act_view(state.view(seat))
