"""SPARTA and Learned Belief Search as Agents wrapped around any Blueprint.

Both search only for the seat they act for: they sample that seat's own hand from a
belief, evaluate every legal move by blueprint rollouts in the sampled worlds
(`lbs_pz.search.rollout_search`) and deviate from the blueprint only when a move gains
more than `delta`. They differ in the belief and the rollout depth, as in the paper:

    SpartaAgent   exact belief (every consistent hand, counterfactually filtered through
                  the blueprint), rollouts to the end of the game
    LBSAgent      any belief, rollouts of `depth` blueprint moves bootstrapped with a
                  value, or to the end (under a budget, also wherever it affords
                  `deep_worlds` worlds to the end: `SearchAgent.depth_for`)

Every knob is one `SearchConfig` (`lbs_pz.search.config`), given whole (`config=`) or
field by field (`LBSAgent(bp, rollouts=64, delta=0.5)`), and read back whole from
`agent.config` (resolved); `lbs_pz.search.resolve.resolve` chooses the belief,
the value and every knob left unset for the blueprint and the game, and `agent.defaults`
says what it chose and why. Defaults never make a blueprint worse silently: a finite
depth without any value rolls out to the end of the game instead, with a warning.

Neither reads hidden information: the belief sees only the seat's view, and each world's
deck is re-dealt from the agent's own seeds, so the same view and seed give the same
move whatever the true hidden cards are.
"""

from __future__ import annotations

import warnings
from typing import Dict, FrozenSet, List, Optional, Tuple

import numpy as np

from lbs_pz.agents import Blueprint, as_blueprint
from lbs_pz.checks import as_int
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.search.beliefs import importance_weights
from lbs_pz.search.config import RESOLVED, SearchConfig, worlds_for_budget
from lbs_pz.search.methods import method_of
from lbs_pz.search.resolve import resolve
from lbs_pz.search.rollout_search import NON_FINITE, SearchResult, ValueFn, search_move


def _check_state(agent, state) -> None:
    if not isinstance(state, HanabiState):
        raise TypeError(f"{type(agent).__name__}.search: state must be a HanabiState, got "
                        f"{type(state).__name__}")


def in_precision(blueprint, precision: str) -> Blueprint:
    """The blueprint computing in `precision` ("float32": itself), for search's rollouts.
    ValueError for an unknown precision or a blueprint that has no precision to set."""
    if precision not in ("float32", "bfloat16"):
        raise ValueError(f"precision must be float32 or bfloat16, got {precision!r}")
    if precision == "float32":
        return blueprint
    if not hasattr(blueprint, "with_precision"):
        raise ValueError(f"precision {precision!r}: the blueprint {blueprint.name!r} computes "
                         f"in no settable precision (only neural blueprints, e.g. lstm:, do)")
    return blueprint.with_precision(precision)


def _check_depth(depth) -> int:
    """A search's depth: a positive number of moves, or -1 (to the end); ValueError
    otherwise."""
    words = "a positive number of moves or -1 (to the end)"
    depth = as_int(depth, "depth", lo=-1, what=words, error=ValueError)
    if depth == 0:
        raise ValueError(f"depth must be {words}, got 0")
    return depth


def _config(config: Optional[SearchConfig], knobs: dict) -> SearchConfig:
    if config is not None and not isinstance(config, SearchConfig):
        raise TypeError(f"config must be a SearchConfig, got {type(config).__name__}")
    return (SearchConfig() if config is None else config).replace(**knobs)


def _belief_arg(belief, knobs: dict):
    """The belief object of an agent's `belief` argument: a string is the belief's kind
    (the SearchConfig knob, e.g. "learned"), moved into `knobs`; anything else must be a
    belief (an object with `reset`) or None."""
    if isinstance(belief, str):
        knobs["belief"] = belief
        return None
    if belief is not None and not callable(getattr(belief, "reset", None)):
        raise TypeError(f"belief must be a belief object (lbs_pz.search.beliefs), a belief "
                        f"kind such as 'learned', or None; got {type(belief).__name__}")
    return belief


