"""The exact belief (SPARTA): every own hand the seat could hold, weighted exactly.

Representation: an int8 array (N, hand_len) of candidate ordered hands, and the seat's
unseen card counts U. The probability of a candidate h is proportional to its
multiplicity

    w(h) = prod_i (U[h_i] - #{j < i : h_j = h_i})

(the number of ways to pick its physical cards among the unseen ones), which is the
exact posterior once the candidates inconsistent with the observations are removed:
a partner's draw, a card the seat plays or discards, only change U, and the weights
follow from the new U. Updates, per move of the game:

- a hint to the seat, and any change of U: keep the hands that fit every slot's card
  knowledge and need no more copies than remain unseen (`feasible_mask`);
- the seat plays or discards slot s, revealing card c: keep the hands with c at s, drop
  the slot; if it draws, append every type still available as the new newest card;
- counterfactual filtering: after another seat's move, keep only the hands under which
  the blueprint, acting for that seat, makes the move it actually made. For the C rule
  bots this runs in C over all candidates (the bot's public-history memory is computed
  once); any other Blueprint goes through `act_batch` on re-dealt copies (slower).
  If no candidate reproduces the move (the partner is not the blueprint), the filter is
  skipped for that move and counted in `inconsistent_moves`. If a later fact (a hint, a
  card the seat plays) rules out every candidate left (a partner's earlier deviation was
  explained by other hands only: it searches too), the candidates are enumerated again
  from the seat's hints and counts alone, counted in `restarts`: the set is never empty.

Memory: the candidates take N * hand_len bytes (plus 8 bytes per candidate for cached
weights and a mask). Enumerating or expanding beyond `memory_cap` bytes raises
`BeliefMemoryError` before allocating. A 2p game starts with ~8.9M candidates for 5
cards (~140 MB), ~208M for 6 cards (~3 GB) and ~4.7 billion for 7 cards (~70 GB): the
paper's out-of-memory case.
`update_seconds` and `sizes` record the time and the candidate count of every update.
"""

from __future__ import annotations

import time
from typing import List, Optional, Tuple

import numpy as np

from lbs_pz.agents.base import counterfactual_mask
from lbs_pz.agents.spec import load_blueprint
from lbs_pz.checks import as_int
from lbs_pz.engine import HanabiState
from lbs_pz.search.beliefs import _exact
from lbs_pz.search.beliefs.base import Belief, SeatInfo, as_rng, check_hand

DEFAULT_MEMORY_CAP = 4 << 30      # bytes


class BeliefMemoryError(MemoryError):
    """The exact belief would need more memory than its cap."""


