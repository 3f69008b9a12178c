"""Types of the compiled `lbs_pz.engine.batch` (batch.pyx): `HanabiBatch`, N games in one
C array.

Written from batch.pyx's signatures and docstrings; tests/repo/test_stubs.py checks that it
names every public attribute of the compiled module and nothing else.
"""

from typing import Any, Iterable, Optional, Union

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray
from typing_extensions import Self

from lbs_pz.engine.config import HanabiConfig as HanabiConfig
from lbs_pz.engine.moves import move_name as move_name
from lbs_pz.engine.seeds import check_engine_seed as check_engine_seed
from lbs_pz.engine.seeds import check_engine_seeds as check_engine_seeds
from lbs_pz.engine.state import HanabiState
from lbs_pz.engine.state import seed_to_u64 as seed_to_u64

# an integer accepted where the engine takes a seed, seat, count or game index (bools refused)
_Int = Union[int, np.integer[Any]]

# games per batch (a C int)
MAX_BATCH: int


def game_seeds(seed: _Int, first: _Int, count: _Int) -> NDArray[np.uint64]:
    """uint64 (count,): seeds of games first .. first+count-1 of a run seeded with `seed`,
    exactly those `HanabiBatch(config, n, seeds=seed)` gives its games."""


def check_out(out: Optional[NDArray[Any]], shape: tuple[int, ...], dtype: DTypeLike,
              name: str = "out") -> NDArray[Any]:
    """A caller-provided output array, checked (exactly `shape` and `dtype`, C-contiguous,
    aligned, writeable; ValueError otherwise), or a new one if `out` is None."""


class HanabiBatch:
    """N independent games of one configuration. Shapes: actions (N,) int64; legal masks
    (N, num_moves) int8; encodings (N, encoding_size) float32; scores, current players
    (N,) int32; terminals (N,) bool; hands (N, hand_size) int8."""

    @property
    def num_games(self) -> int: ...

    def __init__(self, config: Optional[HanabiConfig] = None, num_games: _Int = 1,
                 seeds: Union[_Int, ArrayLike, None] = None) -> None: ...

    @property
    def config(self) -> HanabiConfig: ...
    @property
    def generation(self) -> int:
        """Calls that have changed the games so far (an int that only grows)."""
    def __len__(self) -> int: ...

    def reset(self, seeds: Union[_Int, ArrayLike]) -> None:
        """Start new games: one base seed, or N seeds."""
    def reset_game(self, index: _Int, seed: _Int) -> None: ...
    def step(self, actions: ArrayLike,
             rewards: Optional[NDArray[np.float32]] = None) -> NDArray[np.float32]:
        """Apply actions[i] (int (N,), -1 for finished games); the rewards, float32 (N,)."""
    def play_random(self, max_moves: _Int = -1) -> int:
        """Random-legal self-play in every game; the total number of moves made."""
    def legal_masks(self, out: Optional[NDArray[np.int8]] = None) -> NDArray[np.int8]: ...
    def encode(self, out: Optional[NDArray[np.float32]] = None,
               players: Optional[ArrayLike] = None,
               own_hand: Union[bool, np.bool_] = False) -> NDArray[np.float32]: ...
    def encode_sparse(self, players: Optional[ArrayLike] = None,
                      own_hand: Union[bool, np.bool_] = False,
                      ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """(indices, offsets), both int64: the positions of each encoding's ones."""
    def scores(self, out: Optional[NDArray[np.int32]] = None) -> NDArray[np.int32]: ...
    def max_scores(self, out: Optional[NDArray[np.int32]] = None) -> NDArray[np.int32]: ...
    def terminals(self, out: Optional[NDArray[np.bool_]] = None) -> NDArray[np.bool_]: ...
    def current_players(self,
                        out: Optional[NDArray[np.int32]] = None) -> NDArray[np.int32]: ...
    def public_history_keys(self, rows: Optional[ArrayLike] = None) -> list[bytes]: ...
    def get_state(self, index: _Int) -> HanabiState: ...
    def set_state(self, index: _Int, state: HanabiState) -> None: ...
    @classmethod
    def from_states(cls, states: Iterable[HanabiState]) -> Self: ...
    @classmethod
    def from_state(cls, state: HanabiState, n: _Int) -> Self: ...
    def copy(self) -> Self: ...
    def take(self, indices: ArrayLike) -> Self: ...
    def hands(self, seat: Optional[_Int] = None,
              out: Optional[NDArray[np.int8]] = None) -> NDArray[np.int8]: ...
    def set_hands(self, seat: _Int, hands: ArrayLike,
                  seeds: Optional[ArrayLike] = None) -> None: ...
