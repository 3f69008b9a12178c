"""Game records in the hanab.live JSON replay format (format version 3).

    {"players": [...], "deck": [{"suitIndex": s, "rank": r}, ...], "actions": [...],
     "options": {"variant": ...}, "firstPlayer": p, "config": {...}}

Deck: the dealing order, ranks from 1. Actions: type 0 play / 1 discard with `target` =
the card's position in the deck; type 2 color clue / 3 rank clue with `target` = the
receiving seat and `value` = suit index / rank (from 1). Suit indices are hanab.live's:
its "No Variant" suits are Red, Yellow, Green, Blue, Purple where the engine's (HLE's)
colors are R, Y, G, W, B, so the engine's B is hanab.live's Blue (3) and its W is Purple
(4), the one name that cannot agree (`hanablive_suit`; with fewer colors the indices are
the same). `firstPlayer` is written only when
the first mover is not seat 0, and `config` keeps the lbs_pz variant so that non-standard
games (hand sizes, tokens, fewer ranks) round-trip exactly.
"""

from __future__ import annotations

import json
import reprlib
from collections import Counter
from typing import Optional, Sequence, cast

from lbs_pz.checks import as_int, is_int
from lbs_pz.engine.config import HanabiConfig
from lbs_pz.engine.moves import Move, decode_move, encode_move
from lbs_pz.engine.state import HanabiState

PLAY, DISCARD, COLOR_CLUE, RANK_CLUE, END_GAME = range(5)
_CONFIG_FIELDS = ("players", "colors", "ranks", "hand_size", "max_information_tokens",
                  "max_life_tokens", "observation_type", "random_start_player")


def _variant_name(colors: int) -> str:
    return "No Variant" if colors == 5 else f"{colors} Suits"


def hanablive_suit(color: int, colors: int) -> int:
    """hanab.live's suit index of the engine's `color` in a game of `colors` colors, and
    the engine's color of hanab.live's suit index (the map is its own inverse): the
    engine's W (3) and B (4) are Purple (4) and Blue (3) in "No Variant"."""
    return {3: 4, 4: 3}.get(color, color) if colors == 5 else color