class SearchAgent:
    """Shared machinery: keeps the belief in step with the game, samples hands, searches.

    Args:
        blueprint: the policy to improve: any Blueprint, or an object `as_blueprint`
            accepts (a class with `name` and `act(state, seat=None)`); its contract is
            checked here.
        belief: a `lbs_pz.search.beliefs.Belief` for the searching seat.
        config: a `SearchConfig` with every knob set (`resolve` fills the unset ones).
        depth: blueprint moves after the candidate move; -1 rolls out to the end.
        value: bootstrap value at depth (default: the blueprint's, when it has one),
            computed in the rollouts' precision.

    `blueprint_seats` (attribute, default empty): the partner seats known to play the
    blueprint exactly, as in an evaluation where the seats that do not search play it; a
    counterfactually filtered belief then rules out the sampled hands their moves
    contradict even when none explains a move (`FilteredBelief.blueprint_seats`).

    `config.precision` "bfloat16" runs the blueprint's rollouts and its value inside the
    search in bf16 (a blueprint with `with_precision`: a public-LSTM net); the
    blueprint's own move, the reference every gain is measured from, stays exact.
    """

    name = "search"

    def __init__(self, blueprint, belief, config: SearchConfig, depth: int = -1,
                 value: Optional[ValueFn] = None):
        blueprint = as_blueprint(blueprint)
        if not isinstance(config, SearchConfig):
            raise TypeError(f"config must be a SearchConfig, got {type(config).__name__}")
        unset = [k for k in RESOLVED if getattr(config, k) is None]
        if unset:
            raise ValueError(f"SearchAgent needs every setting chosen (unset: "
                             f"{', '.join(unset)}); `lbs_pz.search.resolve.resolve` chooses them")
        depth = _check_depth(depth)
        self.blueprint = blueprint
        self.history: List[SearchResult] = []
        # partner seats known to play the blueprint exactly (FilteredBelief.blueprint_seats)
        self.blueprint_seats: FrozenSet[int] = frozenset()
        self._use(belief, config, depth, value)

    def _use(self, belief, config: SearchConfig, depth: int, value) -> None:
        """Search with these from now on (the belief starts over at the next search)."""
        self.belief, self.config, self.depth = belief, config, depth
        assert config.precision is not None         # resolved: every setting chosen
        self.rollout_blueprint = in_precision(self.blueprint, config.precision)
        if value is None and depth > 0 and getattr(self.blueprint, "has_value", False):
            value = self.rollout_blueprint.value
        self.value = value
        self._tracked_seat: Optional[int] = None
        self._tracked_view: Optional[tuple] = None

    # Statistics over the decisions made so far.
    @property
    def decisions(self) -> int:
        return len(self.history)

    @property
    def fallbacks(self) -> int:
        """Decisions that played the blueprint's move as a fallback (too few sampled
        hands, or a non-finite return: `fallback_reasons`)."""
        return sum(r.fallback for r in self.history)

    @property
    def fallback_reasons(self) -> Dict[str, int]:
        """{reason: decisions} of the fallbacks so far (`SearchResult.fallback_reason`:
        `rollout_search.FEW_WORLDS`, `rollout_search.NON_FINITE`)."""
        out: Dict[str, int] = {}
        for r in self.history:
            if r.fallback:
                out[r.fallback_reason] = out.get(r.fallback_reason, 0) + 1
        return out

    @property
    def deviations(self) -> int:
        return sum(r.deviated for r in self.history)

    @property
    def value_clipped(self) -> int:
        """Bootstrap estimates so far that claimed more than their world could still score
        (clipped to its `max_score`): how often the value overshoots, by decision in
        `history[i].value_clipped`."""
        return sum(r.value_clipped for r in self.history)

    @staticmethod
    def _view_of(state: HanabiState, seat: int) -> tuple:
        """What `seat` has seen of its game: (config, start player, the other seats' first
        hands, the move history as `seat` sees it: `view_records(seat)`, its own draws
        hidden). Two positions are of one game, for `seat`, when the first three match and
        one view history extends the other; nothing the seat cannot see is compared, so
        the agent's moves still depend only on its view."""
        H = state.config.hand_size
        deck = state.deck
        others = tuple(tuple(deck[p * H:(p + 1) * H]) for p in range(state.config.players)
                       if p != seat)
        return (state.config, state.start_player, others), state.view_records(seat)

    def sync_belief(self, state: HanabiState, seat: int) -> None:
        """Bring the belief of `seat` up to `state` without searching (what `search` does
        first): observe the new moves, or restart on a new game / seat. A new
        game is recognised by `seat`'s view (see `_view_of`): a reused agent that meets
        another deal, even at its first move, starts from a fresh belief."""
        if hasattr(self.belief, "blueprint_seats"):
            self.belief.blueprint_seats = frozenset(self.blueprint_seats) - {seat}
        game, history = self._view_of(state, seat)
        if self._tracked_seat == seat and self._tracked_view is not None:
            old_game, old_history = self._tracked_view
            if old_game == game and history.startswith(old_history):
                try:
                    self.belief.observe(state)
                    self._tracked_view = (game, history)
                    return
                except ValueError:
                    pass  # not a continuation of the tracked game: start over
        self._tracked_view = None
        self.belief.reset(state, seat)
        self._tracked_seat = seat
        self._tracked_view = (game, history)

    def search(self, state: HanabiState, seat: Optional[int] = None) -> SearchResult:
        """Run one search for `seat` (default: the player to move) and return its result."""
        _check_state(self, state)
        if state.is_terminal:
            raise ValueError(f"{type(self).__name__}.search: the game is over (no move to "
                             f"search)")
        if seat is None:
            seat = state.current_player
        else:
            seat = as_int(seat, f"{type(self).__name__}.search: seat", 0,
                          below=state.config.players, error=ValueError,
                          what=f"a seat in [0, {state.config.players})")
        if seat != state.current_player:
            raise ValueError(f"{type(self).__name__}.search: it is seat "
                             f"{state.current_player}'s turn, not seat {seat}'s")
        self.sync_belief(state, seat)
        # One seed per (agent seed, position): reproducible, independent across moves.
        depth, config = self.depth_for(state)
        key = [config.seed, seat, state.num_moves_played] + state.move_history
        rng = np.random.default_rng(np.random.SeedSequence(key))
        n = self.worlds_for(state, depth)
        assert config.verify is not None            # resolved: every setting chosen
        hands, log_w = self.belief.sample_weighted(n + config.verify, rng)
        # A belief may return fewer (consistent) hands than asked: search gets the first
        # n, verification the rest.
        search_hands, verify_hands = hands[:n], hands[n:]
        weights = verify_weights = None
        if len(hands) and np.ptp(log_w) > 0:
            # (equal weights, e.g. the exact belief's: the plain estimates, unchanged)
            weights = importance_weights(log_w[:n]) if config.importance else None
            # verification is weighted whatever `importance`: its rollouts to the end and
            # uncapped margin are unbiased only under the exact posterior
            verify_weights = importance_weights(log_w[n:]) if len(hands) > n else None
        result = search_move(
            state, seat, self.blueprint, search_hands, config, depth=depth,
            value=self.value, rollout_blueprint=self.rollout_blueprint,
            verify_hands=verify_hands if config.verify else None, weights=weights,
            verify_weights=verify_weights,
            min_worlds=max(1, int(np.ceil(config.min_legal_fraction * n))),
            seed=int(rng.integers(2**62)))
        self.history.append(result)
        if result.fallback_reason == NON_FINITE:
            warnings.warn(f"{type(self).__name__}: the value or the rollouts returned a "
                          f"non-finite estimate (NaN or inf) at move "
                          f"{state.num_moves_played}; the blueprint's move was played (a "
                          f"fallback: `fallbacks`, `fallback_reasons`)", RuntimeWarning,
                          stacklevel=2)
        return result

    def depth_for(self, state: HanabiState) -> Tuple[int, SearchConfig]:
        """(depth, config) of the decision at `state`: the agent's own, except that under
        a budget a decision where it affords `deep_worlds` worlds to the end of the game
        (public facts only) rolls out to the end, importance-weighted, its margin
        following the noise: with no value to bias the returns and the weights removing
        the belief's bias, nothing is left for the margin's cap to guard against
        (docs/experiments/budget_depth.md)."""
        config = self.config
        if config.budget is None or not config.deep_worlds or self.depth < 0 \
                or worlds_for_budget(config.budget, state, -1) < config.deep_worlds:
            return self.depth, config
        return -1, config.replace(importance=True, margin_worlds=0)

    def worlds_for(self, state: HanabiState, depth: Optional[int] = None) -> int:
        """Worlds the decision at `state` samples: `rollouts`, or what `budget` affords
        there at `depth` (default: the agent's; `lbs_pz.search.config.worlds_for_budget`;
        public facts only)."""
        if self.config.budget is None:
            return self.config.rollouts
        return worlds_for_budget(self.config.budget, state,
                                 self.depth if depth is None else depth)

    def act(self, state: HanabiState, seat: Optional[int] = None) -> int:
        return self.search(state, seat).move

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(blueprint={self.blueprint!r}, belief={self.belief.name}, "
                f"rollouts={self.config.rollouts}, depth={self.depth})")


