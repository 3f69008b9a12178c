"""A search method by name, buildable in any process: what compare, search-games and the
web page play.

    MethodSpec("lbs-16", blueprint="strong", rollouts=64)   a method, a blueprint spec,
                                                            the searching seats and one
                                                            SearchConfig (knobs by name)
    build_agent(spec, game) -> (blueprint, searcher or None)
    describe(spec, game)    -> what the defaults chose, one line each
    made_with(spec, game)   -> the files its games depend on (a log keeps them per game)

Methods: "blueprint", "sparta", "lbs-K" (K blueprint moves, then a value) and "lbs-inf"
(rollouts to the end). The blueprint is a spec string (`lbs_pz.agents.load_blueprint`:
NAME | sb3:PATH | lstm:PATH | rllib:DIR | py:MODULE_OR_FILE.py:CLASS). Everything else
is the `SearchConfig`, resolved for the blueprint by `lbs_pz.search.config.resolve`.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from typing import List, Optional, Tuple

from lbs_pz.agents import blueprint_identity, load_blueprint
from lbs_pz.agents.base import file_sha256
from lbs_pz.engine import HanabiConfig
from lbs_pz.models import find_model, path as model_path, recommended_settings
from lbs_pz.optional import torch_available
from lbs_pz.search.agents import LBSAgent, SpartaAgent
from lbs_pz.search.config import (SearchConfig, applied_speed_defaults, method_depth,
                                  parse_method, recommended_for)

SEARCH_FIELDS = tuple(f.name for f in dataclasses.fields(SearchConfig))


@dataclasses.dataclass(frozen=True, init=False)
class MethodSpec:
    """A method and everything needed to build it in any process (hashable, picklable).

    MethodSpec(method, blueprint="strong", search_seats=(0,), search=SearchConfig(),
    **knobs): knobs are SearchConfig fields, applied over `search`. The "blueprint"
    method keeps the default SearchConfig whatever is given (it searches nothing), so
    that its games in a compare log are shared by runs of any search settings."""

    method: str
    blueprint: str
    search_seats: tuple
    search: SearchConfig

    def __init__(self, method: str, blueprint: str = "strong", search_seats=(0,),
                 search: Optional[SearchConfig] = None, **knobs):
        if search is not None and not isinstance(search, SearchConfig):
            raise TypeError(f"search must be a SearchConfig, got {type(search).__name__}")
        if not isinstance(blueprint, str):
            raise TypeError(f"blueprint must be a spec string, got {type(blueprint).__name__}")
        object.__setattr__(self, "method", parse_method(method))
        object.__setattr__(self, "blueprint", blueprint)
        object.__setattr__(self, "search_seats", tuple(search_seats))
        search = (search or SearchConfig()).replace(**knobs)     # validated even if unused
        if self.method == "blueprint":   # it searches nothing: one log key whatever the knobs
            search = SearchConfig()
        object.__setattr__(self, "search", search)

    def __getattr__(self, name):      # spec.rollouts, spec.delta ...: the search's knobs
        if name in SEARCH_FIELDS:
            return getattr(self.search, name)
        raise AttributeError(name)

    def to_dict(self) -> dict:
        """A flat JSON-ready dict (a compare log's key): method, blueprint, search_seats
        and every SearchConfig field."""
        return {"method": self.method, "blueprint": self.blueprint,
                "search_seats": list(self.search_seats), **self.search.to_dict()}

    @classmethod
    def from_dict(cls, fields: dict) -> "MethodSpec":
        """The MethodSpec of `to_dict`'s output; TypeError / ValueError otherwise."""
        if not isinstance(fields, dict) or not isinstance(fields.get("method"), str):
            raise TypeError("a method spec is a dict with a 'method' string")
        fields = dict(fields)
        method = fields.pop("method")
        seats = fields.pop("search_seats", (0,))
        if not isinstance(seats, (list, tuple)):
            raise TypeError(f"search_seats must be a list, got {seats!r}")
        return cls(method, blueprint=fields.pop("blueprint", "strong"),
                   search_seats=tuple(seats), **fields)

    def label(self) -> str:
        """The method with what differs from its defaults, e.g. "lbs-16 (learned+cf,
        delta 0.5)"."""
        if self.method == "blueprint":
            return self.method
        s, details = self.search, []
        if self.method != "sparta":
            belief = s.belief or ("learned+cf" if s.belief_checkpoint else "default belief")
            details.append(f"{belief}: {s.belief_checkpoint}" if s.belief_checkpoint
                           else belief)
            if s.value_checkpoint and self.method != "lbs-inf":
                details.append(f"value {s.value_checkpoint}")
        if self.search_seats != (0,):
            details.append(f"seats {','.join(str(p) for p in self.search_seats)}")
        for name, text in (("budget", "budget {:,} moves"), ("pruning", "pruning {}"),
                           ("precision", "{}"),
                           ("delta", "delta {:g}"), ("confidence", "confidence {:g}"),
                           ("verify", "verify {}"), ("margin_worlds", "margin {} worlds"),
                           ("importance", "importance {}")):
            value = getattr(s, name)
            if value is not None:
                details.append(text.format(value))
        return f"{self.method} ({', '.join(details)})" if details else self.method


def build_agent(spec: MethodSpec, config: Optional[HanabiConfig] = None) -> Tuple[object, object]:
    """(blueprint, searcher or None) for `spec` in the game `config` (default 2p)."""
    config = HanabiConfig() if config is None else config
    blueprint = load_blueprint(spec.blueprint)
    if spec.method == "blueprint":
        return blueprint, None
    if spec.method == "sparta":
        return blueprint, SpartaAgent(blueprint, config=spec.search, game=config)
    return blueprint, LBSAgent(blueprint, config=spec.search, depth=method_depth(spec.method),
                               game=config)


def describe(spec: MethodSpec, config: HanabiConfig) -> List[str]:
    """Builds the agent of `spec` (so a bad blueprint, belief or checkpoint fails here,
    before any game) and returns what its defaults chose, one line each."""
    with warnings.catch_warnings():     # the notes below say it
        warnings.simplefilter("ignore")
        _, searcher = build_agent(spec, config)
    notes = list(getattr(searcher, "defaults", []) or [])
    reason = getattr(searcher, "depth_reason", None)
    return notes + ([reason] if reason else [])


def made_with(spec: MethodSpec, config: HanabiConfig) -> dict:
    """What the games of `spec` in `config` depend on beyond the spec itself, as JSON:
    the blueprint's fingerprint and, for a search, the settings the manifest recommends
    for its method (`recommended_for`), the speed settings chosen for the blueprint's
    kind (`applied_speed_defaults`, omitted when none) and the sha256 of each model file
    it can load: a checkpoint the spec names, else the belief and the value that ship
    for the blueprint and variant (the ones `resolve` picks when the spec leaves them
    unset). The same spec made with other files (a model shipped or retrained since, a
    blueprint file overwritten) or other speed defaults plays other games: a compare log
    stores this with each game and reuses a game only under the same value. Loads the
    blueprint; reads the manifest and hashes files."""
    blueprint = load_blueprint(spec.blueprint)
    identity = blueprint_identity(blueprint)
    out = {"blueprint": identity["fingerprint"] or identity["spec"]}
    if spec.method == "blueprint":
        return out
    out["recommended"] = recommended_for(recommended_settings(identity, config), spec.method)
    speed = applied_speed_defaults(blueprint, config, spec.search, spec.method)
    if speed:
        out["speed"] = speed
    if spec.method == "sparta":
        return out
    search = spec.search
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
