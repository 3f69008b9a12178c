"""Search methods by name, and a method as data: what compare, search-games and the web
page play.

    parse_method("LBS-016") -> "lbs-16"     the one spelling of a method name
    method_depth("lbs-16")  -> 16           its rollout depth (-1: to the end)
    MethodSpec("lbs-16", blueprint="strong", rollouts=64)
                                            a method, a blueprint spec, the searching
                                            seats and one SearchConfig (knobs by name);
                                            hashable and picklable, so that any process
                                            can build it (`lbs_pz.search.build`)

Methods: "blueprint", "sparta", "lbs-K" (K blueprint moves, then a value) and "lbs-inf"
(rollouts to the end). The blueprint is a spec string (`lbs_pz.agents.load_blueprint`:
NAME | sb3:PATH | lstm:PATH | rllib:DIR | py:MODULE_OR_FILE.py:CLASS). Everything else
is the `SearchConfig`, resolved for the blueprint by `lbs_pz.search.resolve.resolve`.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from lbs_pz.search.config import SearchConfig

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


def method_of(depth: int) -> str:
    return "lbs-inf" if depth < 0 else f"lbs-{depth}"


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

    @property
    def depth(self) -> int:
        """The method's rollout depth (`method_depth`; -1: to the end), for a search."""
        return method_depth(self.method)

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
        for name, text in (("budget", "budget {:,} moves"),
                           ("deep_worlds", "to the end from {:,} worlds"),
                           ("pruning", "pruning {}"), ("precision", "{}"),
                           ("delta", "delta {:g}"), ("confidence", "confidence {:g}"),
                           ("verify", "verify {}"), ("margin_worlds", "margin {} worlds"),
                           ("importance", "importance {}")):
            value = getattr(s, name)
            if value is not None:
                details.append(text.format(value))
        return f"{self.method} ({', '.join(details)})" if details else self.method
