"""The Hanabi engine: exact HLE rules in Cython, single games and batches.

    HanabiConfig   the variant (players, colors, ranks, hand size, tokens, observation type)
    HanabiState    one game: legal moves, apply, clone, encode, set_hand, view, render
    HanabiBatch    N games in one C array: reset, step, masks, encodings, random play
"""

from lbs_pz.engine.config import HanabiConfig, OBSERVATION_TYPES
from lbs_pz.engine.moves import MOVE_KINDS, Move, decode_move, encode_move, move_name
from lbs_pz.engine.state import HanabiState
from lbs_pz.engine.batch import HanabiBatch, game_seeds
from lbs_pz.engine.view import CardKnowledge, PastMove, PlayerView

__all__ = [
    "HanabiConfig", "HanabiState", "HanabiBatch", "game_seeds", "Move", "MOVE_KINDS",
    "OBSERVATION_TYPES", "decode_move", "encode_move", "move_name", "PlayerView",
    "CardKnowledge", "PastMove",
]
