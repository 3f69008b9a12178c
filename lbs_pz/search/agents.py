"""SPARTA and Learned Belief Search as Agents wrapped around any Blueprint.

Both search only for the seat they act for: they sample that seat's own hand from a
belief, evaluate every legal move by blueprint rollouts in the sampled worlds
(`lbs_pz.search.rollout_search`) and deviate from the blueprint only when a move gains
more than `delta`. They differ in the belief and the rollout depth, as in the paper:

    SpartaAgent   exact belief (every consistent hand, counterfactually filtered through
                  the blueprint), rollouts to the end of the game
    LBSAgent      any belief, rollouts of `depth` blueprint moves bootstrapped with a
                  value, or to the end

LBS's defaults never make a blueprint worse silently (`LBSAgent.defaults` says what was
chosen and why):
    belief  a learned belief trained for THIS blueprint and game when one ships
            (`lbs_pz.models.find_model`), filtered counterfactually ("learned+cf");
            else the grounded belief, filtered ("grounded+cf")
    value   with a finite depth: the `value` given, else the blueprint's own value, else
            a shipped value trained for this blueprint and game; else a warning, and the
            rollouts go to the end of the game (`depth` becomes -1, `depth_reason` says
            why): a cut-off rollout scored without a value would ignore lost lives.

Neither reads hidden information: the belief sees only the seat's view, and each world's
deck is re-dealt from the agent's own seeds, so the same view and seed give the same
move whatever the true hidden cards are.
"""

from __future__ import annotations

import warnings
from typing import List, Optional

import numpy as np

from lbs_pz.agents import as_blueprint, blueprint_identity
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.models import find_model, path as model_path
from lbs_pz.models.checkpoint import torch_available

NO_TORCH = "torch is not installed; learned beliefs and values need the [torch] extra"
from lbs_pz.search.beliefs import make_belief
from lbs_pz.search.rollout_search import SearchResult, ValueFn, pruning_rule, search_move


