"""A `MethodSpec` built into agents, once per process: what compare, search-games, improve
and the web page play with.

    build_agent(spec, game)         -> (blueprint, searcher or None), built anew
    built_agents(spec, game, seat)  -> the same, built once per process and seat, reused
    describe(spec, game)            -> what the defaults chose, one line each
    made_with(spec, game)           -> the files its games depend on (a log keeps them per game)

A run describes its specs, fingerprints them (`made_with`) and plays them in the same
process with one build of each: the blueprint is loaded and the agent resolved once.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, List, Optional, Tuple

from lbs_pz.agents import Blueprint, blueprint_identity, load_blueprint
from lbs_pz.agents.base import file_sha256
from lbs_pz.engine import HanabiConfig
from lbs_pz.models import find_model, path as model_path, recommended_settings
from lbs_pz.optional import torch_available
from lbs_pz.search.agents import LBSAgent, SearchAgent, SpartaAgent
from lbs_pz.search.config import DEFAULTS, SearchConfig
from lbs_pz.search.methods import MethodSpec, method_depth
from lbs_pz.search.resolve import (applied_speed_defaults, measured_margin, recommended_for,
                                   recommended_knobs)

# (spec, game, seat, file stamps) -> (blueprint, searcher)
_BUILT: Dict[tuple, Tuple[Blueprint, Optional[SearchAgent]]] = {}


def build_agent(spec: MethodSpec, config: Optional[HanabiConfig] = None,
                ) -> Tuple[Blueprint, Optional[SearchAgent]]:
    """(blueprint, searcher or None) for `spec` in the game `config` (default 2p), loaded
    and resolved anew."""
    config = HanabiConfig() if config is None else config
    blueprint = load_blueprint(spec.blueprint)
    if spec.method == "blueprint":
        return blueprint, None
    if spec.method == "sparta":
        return blueprint, SpartaAgent(blueprint, config=spec.search, game=config)
    return blueprint, LBSAgent(blueprint, config=_seats_search(spec), depth=spec.depth,
                               game=config)


def _several_seats(spec: MethodSpec) -> bool:
    return spec.search_seats == ("all",) or len(spec.search_seats) > 1


def _seats_search(spec: MethodSpec) -> SearchConfig:
    """The spec's SearchConfig for its searchers: a budget's rollouts to the end
    (`deep_worlds`) were measured with one seat searching; with several, each searcher's
    partner leaves the blueprint's moves its rollouts and belief assume, and the
    to-the-end decisions lost (docs/experiments/highest_score.md), so an unset
    `deep_worlds` is 0 there."""
    search = spec.search
    if search.budget is not None and search.deep_worlds is None and _several_seats(spec):
        return search.replace(deep_worlds=0)
    return search


def first_searching_seat(spec: MethodSpec) -> Optional[int]:
    """The seat whose agent `describe` and `made_with` share with the games (None: the
    blueprint method searches at no seat)."""
    if spec.method == "blueprint":
        return None
    return 0 if spec.search_seats == ("all",) else int(spec.search_seats[0])


def built_agents(spec: MethodSpec, config: Optional[HanabiConfig] = None,
                 seat: Optional[int] = -1) -> Tuple[Blueprint, Optional[SearchAgent]]:
    """`build_agent(spec, config)`, built once per process, game and `seat` (each
    searching seat has its own searcher: it follows the game with its own belief; -1:
    `first_searching_seat`) and reused across games. A file the spec names (the
    blueprint's, a belief or value checkpoint) rewritten since is loaded again. LBS's
    warnings about its defaults are silenced here: `describe` reports them."""
    config = HanabiConfig() if config is None else config
    key = _key(spec, config, first_searching_seat(spec) if seat == -1 else seat)
    if key not in _BUILT:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _BUILT[key] = build_agent(spec, config)
    return _BUILT[key]


def _key(spec: MethodSpec, config: HanabiConfig, seat: Optional[int]) -> tuple:
    return spec, config, seat, _file_stamps(spec)


def _file_stamps(spec: MethodSpec) -> tuple:
    """(path, mtime_ns, size) of each existing file or folder the spec names: the parts of
    its blueprint spec ("lstm:PATH", "py:FILE.py:CLASS", ...) and its checkpoints."""
    names = spec.blueprint.split(":") + [spec.search.belief_checkpoint or "",
                                         spec.search.value_checkpoint or ""]
    stamps = []
    for name in names:
        try:
            st = os.stat(name) if name else None
        except (OSError, ValueError):
            continue
        if st is not None:
            stamps.append((name, st.st_mtime_ns, st.st_size))
    return tuple(stamps)


def describe(spec: MethodSpec, config: HanabiConfig) -> List[str]:
    """What the defaults of `spec`'s agent chose, one line each; the agent is built here
    (`built_agents`), so a bad blueprint, belief or checkpoint fails before any game."""
    searcher = built_agents(spec, config)[1]
    notes = list(getattr(searcher, "defaults", []) or [])
    reason = getattr(searcher, "depth_reason", None)
    return notes + ([reason] if reason else [])


def made_with(spec: MethodSpec, config: HanabiConfig) -> dict:
    """What the games of `spec` in `config` depend on beyond the spec itself, as JSON:
    the blueprint's fingerprint and, for a search, the settings the manifest recommends
    for its method (`recommended_for`), the speed settings chosen for the blueprint's
    kind (`applied_speed_defaults`, omitted when none), SPARTA's margin where a measured
    rule sets it (`measured_margin`), and the sha256 of each model file it can load: a
    checkpoint the spec names, else the belief and the value that ship for the blueprint
    and variant (the ones `resolve` picks when the spec leaves them unset). The same spec
    made with other files (a model shipped or retrained since, a blueprint file
    overwritten), other speed defaults or another margin rule plays other games: a compare log
    stores this with each game and reuses a game only under the same value. Takes the
    blueprint `built_agents` loaded for the spec's first searching seat, if it did (else
    loads it, building nothing more); reads the manifest and hashes files."""
    built = _BUILT.get(_key(spec, config, first_searching_seat(spec)))
    blueprint = built[0] if built is not None else load_blueprint(spec.blueprint)
    identity = blueprint_identity(blueprint)
    out: Dict[str, Any] = {"blueprint": identity["fingerprint"] or identity["spec"]}
    if spec.method == "blueprint":
        return out
    out["recommended"] = recommended_for(recommended_settings(identity, config), spec.method)
    speed = applied_speed_defaults(blueprint, config, spec.search, spec.method)
    if speed:
        out["speed"] = speed
    if spec.method == "sparta":
        # SPARTA's games depend on no model file, but its margin on a measured rule; a
        # game played before the rule held none, so it is stale and played again
        margin, _ = measured_margin("sparta", spec.search, weighted=False)
        if margin is not None and spec.search.margin_worlds is None \
                and "margin_worlds" not in out["recommended"].get("sparta", {}):
            out["margin_worlds"] = margin
        return out
    search = _seats_search(spec)
    if search.budget is not None and search.deep_worlds is None and DEFAULTS["deep_worlds"] \
            and method_depth(spec.method) > 0 \
            and "deep_worlds" not in recommended_knobs(out["recommended"], spec.method):
        # a budget's games depend on its depth rule (docs/experiments/budget_depth.md)
        out["deep_worlds"] = DEFAULTS["deep_worlds"]
    if search.belief_checkpoint:
        out["belief"] = _file_digest(search.belief_checkpoint)
    elif search.belief is None:
        out["belief"] = _shipped_digest("belief", identity, config)
    if method_depth(spec.method) > 0 and not getattr(blueprint, "has_value", False):
        out["value"] = _file_digest(search.value_checkpoint) if search.value_checkpoint \
            else _shipped_digest("value", identity, config)
    return out


def _file_digest(name_or_path: str) -> Optional[str]:
    """sha256 of a checkpoint named by path or as a shipped model (None: no such file)."""
    for candidate in (name_or_path, model_path(name_or_path)):
        if os.path.isfile(candidate):
            return file_sha256(candidate)
    return None


def _shipped_digest(kind: str, identity: dict, config: HanabiConfig) -> Optional[str]:
    if not torch_available():           # `resolve` loads no shipped model without torch
        return None
    found = find_model(kind, identity, config)
    return None if found is None else _file_digest(found)
