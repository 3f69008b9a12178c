"""A structured, hidden-information-free view of a game for one seat."""

from __future__ import annotations

import dataclasses
import functools
from typing import Optional, Tuple

from lbs_pz.engine.moves import Move, decode_move


@dataclasses.dataclass(frozen=True)
class CardKnowledge:
    """What a card's holder knows from hints: the plausible colors and ranks (indices)
    and the directly hinted color / rank (None when not hinted)."""

    colors: Tuple[int, ...]
    ranks: Tuple[int, ...]
    hinted_color: Optional[int]
    hinted_rank: Optional[int]

    def allows(self, color: int, rank: int) -> bool:
        return color in self.colors and rank in self.ranks


@dataclasses.dataclass(frozen=True)
class PastMove:
    """A move of the game as every player saw it. `player` is an absolute seat; `card`
    is the card played or discarded (None for hints); `revealed` the slots a hint
    touched; `drawn` the card drawn afterwards (None if none, or hidden from the viewer)."""

    player: int
    move_id: int
    move: Move
    card: Optional[int]
    revealed: Tuple[int, ...]
    scored: bool
    information_token: bool
    drawn: Optional[int]


@dataclasses.dataclass(frozen=True)
class PlayerView:
    """Everything seat `player` may see, and nothing else.

    `hands[p]` lists seat p's cards (absolute seats); the viewer's own cards are None
    (unless the observation type is "seer"). `knowledge[p][i]` is the common knowledge
    about seat p's card i (in the "minimal" observation type nobody remembers hints, so
    every card is unconstrained). `history` holds every move of the game, oldest first;
    `last_moves` are those since the viewer's own previous move (HLE's last moves)."""

    player: int
    num_players: int
    current_player: int
    fireworks: Tuple[int, ...]
    information_tokens: int
    life_tokens: int
    deck_size: int
    discard_pile: Tuple[int, ...]
    hands: Tuple[Tuple[Optional[int], ...], ...]
    knowledge: Tuple[Tuple[CardKnowledge, ...], ...]
    legal_moves: Tuple[int, ...]
    score: int
    is_terminal: bool
    # The history as the viewer sees it (`HanabiState.view_records`), decoded into
    # `history` on first use: most agents never read it, and decoding is most of the cost
    # of a view.
    records: bytes = dataclasses.field(default=b"", repr=False)
    config: object = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def history(self) -> Tuple[PastMove, ...]:
        """Every move of the game, oldest first (PastMove; drawn cards the viewer cannot
        see are None)."""
        cached = self.__dict__.get("_history")
        if cached is None:
            cached = _decode_history(self.config, self.records)
            object.__setattr__(self, "_history", cached)
        return cached

    @property
    def last_moves(self) -> Tuple[PastMove, ...]:
        out = []
        for past in reversed(self.history):
            out.append(past)
            if past.player == self.player:
                break
        return tuple(reversed(out))


@functools.lru_cache(maxsize=64)
def _tables(config):
    """Per variant: the decoded move of every move id, the slots of every hint mask, and
    caches of the (immutable) PastMove of each distinct record and the CardKnowledge
    tuple of each distinct hand knowledge: views of many worlds share these objects."""
    moves = tuple(decode_move(config, m) for m in range(config.num_moves))
    slots = tuple(tuple(i for i in range(config.hand_size) if (mask >> i) & 1)
                  for mask in range(1 << config.hand_size))
    return moves, slots, {}, {}


def player_view(state, player: int) -> PlayerView:
    """Build the PlayerView of `player` from a HanabiState.

    The frozen dataclass is filled through its __dict__ rather than its __init__ (a
    third of the cost of a view, which search calls once per blueprint move in every
    sampled world); the fields are exactly those __init__ would set."""
    config = state.config
    seer = config.observation_type == "seer"
    minimal = config.observation_type == "minimal"
    hands = tuple(tuple(hand) if (p != player or seer) else (None,) * len(hand)
                  for p, hand in enumerate(state.hands))
    view = object.__new__(PlayerView)
    view.__dict__.update(
        player=player,
        num_players=config.players,
        current_player=state.current_player,
        fireworks=state.fireworks,
        information_tokens=state.information_tokens,
        life_tokens=state.life_tokens,
        deck_size=state.deck_size,
        discard_pile=tuple(state.discard_pile),
        hands=hands,
        knowledge=tuple(_hand_knowledge(state, p, minimal) for p in range(config.players)),
        legal_moves=tuple(state.legal_moves()) if state.current_player == player else (),
        score=state.score,
        is_terminal=state.is_terminal,
        records=state.view_records(player, not seer),
        config=config,
    )
    return view


def _hand_knowledge(state, player: int, minimal: bool) -> Tuple[CardKnowledge, ...]:
    """The CardKnowledge of every card of `player`'s hand; one shared tuple per distinct
    hand knowledge (views of sampled worlds repeat them)."""
    config = state.config
    cache = _tables(config)[3]
    key = (minimal, len(state.hand(player))) if minimal else state.knowledge_key(player)
    found = cache.get(key)
    if found is None:
        if len(cache) > 100_000:
            cache.clear()
        if minimal:
            everything = (tuple(range(config.colors)), tuple(range(config.ranks)), None, None)
            found = tuple(CardKnowledge(*everything) for _ in range(key[1]))
        else:
            found = tuple(
                CardKnowledge(colors, ranks, None if hc < 0 else hc, None if hr < 0 else hr)
                for colors, ranks, hc, hr in state.card_knowledge(player))
        cache[key] = found
    return found


def _decode_history(config, records: bytes) -> Tuple[PastMove, ...]:
    """The PastMoves of `view_records` bytes; one shared object per distinct record."""
    if config is None or not records:
        return ()
    decoded, slots, past, _ = _tables(config)
    if len(past) > 100_000:
        past.clear()
    history = []
    for i in range(0, len(records), 7):
        key = records[i:i + 7]
        entry = past.get(key)
        if entry is None:
            move, player, card, reveal, scored, token, drawn = key
            card, drawn = (-1 if card == 255 else card), (-1 if drawn == 255 else drawn)
            entry = past[key] = PastMove(
                player=player, move_id=move, move=decoded[move],
                card=None if card < 0 else card, revealed=slots[reveal],
                scored=bool(scored), information_token=bool(token),
                drawn=None if drawn < 0 else drawn)
        history.append(entry)
    return tuple(history)