def _int_arg(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    return int(value)


def _real_arg(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _check_state(agent, state) -> None:
    if not isinstance(state, HanabiState):
        raise TypeError(f"{type(agent).__name__}.search: state must be a HanabiState, got "
                        f"{type(state).__name__}")


def in_precision(blueprint, precision: str):
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


class SearchAgent:
    """Shared machinery: keeps the belief in step with the game, samples hands, searches.

    Args:
        blueprint: the policy to improve: any Blueprint, or an object `as_blueprint`
            accepts (a class with `name` and `act(state, seat=None)`); its contract is
            checked here.
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
        pruning: stop rolling out clearly worse moves: "means" (True), "paired" (compared
            with the best move world by world; far fewer rollouts), "threshold" (as
            paired, and also the moves that clearly cannot gain delta over the
            blueprint's), or "off" (False); see `search_move`.
        min_legal_fraction: if fewer sampled hands than this fraction of `rollouts` are
            consistent, play the blueprint's move (counted in `fallbacks`).
        time_budget: seconds per decision (the search stops after the batch exceeding it).
        batch_size, refill: worlds per batch of rollouts, and whether later batches take
            more worlds once moves are pruned (None: where the blueprint's rollouts are
            batched neural forwards; see `search_move`).
        precision: "float32" (exact) or "bfloat16": the blueprint's rollouts and bootstrap
            value inside the search computed in bf16 (about twice as fast on CPUs with bf16
            instructions), for a blueprint with `with_precision` (a public-LSTM net). The
            blueprint's own move, the reference every gain is measured from, stays exact;
            rollout moves can differ from float32's where two moves' Q nearly tie.
        seed: seeds the samples and the worlds' decks; same view + seed = same move.
    """

    name = "search"

    def __init__(self, blueprint, belief, rollouts: int = 512, depth: int = -1,
                 value: Optional[ValueFn] = None, delta: float = 0.05,
                 confidence: float = 2.0, verify: int = 0, pruning="means",
                 min_legal_fraction: float = 0.1, time_budget: Optional[float] = None,
                 batch_size: int = 32, refill: Optional[bool] = None, seed: int = 0,
                 precision: str = "float32"):
        blueprint = as_blueprint(blueprint)
        pruning = pruning_rule(pruning)
        rollouts, depth = _int_arg("rollouts", rollouts), _int_arg("depth", depth)
        verify, batch_size = _int_arg("verify", verify), _int_arg("batch_size", batch_size)
        seed = _int_arg("seed", seed)
        if rollouts < 1:
            raise ValueError(f"rollouts must be >= 1, got {rollouts}")
        if depth == 0 or depth < -1:
            raise ValueError(f"depth must be a positive number of moves or -1 (to the end), got {depth}")
        delta, confidence = _real_arg("delta", delta), _real_arg("confidence", confidence)
        if delta < 0:
            raise ValueError(f"delta must be >= 0, got {delta}")
        if confidence < 0:
            raise ValueError(f"confidence must be >= 0 standard errors, got {confidence}")
        if verify < 0 or verify == 1:
            raise ValueError(f"verify must be 0 (off) or >= 2 worlds, got {verify}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1 worlds, got {batch_size}")
        min_legal_fraction = _real_arg("min_legal_fraction", min_legal_fraction)
        if min_legal_fraction < 0:
            raise ValueError(f"min_legal_fraction must be >= 0 (above 1: always the "
                             f"blueprint's move), got {min_legal_fraction}")
        if time_budget is not None and not _real_arg("time_budget", time_budget) > 0:
            raise ValueError(f"time_budget must be None or > 0 seconds, got {time_budget}")
        self.blueprint, self.belief = blueprint, belief
        self.precision = precision
        self.rollout_blueprint = in_precision(blueprint, precision)
        self.rollouts, self.depth, self.delta = rollouts, depth, delta
        self.pruning = pruning
        self.confidence, self.verify = confidence, verify
        if value is None and depth > 0 and getattr(blueprint, "has_value", False):
            value = self.rollout_blueprint.value
        self.value = value
        self.min_legal_fraction = min_legal_fraction
        self.time_budget, self.batch_size, self.seed = time_budget, batch_size, seed
        self.refill = None if refill is None else bool(refill)
        self.history: List[SearchResult] = []
        self._tracked_seat: Optional[int] = None
        self._tracked_view: Optional[tuple] = None

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
        elif isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) \
                or not 0 <= seat < state.config.players:
            raise ValueError(f"{type(self).__name__}.search: seat must be a seat in "
                             f"[0, {state.config.players}), got {seat!r}")
        elif seat != state.current_player:
            raise ValueError(f"{type(self).__name__}.search: it is seat "
                             f"{state.current_player}'s turn, not seat {seat}'s")
        seat = int(seat)
        self.sync_belief(state, seat)
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
            batch_size=self.batch_size, refill=self.refill,
            rollout_blueprint=self.rollout_blueprint,
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
    """Learned Belief Search with the safe defaults of the module docstring. A learned
    belief is used with its samples counterfactually filtered through the blueprint
    ("learned+cf"): the unfiltered model puts much of its mass on hands the partner's
    moves rule out, and its deviations then gain little.

    >>> import warnings
    >>> from lbs_pz.agents import RuleBot
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     agent = LBSAgent(RuleBot("simple"), rollouts=16)   # no value ships for it
    >>> agent.depth, agent.name
    (-1, 'lbs-inf')
    """

    def __init__(self, blueprint, belief=None, value: Optional[ValueFn] = None,
                 rollouts: int = 512, depth: int = 16, game: Optional[HanabiConfig] = None,
                 **kwargs):
        """belief, value: None picks the defaults of the module docstring for `game`
        (default: `HanabiConfig()`; picked again for another variant when the agent
        first searches a game of it). Other arguments: see `SearchAgent`."""
        blueprint = as_blueprint(blueprint)
        self._precision = kwargs.get("precision", "float32")
        self._wanted = (belief, value, depth)
        self.defaults: List[str] = []
        self.depth_reason: Optional[str] = None
        self._game = HanabiConfig() if game is None else game
        belief, value, depth = self._pick(blueprint, self._game, warn=False)
        super().__init__(blueprint, belief, rollouts=rollouts, depth=depth, value=value, **kwargs)
        if self.depth_reason:
            warnings.warn(self.depth_reason, stacklevel=2)

    @property
    def name(self) -> str:
        return f"lbs-{'inf' if self.depth < 0 else self.depth}"

    def _pick(self, blueprint, game: HanabiConfig, warn: bool):
        """(belief, value, depth) for `game`: the ones given, defaults for the others."""
        belief, value, depth = self._wanted
        self.defaults, self.depth_reason = [], None
        identity = blueprint_identity(blueprint)
        if belief is None:
            found = find_model("belief", identity, game)
            if found is not None:
                belief = make_belief("learned+cf", blueprint=blueprint,
                                     checkpoint=model_path(found))
                self.defaults.append(f"belief: learned+cf (shipped {found!r}, trained for "
                                     f"{blueprint.name!r})")
            else:
                belief = make_belief("grounded+cf", blueprint=blueprint)
                why = (f"no learned belief ships for {blueprint.name!r} in this game"
                       if torch_available() else NO_TORCH)
                self.defaults.append(f"belief: grounded+cf ({why})")
        if depth > 0 and value is None:
            if getattr(blueprint, "has_value", False):
                value = in_precision(blueprint, self._precision).value
                self.defaults.append(f"value: {blueprint.name!r}'s own")
            else:
                found = find_model("value", identity, game)
                if found is not None:
                    from lbs_pz.search.value import CentralValue   # torch, on use

                    value = CentralValue(model_path(found))
                    self.defaults.append(f"value: shipped {found!r}")
                else:
                    self.depth_reason = (
                        f"LBS-{depth}: {blueprint.name!r} has no value and none ships for it "
                        f"in this game{'' if torch_available() else ' (' + NO_TORCH + ')'}, "
                        f"so rollouts go to the end of the game (depth -1); "
                        f"train one with `lbs-pz train-value --blueprint SPEC` and pass "
                        f"value=CentralValue(PATH) (CLI: --value-checkpoint PATH)")
                    depth = -1
                    self.defaults.append("depth: -1 (no value)")
                    if warn:
                        warnings.warn(self.depth_reason, stacklevel=3)
        return belief, value, depth

    def search(self, state: HanabiState, seat: Optional[int] = None) -> SearchResult:
        _check_state(self, state)
        if state.config != self._game and (self._wanted[0] is None or
                                           (self._wanted[1] is None and self._wanted[2] > 0)):
            # Defaults were picked for another variant: pick them again for this one.
            self._game = state.config
            self.belief, self.value, self.depth = self._pick(self.blueprint, self._game,
                                                             warn=True)
            self._tracked_seat = self._tracked_view = None
        return super().search(state, seat)


class SpartaAgent(SearchAgent):
    """SPARTA single-agent search: exact belief, rollouts to the end of the game."""

    name = "sparta"

    def __init__(self, blueprint, belief=None, rollouts: int = 512, **kwargs):
        blueprint = as_blueprint(blueprint)
        if belief is None:
            belief = make_belief("exact", blueprint=blueprint)
        kwargs.setdefault("depth", -1)
        super().__init__(blueprint, belief, rollouts=rollouts, **kwargs)
