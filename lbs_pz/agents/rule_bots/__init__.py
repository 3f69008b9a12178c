"""`RuleBot`: the C rule bots of `lbs_pz.agents.rule_bots._bots` as Blueprints.

Every bot acts at C speed, never reads the acting seat's own cards or the deck, and
keeps no memory outside the game's public history, so it can be cloned into sampled
worlds and rolled out in batches (without the GIL). See `lbs_pz.agents.rule_bots._bots` for each
bot's conventions, and `RuleBot.conventions(name)`.

>>> from lbs_pz.engine import HanabiConfig, HanabiState
>>> bot = RuleBot("strong")
>>> state = HanabiState(HanabiConfig(players=2), seed=3)
>>> bot.act(state) in state.legal_moves()
True
>>> worlds = HanabiBatch.from_state(state, 4)
>>> moves = bot.rollout(worlds)              # every world played to the end, in C
>>> bool(worlds.terminals().all())
True

`convention_features(batch, seats, out)` writes the convention bots' reading of each
position as a seat sees it (promised and queued cards, chops, each hint's effect): the
inputs a net imitating them needs (`PublicLSTMNet(conventions=...)`). A row has
`convention_feature_size(config)` floats: CONVENTION_SLOT_PARTS per card of every hand,
one per other player, CONVENTION_HINT_PARTS per hint move. `ConventionReader(batch)`
gives the same rows for a batch followed move by move (a rollout): it keeps each game's
memory between calls and folds only the new moves. These are the public names of the
convention features (`lbs_pz.agents.features` gathers them with the nets' other inputs);
`_bots` is this package's private extension module.
"""

from __future__ import annotations

import hashlib
import re
from typing import Optional

import numpy as np

from lbs_pz.checks import as_int
from lbs_pz.engine import HanabiBatch, HanabiState
from lbs_pz.agents.rule_bots import _bots

BOT_NAMES = _bots.BOT_NAMES
# the convention features (see the module docstring), in C
CONVENTION_SLOT_PARTS: int = _bots.CONVENTION_SLOT_PARTS
CONVENTION_HINT_PARTS: int = _bots.CONVENTION_HINT_PARTS
convention_feature_size = _bots.convention_feature_size
convention_features = _bots.convention_features
ConventionReader = _bots.ConventionReader
STRONGEST = "strong"
# The bots' behaviour version. Bump it whenever any bot's moves change
# (tests/agents/test_rule_bots.py pins every bot's moves on fixed deals and fails until the
# pin and this are updated):
# beliefs and values trained for a bot record its fingerprint, which includes it, so a
# model trained for the old bot is then refused instead of silently misused.
BOTS_VERSION = 1