class ExactBelief(Belief):
    """Args:
        blueprint: the policy every other seat is assumed to play, for counterfactual
            filtering: a blueprint spec ("strong", "lstm:NAME"), a RuleBot, any Blueprint with
            `act_batch`, or None (no counterfactual filtering: hints and counts only).
        memory_cap: bytes the candidate set may take (default 4 GiB).
    """

    name = "exact"

    def __init__(self, blueprint=None, memory_cap: int = DEFAULT_MEMORY_CAP):
        super().__init__()
        if isinstance(blueprint, str):     # a spec, as everywhere: "strong", "lstm:NAME"
            blueprint = load_blueprint(blueprint)
        if blueprint is not None and not callable(getattr(blueprint, "act_batch", None)):
            raise TypeError("blueprint must be a blueprint spec (lbs_pz.agents.load_blueprint) "
                            f"or a Blueprint with act_batch, got {type(blueprint).__name__}")
        self.blueprint = blueprint
        self.memory_cap = as_int(memory_cap, "memory_cap", lo=1, error=ValueError,
                                 what="a positive number of bytes")
        self.hands = np.zeros((0, 0), dtype=np.int8)
        self._cw: Optional[np.ndarray] = None

    # --- memory ------------------------------------------------------------------------------

    def _bytes_per_hand(self, n: int) -> int:
        return n + 8 + 1       # the hand, a cached weight, a filter mask

    def _max_rows(self, n: int) -> int:
        return self.memory_cap // self._bytes_per_hand(n)

    def _too_big(self, rows: int, n: int, what: str, at_least: bool = False):
        need = rows * self._bytes_per_hand(n)
        return BeliefMemoryError(
            f"exact belief: {what} needs {'more than ' if at_least else ''}{rows:,} candidate "
            f"hands of {n} cards = {'> ' if at_least else ''}{need / 2**30:.2f} GiB, above the "
            f"memory cap of {self.memory_cap / 2**30:.2f} GiB (ExactBelief(memory_cap=...)); "
            f"use the learned belief for hands this large")

    @property
    def memory_bytes(self) -> int:
        """Bytes held now by the candidate set and its cached weights."""
        extra = 0 if self._cw is None else self._cw.nbytes
        return self.hands.nbytes + extra

    @property
    def num_hands(self) -> int:
        return self.hands.shape[0]

    # --- updates -------------------------------------------------------------------------------

    def initial_count(self, start: HanabiState, seat: int) -> int:
        """The number of candidate hands `reset(start, seat)` would enumerate at `start`,
        a game's first position, counted without storing one; BeliefMemoryError (naming the
        size and the memory needed) if they would not fit the memory cap."""
        if not isinstance(start, HanabiState) or not 0 <= seat < start.config.players:
            raise ValueError(f"initial_count needs a HanabiState and a seat of its game, got "
                             f"{type(start).__name__} and {seat!r}")
        info = SeatInfo.from_state(start, seat)
        limit = self._max_rows(info.hand_len)
        count = _exact.count_hands(info.bits, info.unseen, limit)
        if count > limit:
            raise self._too_big(limit, info.hand_len, "the initial enumeration", at_least=True)
        return count

    def _reset(self, start: HanabiState) -> None:
        info = SeatInfo.from_state(start, self.seat)
        t0 = time.perf_counter()
        count = self.initial_count(start, self.seat)
        self.hands = _exact.enumerate_hands(info.bits, info.unseen, count)
        self._unseen = info.unseen
        self._cw = None
        self.inconsistent_moves = 0
        self.restarts = 0
        self.update_seconds: List[float] = [time.perf_counter() - t0]
        self.sizes: List[int] = [self.num_hands]
        self.peak_memory_bytes = self.hands.nbytes

    def _update(self, before: HanabiState, after: HanabiState, rec: dict) -> None:
        t0 = time.perf_counter()
        me, hs = self.seat, self.config.hand_size
        hands = self.hands
        info = SeatInfo.from_state(after, me)     # what this seat knows after the move
        if rec["player"] != me and self.blueprint is not None and len(hands):
            # drop the hands the move's facts rule out (a hint to this seat, the card the
            # mover drew) before the blueprint, the costly filter, is asked about each, so
            # that the filter keeps only hands that are still possible
            hands = hands[_exact.feasible_mask(hands, info.bits, info.unseen).astype(bool)]
            keep = self._counterfactual(before, rec["move"], hands)
            if keep.any():
                hands = hands[keep]
            else:
                self.inconsistent_moves += 1
        if rec["player"] == me and rec["move"] < 2 * hs:
            slot = rec["move"] % hs
            hands = _exact.remove_slot(hands, slot, rec["card"])
            if len(after.card_knowledge(me)) > hands.shape[1]:
                try:
                    hands = _exact.append_draw(hands, info.unseen, int(info.bits[-1]),
                                               self._max_rows(hands.shape[1] + 1))
                except MemoryError as err:
                    raise self._too_big(int(err.args[0]), hands.shape[1] + 1,
                                        "the expansion after a draw") from None
        hands = np.ascontiguousarray(hands)
        if len(hands):
            hands = hands[_exact.feasible_mask(hands, info.bits, info.unseen).astype(bool)]
        if not len(hands):
            # The true hand was filtered out: an earlier move of a partner that is not the
            # blueprint (one that searches too) was explained by other hands only. Start
            # again from the seat's hints and counts, which the true hand always fits.
            hands = _exact.enumerate_hands(info.bits, info.unseen, self.initial_count(after, me))
            self.restarts += 1
        self.hands = np.ascontiguousarray(hands)
        self._unseen = info.unseen
        self._cw = None
        self.update_seconds.append(time.perf_counter() - t0)
        self.sizes.append(self.num_hands)
        self.peak_memory_bytes = max(self.peak_memory_bytes, self.hands.nbytes)

    def _counterfactual(self, before: HanabiState, move: int, hands: np.ndarray) -> np.ndarray:
        return counterfactual_mask(self.blueprint, before, self.seat, move, hands)

    # --- queries -------------------------------------------------------------------------------

    def weights(self) -> np.ndarray:
        """Unnormalised probability of each candidate (float64 (N,))."""
        return _exact.hand_weights(self.hands, self._unseen)

    def _cumulative(self) -> np.ndarray:
        if self._cw is None:
            self._cw = np.cumsum(self.weights())
            self.peak_memory_bytes = max(self.peak_memory_bytes, self.memory_bytes)
        return self._cw

    def support(self) -> Tuple[np.ndarray, np.ndarray]:
        """Every candidate hand with its probability: (int64 (N, n), float64 (N,)) - what
        SPARTA averages over instead of sampling."""
        w = self.weights()
        return self.hands.astype(np.int64), w / w.sum()

    def sample(self, n: int, rng) -> np.ndarray:
        """n hands drawn with probability proportional to their weight: int64 (n, hand_len)."""
        n = as_int(n, "n", lo=0, what="an int >= 0 (hands to draw)", error=ValueError)
        rng = as_rng(rng)
        cw = self._cumulative()
        if len(cw) == 0 or cw[-1] <= 0:
            raise RuntimeError("exact belief: no candidate hand left")
        idx = np.searchsorted(cw, rng.random(n) * cw[-1], side="right")
        idx = np.minimum(idx, len(cw) - 1)
        self.last_proposed = self.last_legal = n
        return self.hands[idx].astype(np.int64)

    def card_probabilities(self) -> np.ndarray:
        T = self.config.num_card_types
        w = self.weights()
        tot = w.sum()
        out = np.zeros((self.hands.shape[1], T))
        for i in range(self.hands.shape[1]):
            out[i] = np.bincount(self.hands[:, i], weights=w, minlength=T)[:T] / tot
        return out

    def log_prob(self, hand) -> float:
        hand = check_hand(hand, self.hands.shape[1])
        match = np.all(self.hands == hand[None, :].astype(np.int8), axis=1)
        if not match.any():
            return -np.inf
        w = self.weights()
        return float(np.log(w[match].sum()) - np.log(w.sum()))
