"""Game records in the hanab.live JSON replay format (format version 3).

    {"players": [...], "deck": [{"suitIndex": s, "rank": r}, ...], "actions": [...],
     "options": {"variant": ...}, "firstPlayer": p, "config": {...}}

Deck: the dealing order, ranks from 1. Actions: type 0 play / 1 discard with `target` =
the card's position in the deck; type 2 color clue / 3 rank clue with `target` = the
receiving seat and `value` = color index / rank (from 1). `firstPlayer` is written only when
the first mover is not seat 0, and `config` keeps the lbs_pz variant so that non-standard
games (hand sizes, tokens, fewer ranks) round-trip exactly.
"""

from __future__ import annotations

import json
from typing import Optional, Sequence

from lbs_pz.engine.config import HanabiConfig
from lbs_pz.engine.moves import Move, decode_move, encode_move
from lbs_pz.engine.state import HanabiState

PLAY, DISCARD, COLOR_CLUE, RANK_CLUE, END_GAME = range(5)
_CONFIG_FIELDS = ("players", "colors", "ranks", "hand_size", "max_information_tokens",
                  "max_life_tokens", "observation_type", "random_start_player")


def _variant_name(colors: int) -> str:
    return "No Variant" if colors == 5 else f"{colors} Suits"


def to_hanablive(state: HanabiState, player_names: Optional[Sequence[str]] = None) -> dict:
    """The game so far (finished or not) as a hanab.live JSON replay dict."""
    config = state.config
    names = list(player_names) if player_names else [f"player_{i}" for i in range(config.players)]
    if len(names) != config.players:
        raise ValueError(f"need {config.players} player names, got {len(names)}")
    replay = HanabiState(config, deck=state.deck, start_player=state.start_player, seed=0)
    actions = []
    for move_id in state.move_history:
        mover = replay.current_player
        move = decode_move(config, move_id)
        if move.kind in ("play", "discard"):
            order = replay.hand_deck_indices(mover)[move.card_index]
            actions.append({"type": PLAY if move.kind == "play" else DISCARD, "target": order})
        else:
            target = (mover + move.target_offset) % config.players
            is_color = move.kind == "reveal_color"
            actions.append({"type": COLOR_CLUE if is_color else RANK_CLUE, "target": target,
                            "value": move.color if is_color else move.rank + 1})
        replay.apply(move_id)
    record = {
        "players": names,
        "deck": [{"suitIndex": card // config.ranks, "rank": card % config.ranks + 1}
                 for card in state.deck],
        "actions": actions,
        "options": {"variant": _variant_name(config.colors)},
        "config": {field: getattr(config, field) for field in _CONFIG_FIELDS},
    }
    if state.start_player != 0:
        record["firstPlayer"] = state.start_player
    return record


def from_hanablive(record, seed: int = 0) -> HanabiState:
    """Rebuild the engine state of a hanab.live replay (a dict or a JSON string).
    Raises ValueError on a malformed record or an illegal action."""
    if isinstance(record, (str, bytes)):
        record = json.loads(record)
    try:
        players = len(record["players"])
        if "config" in record:
            config = HanabiConfig(**{k: record["config"][k] for k in _CONFIG_FIELDS
                                     if k in record["config"]})
        else:
            colors = 1 + max(card["suitIndex"] for card in record["deck"])
            config = HanabiConfig(players=players, colors=colors)
        ranks = config.ranks
        deck = [card["suitIndex"] * ranks + card["rank"] - 1 for card in record["deck"]]
        actions = record.get("actions", [])
    except (KeyError, TypeError) as err:
        raise ValueError(f"not a hanab.live game record: missing or malformed {err}") from err
    if config.players != players:
        raise ValueError(f"record lists {players} players but its config says {config.players}")
    state = HanabiState(config, deck=deck, start_player=int(record.get("firstPlayer", 0)), seed=seed)
    for number, action in enumerate(actions):
        kind = action.get("type")
        if kind == END_GAME:
            break
        mover = state.current_player
        if kind in (PLAY, DISCARD):
            orders = state.hand_deck_indices(mover)
            if action.get("target") not in orders:
                raise ValueError(f"action {number}: card {action.get('target')} is not in "
                                 f"player {mover}'s hand")
            slot = orders.index(action["target"])
            move = Move("play" if kind == PLAY else "discard", card_index=slot)
        elif kind in (COLOR_CLUE, RANK_CLUE):
            offset = (int(action["target"]) - mover) % config.players
            if offset == 0:
                raise ValueError(f"action {number}: player {mover} cannot clue themself")
            if kind == COLOR_CLUE:
                move = Move("reveal_color", target_offset=offset, color=int(action["value"]))
            else:
                move = Move("reveal_rank", target_offset=offset, rank=int(action["value"]) - 1)
        else:
            raise ValueError(f"action {number}: unknown action type {kind!r}")
        try:
            state.apply(encode_move(config, move))
        except ValueError as err:
            raise ValueError(f"action {number} ({action}): {err}") from err
    return state
