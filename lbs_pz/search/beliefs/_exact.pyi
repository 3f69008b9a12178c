"""Types of the compiled `lbs_pz.search.beliefs._exact` (_exact.pyx): the exact belief's
hand enumeration in C. Every array argument is C-contiguous: plaus uint32 (n,) (the
plausible card types of each slot, a bitmask), unseen int32 (T,) (copies of each card
type the player cannot see), hands int8 (N, n).

tests/repo/test_stubs.py checks that this stub names every public attribute of the compiled
module and nothing else.
"""

import numpy as np
from numpy.typing import NDArray


def count_hands(plaus: NDArray[np.uint32], unseen: NDArray[np.int32], limit: int) -> int:
    """Number of ordered hands allowed (a value > limit once it exceeds `limit`)."""


def enumerate_hands(plaus: NDArray[np.uint32], unseen: NDArray[np.int32],
                    count: int) -> NDArray[np.int8]:
    """All ordered hands allowed, int8 (count, n), in lexicographic order."""


def feasible_mask(hands: NDArray[np.int8], plaus: NDArray[np.uint32],
                  unseen: NDArray[np.int32]) -> NDArray[np.uint8]:
    """uint8 (N,): 1 where the hand fits every slot's knowledge and the unseen copies."""


def hand_weights(hands: NDArray[np.int8], unseen: NDArray[np.int32]) -> NDArray[np.float64]:
    """float64 (N,): the multiplicity of each ordered hand."""


def remove_slot(hands: NDArray[np.int8], slot: int, card: int) -> NDArray[np.int8]:
    """The hands whose card at `slot` is `card`, without that slot: int8 (M, n - 1)."""


def append_draw(hands: NDArray[np.int8], unseen: NDArray[np.int32], allowed: int,
                max_rows: int) -> NDArray[np.int8]:
    """Every hand extended by a new last card of each type in `allowed` (a bitmask) with a
    copy still unseen: int8 (M, n + 1); MemoryError beyond `max_rows` rows."""
