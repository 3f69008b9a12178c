"""The observation and card features the agents' nets read, in one place (numpy, no torch).

The public/private split of HLE's canonical observation (`lbs_pz.engine.features`):

    private_size(config), public_size(config)   widths of the two parts
    private_features(state, seat)               float32 (private_size,): the other hands
    public_features(state)                      float32 (public_size,): the common knowledge
    public_part(enc, config)                    the public part of stacked per-seat vectors
                                                (..., P, W) -> (..., public_size), a view

A net's per-seat inputs (what `PublicLSTMNet`'s private stream reads):

    seat_inputs(batch, players, conventions, reader)   float32 (N, E [+ F])
    encode_batch(batch, conventions, reader)           float32 (N, P, E [+ F]), every seat

Exact per-card features of a canonical vector (no parameters; `PublicLSTMNet`'s
`card_features` option; the torch module is `lbs_pz.agents.public_lstm.CardFeatures`,
which computes the same numbers):

    CardLayout(players, obs_dim, colors, ranks, hand_size, deck_size)
                                       where each section of the vector starts, and the
                                       feature sizes; CardLayout.of(config)
    card_features(obs, layout)         float32 (..., E) -> (..., layout.size)

The convention bots' reading of a position as a seat sees it (`lbs_pz.agents.rule_bots`,
in C): F = convention_feature_size(config) floats per seat, CONVENTION_SLOT_PARTS per card
of every hand, one per other player, CONVENTION_HINT_PARTS per hint move:

    convention_feature_size(config), convention_features(batch, seats, out),
    ConventionReader(batch), CONVENTION_SLOT_PARTS, CONVENTION_HINT_PARTS

>>> from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState
>>> config = HanabiConfig()
>>> batch = HanabiBatch.from_states([HanabiState(config, seed=1)])
>>> encode_batch(batch).shape, public_part(encode_batch(batch), config).shape
((1, 2, 658), (1, 533))
>>> encode_batch(batch, conventions=True).shape == (1, 2, 658 + convention_feature_size(config))
True
>>> card_features(batch.encode(), CardLayout.of(config)).shape
(1, 200)
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Union

import numpy as np

from lbs_pz.agents._card_features import card_features as _fill_card_features
from lbs_pz.agents.rule_bots import (CONVENTION_HINT_PARTS, CONVENTION_SLOT_PARTS,
                                     ConventionReader, convention_feature_size,
                                     convention_features)
from lbs_pz.checks import as_int
from lbs_pz.engine import HanabiBatch, HanabiConfig
from lbs_pz.engine.features import (private_features, private_size, public_features,
                                    public_part, public_size)

__all__ = [
    "private_size", "public_size", "private_features", "public_features", "public_part",
    "seat_inputs", "encode_batch", "CardLayout", "card_features",
    "convention_feature_size", "convention_features", "ConventionReader",
    "CONVENTION_SLOT_PARTS", "CONVENTION_HINT_PARTS",
]


# --- per-seat inputs ----------------------------------------------------------------------


def seat_inputs(batch: HanabiBatch, players: Optional[np.ndarray] = None,
                conventions: bool = False,
                reader: Optional[ConventionReader] = None) -> np.ndarray:
    """What a net's private stream reads per game: float32 (N, E), the canonical vector
    of each game seen by players[i] (default: its player to move), followed with
    `conventions` by that seat's `convention_features` (N, E + F). `reader`: a
    `ConventionReader` following this batch (the same features, folding only the moves
    made since its last call)."""
    enc = batch.encode(players=players)
    if not conventions:
        return enc
    seats = batch.current_players() if players is None else np.asarray(players, np.int64)
    seats = np.ascontiguousarray(seats, dtype=np.int64)
    conv = np.empty((len(batch), convention_feature_size(batch.config)), dtype=np.float32)
    if reader is None:
        convention_features(batch, seats, conv)
    else:
        reader.features(batch, seats, conv)
    return np.concatenate([enc, conv], axis=1)


def encode_batch(batch: HanabiBatch, conventions: bool = False,
                 reader: Optional[ConventionReader] = None) -> np.ndarray:
    """Every seat's input of every game of a batch (`seat_inputs`): float32 (N, P, E),
    or (N, P, E + F) with `conventions`."""
    n, players = len(batch), batch.config.players
    return np.stack([seat_inputs(batch, np.full(n, p, dtype=np.int64), conventions, reader)
                     for p in range(players)], axis=1)


# --- exact per-card features --------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CardLayout:
    """Where the sections that the card features read lie in a canonical vector of
    obs_dim floats (HLE's layout, `lbs_pz.engine._encode`), and the feature sizes.

    hands_len: the other hands' card one-hots come first, (P - 1) * H * C * R floats.
    fw_off: start of the fireworks (C * R). kn_off: start of the card knowledge (P * H
    cards of C * R + C + R floats each, at the end of the vector); has_knowledge: False
    for the minimal observation, whose vector has none. size: the features of a whole
    vector (2 * C * R + 2 * (P - 1) * H, + 6 * P * H + 8 * (P - 1) * (C + R) with
    knowledge); public_size: those of its public part alone (2 * C * R, + 6 * P * H with
    knowledge). ValueError when a size is not a positive integer or the sections do not
    fit the vector."""

    players: int
    obs_dim: int
    colors: int
    ranks: int
    hand_size: int
    deck_size: int

    def __post_init__(self):
        for name in ("colors", "ranks", "hand_size", "deck_size"):
            object.__setattr__(self, name, as_int(getattr(self, name), f"card_features {name}",
                                                  lo=1, what="a positive integer",
                                                  error=ValueError))
        if self.fw_off + self.colors * self.ranks > self.obs_dim:
            raise ValueError(f"card_features {self.game_args()} do not fit a vector of "
                             f"{self.obs_dim}")

    @classmethod
    def of(cls, config: HanabiConfig) -> "CardLayout":
        """The layout of the canonical vector of a game `config`."""
        return cls(players=config.players, obs_dim=config.encoding_size,
                   **cls.game_args_of(config))

    @staticmethod
    def game_args_of(config: HanabiConfig) -> dict:
        """{"colors", "ranks", "hand_size", "deck_size"} of a game (what checkpoints store
        as a net's card_features)."""
        return dict(colors=config.colors, ranks=config.ranks, hand_size=config.hand_size,
                    deck_size=config.deck_size)

    def game_args(self) -> dict:
        return dict(colors=self.colors, ranks=self.ranks, hand_size=self.hand_size,
                    deck_size=self.deck_size)

    @property
    def hands_len(self) -> int:
        return (self.players - 1) * self.hand_size * self.colors * self.ranks

    @property
    def fw_off(self) -> int:
        return self.hands_len + self.players + self.deck_size - self.players * self.hand_size

    @property
    def kn_off(self) -> int:
        bits = self.colors * self.ranks
        return self.obs_dim - self.players * self.hand_size * (bits + self.colors + self.ranks)

    @property
    def has_knowledge(self) -> bool:
        # the minimal observation ends with the last action: no knowledge section
        return self.kn_off > self.fw_off + self.colors * self.ranks

    @property
    def size(self) -> int:
        P, H, C, R = self.players, self.hand_size, self.colors, self.ranks
        return 2 * C * R + 2 * (P - 1) * H \
            + (6 * P * H + 8 * (P - 1) * (C + R) if self.has_knowledge else 0)

    @property
    def public_size(self) -> int:
        P, H = self.players, self.hand_size
        return 2 * self.colors * self.ranks + (6 * P * H if self.has_knowledge else 0)


def card_features(obs: np.ndarray, layout: Union[CardLayout, HanabiConfig],
                  out: Optional[np.ndarray] = None) -> np.ndarray:
    """The exact per-card features of canonical vectors, in one C loop: obs float32
    (..., E) -> float32 (..., layout.size) (see `lbs_pz.agents.public_lstm.CardFeatures`
    for each feature and their order; it gives the same numbers). `layout`: a CardLayout
    or the game's HanabiConfig. out: optional C-contiguous writeable float32 array of
    shape (N, size), N the number of vectors, filled and returned (reshaped)."""
    if isinstance(layout, HanabiConfig):
        layout = CardLayout.of(layout)
    obs = np.asarray(obs)
    if obs.dtype != np.float32 or obs.ndim < 1 or obs.shape[-1] != layout.obs_dim:
        raise ValueError(f"card_features reads float32 vectors (..., {layout.obs_dim}), got "
                         f"{obs.dtype} of shape {obs.shape}")
    flat = np.ascontiguousarray(obs.reshape(-1, layout.obs_dim))
    if out is None:
        out = np.empty((flat.shape[0], layout.size), dtype=np.float32)
    _fill_card_features(flat, out, layout.players, layout.colors, layout.ranks,
                        layout.hand_size, layout.fw_off, layout.kn_off, layout.has_knowledge)
    return out.reshape(*obs.shape[:-1], layout.size)
