"""The one search configuration: every knob of SPARTA and LBS, frozen and validated once.

    SearchConfig(rollouts=256, delta=None, ...)     every knob, validated at construction
    config.with_defaults()                           the None knobs at their general default

A knob left at None is chosen for a blueprint by `lbs_pz.search.resolve.resolve` (the
setting the models manifest recommends for it, else its speed default, else `DEFAULTS`);
the rollout engine (`lbs_pz.search.rollout_search.search_move`) takes a SearchConfig
whole, its None knobs at `DEFAULTS`. What the knobs it reads do:

delta, confidence: deviate from the blueprint's move only if the best move's paired
    gain over it exceeds delta and `confidence` standard errors of that gain. The
    paper's rule is confidence 0 (with 10K rollouts); with a few hundred rollouts
    the best of ~15 noisy estimates beats the blueprint by chance (the winner's
    curse), which confidence ~2 guards against.
margin_worlds: if > 0, the standard error in the `confidence` test is that of at most
    this many worlds (the measured one times sqrt(worlds / margin_worlds)): more
    worlds still sharpen the estimate of every gain but never loosen the margin a
    deviation must clear. The belief's and the value's bias does not shrink with more
    worlds while the standard error does, so without this cap more worlds let
    deviations through on biased estimates.
pruning: stop rolling out a move once it is clearly worse than the best (after
    `search_move`'s min_samples worlds; the blueprint's move is never dropped, it is the reference):
    "means" (or True): its mean + 2 s.e. < the best mean - 2 s.e.;
    "paired": its paired difference with the best move over the same worlds (common
    random numbers) is below 0 by more than 2 s.e. of that difference. Most of the
    spread of returns comes from the worlds, which pairing cancels, so this drops
    weak moves after far fewer worlds;
    "threshold": as "paired", and a move is also dropped once its paired gain over
    the blueprint's move is 2 s.e. below `delta` (with `margin_worlds`, below the
    larger of delta and the capped margin): it can no longer be played, since a
    deviation must clear both. This drops the moves that tie with the
    blueprint's (equivalent discards and hints), which "paired" keeps to the end;
    "off" (or False): every move gets every world.
batch_size: worlds rolled out together in the first batch (every legal move in each);
    pruning is checked after each batch.
refill: later batches take batch_size * (k // moves still alive) worlds (k legal
    moves), so that each rolls out about as many (move, world) pairs as the first;
    False: batch_size worlds each (more pruning checks, smaller batches). None: the
    rollout blueprint's `wide_batches` (a neural blueprint's batched forward is several
    times cheaper per world at 512 worlds than at 64; a rule bot's rollouts cost the
    same per world, and later pruning only adds rollouts).
time_budget: seconds; the search stops after the batch that exceeds it.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np

from lbs_pz.checks import as_choice, as_int, as_path, as_real
from lbs_pz.search.beliefs import parse_belief

PRECISIONS = ("float32", "bfloat16")
PAPER_DELTA = 0.05          # the paper's deviation threshold
MAX_WORLDS = 10_000         # worlds a budget may buy per decision (the paper's 10,000 rollouts)
MIN_BUDGET_WORLDS = 16      # and the fewest it gives a decision
PRUNING_RULES = ("means", "paired", "threshold", "off")

# The general default of each knob that `resolve` chooses (a None in SearchConfig).
# margin_worlds 32: the deviation test never loosens past 32 worlds' standard error, so more
# worlds cannot let a deviation through on the belief's or the value's bias
# (docs/experiments/margin_worlds.md, chosen on run seed 1's deals); the searches without
# either bias, SPARTA and the weighted LBS-inf, follow the noise (resolve.measured_margin).
# pruning "threshold": a move stops being rolled out once it cannot clear that margin; on
# the strong bot 3.3x fewer rollouts at the same score (docs/experiments/importance_weights.md).
# importance off: weighting the worlds toward the exact posterior did not raise LBS-16's
# gain on the strong bot at 256 or 1,024 worlds (the same file); LBS-inf from 1,024 worlds
# up turns it on (`weighted_by_default`), and `--importance` anywhere.
# deep_worlds 1,024: a budget's decision that affords 1,024 worlds to the end rolls out to the
# end, weighted and uncapped (tuning deals, strong bot, 720,000 moves per decision: +0.097 +-
# 0.044 over depth 16 everywhere; docs/experiments/budget_depth.md), where one seat searches:
# a spec that searches several builds its searchers with 0 (`lbs_pz.search.build`).
DEFAULTS = {"delta": PAPER_DELTA, "confidence": 2.0, "verify": 0, "margin_worlds": 32,
            "pruning": "threshold", "precision": "float32", "importance": False,
            "deep_worlds": 1024}
RESOLVED = tuple(DEFAULTS)
# Knobs for speed and the deviation rule: `--help` lists them under their own heading.
ADVANCED = ("delta", "confidence", "verify", "margin_worlds", "importance", "deep_worlds",
            "pruning", "precision", "min_legal_fraction", "time_budget", "batch_size", "refill")


def pruning_rule(pruning) -> str:
    """A pruning setting in its one spelling: one of PRUNING_RULES, True ("means") or
    False ("off"); ValueError otherwise."""
    if isinstance(pruning, (bool, np.bool_)):
        return "means" if pruning else "off"
    if pruning not in PRUNING_RULES:
        raise ValueError(f"pruning must be one of {', '.join(PRUNING_RULES)} (or True / False), "
                         f"got {pruning!r}")
    return pruning


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """Every knob of a search (SPARTA or LBS-k; the depth is the method's). Frozen and
    validated at construction: a bad value is a TypeError / ValueError here, never later.
    None: chosen by `resolve` for the blueprint (module docstring)."""

    # sampled worlds per decision (each rolled out once per candidate move)
    rollouts: int = 256
    # instead of rollouts: blueprint moves the search may simulate per decision (legal moves
    # x worlds x moves per rollout); each decision takes the worlds that fit, 16 to 10,000
    budget: Optional[int] = None
    # with a budget: a decision where it affords at least this many worlds to the end of the game
    # rolls out to the end, importance-weighted, its margin following the noise, instead of at the
    # method's depth (0: never; unset with several seats searching: 0)
    deep_worlds: Optional[int] = None
    # exact | grounded | learned | grounded+cf | learned+cf (default: learned+cf when a belief is
    # trained for the blueprint, else grounded+cf)
    belief: Optional[str] = None
    # a learned belief trained for this blueprint (lbs-pz train-belief); implies learned+cf
    belief_checkpoint: Optional[str] = None
    # a value trained for this blueprint (lbs-pz train-value), bootstrapping lbs-K rollouts
    value_checkpoint: Optional[str] = None
    # use a belief / value checkpoint trained for another blueprint or game anyway
    allow_mismatch: bool = False
    # seeds the sampled hands and the worlds' decks: the same view and seed give the same move
    seed: int = 0
    # points the paired gain of a deviation must exceed (the paper's: 0.05)
    delta: Optional[float] = None
    # standard errors of the paired gain a deviation must also exceed (0: the paper's rule)
    confidence: Optional[float] = None
    # extra worlds on which a proposed deviation is re-measured against the blueprint's move,
    # rolled out to the end and importance-weighted, the margin uncapped (0: off)
    verify: Optional[int] = None
    # the confidence test uses the standard error of at most this many worlds, so more worlds never
    # loosen the margin against the belief's and the value's bias (0: off)
    margin_worlds: Optional[int] = None
    # weight each sampled world toward the exact posterior (self-normalised importance sampling): a
    # learned or grounded belief's estimates then converge to the exact belief's as worlds grow, and
    # world counts become effective sample sizes
    importance: Optional[bool] = None
    # when a clearly worse move stops being rolled out: means | paired | threshold | off
    pruning: Optional[str] = None
    # a neural blueprint's rollouts inside the search: float32 | bfloat16 (its own moves stay
    # float32; bfloat16 pays only on CPUs with fast bf16 products, e.g. AMX)
    precision: Optional[str] = None
    # play the blueprint's move when fewer sampled hands than this fraction of rollouts are
    # consistent
    min_legal_fraction: float = 0.1
    # seconds per decision (the search stops after the batch that exceeds it)
    time_budget: Optional[float] = None
    batch_size: int = 32                     # worlds per batch of rollouts
    # later batches take more worlds once moves are pruned (default: for batched neural blueprints)
    refill: Optional[bool] = None

    def __post_init__(self):
        put = lambda name, value: object.__setattr__(self, name, value)   # noqa: E731
        for name in ("rollouts", "seed", "batch_size"):
            put(name, as_int(getattr(self, name), name))
        if self.rollouts < 1:
            raise ValueError(f"rollouts must be >= 1, got {self.rollouts}")
        if self.budget is not None:
            put("budget", as_int(self.budget, "budget"))
            if self.budget < 1:
                raise ValueError(f"budget must be >= 1 blueprint moves, got {self.budget}")
        if self.deep_worlds is not None:
            put("deep_worlds", as_int(self.deep_worlds, "deep_worlds"))
            if self.deep_worlds < 0:
                raise ValueError(f"deep_worlds must be >= 0 worlds (0: never), got "
                                 f"{self.deep_worlds}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1 worlds, got {self.batch_size}")
        if self.belief is not None:
            parse_belief(self.belief)       # a name of BELIEF_KINDS
        if self.belief_checkpoint is not None and self.belief is not None \
                and not parse_belief(self.belief)[0].reads_checkpoint:
            raise ValueError(f"--belief-checkpoint loads a learned belief, but the belief is "
                             f"{self.belief!r}: use learned or learned+cf")
        for name in ("belief_checkpoint", "value_checkpoint"):
            value = getattr(self, name)
            if value is not None:
                put(name, as_path(value, name, what="a path string or None"))
        put("allow_mismatch", bool(self.allow_mismatch))
        if self.delta is not None:
            put("delta", as_real(self.delta, "delta", error=ValueError))
            if self.delta < 0:
                raise ValueError(f"delta must be >= 0, got {self.delta}")
        if self.confidence is not None:
            put("confidence", as_real(self.confidence, "confidence", error=ValueError))
            if self.confidence < 0:
                raise ValueError(f"confidence must be >= 0 standard errors, got "
                                 f"{self.confidence}")
        if self.verify is not None:
            put("verify", as_int(self.verify, "verify"))
            if self.verify < 0 or self.verify == 1:
                raise ValueError(f"verify must be 0 (off) or >= 2 worlds, got {self.verify}")
        if self.margin_worlds is not None:
            put("margin_worlds", as_int(self.margin_worlds, "margin_worlds"))
            if self.margin_worlds < 0:
                raise ValueError(f"margin_worlds must be >= 0 (0: off), got {self.margin_worlds}")
        if self.pruning is not None:
            put("pruning", pruning_rule(self.pruning))
        if self.precision is not None:
            as_choice(self.precision, "precision", PRECISIONS, what="float32 or bfloat16")
        put("min_legal_fraction", as_real(self.min_legal_fraction, "min_legal_fraction",
                                          error=ValueError))
        if self.min_legal_fraction < 0:
            raise ValueError(f"min_legal_fraction must be >= 0 (above 1: always the "
                             f"blueprint's move), got {self.min_legal_fraction}")
        if self.time_budget is not None:
            as_real(self.time_budget, "time_budget", above=0, what="None or > 0 seconds",
                    error=ValueError)
        for name in ("refill", "importance"):
            if getattr(self, name) is not None:
                put(name, bool(getattr(self, name)))

    def replace(self, **changes) -> "SearchConfig":
        """A copy with `changes` (field names; TypeError for an unknown one), validated."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise TypeError(f"unknown search setting(s) {', '.join(unknown)}; the settings "
                            f"are the fields of SearchConfig")
        return dataclasses.replace(self, **changes) if changes else self

    def with_defaults(self) -> "SearchConfig":
        """A copy with every knob `resolve` chooses (`RESOLVED`) that is None here at its
        general default (`DEFAULTS`), whatever the blueprint: what the rollout engine
        runs with when given an unresolved configuration."""
        return self.replace(**{k: v for k, v in DEFAULTS.items() if getattr(self, k) is None})

    def explicit(self) -> dict:
        """The settings that differ from a default SearchConfig (what a label shows)."""
        default = SearchConfig()
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != getattr(default, f.name)}

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, fields: dict) -> "SearchConfig":
        """The SearchConfig of `to_dict`'s output; TypeError / ValueError otherwise."""
        if not isinstance(fields, dict):
            raise TypeError(f"a search configuration is a dict of settings, got "
                            f"{type(fields).__name__}")
        return cls().replace(**fields)


def worlds_for_budget(budget: int, state, depth: int) -> int:
    """Worlds one decision at `state` samples under a `budget` of simulated blueprint
    moves: budget / (legal moves x moves per rollout), within [MIN_BUDGET_WORLDS,
    MAX_WORLDS]. A rollout of `depth` moves costs depth + 1 moves (the candidate's
    included); one to the end (depth -1) costs at most the moves the game has left,
    estimated from public facts as two per card still in the deck plus the last round.
    Pruning stops weak moves early, so a search spends at most its budget."""
    moves = len(state.legal_moves())
    if depth > 0:
        steps = depth + 1
    else:
        steps = 1 + min(2 * state.deck_size + state.turns_to_play,
                        state.config.max_game_length - state.num_moves_played)
    return int(min(max(budget // max(moves * steps, 1), MIN_BUDGET_WORLDS), MAX_WORLDS))
