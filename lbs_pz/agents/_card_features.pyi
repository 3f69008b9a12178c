"""Types of the compiled `lbs_pz.agents._card_features` (_card_features.pyx):
`CardFeatures.forward` of the public-LSTM for a batch of canonical vectors, in C.

tests/repo/test_stubs.py checks that this stub names every public attribute of the compiled
module and nothing else.
"""

import numpy as np
from numpy.typing import NDArray
from typing_extensions import Buffer


def card_features(obs: NDArray[np.float32], out: NDArray[np.float32], players: int,
                  colors: int, ranks: int, hand_size: int, fw_off: int, kn_off: int,
                  knowledge: bool) -> Buffer:
    """Fill out (N, size), float32, C-contiguous, writeable, with the card features of
    every row of obs (N, E), float32, C-contiguous; returns a typed memoryview of out."""