class LBSAgent(SearchAgent):
    """Learned Belief Search: `depth` blueprint moves after each candidate move, then a
    value (or to the end: depth -1), over hands sampled from a belief. By default the
    belief is a learned one trained for this blueprint and game, its samples
    counterfactually filtered through the blueprint ("learned+cf": the unfiltered model
    puts much of its mass on hands the partner's moves rule out), else grounded+cf.

    >>> import warnings
    >>> from lbs_pz.agents import RuleBot
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     agent = LBSAgent(RuleBot("simple"), rollouts=16)   # no value ships for it
    >>> agent.depth, agent.name
    (-1, 'lbs-inf')
    """

    def __init__(self, blueprint, belief=None, value: Optional[ValueFn] = None,
                 config: Optional[SearchConfig] = None, depth: int = 16,
                 game: Optional[HanabiConfig] = None, **knobs):
        """belief, value: objects to use (belief may also name a kind, e.g. "learned");
        None: chosen by `resolve` for `game` (default
        `HanabiConfig()`; chosen again for another variant when the agent first searches
        a game of it). config and knobs (SearchConfig field names): the settings."""
        blueprint = as_blueprint(blueprint)
        belief = _belief_arg(belief, knobs)
        self.wanted = _config(config, knobs)
        self._given = (belief, value, depth)
        self._game = HanabiConfig() if game is None else game
        chosen = self._resolve(blueprint, self._game)
        super().__init__(blueprint, chosen.belief, chosen.config, depth=chosen.depth,
                         value=chosen.value)
        if self.depth_reason:
            warnings.warn(self.depth_reason, stacklevel=2)

    def _resolve(self, blueprint, game: HanabiConfig):
        belief, value, depth = self._given
        depth = _check_depth(depth)
        chosen = resolve(blueprint, game, self.wanted, method_of(depth), belief=belief,
                         value=value)
        self.defaults: List[str] = chosen.notes
        self.depth_reason: Optional[str] = chosen.depth_reason
        return chosen

    # the base's class attribute, here a name made from the depth (assigned nowhere)
    @property
    def name(self) -> str:  # type: ignore[override]
        return f"lbs-{'inf' if self.depth < 0 else self.depth}"

    def search(self, state: HanabiState, seat: Optional[int] = None) -> SearchResult:
        _check_state(self, state)
        belief, value, depth = self._given
        if state.config != self._game and (belief is None or (value is None and depth > 0)):
            # Chosen for another variant: choose again for this one.
            self._game = state.config
            chosen = self._resolve(self.blueprint, self._game)
            if self.depth_reason:
                warnings.warn(self.depth_reason, stacklevel=2)
            self._use(chosen.belief, chosen.config, chosen.depth, chosen.value)
        return super().search(state, seat)


class SpartaAgent(SearchAgent):
    """SPARTA single-agent search: exact belief, rollouts to the end of the game."""

    name = "sparta"

    def __init__(self, blueprint, belief=None, config: Optional[SearchConfig] = None,
                 game: Optional[HanabiConfig] = None, **knobs):
        blueprint = as_blueprint(blueprint)
        belief = _belief_arg(belief, knobs)
        chosen = resolve(blueprint, game, _config(config, knobs), "sparta", belief=belief)
        self.defaults: List[str] = chosen.notes
        super().__init__(blueprint, chosen.belief, chosen.config, depth=-1)
