"""The paper's public/private split of HLE's canonical observation.

private: the other players' cards, i.e. the hands section of the observer's canonical
         vector without its trailing "hand is short" bits; shape ((P-1) * H * C*R,).
public:  everything else, taken from seat 0's canonical vector, where the seat-relative
         parts (short-hand bits, last action, card knowledge) coincide with absolute
         seat order; identical for every seat of a game. Shape (encoding_size - private,).

`private_features(state, seat)` and `public_features(state)` split one state;
`public_part(enc, config)` takes the public part of already encoded vectors of every seat
(what a batched encode gives). `lbs_pz.agents.features` builds the nets' inputs on them.
"""

from __future__ import annotations

import numpy as np

from lbs_pz.engine.config import HanabiConfig


def private_size(config: HanabiConfig) -> int:
    return (config.players - 1) * config.hand_size * config.num_card_types


def public_size(config: HanabiConfig) -> int:
    return config.encoding_size - private_size(config)


def private_features(state, seat: int) -> np.ndarray:
    """float32 (private_size,): the cards `seat` sees in the other players' hands."""
    return state.encode(seat)[: private_size(state.config)]


def public_features(state) -> np.ndarray:
    """float32 (public_size,): the common knowledge of the game, the same for every seat."""
    return state.encode(0)[private_size(state.config):]


def public_part(enc: np.ndarray, config: HanabiConfig) -> np.ndarray:
    """Per-seat vectors (..., P, W) whose first E = encoding_size columns are each seat's
    canonical vector (W > E: the seat's extra inputs follow, e.g. convention features)
    -> the public features (..., public_size), taken from seat 0's vector: a view, no
    copy. For a game's stacked vectors it equals `public_features(state)`."""
    return enc[..., 0, private_size(config):config.encoding_size]
