"""The `Agent` and `Blueprint` protocols, and the batched machinery behind Python blueprints.

An **Agent** chooses the move of one seat from what that seat may see. Agents receive the
engine's `HanabiState` (so they can be driven from any game, a search's sampled world or a
PettingZoo env alike) and a seat, and promise to read only what the seat may see: the
seat's `PlayerView` (`state.view(seat)`). `ViewAgent` makes that promise structural: it
hands subclasses the view and nothing else.

A **Blueprint** is an agent search can simulate (SPARTA, LBS). Beyond `act` it is

- deterministic given (public history, the seat's private observation): the same inputs
  always give the same move, so a search can replay it in sampled worlds;
- batchable over ONE container of positions, a `HanabiBatch` (N games in C arrays):
  `act_batch(batch)` acts in every world at once and `rollout(batch, max_moves)` plays
  every world forward in place (k moves or to the end) with the blueprint in every seat;
  a list of states is refused (a TypeError naming `HanabiBatch.from_states`);
- optionally a value estimator (`value(batch)`, for bootstrapping truncated rollouts);
- explicit about memory: `has_private_memory` is False when its decisions depend on
  nothing but the public history and the seat's own observation (rule bots, public-LSTM
  nets re-run from the history); a blueprint with hidden recurrent state sets it True,
  and a search must then replay the whole history to restore that state.

Bring your own blueprint: a class needs only a `name` and `act(state, seat=None)` returning
a legal move id (HLE numbering: discards, plays, color hints, rank hints; `state.view(seat)`
holds what the seat may read, see `lbs_pz.engine.view.PlayerView`). `lbs_pz.agents.
as_blueprint(obj)` (or `load_blueprint("py:FILE.py:CLASS")`) wraps it in a
`PythonBlueprint` that supplies the batched methods and checks the contract; subclassing
`BlueprintBase` (implement `act`) or `ViewAgent` (implement `act_view(view)`) gives the same
batched methods directly.

Example: a blueprint that always plays its oldest card, checked against the protocol::

    >>> from lbs_pz.agents import Blueprint, BlueprintBase
    >>> from lbs_pz.engine import HanabiBatch, HanabiConfig
    >>> class OldestCard(BlueprintBase):
    ...     name = "oldest"
    ...     def act(self, state, seat=None):
    ...         return state.config.hand_size          # move id of "play slot 0"
    >>> isinstance(OldestCard(), Blueprint)
    True
    >>> batch = HanabiBatch(HanabiConfig(), 3, seeds=0)
    >>> OldestCard().act_batch(batch).tolist()
    [5, 5, 5]

The C rule bots (`lbs_pz.agents.RuleBot`) implement the same protocol with batched,
GIL-free `act_batch` and `rollout`.
"""

from __future__ import annotations

import hashlib
import os
from typing import Callable, Optional, Protocol, runtime_checkable

import numpy as np

from lbs_pz.checks import as_int, is_int
from lbs_pz.engine import HanabiBatch, HanabiState, PlayerView, move_name


# The type every batched Blueprint method takes (kept as a name for type hints).
States = HanabiBatch


