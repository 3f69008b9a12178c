"""SPARTA and Learned Belief Search as Agents wrapped around any Blueprint.

Both search only for the seat they act for: they sample that seat's own hand from a
belief, evaluate every legal move by blueprint rollouts in the sampled worlds
(`lbs_pz.search.rollout_search`) and deviate from the blueprint only when a move gains
more than `delta`. They differ in the belief and the rollout depth, as in the paper:

    SpartaAgent   exact belief (every consistent hand, counterfactually filtered through
                  the blueprint), rollouts to the end of the game
    LBSAgent      any belief (the learned one by default), rollouts of `depth` blueprint
                  moves bootstrapped with a value, or to the end

Neither reads hidden information: the belief sees only the seat's view, and each world's
deck is re-dealt from the agent's own seeds, so the same view and seed give the same
move whatever the true hidden cards are.
"""

from __future__ import annotations

from typing import List, Optional

import numpy as np

from lbs_pz.engine import HanabiState
from lbs_pz.search.rollout_search import SearchResult, ValueFn, search_move


class SearchAgent:
    """Shared machinery: keeps the belief in step with the game, samples hands, searches.

    Args:
        blueprint: the policy to improve (any Blueprint: act, rollout).
        belief: a `lbs_pz.search.beliefs.Belief` for the searching seat.
        rollouts: sampled worlds per decision (each is rolled out once per candidate move).
        depth: blueprint moves after the candidate move; -1 rolls out to the end.
        value: bootstrap value at depth (default: the blueprint's, when it has one).
        delta: minimum gain over the blueprint's move to deviate (the paper's 0.05).
        confidence: the gain must also exceed this many standard errors (see
            `search_move`; 0 is the paper's rule, meant for ~10K rollouts).
        verify: extra sampled worlds on which a proposed deviation is re-measured
            against the blueprint's move before it is played (0: off, the paper's
            single estimate). Only two moves are rolled out there, so it is cheap, and
            the re-measured gain is free of the winner's curse.
        pruning: UCB-like pruning of clearly worse moves.
        min_legal_fraction: if fewer sampled hands than this fraction of `rollouts` are
            consistent, play the blueprint's move (counted in `fallbacks`).
        time_budget: seconds per decision (the search stops after the batch exceeding it).
        seed: seeds the samples and the worlds' decks; same view + seed = same move.
    """

    name = "search"

    def __init__(self, blueprint, belief, rollouts: int = 512, depth: int = -1,
                 value: Optional[ValueFn] = None, delta: float = 0.05,
                 confidence: float = 2.0, verify: int = 0, pruning: bool = True,
                 min_legal_fraction: float = 0.1, time_budget: Optional[float] = None,
                 batch_size: int = 32, seed: int = 0):
        if not callable(getattr(blueprint, "act", None)) or not callable(getattr(blueprint, "rollout", None)):
            raise TypeError("blueprint must be a Blueprint (act and rollout)")
        if rollouts < 1:
            raise ValueError(f"rollouts must be >= 1, got {rollouts}")
        if depth == 0 or depth < -1:
            raise ValueError(f"depth must be a positive number of moves or -1 (to the end), got {depth}")
        if delta < 0:
            raise ValueError(f"delta must be >= 0, got {delta}")
        if verify < 0 or verify == 1:
            raise ValueError(f"verify must be 0 (off) or >= 2 worlds, got {verify}")
        self.blueprint, self.belief = blueprint, belief
        self.rollouts, self.depth, self.delta, self.pruning = rollouts, depth, delta, pruning
        self.confidence, self.verify = confidence, verify
        if value is None and getattr(blueprint, "has_value", False):
            value = blueprint.value
        self.value = value
        self.min_legal_fraction = min_legal_fraction
        self.time_budget, self.batch_size, self.seed = time_budget, batch_size, seed
        self.history: List[SearchResult] = []
        self._tracked_seat: Optional[int] = None

    # Statistics over the decisions made so far.
    @property
    def decisions(self) -> int:
        return len(self.history)

    @property
    def fallbacks(self) -> int:
        return sum(r.fallback for r in self.history)

    @property
    def deviations(self) -> int:
        return sum(r.deviated for r in self.history)

    def _sync_belief(self, state: HanabiState, seat: int) -> None:
        """Follow the game: observe the new moves, or restart on a new game / seat."""
        if self._tracked_seat == seat:
            try:
                self.belief.observe(state)
                return
            except ValueError:
                pass  # not a continuation of the tracked game: start over
        self.belief.reset(state, seat)
        self._tracked_seat = seat

    def search(self, state: HanabiState, seat: Optional[int] = None) -> SearchResult:
        """Run one search for `seat` (default: the player to move) and return its result."""
        seat = state.current_player if seat is None else seat
        self._sync_belief(state, seat)
        # One seed per (agent seed, position): reproducible, independent across moves.
        key = [self.seed, seat, state.num_moves_played] + state.move_history
        rng = np.random.default_rng(np.random.SeedSequence(key))
        hands = self.belief.sample(self.rollouts + self.verify, rng)
        # A belief may return fewer (consistent) hands than asked: search gets the first
        # `rollouts`, verification the rest.
        search_hands, verify_hands = hands[:self.rollouts], hands[self.rollouts:]
        min_worlds = max(1, int(np.ceil(self.min_legal_fraction * self.rollouts)))
        result = search_move(
            state, seat, self.blueprint, search_hands, depth=self.depth, value=self.value,
            delta=self.delta, confidence=self.confidence, pruning=self.pruning,
            verify_hands=verify_hands if self.verify else None,
            batch_size=self.batch_size,
            min_worlds=min_worlds, time_budget=self.time_budget,
            seed=int(rng.integers(2**62)))
        self.history.append(result)
        return result

    def act(self, state: HanabiState, seat: Optional[int] = None) -> int:
        return self.search(state, seat).move

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(blueprint={self.blueprint!r}, belief={self.belief.name}, "
                f"rollouts={self.rollouts}, depth={self.depth})")


class LBSAgent(SearchAgent):
    """Learned Belief Search. `belief` defaults to the shipped learned belief with its
    samples counterfactually filtered through the blueprint (`make_belief("learned+cf")`):
    the unfiltered model puts much of its mass on hands the partner's moves rule out, and
    its deviations then gain little (see the README's search figures)."""

    name = "lbs"

    def __init__(self, blueprint, belief=None, value: Optional[ValueFn] = None,
                 rollouts: int = 512, depth: int = 16, **kwargs):
        if belief is None:
            from lbs_pz.search.beliefs import make_belief

            belief = make_belief("learned+cf", blueprint=blueprint)
        super().__init__(blueprint, belief, rollouts=rollouts, depth=depth, value=value, **kwargs)
        self.name = f"lbs-{'inf' if depth < 0 else depth}"


class SpartaAgent(SearchAgent):
    """SPARTA single-agent search: exact belief, rollouts to the end of the game."""

    name = "sparta"

    def __init__(self, blueprint, belief=None, rollouts: int = 512, **kwargs):
        if belief is None:
            from lbs_pz.search.beliefs import ExactBelief

            belief = ExactBelief(blueprint)
        kwargs.setdefault("depth", -1)
        super().__init__(blueprint, belief, rollouts=rollouts, **kwargs)
