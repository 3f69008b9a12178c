"""The one place that resolves a search configuration for a blueprint.

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
from typing import TYPE_CHECKING, List, Optional, Tuple, cast

from lbs_pz.agents import blueprint_identity
from lbs_pz.engine import HanabiConfig
from lbs_pz.models import find_model, path as model_path, recommended_settings
from lbs_pz.optional import install_hint, torch_available
from lbs_pz.search.beliefs import Belief, FilteredBelief, make_belief, parse_belief
from lbs_pz.search.config import DEFAULTS, RESOLVED, SearchConfig
from lbs_pz.search.methods import method_depth, parse_method
from lbs_pz.search.value import CentralValue

if TYPE_CHECKING:           # imports torch: only for the checker here
    from lbs_pz.search.beliefs.learned import LearnedBelief

NO_TORCH = ("torch is not installed; learned beliefs and values need the [torch] extra: "
            + install_hint("torch"))
# the weighted defaults (`weighted_by_default`, `measured_margin`) apply from here
WEIGHTED_FROM_WORLDS = 1024
# and SPARTA's margin follows the noise from here (`measured_margin`)
SPARTA_UNCAPPED_FROM_WORLDS = 256


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
                   allow_mismatch: bool = False, filtered: bool = True) -> Belief:
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
    base = cast("LearnedBelief", make_belief("learned", blueprint=blueprint,
                                             checkpoint=checkpoint,
                                             allow_mismatch=allow_mismatch))
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


def recommended_knobs(recommended: dict, method: str) -> dict:
    """{knob: value} of a blueprint's recommended settings that apply to `method`
    (`recommended_for`): its "lbs" entry first, then the method's own over it."""
    applying = recommended_for(recommended, method)
    return {**applying.get("lbs", {}), **applying.get(method, {})}


def _recommended_knobs(blueprint, game: HanabiConfig, method: str) -> dict:
    """{knob: value} the manifest recommends for this blueprint's `method` in `game`."""
    return recommended_knobs(recommended_settings(blueprint_identity(blueprint), game), method)


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
    if config.margin_worlds is None and "margin_worlds" not in chosen:
        margin, why = measured_margin(method, config, bool(weighted))
        if margin is not None and margin != filled["margin_worlds"]:
            filled["margin_worlds"] = margin
            if notes is not None:
                notes.append(f"margin_worlds: {margin!r} ({why})")
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


def measured_margin(method: str, config: SearchConfig,
                    weighted: bool) -> Tuple[Optional[int], str]:
    """(the deviation margin's world cap, why) where a rule measured one for this search at
    a fixed world count, else (None, ""): the general default. A search whose estimates
    have no bias may let its margin follow the noise (0: no cap): SPARTA (the exact
    belief, rollouts to the end) from SPARTA_UNCAPPED_FROM_WORLDS worlds per decision up
    (docs/experiments/sparta_margin.md: +0.21 +- 0.13 over the capped margin at 256
    worlds, tuning deals), an importance-weighted search to the end from
    WEIGHTED_FROM_WORLDS up (the weights remove the belief's bias); a weighted LBS-k,
    whose value stays biased, caps it at 128 worlds from WEIGHTED_FROM_WORLDS up
    (docs/experiments/importance_weights.md)."""
    if config.budget is not None:
        return None, ""
    if method == "sparta":
        if config.rollouts < SPARTA_UNCAPPED_FROM_WORLDS:
            return None, ""
        return 0, (f"SPARTA: the exact belief to the end, {SPARTA_UNCAPPED_FROM_WORLDS} worlds "
                   f"or more: docs/experiments/sparta_margin.md")
    if not weighted or not _weighted_rule_applies(config):
        return None, ""
    margin = 0 if method == "lbs-inf" else 128
    return margin, (f"importance-weighted, {'to the end, ' if margin == 0 else ''}1,024 worlds "
                    f"or more: docs/experiments/importance_weights.md")


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
