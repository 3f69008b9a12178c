"""Types of the compiled `lbs_pz.engine.state` (state.pyx): `HanabiState`, one game.

Written from state.pyx's signatures and docstrings; tests/repo/test_stubs.py checks that it
names every public attribute of the compiled module and nothing else.
"""

from typing import Any, Iterable, Optional, Union

import numpy as np
from numpy.typing import NDArray

from lbs_pz.engine.config import OBSERVATION_TYPES as OBSERVATION_TYPES
from lbs_pz.engine.config import HanabiConfig as HanabiConfig
from lbs_pz.engine.moves import move_name as move_name
from lbs_pz.engine.render import render_state as render_state
from lbs_pz.engine.seeds import check_engine_seed as check_engine_seed
from lbs_pz.engine.view import PlayerView
from lbs_pz.engine.view import player_view as player_view

# an integer accepted where the engine takes a seed, seat, move or card id (bools refused)
_Int = Union[int, np.integer[Any]]

# version of the pickle format (see HanabiState.__reduce__)
PICKLE_FORMAT: int


def seed_to_u64(seed: Optional[_Int], name: str = "seed") -> int:
    """The engine's 64-bit seed: `seed` itself if it is an integer in [0, 2**64)
    (ValueError otherwise), or fresh entropy for None."""


class HanabiState:
    """One game of Hanabi with HLE's exact rules, move ids and observation encoding."""

    # the game variant; None only on an object made with __new__ and never initialised
    # (every method refuses it)
    @property
    def config(self) -> HanabiConfig: ...

    def __init__(self, config: Optional[HanabiConfig] = None, seed: Optional[_Int] = None,
                 deck: Optional[Iterable[_Int]] = None,
                 start_player: Optional[_Int] = None) -> None: ...

    # --- copying
    def clone(self) -> HanabiState:
        """An independent copy (a memcpy of the game struct)."""
    def __copy__(self) -> HanabiState: ...
    def __deepcopy__(self, memo: Any) -> HanabiState: ...
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]: ...

    # --- queries
    @property
    def current_player(self) -> int: ...
    @property
    def score(self) -> int: ...
    @property
    def max_score(self) -> int: ...
    @property
    def is_terminal(self) -> bool: ...
    @property
    def information_tokens(self) -> int: ...
    @property
    def life_tokens(self) -> int: ...
    @property
    def fireworks(self) -> tuple[int, ...]: ...
    @property
    def deck_size(self) -> int:
        """Cards left to draw."""
    @property
    def turns_to_play(self) -> int: ...
    @property
    def discard_pile(self) -> list[int]: ...
    @property
    def hands(self) -> list[list[int]]: ...
    def hand(self, player: _Int) -> list[int]: ...
    def hand_deck_indices(self, player: _Int) -> list[int]: ...
    @property
    def deck(self) -> list[int]: ...
    @property
    def start_player(self) -> int: ...
    @property
    def num_moves_played(self) -> int: ...
    @property
    def move_history(self) -> list[int]: ...
    def move_records(self) -> list[dict[str, int]]:
        """One dict per move played: player, move, card, reveal, newly, scored,
        info_token, drawn."""
    def view_records(self, player: _Int, hide_own_draws: bool = True) -> bytes: ...
    def public_history_key(self) -> bytes: ...
    def knowledge_key(self, player: _Int) -> bytes: ...
    def card_knowledge(
            self, player: _Int) -> list[tuple[tuple[int, ...], tuple[int, ...], int, int]]:
        """Per card: (plausible colors, plausible ranks, hinted color, hinted rank), -1
        for a color / rank not directly hinted."""
    def legal_moves(self) -> list[int]: ...
    def legal_mask(self) -> NDArray[np.int8]:
        """int8 (num_moves,): 1 where the move is legal."""
    def is_legal(self, move: object) -> bool: ...
    def encode(self, player: Optional[_Int] = None) -> NDArray[np.float32]:
        """HLE's canonical observation, float32 (encoding_size,)."""

    # --- changing the game
    def apply(self, move: _Int) -> None: ...
    def set_hand(self, player: _Int, cards: Iterable[_Int],
                 seed: Optional[_Int] = None) -> None: ...
    def shuffle_deck(self, seed: Optional[_Int] = None) -> None: ...

    # --- presentation
    def view(self, player: Optional[_Int] = None) -> PlayerView: ...
    def render(self, viewer: Optional[_Int] = None) -> str: ...
