"""The one search configuration, and the one place that resolves it for a blueprint.

    SearchConfig(rollouts=256, delta=None, ...)     every knob of SPARTA and LBS, frozen,
                                                     validated once, at construction
    resolve(blueprint, game, config, method)         -> Resolved: the belief, the value, the
                                                     depth and every setting, each with why

A knob left at None is chosen by `resolve`, in this order:
    1. the setting recommended for this blueprint (and method) in the models manifest,
       chosen on deals disjoint from the evaluation stream by a rule recorded beside it
       (`lbs_pz.models.recommended_settings`);
    2. for a blueprint whose rollouts are batched neural forwards or per-position Python
       calls, the fast settings (`speed_defaults`: threshold pruning);
    3. else the general default, `DEFAULTS`.
`Resolved.notes` says which applied, knob by knob (what `LBSAgent.defaults` shows), so
the same blueprint gets the same search from Python, the CLI and the page.

The belief and the value follow the same rule: the ones given (`belief`,
`belief_checkpoint`, `value_checkpoint`), else a learned belief / a value trained for
THIS blueprint and game when one ships, else the grounded belief, filtered through the
blueprint; a finite depth without any value rolls out to the end of the game instead
(`Resolved.depth_reason` says why): a cut-off rollout scored without a value would
ignore lost lives.
"""

from __future__ import annotations

import dataclasses
import math
from typing import List, Optional, Tuple

import numpy as np

from lbs_pz.agents import blueprint_identity
from lbs_pz.engine import HanabiConfig
from lbs_pz.models import find_model, path as model_path, recommended_settings
from lbs_pz.optional import install_hint, torch_available
from lbs_pz.search.beliefs import FilteredBelief, make_belief, parse_belief
from lbs_pz.search.rollout_search import pruning_rule
from lbs_pz.search.value import CentralValue

NO_TORCH = ("torch is not installed; learned beliefs and values need the [torch] extra: "
            + install_hint("torch"))
PRECISIONS = ("float32", "bfloat16")
PAPER_DELTA = 0.05          # the paper's deviation threshold
MAX_WORLDS = 10_000         # worlds a budget may buy per decision (the paper's 10,000 rollouts)
MIN_BUDGET_WORLDS = 16      # and the fewest it gives a decision
WEIGHTED_FROM_WORLDS = 1024  # the weighted defaults (`weighted_by_default`, `weighted_margin`) apply from here

# The general default of each knob that `resolve` chooses (a None in SearchConfig).
# margin_worlds 32: the deviation test never loosens past 32 worlds' standard error, so more
# worlds cannot let a deviation through on the belief's or the value's bias
# (docs/experiments/margin_worlds.md, chosen on run seed 1's deals).
# pruning "threshold": a move stops being rolled out once it cannot clear that margin; on
# the strong bot 3.3x fewer rollouts at the same score (docs/experiments/importance_weights.md).
# importance off: weighting the worlds toward the exact posterior did not raise LBS-16's
# gain on the strong bot at 256 or 1,024 worlds (the same file); LBS-inf from 1,024 worlds
# up turns it on (`weighted_by_default`), and `--importance` anywhere.
DEFAULTS = {"delta": PAPER_DELTA, "confidence": 2.0, "verify": 0, "margin_worlds": 32,
            "pruning": "threshold", "precision": "float32", "importance": False}
RESOLVED = tuple(DEFAULTS)
# Knobs for speed and the deviation rule: `--help` lists them under their own heading.
ADVANCED = ("delta", "confidence", "verify", "margin_worlds", "importance", "pruning", "precision",
            "min_legal_fraction", "time_budget", "batch_size", "refill")


def _int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    return int(value)


