"""Game configuration: the same parameter names and meanings as HLE and PettingZoo's hanabi."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Optional, Tuple, Union

from lbs_pz.checks import as_bool, as_int, is_int
from lbs_pz.engine._core import derived_sizes

OBSERVATION_TYPES = ("minimal", "card_knowledge", "seer")  # index = HLE's integer code
COLOR_CHARS = "RYGWB"                                      # HLE's color letters

_LIMITS = {
    "players": (2, 5),
    "colors": (1, 5),
    "ranks": (1, 5),
    "hand_size": (1, 8),
    "max_information_tokens": (1, 16),
    "max_life_tokens": (1, 8),
}


def _check_int(name: str, value) -> int:
    lo, hi = _LIMITS[name]
    return as_int(value, name, lo, hi, what=f"an integer in [{lo}, {hi}]", error=ValueError)


@dataclasses.dataclass(frozen=True)
class HanabiConfig:
    """Rules of one Hanabi variant.

    Args:
        players: 2..5.
        colors: 1..5 suits (HLE letters R, Y, G, W, B).
        ranks: 1..5 ranks per suit; three copies of rank 1, one of the top rank, two of the rest.
        hand_size: cards per hand, 1..8; None means the standard rule (5, or 4 with 4+ players).
        max_information_tokens: hint tokens at the start and the cap (1..16).
        max_life_tokens: mistakes allowed before the game is lost with score 0 (1..8).
        random_start_player: draw the first player from the game's seed instead of seat 0.
        observation_type: "minimal", "card_knowledge" or "seer" (or HLE's 0, 1, 2).

    Derived: `num_moves` (20 for the standard 2-player game), `deck_size` (50),
    `encoding_size` (658: HLE's canonical observation length).
    """

    players: int = 2
    colors: int = 5
    ranks: int = 5
    # None (the standard rule) is replaced by __post_init__: a config's hand_size is an int
    hand_size: int = None  # type: ignore[assignment]
    max_information_tokens: int = 8
    max_life_tokens: int = 3
    random_start_player: bool = False
    # an HLE integer code is replaced by its name: a config's observation_type is a str
    observation_type: str = "card_knowledge"

    if TYPE_CHECKING:
        # what the constructor accepts (the fields above are the values a config holds)
        def __init__(self, players: int = 2, colors: int = 5, ranks: int = 5,
                     hand_size: Optional[int] = None, max_information_tokens: int = 8,
                     max_life_tokens: int = 3, random_start_player: bool = False,
                     observation_type: Union[str, int] = "card_knowledge") -> None: ...

        # (num_moves, deck_size, encoding_size), set by __post_init__; not a field
        _sizes: Tuple[int, int, int] = dataclasses.field(init=False, repr=False,
                                                         compare=False)

    def __post_init__(self) -> None:
        for name in ("players", "colors", "ranks", "max_information_tokens", "max_life_tokens"):
            object.__setattr__(self, name, _check_int(name, getattr(self, name)))
        if self.hand_size is None:
            object.__setattr__(self, "hand_size", 5 if self.players < 4 else 4)
        object.__setattr__(self, "hand_size", _check_int("hand_size", self.hand_size))
        object.__setattr__(self, "random_start_player", as_bool(
            self.random_start_player, "random_start_player", what="a bool", error=ValueError))
        obs = self.observation_type
        if is_int(obs) and 0 <= obs < len(OBSERVATION_TYPES):
            obs = OBSERVATION_TYPES[obs]
        if obs not in OBSERVATION_TYPES:
            raise ValueError(f"observation_type must be one of {OBSERVATION_TYPES} (or 0, 1, 2), "
                             f"got {self.observation_type!r}")
        object.__setattr__(self, "observation_type", obs)
        num_moves, deck_size, encoding_size = derived_sizes(
            self.players, self.colors, self.ranks, self.hand_size,
            self.max_information_tokens, self.max_life_tokens, self.observation_type_id,
        )
        if self.players * self.hand_size > deck_size:
            raise ValueError(
                f"hand_size must be at most {deck_size // self.players} for {self.players} players "
                f"with {self.colors} colors and {self.ranks} ranks (a {deck_size}-card deck), "
                f"got {self.hand_size}"
            )
        object.__setattr__(self, "_sizes", (num_moves, deck_size, encoding_size))

    # Pickling stores the fields only and re-validates them on load, so that a corrupted or
    # hand-made pickle (say players=50) is a ValueError here, never a config the engine trusts.
    def __getstate__(self) -> dict:
        return {name: getattr(self, name) for name in _FIELDS}

    def __setstate__(self, state) -> None:
        if not isinstance(state, dict):
            raise ValueError(f"pickled HanabiConfig: expected a dict of fields, got "
                             f"{type(state).__name__}")
        keys = state.keys() - {"_sizes"}                                     # _sizes: old pickles
        if keys != _FIELD_SET:
            raise ValueError(f"pickled HanabiConfig: missing fields {sorted(_FIELD_SET - keys)}, "
                             f"unknown fields {sorted(map(str, keys - _FIELD_SET))}")
        fresh = HanabiConfig(**{name: state[name] for name in _FIELDS})     # validates
        self.__dict__.update(fresh.__dict__)

    @property
    def observation_type_id(self) -> int:
        """HLE's integer code for the observation type (0 minimal, 1 card knowledge, 2 seer)."""
        return OBSERVATION_TYPES.index(self.observation_type)

    @property
    def num_moves(self) -> int:
        """Number of distinct move ids: discards, plays, color hints, rank hints."""
        return self._sizes[0]

    @property
    def deck_size(self) -> int:
        return self._sizes[1]

    @property
    def encoding_size(self) -> int:
        """Length of HLE's canonical observation vector."""
        return self._sizes[2]

    @property
    def num_card_types(self) -> int:
        return self.colors * self.ranks

    @property
    def max_game_length(self) -> int:
        """An upper bound on the moves of a game: plays and discards draw the D cards left
        after the deal, then one final round; hints are paid by tokens (the start's, one
        per discard, one per completed color); plus one."""
        d = self.deck_size - self.players * self.hand_size
        return 2 * d + 2 * self.players + self.max_information_tokens + self.colors + 1

    def card_count(self, card: int) -> int:
        """Copies of a card type (id color * ranks + rank) in the deck."""
        rank = card % self.ranks
        return 3 if rank == 0 else (1 if rank == self.ranks - 1 else 2)

    def card_name(self, card: int) -> str:
        """HLE's name of a card id, e.g. 'R1' for the red 1 (id 0)."""
        if not 0 <= card < self.num_card_types:
            return "XX"
        return f"{COLOR_CHARS[card // self.ranks]}{card % self.ranks + 1}"

    def hle_params(self, seed: int = -1) -> dict:
        """The equivalent parameter dict for HLE's `HanabiGame`/`rl_env`."""
        return {
            "players": self.players,
            "colors": self.colors,
            "ranks": self.ranks,
            "hand_size": self.hand_size,
            "max_information_tokens": self.max_information_tokens,
            "max_life_tokens": self.max_life_tokens,
            "random_start_player": "true" if self.random_start_player else "false",
            "observation_type": self.observation_type_id,
            "seed": seed,
        }


_FIELDS = tuple(f.name for f in dataclasses.fields(HanabiConfig))
_FIELD_SET = frozenset(_FIELDS)