def to_hanablive(state: HanabiState, player_names: Optional[Sequence[str]] = None) -> dict:
    """The game so far (finished or not) as a hanab.live JSON replay dict.
    `player_names`: one string per seat (default player_0, player_1, ...)."""
    if not isinstance(state, HanabiState):
        raise ValueError(f"state must be a HanabiState, got {_show(state)}")
    config = state.config
    if player_names is None:
        names = [f"player_{i}" for i in range(config.players)]
    elif isinstance(player_names, (str, bytes)) or not hasattr(player_names, "__iter__"):
        raise ValueError(f"player_names must be a sequence of strings, got {_show(player_names)}")
    else:
        names = list(player_names)
        if not all(isinstance(name, str) for name in names):
            raise ValueError(f"player_names must be strings, got {_show(names)}")
    if len(names) != config.players:
        raise ValueError(f"need {config.players} player names, got {len(names)}")
    replay = HanabiState(config, deck=state.deck, start_player=state.start_player, seed=0)
    actions = []
    for move_id in state.move_history:
        mover = replay.current_player
        move = decode_move(config, move_id)
        # decode_move sets the fields of the move's kind
        if move.kind in ("play", "discard"):
            order = replay.hand_deck_indices(mover)[cast(int, move.card_index)]
            actions.append({"type": PLAY if move.kind == "play" else DISCARD, "target": order})
        else:
            target = (mover + cast(int, move.target_offset)) % config.players
            is_color = move.kind == "reveal_color"
            actions.append({"type": COLOR_CLUE if is_color else RANK_CLUE, "target": target,
                            "value": hanablive_suit(cast(int, move.color), config.colors)
                            if is_color else cast(int, move.rank) + 1})
        replay.apply(move_id)
    record = {
        "players": names,
        "deck": [{"suitIndex": hanablive_suit(card // config.ranks, config.colors),
                  "rank": card % config.ranks + 1} for card in state.deck],
        "actions": actions,
        "options": {"variant": _variant_name(config.colors)},
        "config": {field: getattr(config, field) for field in _CONFIG_FIELDS},
    }
    if state.start_player != 0:
        record["firstPlayer"] = state.start_player
    return record


_SHOW = reprlib.Repr()
_SHOW.maxlevel, _SHOW.maxstring, _SHOW.maxother, _SHOW.maxlist, _SHOW.maxdict = 2, 40, 40, 4, 4


def _show(value) -> str:
    """A short repr that never recurses deeply (records may be nested arbitrarily)."""
    try:
        return _SHOW.repr(value)
    except Exception:  # a hostile __repr__: name the type only
        return f"<{type(value).__name__}>"


def _int_field(value, where: str, lo: int, hi: int) -> int:
    """`value` as an int in [lo, hi]: a JSON integer, never a bool or a float."""
    return as_int(value, where, lo, hi, error=ValueError)


def _variant_colors(options) -> Optional[int]:
    """Suits of the hanab.live variant named in `options`, or None when it names none."""
    if options is None:
        return None
    if not isinstance(options, dict):
        raise ValueError(f"options must be an object, got {_show(options)}")
    name = options.get("variant", "No Variant")
    if name == "No Variant":
        return 5
    if isinstance(name, str):
        for colors in range(1, 5):
            if name == _variant_name(colors):
                return colors
    raise ValueError(f"options.variant: unsupported variant {_show(name)} (supported: 'No Variant' "
                     f"and '1 Suits' .. '4 Suits')")


def _record_config(record: dict, players: int) -> HanabiConfig:
    colors = _variant_colors(record.get("options"))
    if "config" in record:
        fields = record["config"]
        if not isinstance(fields, dict):
            raise ValueError(f"config must be an object, got {_show(fields)}")
        for key in _CONFIG_FIELDS:  # scalars only; HanabiConfig checks the ranges
            if key in fields and not (fields[key] is None or isinstance(fields[key], (int, str))):
                raise ValueError(f"config.{key} must be an integer, a string or null, got "
                                 f"{_show(fields[key])}")
        try:
            config = HanabiConfig(**{k: fields[k] for k in _CONFIG_FIELDS if k in fields})
        except ValueError as err:
            raise ValueError(f"config: {err}") from None
        if colors is not None and colors != config.colors:
            raise ValueError(f"options.variant has {colors} suits but config.colors is "
                             f"{config.colors}")
        if config.players != players:
            raise ValueError(f"record lists {players} players but config.players is "
                             f"{config.players}")
        return config
    if colors is None:  # no variant named: as many suits as the deck uses
        deck = record["deck"] if isinstance(record["deck"], list) else []
        suits = [card.get("suitIndex") for card in deck if isinstance(card, dict)]
        colors = 1 + max((int(s) for s in suits if is_int(s)), default=0)
        if not 1 <= colors <= 5:
            raise ValueError(f"deck: suitIndex must be in [0, 4], got {colors - 1}")
    return HanabiConfig(players=players, colors=colors)


def _record_deck(cards, config: HanabiConfig) -> list:
    if not isinstance(cards, list):
        raise ValueError(f"deck must be a list of cards, got {_show(cards)}")
    if len(cards) != config.deck_size:
        raise ValueError(f"deck must hold {config.deck_size} cards for this variant, "
                         f"got {len(cards)}")
    deck = []
    for i, card in enumerate(cards):
        if not isinstance(card, dict):
            raise ValueError(f"deck[{i}] must be an object {{suitIndex, rank}}, got {_show(card)}")
        for key in ("suitIndex", "rank"):
            if key not in card:
                raise ValueError(f"deck[{i}] lacks {key!r}")
        suit = _int_field(card["suitIndex"], f"deck[{i}].suitIndex", 0, config.colors - 1)
        rank = _int_field(card["rank"], f"deck[{i}].rank", 1, config.ranks)
        deck.append(hanablive_suit(suit, config.colors) * config.ranks + rank - 1)
    counts = Counter(deck)
    for card in range(config.num_card_types):
        if counts[card] != config.card_count(card):
            raise ValueError(f"deck must hold {config.card_count(card)} copies of "
                             f"{config.card_name(card)}, got {counts[card]}")
    return deck


def _action_move(action, number: int, state: HanabiState, config: HanabiConfig) -> Optional[Move]:
    """The engine move of hanab.live action `number`, or None for the end-of-game marker."""
    where = f"actions[{number}]"
    if not isinstance(action, dict):
        raise ValueError(f"{where} must be an object {{type, target, value}}, got {_show(action)}")
    if "type" not in action:
        raise ValueError(f"{where} lacks 'type'")
    kind = action["type"]
    if not is_int(kind) or kind not in (
            PLAY, DISCARD, COLOR_CLUE, RANK_CLUE, END_GAME):
        raise ValueError(f"{where}.type: unknown action type {_show(kind)} (expected 0 play, "
                         f"1 discard, 2 color clue, 3 rank clue, 4 game over)")
    if kind == END_GAME:
        return None
    if "target" not in action:
        raise ValueError(f"{where} lacks 'target'")
    mover = state.current_player
    if kind in (PLAY, DISCARD):
        order = _int_field(action["target"], f"{where}.target", 0, config.deck_size - 1)
        orders = state.hand_deck_indices(mover)
        if order not in orders:
            raise ValueError(f"{where}.target: card {order} is not in player {mover}'s hand "
                             f"(deck positions {orders})")
        return Move("play" if kind == PLAY else "discard", card_index=orders.index(order))
    target = _int_field(action["target"], f"{where}.target", 0, config.players - 1)
    if target == mover:
        raise ValueError(f"{where}.target: player {mover} cannot clue themself")
    if "value" not in action:
        raise ValueError(f"{where} lacks 'value'")
    offset = (target - mover) % config.players
    if kind == COLOR_CLUE:
        suit = _int_field(action["value"], f"{where}.value (color)", 0, config.colors - 1)
        return Move("reveal_color", target_offset=offset,
                    color=hanablive_suit(suit, config.colors))
    rank = _int_field(action["value"], f"{where}.value (rank)", 1, config.ranks)
    return Move("reveal_rank", target_offset=offset, rank=rank - 1)


def from_hanablive(record, seed: int = 0) -> HanabiState:
    """Rebuild the engine state of a hanab.live replay (a dict, or its JSON text).

    Every field is checked against the variant: integers only (no bools, no floats),
    suits, ranks, seats and deck positions in range, a deck of exactly the variant's cards,
    a clue never to its giver, every action legal when it is played. Actions after a
    type-4 (game over) action are ignored; unknown top-level keys are ignored.

    Raises ValueError naming the field (e.g. `actions[3].value (color)`) and the bad value
    on any malformed record or illegal action; never KeyError, TypeError or RecursionError.
    """
    if isinstance(record, (str, bytes, bytearray)):
        try:
            record = json.loads(record)
        except RecursionError:
            raise ValueError("not a hanab.live game record: JSON nested too deeply") from None
        except ValueError as err:  # JSONDecodeError, UnicodeDecodeError
            raise ValueError(f"not a hanab.live game record: invalid JSON ({err})") from None
    if not isinstance(record, dict):
        raise ValueError(f"not a hanab.live game record: expected an object, got {_show(record)}")
    for key in ("players", "deck"):
        if key not in record:
            raise ValueError(f"not a hanab.live game record: missing {key!r}")
    names = record["players"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"players must be a list of names, got {_show(names)}")
    if not 2 <= len(names) <= 5:
        raise ValueError(f"players must list 2 to 5 players, got {len(names)}")
    config = _record_config(record, len(names))
    deck = _record_deck(record["deck"], config)
    actions = record.get("actions", [])
    if not isinstance(actions, list):
        raise ValueError(f"actions must be a list, got {_show(actions)}")
    first = _int_field(record.get("firstPlayer", 0), "firstPlayer", 0, config.players - 1)
    state = HanabiState(config, deck=deck, start_player=first, seed=seed)
    for number, action in enumerate(actions):
        move = _action_move(action, number, state, config)
        if move is None:
            break
        if state.is_terminal:
            raise ValueError(f"actions[{number}]: the game is already over")
        try:
            state.apply(encode_move(config, move))
        except ValueError as err:
            raise ValueError(f"actions[{number}] ({_show(action)}): {err}") from None
    return state
