"""Play games in the Hanabi Learning Environment (the oracle) and record every step.

A recorded game holds the deal order HLE used (so our engine can replay the same deck),
the moves chosen, and at every decision point what HLE reports: current player, legal
move ids, score, terminal flag, tokens, fireworks, deck size and the canonical
observation of every player.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Callable, List

import numpy as np

pyhanabi = __import__("pytest").importorskip("hanabi_learning_environment.pyhanabi")

from lbs_pz.engine import HanabiConfig  # noqa: E402


@dataclasses.dataclass
class Snapshot:
    current_player: int
    legal_moves: List[int]
    score: int
    is_terminal: bool
    information_tokens: int
    life_tokens: int
    fireworks: tuple
    deck_size: int
    encodings: np.ndarray        # (players, encoding_size) int8


@dataclasses.dataclass
class RecordedGame:
    config: HanabiConfig
    deck: List[int]              # dealing order used by HLE, then the undealt cards
    start_player: int
    moves: List[int]
    snapshots: List[Snapshot]    # one before each move, plus the final state
    end_type: int                # HLE's end-of-game status


# A policy picks a move id from HLE's legal move ids, given the move kinds per id.
Policy = Callable[[random.Random, List[int], List[int], pyhanabi.HanabiState], int]


def uniform_policy(rng, legal, kinds, state):
    return rng.choice(legal)


def hint_heavy_policy(rng, legal, kinds, state):
    """Prefer hints (exercises card knowledge and empties the info tokens)."""
    hints = [m for m, k in zip(legal, kinds) if k >= 2]
    return rng.choice(hints) if hints and rng.random() < 0.8 else rng.choice(legal)


def reckless_policy(rng, legal, kinds, state):
    """Prefer plays: most games end by losing the last life."""
    plays = [m for m, k in zip(legal, kinds) if k == 1]
    return rng.choice(plays) if plays and rng.random() < 0.7 else rng.choice(legal)


def careful_policy(rng, legal, kinds, state):
    """Prefer discards and hints, rarely play: most games end by deck exhaustion."""
    safe = [m for m, k in zip(legal, kinds) if k != 1]
    return rng.choice(safe) if safe and rng.random() < 0.95 else rng.choice(legal)


_KIND = {
    pyhanabi.HanabiMoveType.DISCARD: 0,
    pyhanabi.HanabiMoveType.PLAY: 1,
    pyhanabi.HanabiMoveType.REVEAL_COLOR: 2,
    pyhanabi.HanabiMoveType.REVEAL_RANK: 3,
}


def encode_fast(encoder, observation) -> np.ndarray:
    """HLE's canonical encoding as int8, like `encoder.encode(observation)` but parsing
    HLE's "0,1,0,..." string with numpy (HLE's per-bit list comprehension dominates the
    recording time otherwise)."""
    c_str = pyhanabi.lib.EncodeObservation(encoder._encoder, observation.observation())
    text = pyhanabi.encode_ffi_string(c_str)
    pyhanabi.lib.DeleteString(c_str)
    raw = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    bits = raw[::2] - ord("0")
    # Canonical encodings are single-digit bits separated by commas; anything else would
    # be misparsed, so refuse it.
    if len(raw) % 2 != 1 or (raw[1::2] != ord(",")).any() or (bits > 1).any():
        raise ValueError("unexpected HLE encoding string: " + text[:80])
    return bits.astype(np.int8)


def record_game(config: HanabiConfig, seed: int, policy: Policy) -> RecordedGame:
    game = pyhanabi.HanabiGame(config.hle_params(seed=seed))
    encoder = pyhanabi.ObservationEncoder(game)
    state = game.new_initial_state()
    rng = random.Random(seed)
    moves, snapshots = [], []
    start_player = None
    while True:
        while state.cur_player() == pyhanabi.CHANCE_PLAYER_ID:
            state.deal_random_card()
        if start_player is None:
            start_player = state.cur_player()
        terminal = state.is_terminal()
        legal_objs = [] if terminal else state.legal_moves()
        legal = [game.get_move_uid(m) for m in legal_objs]
        encodings = np.stack(
            [encode_fast(encoder, state.observation(p)) for p in range(config.players)]
        )
        snapshots.append(Snapshot(
            current_player=state.cur_player(),
            legal_moves=legal,
            score=state.score(),
            is_terminal=terminal,
            information_tokens=state.information_tokens(),
            life_tokens=state.life_tokens(),
            fireworks=tuple(state.fireworks()),
            deck_size=state.deck_size(),
            encodings=encodings,
        ))
        if terminal:
            break
        kinds = [_KIND[m.type()] for m in legal_objs]
        move = policy(rng, legal, kinds, state)
        moves.append(move)
        state.apply_move(game.get_move(move))

    dealt = [
        item.move().color() * config.ranks + item.move().rank()
        for item in state.move_history()
        if item.move().type() == pyhanabi.HanabiMoveType.DEAL
    ]
    remaining = []
    for card in range(config.num_card_types):
        remaining += [card] * (config.card_count(card) - dealt.count(card))
    return RecordedGame(config, dealt + remaining, start_player, moves, snapshots,
                        int(state.end_of_game_status()))