def _real(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """Every knob of a search (SPARTA or LBS-k; the depth is the method's). Frozen and
    validated at construction: a bad value is a TypeError / ValueError here, never later.
    None: chosen by `resolve` for the blueprint (module docstring)."""

    rollouts: int = 256                      # sampled worlds per decision (each rolled out once per candidate move)
    budget: Optional[int] = None             # instead of rollouts: blueprint moves the search may simulate per decision (legal moves x worlds x moves per rollout); each decision takes the worlds that fit, 16 to 10,000
    belief: Optional[str] = None             # exact | grounded | learned | grounded+cf | learned+cf (default: learned+cf when a belief is trained for the blueprint, else grounded+cf)
    belief_checkpoint: Optional[str] = None  # a learned belief trained for this blueprint (lbs-pz train-belief); implies learned+cf
    value_checkpoint: Optional[str] = None   # a value trained for this blueprint (lbs-pz train-value), bootstrapping lbs-K rollouts
    allow_mismatch: bool = False             # use a belief / value checkpoint trained for another blueprint or game anyway
    seed: int = 0                            # seeds the sampled hands and the worlds' decks: the same view and seed give the same move
    delta: Optional[float] = None            # points the paired gain of a deviation must exceed (the paper's: 0.05)
    confidence: Optional[float] = None       # standard errors of the paired gain a deviation must also exceed (0: the paper's rule)
    verify: Optional[int] = None             # extra worlds on which a proposed deviation is re-measured against the blueprint's move (0: off)
    margin_worlds: Optional[int] = None      # the confidence test uses the standard error of at most this many worlds, so more worlds never loosen the margin against the belief's and the value's bias (0: off)
    importance: Optional[bool] = None        # weight each sampled world toward the exact posterior (self-normalised importance sampling): a learned or grounded belief's estimates then converge to the exact belief's as worlds grow, and world counts become effective sample sizes
    pruning: Optional[str] = None            # when a clearly worse move stops being rolled out: means | paired | threshold | off
    precision: Optional[str] = None          # a neural blueprint's rollouts inside the search: float32 | bfloat16 (its own moves stay float32; bfloat16 pays only on CPUs with fast bf16 products, e.g. AMX)
    min_legal_fraction: float = 0.1          # play the blueprint's move when fewer sampled hands than this fraction of rollouts are consistent
    time_budget: Optional[float] = None      # seconds per decision (the search stops after the batch that exceeds it)
    batch_size: int = 32                     # worlds per batch of rollouts
    refill: Optional[bool] = None            # later batches take more worlds once moves are pruned (default: for batched neural blueprints)

    def __post_init__(self):
        put = lambda name, value: object.__setattr__(self, name, value)   # noqa: E731
        for name in ("rollouts", "seed", "batch_size"):
            put(name, _int(name, getattr(self, name)))
        if self.rollouts < 1:
            raise ValueError(f"rollouts must be >= 1, got {self.rollouts}")
        if self.budget is not None:
            put("budget", _int("budget", self.budget))
            if self.budget < 1:
                raise ValueError(f"budget must be >= 1 blueprint moves, got {self.budget}")
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
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a path string or None, got {value!r}")
        put("allow_mismatch", bool(self.allow_mismatch))
        if self.delta is not None:
            put("delta", _real("delta", self.delta))
            if self.delta < 0:
                raise ValueError(f"delta must be >= 0, got {self.delta}")
        if self.confidence is not None:
            put("confidence", _real("confidence", self.confidence))
            if self.confidence < 0:
                raise ValueError(f"confidence must be >= 0 standard errors, got "
                                 f"{self.confidence}")
        if self.verify is not None:
            put("verify", _int("verify", self.verify))
            if self.verify < 0 or self.verify == 1:
                raise ValueError(f"verify must be 0 (off) or >= 2 worlds, got {self.verify}")
        if self.margin_worlds is not None:
            put("margin_worlds", _int("margin_worlds", self.margin_worlds))
            if self.margin_worlds < 0:
                raise ValueError(f"margin_worlds must be >= 0 (0: off), got {self.margin_worlds}")
        if self.pruning is not None:
            put("pruning", pruning_rule(self.pruning))
        if self.precision is not None and self.precision not in PRECISIONS:
            raise ValueError(f"precision must be float32 or bfloat16, got {self.precision!r}")
        put("min_legal_fraction", _real("min_legal_fraction", self.min_legal_fraction))
        if self.min_legal_fraction < 0:
            raise ValueError(f"min_legal_fraction must be >= 0 (above 1: always the "
                             f"blueprint's move), got {self.min_legal_fraction}")
        if self.time_budget is not None and not _real("time_budget", self.time_budget) > 0:
            raise ValueError(f"time_budget must be None or > 0 seconds, got {self.time_budget}")
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


# --- methods --------------------------------------------------------------------------------

METHOD_HELP = ("blueprint | sparta | lbs-K (K blueprint moves, then a value: the "
               "blueprint's own, --value-checkpoint, or one trained for it; e.g. lbs-1, "
               "lbs-16) | lbs-inf (rollouts to the end)")


def parse_method(method: str) -> str:
    """A method name in its one spelling (lower-cased, "lbs-016" -> "lbs-16");
    ValueError naming the choices otherwise."""
    m = method.strip().lower() if isinstance(method, str) else ""
    if m in ("blueprint", "sparta", "lbs-inf"):
        return m
    if m.startswith("lbs-") and m[4:].isascii() and m[4:].isdigit() and int(m[4:]) > 0:
        return f"lbs-{int(m[4:])}"
    raise ValueError(f"unknown method {method!r}; expected {METHOD_HELP}")


def method_depth(method: str) -> int:
    """Rollout depth of a search method (-1: to the end; SPARTA rolls out to the end)."""
    return -1 if method in ("lbs-inf", "sparta") else int(method[4:])


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


def method_of(depth: int) -> str:
    return "lbs-inf" if depth < 0 else f"lbs-{depth}"


# --- resolving a configuration for a blueprint ----------------------------------------------

@dataclasses.dataclass
class Resolved:
    """What a search runs with, every choice made: `config` has no None left among the
    `RESOLVED` knobs; `notes` say what was chosen and why, one line each."""

    belief: object
    value: object
    depth: int
    config: SearchConfig
    notes: List[str]
    depth_reason: Optional[str] = None


def _who(blueprint) -> str:
    """A blueprint's spec where it has one ("lstm:NAME"), else its name."""
    return repr(getattr(blueprint, "spec", None) or blueprint.name)


def learned_belief(blueprint, game: HanabiConfig, checkpoint: Optional[str] = None,
                   allow_mismatch: bool = False, filtered: bool = True):
    """A learned belief for `blueprint` in `game` (from `checkpoint`, else the one shipped
    for it: a clear ValueError if none ships), counterfactually filtered through the
    blueprint unless `filtered` is False."""
    if checkpoint is None:
        found = find_model("belief", blueprint_identity(blueprint), game)
        if found is None:
            raise ValueError(f"no learned belief ships for blueprint {_who(blueprint)} in "
                             f"this game: train one with `lbs-pz train-belief --blueprint "
                             f"SPEC` and pass --belief-checkpoint PATH, or use --belief "
                             f"grounded+cf")
        checkpoint = model_path(found)
    base = make_belief("learned", blueprint=blueprint, checkpoint=checkpoint,
                       allow_mismatch=allow_mismatch)
    base.check_game(game)       # a belief made for another game is refused here, not mid-game
    return FilteredBelief(base, blueprint) if filtered else base


def _belief(blueprint, game, config: SearchConfig, method: str, notes: List[str]):
    if method == "sparta":
        if config.belief not in (None, "exact"):
            raise ValueError(f"SPARTA searches with the exact belief, not {config.belief!r}")
        return make_belief("exact", blueprint=blueprint)
    kind = config.belief or ("learned+cf" if config.belief_checkpoint else None)
    if kind is not None:
        base, filtered = parse_belief(kind)
        if base.reads_checkpoint:
            return learned_belief(blueprint, game, config.belief_checkpoint,
                                  config.allow_mismatch, filtered=filtered)
        return make_belief(kind, blueprint=blueprint)
    found = find_model("belief", blueprint_identity(blueprint), game)
    if found is not None and torch_available():
        notes.append(f"belief: learned+cf (shipped {found!r}, trained for {_who(blueprint)})")
        return learned_belief(blueprint, game, model_path(found))
    why = (f"no learned belief ships for {_who(blueprint)} in this game"
           if torch_available() else NO_TORCH)
    notes.append(f"belief: grounded+cf ({why})")
    return make_belief("grounded+cf", blueprint=blueprint)


def _value(blueprint, game, config: SearchConfig, depth: int, notes: List[str]):
    """(value or None, depth, depth_reason) for a finite `depth`."""
    if depth < 0:
        return None, depth, None
    if config.value_checkpoint:
        value = CentralValue(config.value_checkpoint, blueprint=blueprint,
                             allow_mismatch=config.allow_mismatch)
        value.check_game(game)  # a value made for another game is refused here, not mid-game
        return value, depth, None
    if getattr(blueprint, "has_value", False):     # the agent takes it in its precision
        notes.append(f"value: the blueprint's own ({_who(blueprint)})")
        return None, depth, None
    found = find_model("value", blueprint_identity(blueprint), game)
    if found is not None and torch_available():
        notes.append(f"value: shipped {found!r}")
        return CentralValue(model_path(found)), depth, None
    reason = (f"LBS-{depth}: {_who(blueprint)} has no value and none ships for it in this "
              f"game{'' if torch_available() else ' (' + NO_TORCH + ')'}, so rollouts go to "
              f"the end of the game (depth -1); train one with `lbs-pz train-value "
              f"--blueprint SPEC` and pass value=CentralValue(PATH) (CLI: "
              f"--value-checkpoint PATH)")
    notes.append("depth: -1 (no value)")
    return None, -1, reason


def speed_defaults(blueprint) -> Tuple[dict, str]:
    """(settings, why): the speed settings for a blueprint whose rollouts dominate a
    search's time, and the reason `resolve` notes for them.

    - batched neural forwards (`wide_batches`: a public-LSTM net) and per-position Python
      calls (`per_position`: a user's class with `act` alone, called once per world and
      move): "threshold" pruning (a move stops being rolled out once it clearly cannot
      clear the margin over the blueprint's move; docs/experiments/python_blueprints.md).
      It is also the general default now; it stays named here so that the games a
      compare log holds under these speed settings keep their key.
    Precision stays float32: bfloat16 rollouts pay only on CPUs with fast bf16 products
    (AMX) and are slower elsewhere (1.45x per game on an AVX-512 BF16 Xeon without AMX);
    a default by CPU would make a search's moves depend on the machine
    (docs/experiments/pruning_and_precision.md).
    A rule bot's rollouts run in C and keep the general defaults."""
    if getattr(blueprint, "wide_batches", False):
        return {"pruning": "threshold"}, "its rollouts are batched neural forwards"
    if getattr(blueprint, "per_position", False):
        return {"pruning": "threshold"}, "its moves are Python calls, one per position"
    return {}, ""


def applied_speed_defaults(blueprint, game: HanabiConfig, config: SearchConfig,
                           method: str) -> dict:
    """The speed settings (`speed_defaults`) that `settings_for` applies to this search:
    those of the knobs `config` leaves unset and the manifest recommends nothing for."""
    chosen = _recommended_knobs(blueprint, game, method)
    speed, _ = speed_defaults(blueprint)
    return {name: value for name, value in speed.items()
            if getattr(config, name) is None and name not in chosen}


def recommended_for(recommended: dict, method: str) -> dict:
    """The part of a blueprint's recommended settings ({method: {setting: value}}, as
    `recommended_settings` gives them) that applies to `method`: its own entry and, for
    an LBS depth, the "lbs" entry (every depth). A recommendation for LBS-1 changes no
    game of LBS-16 or SPARTA, so a log's games of those stay valid when it is added."""
    return {key: value for key, value in recommended.items()
            if key == method or (key == "lbs" and method.startswith("lbs-"))}


def _recommended_knobs(blueprint, game: HanabiConfig, method: str) -> dict:
    """{knob: value} the manifest recommends for this blueprint's `method` in `game` (its
    "lbs" entry first, then the method's own)."""
    applying = recommended_for(recommended_settings(blueprint_identity(blueprint), game), method)
    return {**applying.get("lbs", {}), **applying.get(method, {})}


def settings_for(blueprint, game: HanabiConfig, config: SearchConfig, method: str,
                 notes: Optional[List[str]] = None) -> SearchConfig:
    """`config` with each None knob chosen (module docstring): the blueprint's recommended
    setting for `method` from the manifest, else its speed default (`speed_defaults`),
    else `DEFAULTS`. Appends to `notes` each choice that is not a general default."""
    chosen = _recommended_knobs(blueprint, game, method)
    speed, speed_why = speed_defaults(blueprint)
    filled = {}
    for name in RESOLVED:
        if getattr(config, name) is not None:
            continue
        if name in chosen:
            filled[name] = chosen[name]
            why = f"recommended for {_who(blueprint)} with {method}: `lbs-pz models`"
        elif name in speed:
            filled[name] = speed[name]
            why = speed_why
        elif name == "importance" and weighted_by_default(method, config):
            filled[name] = True
            why = "lbs-inf, 1,024 worlds or more: docs/experiments/importance_weights.md"
        else:
            filled[name] = DEFAULTS[name]
            continue
        if notes is not None:
            notes.append(f"{name}: {filled[name]!r} ({why})")
    weighted = config.importance if config.importance is not None else filled.get("importance")
    if config.margin_worlds is None and "margin_worlds" not in chosen and weighted:
        margin = weighted_margin(method, config)
        if margin is not None and margin != filled["margin_worlds"]:
            filled["margin_worlds"] = margin
            if notes is not None:
                notes.append(f"margin_worlds: {margin!r} (importance-weighted, "
                             f"{'to the end, ' if margin == 0 else ''}1,024 worlds or more: "
                             f"docs/experiments/importance_weights.md)")
    return config.replace(**filled)


def _weighted_rule_applies(config: SearchConfig) -> bool:
    """The weighted defaults were measured with a fixed world count of at least
    WEIGHTED_FROM_WORLDS (docs/experiments/importance_weights.md)."""
    return config.budget is None and config.rollouts >= WEIGHTED_FROM_WORLDS


def weighted_by_default(method: str, config: SearchConfig) -> bool:
    """Whether a search whose `importance` is unset weights its worlds: LBS-inf from
    WEIGHTED_FROM_WORLDS worlds per decision up, by the rule of
    docs/experiments/importance_weights.md (tuning deals, strong bot: weighted and
    uncapped, 4,096 worlds gained +0.17 +- 0.15 over 1,024 and +0.18 +- 0.15 over LBS-16
    at 1,024). To the end of the game there is no value to bias the returns, and the
    weights remove the belief's bias, so the margin may follow the noise. On the
    figures' deals it gained the most of any one-seat search at 1,024 worlds, but less
    at 4,096 than at 1,024 (the same file)."""
    return method == "lbs-inf" and _weighted_rule_applies(config)


def weighted_margin(method: str, config: SearchConfig) -> Optional[int]:
    """The deviation margin's world cap for an importance-weighted search, by the rule of
    docs/experiments/importance_weights.md (tuned on the strong bot at 1,024 worlds): no
    cap to the end of the game (rollouts to the end have no value bias and the weights
    remove the belief's, so the margin may follow the noise), 128 worlds for LBS-k; both
    from WEIGHTED_FROM_WORLDS worlds per decision up (where they were measured); None:
    the general default."""
    if method == "sparta" or not _weighted_rule_applies(config):
        return None
    return 0 if method == "lbs-inf" else 128


def resolve(blueprint, game: Optional[HanabiConfig], config: Optional[SearchConfig] = None,
            method: str = "lbs-16", belief=None, value=None) -> Resolved:
    """Everything a search of `method` ("sparta", "lbs-K", "lbs-inf") over `blueprint` in
    `game` runs with: `belief` / `value` objects when given, else chosen from `config`
    (module docstring); every None knob of `config` chosen. ValueError for a method,
    belief or checkpoint that cannot be used (a checkpoint trained for another blueprint
    or game is a CheckpointMismatchError unless allow_mismatch)."""
    game = HanabiConfig() if game is None else game
    config = SearchConfig() if config is None else config
    if not isinstance(config, SearchConfig):
        raise TypeError(f"config must be a SearchConfig, got {type(config).__name__}")
    method = parse_method(method)
    if method == "blueprint":
        raise ValueError("the blueprint method has no search to resolve")
    notes: List[str] = []
    if belief is None:
        belief = _belief(blueprint, game, config, method, notes)
    depth, reason = method_depth(method), None
    if value is None:
        value, depth, reason = _value(blueprint, game, config, depth, notes)
    settings = settings_for(blueprint, game, config, method, notes)
    return Resolved(belief=belief, value=value, depth=depth, config=settings, notes=notes,
                    depth_reason=reason)
