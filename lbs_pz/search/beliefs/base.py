"""The belief interface shared by the exact, grounded and learned beliefs.

A belief is a distribution over the *own hand* of one seat, the searching player, given
everything that seat has seen. Usage::

    belief = GroundedBelief()                 # or ExactBelief(blueprint), LearnedBelief()
    belief.reset(state, seat)                 # any position: the history is replayed
    ... moves are made in `state` ...
    belief.observe(state)                     # catch up with the moves made since
    hands = belief.sample(1000, rng)          # int64 (m, hand_len) card ids, m <= 1000
    probs = belief.card_probabilities()       # (hand_len, num_card_types)
    belief.log_prob(hand)                     # log-probability of one hand

Card ids are `color * ranks + rank`; slot 0 is the oldest card, as in the engine.

What a belief may read. `reset` and `observe` receive the real game, but a belief only
uses what the seat may see: the other hands, the fireworks, the discard pile, the
tokens, the public move history, the seat's card knowledge, and its own canonical
observation (`state.encode(seat)`). To replay the history move by move a belief keeps a
private copy of the game (`self._state`) and applies the recorded moves to it; the copy
also holds the seat's true hand and the deck order, which no belief reads: everything a
belief computes goes through `SeatInfo` (the seat's unseen card counts and card
knowledge), the canonical observation, or (exact belief) a rule bot acting for *another*
seat with the seat's hand overwritten by a candidate. The tests check this by changing
the true own hand (`state.set_hand`) and expecting the same samples for the same seed.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Optional, Tuple

import numpy as np

from lbs_pz.engine import HanabiState
from lbs_pz.search.beliefs._exact import feasible_mask, hand_weights

if TYPE_CHECKING:
    from typing_extensions import Self


@dataclasses.dataclass(frozen=True)
class SeatInfo:
    """What a seat knows about its own hand, as arrays.

    unseen  int32 (T,)       copies of each card type the seat cannot see (deck + own hand)
    plaus   bool (n, T)      per own slot, the card types its card knowledge allows
    bits    uint32 (n,)      the same as bitmasks (bit t = type t)
    """

    unseen: np.ndarray
    plaus: np.ndarray
    bits: np.ndarray

    @property
    def hand_len(self) -> int:
        return self.plaus.shape[0]

    @classmethod
    def from_state(cls, state: HanabiState, seat: int) -> "SeatInfo":
        """Built from what `seat` sees in `state` (never its own cards or the deck)."""
        config = state.config
        R, T = config.ranks, config.num_card_types
        unseen = np.array([config.card_count(t) for t in range(T)], dtype=np.int32)
        for p, hand in enumerate(state.hands):
            if p != seat:
                for c in hand:
                    unseen[c] -= 1
        for c in state.discard_pile:
            unseen[c] -= 1
        for color, height in enumerate(state.fireworks):
            for r in range(height):
                unseen[color * R + r] -= 1
        knowledge = state.card_knowledge(seat)
        plaus = np.zeros((len(knowledge), T), dtype=bool)
        for i, (colors, ranks, _, _) in enumerate(knowledge):
            for c in colors:
                for r in ranks:
                    plaus[i, c * R + r] = True
        bits = (plaus.astype(np.uint64) << np.arange(T, dtype=np.uint64)).sum(axis=1)
        return cls(unseen=unseen, plaus=plaus, bits=bits.astype(np.uint32))

    def log_multiplicity(self, hands: np.ndarray) -> np.ndarray:
        """float64 (m,): log of the number of ways to pick each hand's physical cards
        among the unseen ones, prod_i (unseen[h_i] - #{j < i: h_j = h_i}): the exact
        posterior of a consistent hand, before counterfactual filtering, up to a constant
        (-inf for a hand the counts rule out)."""
        hands = np.ascontiguousarray(hands, dtype=np.int8).reshape(-1, self.hand_len)
        with np.errstate(divide="ignore"):
            return np.log(hand_weights(hands, self.unseen))

    def consistent(self, hands: np.ndarray) -> np.ndarray:
        """bool (m,): hands (m, n) allowed by the card knowledge and the unseen counts."""
        hands = np.ascontiguousarray(hands, dtype=np.int8).reshape(-1, self.hand_len)
        return feasible_mask(hands, self.bits, self.unseen).astype(bool)


class Belief:
    """Base class: history replay and the common API. Subclasses implement `_reset`,
    `_update(before, after, record)`, `sample`, `card_probabilities` and `log_prob`.

    Attributes after `sample`: `last_proposed` and `last_legal` (hands drawn and kept
    after rejection; equal for beliefs whose samples are always legal).
    """

    name = "belief"

    def __init__(self):
        self._state: Optional[HanabiState] = None
        self.seat = -1
        self.last_proposed = 0
        self.last_legal = 0

    # --- lifecycle -------------------------------------------------------------------------

    def reset(self, state: HanabiState, seat: int) -> Self:
        """Start tracking `seat` in `state`'s game. The game's history is replayed from its
        first move, so this works at any position. Returns self."""
        if not isinstance(state, HanabiState):
            raise TypeError(f"state must be a HanabiState, got {type(state).__name__}")
        if not 0 <= seat < state.config.players:
            raise ValueError(f"seat must be in [0, {state.config.players}), got {seat!r}")
        if state.config.observation_type != "card_knowledge":
            raise ValueError("beliefs need the 'card_knowledge' observation type, got "
                             f"{state.config.observation_type!r}")
        self.config = state.config
        self.seat = int(seat)
        start = HanabiState(state.config, seed=0, deck=state.deck, start_player=state.start_player)
        self._state = start
        self._seen = 0
        self._reset(start)
        self.observe(state)
        return self

    def observe(self, state: HanabiState) -> None:
        """Take in every move of `state` made since the last call (none: no-op)."""
        if self._state is None:
            raise RuntimeError("call reset(state, seat) before observe")
        history = state.move_history
        if len(history) < self._seen or history[:self._seen] != self._state.move_history:
            raise ValueError("observe: this state is not a continuation of the game the "
                             "belief tracks (call reset for a new game)")
        if len(history) == self._seen:
            self._after_updates()
            return
        records = state.move_records()
        for k in range(self._seen, len(history)):
            before = self._state
            after = before.clone()
            after.apply(history[k])
            rec = records[k]
            if rec["player"] != self.seat and rec["drawn"] != after.move_records()[k]["drawn"]:
                raise ValueError(f"observe: move {k} drew a different card than in the "
                                 f"belief's copy of the game")
            self._update(before, after, rec)
            self._state = after
            self._seen = k + 1
        self._after_updates()

    # both need a game observed first (`observe`): None before, which they do not check
    @property
    def hand_len(self) -> int:
        return len(self._state.card_knowledge(self.seat))  # type: ignore[union-attr]

    def seat_info(self) -> SeatInfo:
        return SeatInfo.from_state(self._state, self.seat)  # type: ignore[arg-type]

    # --- hooks -----------------------------------------------------------------------------

    def _reset(self, start: HanabiState) -> None:
        pass

    def _update(self, before: HanabiState, after: HanabiState, record: dict) -> None:
        pass

    def _after_updates(self) -> None:
        pass

    # --- queries ---------------------------------------------------------------------------

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Up to n hands: int64 (m, hand_len), every row consistent with the seat's card
        knowledge and the unseen card counts. Exact and grounded beliefs return m == n."""
        raise NotImplementedError

    def sample_weighted(self, n: int,
                        rng: np.random.Generator) -> Tuple[np.ndarray, np.ndarray]:
        """(hands, log_weights): up to n hands as `sample` draws them, and per hand the
        log of its importance weight toward the exact posterior, float64 (m,), up to a
        constant: log(exact probability) - log(probability this belief proposed it).
        Self-normalised (`importance_weights`), the weights make averages over the
        samples converge to averages under the exact posterior (hint- and
        count-consistent hands in proportion to their multiplicity; with
        counterfactual filtering, also consistent with the partners' moves) however far
        the proposal is from it. This default is for beliefs that draw from the exact
        posterior: all weights 0."""
        hands = self.sample(n, rng)
        return hands, np.zeros(len(hands))

    def card_probabilities(self) -> np.ndarray:
        """float64 (hand_len, num_card_types): P(slot i holds card type t)."""
        raise NotImplementedError

    def log_prob(self, hand) -> float:
        """Natural log-probability of `hand` (hand_len card ids); -inf if impossible."""
        raise NotImplementedError

    def too_few_legal(self, min_fraction: float = 0.5) -> bool:
        """True if the last `sample` kept fewer than min_fraction of the hands it drew
        (a search should then fall back to its blueprint). Never for beliefs whose
        samples are always legal."""
        return self.last_legal < min_fraction * max(self.last_proposed, 1)

    def worlds(self, state: HanabiState, hands: np.ndarray) -> list:
        """One copy of `state` per sampled hand, with the seat's hand replaced by it (and
        the undrawn deck re-dealt consistently): the worlds a search rolls out."""
        out = []
        for hand in np.asarray(hands):
            world = state.clone()
            world.set_hand(self.seat, [int(c) for c in hand])
            out.append(world)
        return out

    def cross_entropy(self, hand) -> float:
        """-log_prob(hand) / hand_len: the per-card cross-entropy of a (true) hand."""
        n = max(self.hand_len, 1)
        return -self.log_prob(hand) / n


def importance_weights(log_weights) -> np.ndarray:
    """float64 (m,): self-normalisable weights from `sample_weighted`'s log weights,
    scaled to mean 1 and truncated at sqrt(m) times the mean (Ionides' truncated
    importance sampling): no single world outweighs sqrt(m) average ones, and the
    truncation's bias vanishes as m grows. Empty in, empty out."""
    log_w = np.asarray(log_weights, dtype=np.float64).reshape(-1)
    if log_w.size == 0:
        return log_w
    if not np.isfinite(log_w).all():
        raise ValueError("importance_weights: a sampled hand has a non-finite log weight "
                         "(a hand the exact posterior rules out)")
    w = np.exp(log_w - log_w.max())
    w /= w.mean()
    cap = np.sqrt(len(w))
    w = np.minimum(w, cap)
    return w / w.mean()


def as_rng(rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


def check_hand(hand, n: int) -> np.ndarray:
    arr = np.asarray(hand, dtype=np.int64).reshape(-1)
    if arr.shape != (n,):
        raise ValueError(f"a hand has {n} cards here, got {arr.shape[0]}")
    return arr