class RuleBot:
    """A C rule bot (one of BOT_NAMES: random, simple, weak, medium, strong, info,
    smart).

    Blueprint attributes: deterministic, no private memory (every decision is a function
    of the public history and the other players' cards), no value estimate.
    """

    deterministic = True
    has_private_memory = False
    has_value = False
    spec: Optional[str] = None      # the blueprint spec it was loaded from (agents.spec)

    def __init__(self, name: str = STRONGEST):
        self.kind = _bots.bot_kind(name)
        self.name = BOT_NAMES[self.kind]
        self._memory = _bots.MemoryCache(self.kind)   # counterfactual_mask's fold cache

    @property
    def fingerprint(self) -> str:
        """sha256 of this bot's name, BOTS_VERSION and convention switches: what belief and
        value checkpoints record as the blueprint they were trained for."""
        params = sorted(_bots.get_params(self.kind).items())
        text = f"lbs_pz rule bot {self.name} v{BOTS_VERSION} {params}"
        return hashlib.sha256(text.encode()).hexdigest()

    @staticmethod
    def conventions(name: str) -> str:
        """The documented conventions of bot `name` (from lbs_pz.agents.rule_bots._bots)."""
        kind = _bots.bot_kind(name)
        name = BOT_NAMES[kind]
        doc = _bots.__doc__ or ""
        pattern = rf"^{name}\s.*?(?=^\S|\Z)"
        found = re.search(pattern, doc, flags=re.M | re.S)
        return found.group(0).rstrip() if found else doc

    # --- Agent --------------------------------------------------------------------------

    def act(self, state: HanabiState, seat: Optional[int] = None) -> int:
        """Move id for `seat` (default: the player to move); -1 if the game is over."""
        return _bots.act(self.kind, _check_state(state, "act", "state"), seat)

    # --- Blueprint ----------------------------------------------------------------------

    def act_batch(self, states: HanabiBatch) -> np.ndarray:
        """Move of each world's player to move (int64 (N,), -1 where the game is over).
        The bot's memory of the history the worlds share is computed once."""
        return _bots.act_batch(self.kind, _check_batch(states, "act_batch"))

    def rollout(self, states: HanabiBatch, max_moves: int = -1) -> np.ndarray:
        """Self-play every world in place, k = max_moves moves or to the end (negative).
        Returns the moves made per world, int32 (N,)."""
        return _bots.play_batch(self.kind, _check_batch(states, "rollout"),
                                _max_moves(max_moves))

    def rollout_scores(self, states: HanabiBatch, max_moves: int = -1) -> np.ndarray:
        """`rollout`, then the score of every world, int32 (N,)."""
        self.rollout(states, max_moves)
        return states.scores()

    def value(self, states: HanabiBatch) -> Optional[np.ndarray]:
        """None: the rule bots have no value estimate."""
        _check_batch(states, "value")
        return None

    def counterfactual_mask(self, before: HanabiState, seat: int, move: int,
                            hands: np.ndarray) -> np.ndarray:
        """bool (N,): True where this bot, acting for the player to move in `before`,
        makes `move` when `seat` holds hands[r] (int (N, hand_len)); in C, with the bot's
        memory of the public history computed once for all hands. Card ids are checked
        against the game before they are narrowed to int8 (ValueError when out of range)."""
        _check_state(before, "counterfactual_mask", "before")
        hands = np.asarray(hands)
        if hands.dtype.kind not in "iu":
            raise TypeError(f"RuleBot.counterfactual_mask: hands must be an integer array "
                            f"(N, hand_len), got dtype {hands.dtype}")
        if hands.ndim != 2:
            raise ValueError(f"RuleBot.counterfactual_mask: hands must be 2-D (N, hand_len), "
                             f"got shape {hands.shape}")
        types = before.config.num_card_types
        if hands.size and (hands.min() < 0 or hands.max() >= types):
            raise ValueError(f"RuleBot.counterfactual_mask: card ids must be in [0, {types}), "
                             f"got values in [{hands.min()}, {hands.max()}]")
        hands = np.ascontiguousarray(hands, dtype=np.int8)
        return _bots.counterfactual_mask(self.kind, before, seat, move, hands,
                                         self._memory).astype(bool)

    def __repr__(self) -> str:
        return f"RuleBot({self.name!r})"


def _max_moves(max_moves) -> int:
    """An int move budget (negative: to the end), clipped to the C int range."""
    max_moves = as_int(max_moves, "max_moves", what="an int (negative: to the end)")
    return max(-1, min(max_moves, 2**31 - 1))


def _check_state(state, method: str, arg: str) -> HanabiState:
    if not isinstance(state, HanabiState):
        raise TypeError(f"RuleBot.{method}: {arg} must be a HanabiState, got "
                        f"{type(state).__name__}")
    return state


def _check_batch(states, method: str) -> HanabiBatch:
    if not isinstance(states, HanabiBatch):
        raise TypeError(f"RuleBot.{method} takes a HanabiBatch, got "
                        f"{type(states).__name__}; wrap a list of states with "
                        f"HanabiBatch.from_states(states)")
    return states