class BlueprintError(ValueError):
    """A blueprint broke its contract (illegal move, wrong signature, wrong return type or
    shape, a rollout that does not advance), or a blueprint spec cannot be loaded. The
    message names the blueprint (and the position, where there is one)."""


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

    Every batched method takes a `HanabiBatch` of N worlds (one config); N below is
    `len(batch)`. A list of states is a TypeError: wrap it with `HanabiBatch.from_states`.

    Attributes:
        deterministic: True: the move is a function of (public history, private view).
        has_private_memory: True if decisions depend on memory beyond that (then a search
            must replay the whole history to restore it).
        has_value: True if `value` returns estimates.
    """

    deterministic: bool
    has_private_memory: bool
    has_value: bool

    def act_batch(self, batch: HanabiBatch) -> np.ndarray:
        """Move of each world's player to move: int64 (N,), -1 where the game is over.
        Every other entry is a legal move of that world."""
        ...

    def rollout(self, batch: HanabiBatch, max_moves: int = -1) -> np.ndarray:
        """Self-play every world in place with this blueprint in every seat, for at most
        `max_moves` moves (to the end if negative). Returns moves made per world, int32
        (N,): each running world makes min(max_moves, moves to its end) moves."""
        ...

    def value(self, batch: HanabiBatch) -> Optional[np.ndarray]:
        """Expected final score of each world from its player to move's view, float32
        (N,) (a finished world: its score), or None if this blueprint has no value."""
        ...


# --- helpers shared by the blueprints of this package ----------------------------------------

def require_batch(batch, who: str = "a blueprint") -> HanabiBatch:
    """`batch` itself if it is a HanabiBatch, else a TypeError naming the fix."""
    if isinstance(batch, HanabiBatch):
        return batch
    what = type(batch).__name__
    raise TypeError(f"{who} takes a HanabiBatch (the Blueprint protocol's one container of "
                    f"positions), got {what}; wrap a list of states with "
                    f"HanabiBatch.from_states(states)")


def check_max_moves(max_moves) -> int:
    return as_int(max_moves, "max_moves", what="an int (negative: to the end)")


def file_sha256(path: str) -> str:
    """Hex sha256 of a file's bytes (a blueprint's fingerprint: weights or source file)."""
    digest = hashlib.sha256()
    with open(os.fspath(path), "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def describe_position(state: HanabiState, limit: int = 12) -> str:
    """'after moves [..] (t moves), seat p to move' with move names: a position in an error."""
    history = state.move_history
    shown = [f"{m} {move_name(state.config, m)}" for m in history[-limit:]]
    more = f"... {len(history) - limit} earlier, " if len(history) > limit else ""
    return (f"the position after moves [{more}{', '.join(shown)}] ({len(history)} moves, "
            f"start player {state.start_player}), seat {state.current_player} to move")


def legal_text(state: HanabiState) -> str:
    return "[" + ", ".join(f"{m} {move_name(state.config, m)}" for m in state.legal_moves()) + "]"


def checked_move(blueprint_name: str, state: HanabiState, move, where: str = "act") -> int:
    """`move` as an int if it is a legal move of the player to move in `state`; otherwise a
    BlueprintError naming the blueprint, the position, the move and the legal moves. Python
    and numpy ints are accepted; None, bool, float and anything else are not."""
    if not is_int(move):
        raise BlueprintError(
            f"blueprint {blueprint_name!r}: {where} returned {move!r} ({type(move).__name__}) "
            f"in {describe_position(state)}; it must return a move id, an int (legal moves: "
            f"{legal_text(state)})")
    move = int(move)
    if not (0 <= move < state.config.num_moves and state.is_legal(move)):
        name = move_name(state.config, move) if 0 <= move < state.config.num_moves \
            else "(no such move)"
        raise BlueprintError(
            f"blueprint {blueprint_name!r}: {where} returned the illegal move {move} {name} in "
            f"{describe_position(state)}; legal moves: {legal_text(state)}")
    return move


ActFn = Callable[[HanabiState, Optional[int]], int]


def acted_move(name: str, act: ActFn, state: HanabiState, where: str = "act") -> int:
    """The move `act` chooses for the player to move in `state`, checked (`checked_move`)
    against `state` itself: `act` receives a copy (`state.clone()`), so whatever it does
    to the state it is given changes neither `state` nor the check."""
    return checked_move(name, state, act(state.clone(), state.current_player), where)


def check_batch_unchanged(name: str, batch: HanabiBatch, generation: int, where: str) -> None:
    """BlueprintError naming the blueprint if `batch` was changed (reset, stepped, a state
    or hand written: `HanabiBatch.generation` moved on from `generation`) while the
    blueprint's `where` ran: a blueprint reads the positions it is given and never
    changes the batch a caller is acting on or rolling out."""
    if batch.generation != generation:
        raise BlueprintError(
            f"blueprint {name!r}: the batch it was given changed while its {where} ran "
            f"({batch.generation - generation} change(s): a reset, step, set_state, "
            f"set_hands or rollout of that batch from inside the blueprint); a blueprint "
            f"may read the positions it is given, and must not change the batch its caller "
            f"is playing")


def act_each(name: str, act: ActFn, batch: HanabiBatch) -> np.ndarray:
    """`act_batch` from a per-state `act`: every running world's state is taken out of the
    batch once and `act(copy of the state, seat)` is asked for its player to move
    (`acted_move`). Illegal or non-int moves, and a batch changed meanwhile
    (`check_batch_unchanged`), are BlueprintErrors naming `name` and the position. int64
    (N,), -1 where over."""
    batch = require_batch(batch, f"blueprint {name!r}: act_batch")
    out = np.full(len(batch), -1, dtype=np.int64)
    generation = batch.generation
    for i in np.flatnonzero(~batch.terminals()):
        out[i] = acted_move(name, act, batch.get_state(int(i)))
    check_batch_unchanged(name, batch, generation, "act")
    return out


def rollout_each(name: str, act: ActFn, batch: HanabiBatch, max_moves: int = -1) -> np.ndarray:
    """`rollout` from a per-state `act`: every running world is taken out of the batch once,
    played forward with `act` in every seat (at most `max_moves` moves; all if negative;
    `act` receives a copy of each position, `acted_move`) and written back. Illegal or
    non-int moves, and a batch changed by anyone but this loop while it runs
    (`check_batch_unchanged`), are BlueprintErrors. int32 (N,) moves made."""
    batch = require_batch(batch, f"blueprint {name!r}: rollout")
    max_moves = check_max_moves(max_moves)
    made = np.zeros(len(batch), dtype=np.int32)
    if max_moves == 0:
        return made
    generation = batch.generation
    for i in np.flatnonzero(~batch.terminals()):
        state = batch.get_state(int(i))
        count = 0
        while not state.is_terminal and (max_moves < 0 or count < max_moves):
            state.apply(acted_move(name, act, state))
            count += 1
        check_batch_unchanged(name, batch, generation, "act (in a rollout)")
        batch.set_state(int(i), state)
        generation = batch.generation
        made[i] = count
    return made


def _worlds_with_hands(before: HanabiState, seat: int, hands: np.ndarray) -> HanabiBatch:
    """One HanabiBatch of copies of `before` in which `seat` holds hands[r] (in C)."""
    batch = HanabiBatch.from_state(before, len(hands))
    batch.set_hands(seat, hands)
    return batch


def counterfactual_mask(blueprint, before: HanabiState, seat: int, move: int,
                        hands: np.ndarray) -> np.ndarray:
    """bool (N,): True where `blueprint`, acting for the player to move in `before`, makes
    `move` when `seat` (another player) holds hands[r] (int (N, hand_len)).

    This is the counterfactual filter of SPARTA and LBS beliefs: the partners see the
    seat's hand, so a hand under which the blueprint would have moved otherwise is ruled
    out. A blueprint may provide a fast `counterfactual_mask(before, seat, move, hands)`
    of its own (the C rule bots do); otherwise the blueprint's `act_batch` runs once per
    chunk of 4096 hands on ONE HanabiBatch of copies of `before` holding those hands."""
    own = getattr(blueprint, "counterfactual_mask", None)
    if own is not None:
        return np.asarray(own(before, seat, move, hands), dtype=bool)
    hands = np.asarray(hands)
    if hands.ndim != 2 or not np.issubdtype(hands.dtype, np.integer):
        raise ValueError(f"hands must be an int array (N, hand_len), got {hands.dtype} "
                         f"{hands.shape}")
    keep = np.zeros(len(hands), dtype=bool)
    chunk = 4096
    for lo in range(0, len(hands), chunk):
        batch = _worlds_with_hands(before, seat, hands[lo:lo + chunk])
        keep[lo:lo + chunk] = np.asarray(blueprint.act_batch(batch)) == move
    return keep


class BlueprintBase:
    """Generic `act_batch`, `rollout` and `value` for blueprints written in Python: a
    subclass only implements `act(state, seat=None)` (read `state.view(seat)`), and may
    override `value(batch)` (then set `has_value = True`). Deterministic, memoryless by
    default. The batched methods take a HanabiBatch and take each running world out of it
    once (`act_each`, `rollout_each`), and `act` receives a copy of each position; an
    illegal move, or a batch changed by `act` while they run, is a BlueprintError naming
    the blueprint (and the position and the legal moves)."""

    name = "blueprint"
    deterministic = True
    has_private_memory = False
    has_value = False

    def act(self, state: HanabiState, seat: Optional[int] = None) -> int:  # pragma: no cover
        raise NotImplementedError

    def act_batch(self, batch: HanabiBatch) -> np.ndarray:
        """int64 (N,): the move of each world's player to move, -1 where it is over."""
        return act_each(self.name, self.act, batch)

    def rollout(self, batch: HanabiBatch, max_moves: int = -1) -> np.ndarray:
        """Play every world forward in place (at most max_moves each, all if negative);
        int32 (N,) moves made."""
        return rollout_each(self.name, self.act, batch, max_moves)

    def value(self, batch: HanabiBatch) -> Optional[np.ndarray]:
        require_batch(batch, f"blueprint {self.name!r}: value")
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class VectorPolicyBase(BlueprintBase):
    """A blueprint that acts from the canonical observation vector of the player to move
    and its legal-move mask alone (a trained policy: SB3, RLlib): greedy, deterministic,
    memoryless, with `act_batch`, `rollout` and `value` on a HanabiBatch doing ONE batched
    encode and ONE forward pass per step over every running world. A subclass sets
    `name`, `encoding_size` E, `num_moves` A and `has_value`, and implements
        _check(config)          an error for a game whose vectors it cannot read
        _preferences(obs, legal)  float (n, A) move scores (logits or Q-values), from obs
                                float32 (n, E) and legal bool (n, A); `_greedy` takes the
                                best legal one
        _critic(obs, legal)     float (n,) expected future score change (with has_value)"""

    encoding_size = 0
    num_moves = 0

    def _check(self, config) -> None:  # pragma: no cover
        raise NotImplementedError

    def _preferences(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def _greedy(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """Greedy legal move per row: obs (n, E) float32, legal (n, A) bool (every row
        with a legal move) -> int64 (n,). A NaN score counts as -inf; a row whose legal
        scores are all -inf (or NaN) plays its lowest legal move id, so the move is
        always legal."""
        scores = self._preferences(obs, legal)
        scores = np.where(legal & ~np.isnan(scores), scores, -np.inf)
        best = np.argmax(scores, axis=1)
        stuck = scores[np.arange(len(best)), best] == -np.inf
        if stuck.any():
            best[stuck] = np.argmax(legal[stuck], axis=1)
        return best.astype(np.int64)

    def _critic(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def act(self, state: HanabiState, seat: Optional[int] = None) -> int:
        """Greedy legal move of `seat` (default: the player to move); -1 if the game is
        over. Reads only `state.encode(seat)` and the legal moves."""
        if not isinstance(state, HanabiState):
            raise TypeError(f"{self.name}.act: state must be a HanabiState, got "
                            f"{type(state).__name__}")
        if seat is not None:
            seat = as_int(seat, f"{self.name}.act: seat", 0, below=state.config.players,
                          what=f"None or a seat in [0, {state.config.players})", error=ValueError)
        if state.is_terminal:
            return -1
        seat = state.current_player if seat is None else seat
        if seat != state.current_player:
            raise ValueError(f"it is seat {state.current_player}'s turn, not seat {seat}'s")
        self._check(state.config)
        obs = state.encode(seat)[None, :]
        mask = state.legal_mask()[None, :].astype(bool)
        return int(self._greedy(obs, mask)[0])

    def _observe(self, batch: HanabiBatch, rows: np.ndarray, enc: Optional[np.ndarray] = None,
                 legal: Optional[np.ndarray] = None):
        """Observations float32 (len(rows), E) and legal masks bool (len(rows), A) of the
        given worlds: one batched encode (into `enc` (N, E) / `legal` (N, A) int8 when
        given; no gather when every world is in `rows`)."""
        enc = batch.encode(out=enc)
        legal = batch.legal_masks(out=legal).view(np.bool_)
        if rows.size == len(batch):
            return enc, legal
        return enc[rows], legal[rows]

    def _prepare(self, batch: HanabiBatch, what: str):
        batch = require_batch(batch, f"{self.name}: {what}")
        self._check(batch.config)
        return batch, batch.terminals().copy()

    def act_batch(self, batch: HanabiBatch) -> np.ndarray:
        """Greedy move of each world's player to move, one forward pass for all worlds:
        int64 (N,), -1 where the game is over."""
        batch, done = self._prepare(batch, "act_batch")
        moves = -np.ones(len(done), dtype=np.int64)
        rows = np.flatnonzero(~done)
        if rows.size:
            moves[rows] = self._greedy(*self._observe(batch, rows))
        return moves

    def rollout(self, batch: HanabiBatch, max_moves: int = -1) -> np.ndarray:
        """Self-play every world of the batch in place, this policy in every seat, for at
        most `max_moves` moves each (to the end if negative). One batched encode and ONE
        forward pass per step over all running worlds. Returns moves made, int32 (N,)."""
        batch, done = self._prepare(batch, "rollout")
        max_moves = check_max_moves(max_moves)
        made = np.zeros(len(done), dtype=np.int32)
        actions = np.empty(len(done), dtype=np.int64)
        enc = np.empty((len(done), self.encoding_size), dtype=np.float32)
        legal = np.empty((len(done), self.num_moves), dtype=np.int8)
        steps = 0
        while max_moves < 0 or steps < max_moves:
            rows = np.flatnonzero(~done)
            if rows.size == 0:
                break
            actions.fill(-1)
            actions[rows] = self._greedy(*self._observe(batch, rows, enc, legal))
            batch.step(actions)
            done = batch.terminals()
            made[rows] += 1
            steps += 1
        return made

    def value(self, batch: HanabiBatch) -> Optional[np.ndarray]:
        """Expected final score of each world, float32 (N,): the score plus the critic's
        estimate of the future score change from the observation of the player to move;
        the score where the game is over. One forward pass for all running worlds. None
        without a critic (`has_value` False)."""
        batch, done = self._prepare(batch, "value")
        if not self.has_value:
            return None
        out = batch.scores().astype(np.float64)
        rows = np.flatnonzero(~done)
        if rows.size:
            out[rows] += self._critic(*self._observe(batch, rows))
        return out.astype(np.float32)


class ViewAgent(BlueprintBase):
    """Base class for agents that decide from the seat's `PlayerView` only: implement
    `act_view(view)`; `act(state, seat)` builds the view and calls it, so such an agent
    cannot peek at hidden information. The view's fields (lbs_pz.engine.view.PlayerView):
    player, num_players, current_player, fireworks, information_tokens, life_tokens,
    deck_size, discard_pile, hands (the viewer's own cards are None), knowledge (per seat
    and slot: CardKnowledge colors / ranks still possible, hinted_color / hinted_rank),
    history (PastMove per move), last_moves, legal_moves, score, is_terminal."""

    def act_view(self, view: PlayerView) -> int:  # pragma: no cover
        raise NotImplementedError

    def act(self, state: HanabiState, seat: Optional[int] = None) -> int:
        seat = state.current_player if seat is None else seat
        if seat != state.current_player:
            raise ValueError(f"it is seat {state.current_player}'s turn, not seat {seat}'s")
        return self.act_view(state.view(seat))
