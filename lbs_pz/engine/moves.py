"""Move ids in HLE order: discards, plays, color hints, rank hints.

For P players and hand size H: ids [0, H) discard slot i, [H, 2H) play slot i, then one
id per (target offset, color) and one per (target offset, rank); target offsets are
relative to the mover (1 = next player).
"""

from __future__ import annotations

from typing import NamedTuple, Optional, cast

from lbs_pz.checks import as_int
from lbs_pz.engine.config import COLOR_CHARS, HanabiConfig

MOVE_KINDS = ("discard", "play", "reveal_color", "reveal_rank")


class Move(NamedTuple):
    kind: str                       # one of MOVE_KINDS
    card_index: Optional[int] = None
    target_offset: Optional[int] = None
    color: Optional[int] = None
    rank: Optional[int] = None


def decode_move(config: HanabiConfig, move_id: int) -> Move:
    """The structured move behind a move id (ValueError if out of range)."""
    m = as_int(move_id, "move id", 0, below=config.num_moves, error=ValueError)
    hs, P, C, R = config.hand_size, config.players, config.colors, config.ranks
    if m < hs:
        return Move("discard", card_index=m)
    if m < 2 * hs:
        return Move("play", card_index=m - hs)
    m -= 2 * hs
    if m < (P - 1) * C:
        return Move("reveal_color", target_offset=1 + m // C, color=m % C)
    m -= (P - 1) * C
    return Move("reveal_rank", target_offset=1 + m // R, rank=m % R)


def encode_move(config: HanabiConfig, move: Move) -> int:
    """The move id of a structured move (inverse of decode_move)."""
    hs, P, C, R = config.hand_size, config.players, config.colors, config.ranks
    # each kind's fields are set (Move's contract; None where it is broken: not checked)
    if move.kind == "discard":
        return move.card_index  # type: ignore[return-value]  # set for a discard
    if move.kind == "play":
        return hs + move.card_index  # type: ignore[operator]  # set for a play
    if move.kind == "reveal_color":
        return 2 * hs + (move.target_offset - 1) * C + move.color  # type: ignore[operator]
    if move.kind == "reveal_rank":
        hints = 2 * hs + (P - 1) * C                          # the first rank hint's id
        return hints + (move.target_offset - 1) * R + move.rank  # type: ignore[operator]
    raise ValueError(f"unknown move kind {move.kind!r}; expected one of {MOVE_KINDS}")


def move_name(config: HanabiConfig, move_id: int) -> str:
    """HLE-style text of a move id, e.g. '(Play 2)', '(Reveal player +1 color R)'."""
    mv = decode_move(config, move_id)
    if mv.kind == "discard":
        return f"(Discard {mv.card_index})"
    if mv.kind == "play":
        return f"(Play {mv.card_index})"
    if mv.kind == "reveal_color":
        return f"(Reveal player +{mv.target_offset} color {COLOR_CHARS[cast(int, mv.color)]})"
    return f"(Reveal player +{mv.target_offset} rank {cast(int, mv.rank) + 1})"
