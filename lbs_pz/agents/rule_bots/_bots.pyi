"""Types of the compiled `lbs_pz.agents.rule_bots._bots` (_bots.pyx and its .pxi parts):
the C rule bots, their memory and the conventions' features.

Written from the .pyx / .pxi signatures and docstrings; tests/repo/test_stubs.py checks that it
names every public attribute of the compiled module and nothing else.
"""

from typing import Any, Iterable, NoReturn, Optional, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray
from typing_extensions import Buffer

from lbs_pz.engine.batch import HanabiBatch
from lbs_pz.engine.config import HanabiConfig
from lbs_pz.engine.state import HanabiState

# a bot: a name of BOT_NAMES (any case) or its index
_Bot = Union[str, int, np.integer[Any]]

# the bots, weakest first (index = kind)
BOT_NAMES: tuple[str, ...]
# features per card of every hand / per hint move in a convention_features row
CONVENTION_SLOT_PARTS: int
CONVENTION_HINT_PARTS: int


def bot_kind(bot: _Bot) -> int:
    """The kind index of a bot given by name (see BOT_NAMES) or index."""


def act(bot: _Bot, state: HanabiState,
        seat: Union[int, np.integer[Any], None] = None) -> int:
    """The move id `bot` makes as `seat` (default: the player to move), -1 if the game is
    over."""


def act_states(bot: _Bot, states: Iterable[HanabiState]) -> NDArray[np.int64]:
    """Moves of the player to move in each state, int64 (N,), -1 where the game is over."""


def play_states(bot: _Bot, states: Iterable[HanabiState],
                max_moves: int = -1) -> NDArray[np.int32]:
    """Self-play every state in place; the moves made per state, int32 (N,)."""


def act_batch(bot: _Bot, batch: HanabiBatch) -> NDArray[np.int64]:
    """Moves of each game's player to move, int64 (N,), -1 if over."""


def play_batch(bot: _Bot, batch: HanabiBatch, max_moves: int = -1) -> NDArray[np.int32]:
    """Self-play every game of the batch in place; the moves made per game, int32 (N,)."""


def memory(bot: _Bot, state: HanabiState) -> list[list[tuple[int, int, int, int, int]]]:
    """Per seat, per card: (plausible color mask, plausible rank mask, promised types mask,
    group, touched)."""


def get_params(bot: _Bot) -> dict[str, int]:
    """The convention switches of a convention bot."""


class MemoryCache:
    """A bot's memories of the positions of one game, kept between calls."""

    @property
    def kind(self) -> int: ...
    def __init__(self, bot: _Bot) -> None: ...
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]: ...


def counterfactual_mask(bot: _Bot, before: HanabiState, seat: int, move: int,
                        hands: NDArray[np.int8],
                        cache: Optional[MemoryCache] = None) -> NDArray[np.uint8]:
    """uint8 (N,): 1 where the bot, acting in `before`, makes `move` when `seat` holds
    hands[r] (int8 (N, hand_len), C-contiguous)."""


def convention_feature_size(config: HanabiConfig) -> int:
    """Length of one seat's `convention_features` row in a game of `config`."""


def convention_features(batch: HanabiBatch, seats: ArrayLike,
                        out: NDArray[np.float32]) -> Buffer:
    """Fills out (N, convention_feature_size(config)), float32, C-contiguous, writeable,
    with every game seen by seats[i]; returns a typed memoryview of `out`."""


class ConventionReader:
    """`convention_features` of one batch's games, followed move by move."""

    @property
    def num_games(self) -> int: ...
    def __init__(self, batch: HanabiBatch) -> None: ...
    def __reduce__(self) -> NoReturn:
        """TypeError: a reader holds per-game memories of one batch."""
    def features(self, batch: HanabiBatch, seats: ArrayLike, out: NDArray[np.float32],
                 rows: Optional[ArrayLike] = None) -> NDArray[np.float32]:
        """As `convention_features(batch, seats, out)` for the games `rows`; returns out."""
