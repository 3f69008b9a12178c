"""Agents written against HLE's `rl_env` as blueprints: `hle:FILE.py:CLASS`, `hle:module.Class`.

The Hanabi Learning Environment's agents (`hanabi_learning_environment.rl_env.Agent`: HLE's
own `SimpleAgent` and `RandomAgent`, and the many written against its interface) act on
one seat's observation dict and return a move dict or a move id. `load_hle_blueprint(spec)`
loads such a class, and `HLEAgentAdapter` gives it what HLE would, so that every command
(`lbs-pz eval/compare --blueprint hle:...`) and LBS search run it unchanged:

    hle:hanabi_learning_environment.agents.simple_agent.SimpleAgent    (a module's class)
    hle:hanabi_learning_environment.agents.simple_agent:SimpleAgent    (the same)
    hle:my_agents.py:MyAgent                                          (a .py file's class)

The class is instantiated the way HLE's own runner (examples/rl_env_example.py) does it:
`CLASS(config)` with the agent config `{'players': N}` (N: the game's number of players)
when its constructor takes one positional argument, else `CLASS()`; one instance per
number of players (made on the first game of that size), shared by every seat. A spec
naming an instance rather than a class uses that instance for every game. The file or
module is loaded by the code `py:` specs use (`resolve_spec_target`). HLE is not a
dependency of lbs_pz, and lbs_pz never imports it: the adapter builds HLE's dicts itself,
and HLE is imported only by the module a spec names (HLE's own agents, or a user's file
that imports HLE's `rl_env`), when that spec is loaded; a spec naming HLE's modules where
HLE is not installed is a BlueprintError saying how to install it.

The observation (`hle_observation(state, seat)`): a dict with exactly the fields, types and
order of HLE's `rl_env.HanabiEnv._extract_dict_from_backend`, built from `state.view(seat)`:

    current_player         int, the absolute seat to move
    current_player_offset  int, (current_player - seat) mod players
    life_tokens, information_tokens, num_players, deck_size   int
    fireworks              dict color letter -> cards played, {'R': 0, 'Y': 0, ...} for the
                           game's colors, in HLE's order R Y G W B
    legal_moves            list of move dicts in move-id order (empty unless seat is to move):
                           {'action_type': 'DISCARD' | 'PLAY', 'card_index': i},
                           {'action_type': 'REVEAL_COLOR', 'target_offset': o, 'color': 'R'},
                           {'action_type': 'REVEAL_RANK', 'target_offset': o, 'rank': r}
                           (o: the target's seat relative to the mover, 1 = next; r from 0)
    legal_moves_as_int     list of int, the same moves' ids (HLE's move uids = this engine's
                           move ids)
    observed_hands         list per relative seat (0 = the seat itself, 1 = the next...) of
                           card dicts {'color': 'R', 'rank': 0}; the seat's own cards are
                           {'color': None, 'rank': -1} (visible only with the "seer"
                           observation type)
    discard_pile           list of card dicts, oldest first
    card_knowledge         list per relative seat, per card: {'color': 'R' or None, 'rank':
                           int or None}, the directly hinted color / rank (None: not hinted;
                           always None with the "minimal" observation type)
    vectorized             list of int (0/1), length config.encoding_size (658 for 2 players):
                           HLE's canonical encoding of the seat's observation
    pyhanabi               None: HLE's `HanabiObservation` object cannot be made without an
                           HLE game holding the hidden cards, so an agent that reads it
                           (rather than the dict's fields) is not supported

Every field except `vectorized` is read from `state.view(seat)` (the seat's view, which
holds nothing it may not see). `vectorized` is the engine's own canonical encoder
(`HanabiState.encode(seat)`), which reads the seat's observation only, exactly as HLE's
encoder reads its `HanabiObservation` (tests/engine/test_hle_differential.py checks the two
bit for bit; tests/agents/test_hle_blueprint.py checks that the whole dict, `vectorized`
included, is the one HLE builds, and that none of it changes when the seat's own hand and
the deck are re-dealt consistently).

The move the agent returns: a move dict as above (HLE's `rl_env` accepts the same, extra
keys ignored; `color` a letter of the game's colors, `rank` an int from 0, `card_index` and
`target_offset` ints in range) or a move id (an int); anything else, a dict that names no
move of this game, an illegal move or an exception raised by the agent is a
`BlueprintError` naming the blueprint and the position.

As a blueprint (`HLEBlueprint`, a `PythonBlueprint`): batched `act_batch` / `rollout` over a
`HanabiBatch`, the per-call time limit and the contract checks of `py:` blueprints, one
Python call per world and move. `deterministic` and `has_private_memory` are the agent's
attributes of those names where it has them, else True and False as for `py:` (the move
is taken to be a function of the seat's observation) -- except HLE's own `RandomAgent`,
which draws from Python's `random` and is declared non-deterministic. A blueprint so loaded
pickles as its spec (worker processes reload it).

>>> from lbs_pz.engine import HanabiState, HanabiConfig
>>> obs = hle_observation(HanabiState(HanabiConfig(), seed=1), 0)
>>> obs["observed_hands"][0][0], len(obs["vectorized"]), obs["fireworks"]
({'color': None, 'rank': -1}, 658, {'R': 0, 'Y': 0, 'G': 0, 'W': 0, 'B': 0})
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, cast

import numpy as np

from lbs_pz.agents.base import BlueprintError, describe_position, legal_text
from lbs_pz.agents.python_blueprint import (DEFAULT_TIME_LIMIT, PythonBlueprint,
                                            resolve_spec_target, source_fingerprint)
from lbs_pz.checks import is_int
from lbs_pz.engine import HanabiConfig, HanabiState, Move, decode_move, encode_move
from lbs_pz.engine.config import COLOR_CHARS

HLE_PACKAGE = "hanabi_learning_environment"
HLE_INSTALL = "pip install hanabi-learning-environment"
# HLE's own agents known not to be a function of the observation
NON_DETERMINISTIC = {(f"{HLE_PACKAGE}.agents.random_agent", "RandomAgent")}
ACTION_TYPES = {"DISCARD": "discard", "PLAY": "play", "REVEAL_COLOR": "reveal_color",
                "REVEAL_RANK": "reveal_rank"}
_KIND_NAMES = {kind: name for name, kind in ACTION_TYPES.items()}


# --- observations ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _tables(config: HanabiConfig) -> Tuple[Tuple[Tuple[Tuple[str, Any], ...], ...],
                                           Tuple[Tuple[str, int], ...]]:
    """Per variant: every move id's dict items (HLE's `HanabiMove.to_dict` order), and
    every card id's (color letter, rank)."""
    moves = []
    for m in range(config.num_moves):
        mv = decode_move(config, m)
        items: List[Tuple[str, Any]] = [("action_type", _KIND_NAMES[mv.kind])]
        if mv.kind in ("discard", "play"):
            items.append(("card_index", mv.card_index))
        elif mv.kind == "reveal_color":
            items += [("target_offset", mv.target_offset),
                      ("color", COLOR_CHARS[cast(int, mv.color)])]
        else:
            items += [("target_offset", mv.target_offset), ("rank", mv.rank)]
        moves.append(tuple(items))
    cards = tuple((COLOR_CHARS[c // config.ranks], c % config.ranks)
                  for c in range(config.num_card_types))
    return tuple(moves), cards


def hle_move_dict(config: HanabiConfig, move_id: int) -> Dict[str, Any]:
    """The move dict HLE's `rl_env` gives for a move id (a new dict)."""
    return dict(_tables(config)[0][move_id])


def hle_observation(state: HanabiState, seat: Optional[int] = None) -> Dict[str, Any]:
    """The observation dict HLE's `rl_env` gives seat `seat` (default: the player to move)
    in `state`: every field of `_extract_dict_from_backend`, read from `state.view(seat)`
    (`vectorized`: the seat's canonical encoding; `pyhanabi`: None). Fields and formats in
    the module docstring."""
    seat = state.current_player if seat is None else seat
    view = state.view(seat)
    config = state.config
    players = config.players
    moves, cards = _tables(config)
    order = [(seat + k) % players for k in range(players)]

    def card(c: Optional[int]) -> Dict[str, Any]:
        if c is None:
            return {"color": None, "rank": -1}
        color, rank = cards[c]
        return {"color": color, "rank": rank}

    return {
        "current_player": view.current_player,
        "current_player_offset": (view.current_player - seat) % players,
        "life_tokens": view.life_tokens,
        "information_tokens": view.information_tokens,
        "num_players": players,
        "deck_size": view.deck_size,
        "fireworks": {COLOR_CHARS[c]: view.fireworks[c] for c in range(config.colors)},
        "legal_moves": [dict(moves[m]) for m in view.legal_moves],
        "legal_moves_as_int": list(view.legal_moves),
        "observed_hands": [[card(c) for c in view.hands[p]] for p in order],
        "discard_pile": [card(c) for c in view.discard_pile],
        "card_knowledge": [
            [{"color": None if k.hinted_color is None else COLOR_CHARS[k.hinted_color],
              "rank": k.hinted_rank} for k in view.knowledge[p]]
            for p in order],
        "vectorized": state.encode(seat).astype(np.int8).tolist(),
        "pyhanabi": None,
    }


# --- moves ----------------------------------------------------------------------------------

def hle_move_id(config: HanabiConfig, move: Any) -> int:
    """The move id of what an HLE agent returned: a move dict (HLE's `rl_env` format) or a
    move id. ValueError saying what is wrong for anything that names no move of `config`
    (whether it is legal is the caller's check)."""
    if is_int(move):
        if not 0 <= int(move) < config.num_moves:
            raise ValueError(f"move id {int(move)} is not in [0, {config.num_moves})")
        return int(move)
    if not isinstance(move, Mapping):
        raise ValueError("an HLE agent returns a move dict ({'action_type': 'PLAY', "
                         "'card_index': 0}, ...) or a move id (an int)")
    action = move.get("action_type")
    kind = ACTION_TYPES.get(action) if isinstance(action, str) else None
    if kind is None:
        raise ValueError(f"action_type {action!r} is not one of {', '.join(ACTION_TYPES)}")

    def field(key: str, lo: int, below: int) -> int:
        if key not in move:
            raise ValueError(f"a {action} move needs {key!r}")
        value = move[key]
        if not is_int(value) or not lo <= int(value) < below:
            raise ValueError(f"{key} must be an int in [{lo}, {below}), got {value!r}")
        return int(value)

    if kind in ("discard", "play"):
        return encode_move(config, Move(kind, card_index=field("card_index", 0,
                                                                 config.hand_size)))
    offset = field("target_offset", 1, config.players)
    if kind == "reveal_rank":
        return encode_move(config, Move(kind, target_offset=offset,
                                        rank=field("rank", 0, config.ranks)))
    letters = COLOR_CHARS[:config.colors]
    color = move.get("color")
    if not isinstance(color, str) or len(color) != 1 or color not in letters:
        raise ValueError(f"color must be one of the letters {', '.join(letters)}, "
                         f"got {color!r}")
    return encode_move(config, Move(kind, target_offset=offset, color=letters.index(color)))


# --- the adapter ----------------------------------------------------------------------------

def _takes_config(cls: type) -> bool:
    """True if `cls(config)` binds (HLE's agents take the agent config, `{'players': N}`),
    else False (it is then instantiated without arguments)."""
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        return True
    try:
        signature.bind({"players": 2})
        return True
    except TypeError:
        return False


class HLEAgentAdapter:
    """An HLE `rl_env` agent as an object with `name` and `act(state, seat=None)` (module
    docstring). `factory(players)` makes the agent for a game of that many players (called
    once per size; `agent(players)` returns it; `made(players)` says how, for errors);
    `name` shows in tables and errors. BlueprintError if the factory raises or makes an
    object without `act` (tried for 2 players at once)."""

    def __init__(self, factory: Callable[[int], Any], name: str,
                 made: Optional[Callable[[int], str]] = None):
        self.factory, self.name = factory, name
        self.made = made or (lambda players: f"the agent for {players} players")
        self._agents: Dict[int, Any] = {}
        probe = self.agent(2)
        cls = type(probe)
        known = (cls.__module__, cls.__qualname__) in NON_DETERMINISTIC
        self.deterministic = bool(getattr(probe, "deterministic", not known))
        self.has_private_memory = bool(getattr(probe, "has_private_memory", False))

    def agent(self, players: int) -> Any:
        """The agent for games of `players` players (made on first use)."""
        found = self._agents.get(players)
        if found is None:
            try:
                found = self.factory(players)
            except Exception as err:
                raise BlueprintError(f"blueprint {self.name!r}: {self.made(players)} raised "
                                     f"{type(err).__name__}: {err}") from None
            self._agents[players] = found
            if not callable(getattr(found, "act", None)):
                raise BlueprintError(f"blueprint {self.name!r}: {self.made(players)} made a "
                                     f"{type(found).__name__}, which has no act method; an HLE "
                                     f"agent has act(observation) returning a move dict or a "
                                     f"move id")
        return found

    def act(self, state: HanabiState, seat: Optional[int] = None) -> int:
        """The agent's move for `seat` (the player to move): its `act` on the observation
        dict HLE would give it, converted to a move id (not checked for legality here:
        the PythonBlueprint around the adapter does that, naming the position)."""
        seat = state.current_player if seat is None else seat
        observation = hle_observation(state, seat)
        agent = self.agent(state.config.players)
        try:
            move = agent.act(observation)
        except Exception as err:
            hint = (" (its observation's 'pyhanabi' is None here: an agent must read the "
                    "dict's other fields)" if "NoneType" in str(err) else "")
            raise BlueprintError(f"blueprint {self.name!r}: the HLE agent's act raised "
                                 f"{type(err).__name__}: {err}{hint}, in "
                                 f"{describe_position(state)}") from err
        try:
            return hle_move_id(state.config, move)
        except ValueError as err:
            raise BlueprintError(f"blueprint {self.name!r}: the HLE agent's act returned "
                                 f"{move!r}, which is not a move of this game: {err}; in "
                                 f"{describe_position(state)}; legal moves: "
                                 f"{legal_text(state)}") from None

    def __repr__(self) -> str:
        return f"<HLEAgentAdapter {self.name!r}>"


class HLEBlueprint(PythonBlueprint):
    """A PythonBlueprint around an `HLEAgentAdapter`; one loaded from a spec pickles as
    (spec, time_limit)."""

    def __reduce__(self):
        if self.spec is not None:
            return (load_hle_blueprint, (self.spec, self.time_limit))
        return object.__reduce__(self)

    def __repr__(self) -> str:
        return f"<HLEBlueprint {self.name!r}{'' if self.spec is None else ' of ' + self.spec}>"


# --- hle: specs -----------------------------------------------------------------------------

def hle_spec(spec: str) -> str:
    """`spec` with a dotted `hle:module.Class` written as `hle:module:Class` (a file or a
    spec with a colon after its prefix unchanged)."""
    spec = spec.strip()
    rest = spec.partition(":")[2]
    if ":" in rest or rest.endswith(".py") or "/" in rest or "." not in rest:
        return spec
    module, _, name = rest.rpartition(".")
    return f"hle:{module}:{name}"


def load_hle_blueprint(spec: str,
                       time_limit: Optional[float] = DEFAULT_TIME_LIMIT) -> HLEBlueprint:
    """The blueprint an `hle:FILE.py:CLASS`, `hle:module:CLASS` or `hle:module.CLASS` spec
    names (module docstring): `spec` set to its canonical form `hle:TARGET:CLASS`,
    `fingerprint` to the sha256 of the class's source file, the per-call `time_limit`
    (seconds, None: none). BlueprintError naming the spec when it cannot be loaded (a
    missing file or class, a constructor that raises, an object without act; HLE's own
    modules named where HLE is not installed: the message says how to install it)."""
    spec = hle_spec(spec)
    try:
        found, canonical, source = resolve_spec_target(spec, "hle")
    except BlueprintError as err:
        if f"No module named '{HLE_PACKAGE}" in str(err):
            raise BlueprintError(f"{err}: the Hanabi Learning Environment is not installed "
                                 f"({HLE_INSTALL})") from None
        raise
    name = getattr(found, "name", None)
    if not isinstance(name, str) or not name:
        name = found.__name__ if isinstance(found, type) else type(found).__name__
    factory: Callable[[int], Any]
    made: Callable[[int], str]
    if isinstance(found, type):
        cls = found
        if _takes_config(cls):
            def factory(players: int) -> Any:
                return cls({"players": players})

            def made(players: int) -> str:
                return f"{cls.__name__}({{'players': {players}}})"
        else:
            def factory(players: int) -> Any:
                return cls()

            def made(players: int) -> str:
                return f"{cls.__name__}() (its constructor takes no config)"
    else:
        instance = found

        def factory(players: int) -> Any:
            return instance

        def made(players: int) -> str:
            return f"the object {name!r}"
    try:
        adapter = HLEAgentAdapter(factory, name, made)
    except BlueprintError as err:
        raise BlueprintError(f"blueprint spec {spec!r}: {err}") from None
    bp = HLEBlueprint(adapter, time_limit=time_limit)
    bp.spec = canonical
    bp.fingerprint = source_fingerprint(found, source)
    return bp
