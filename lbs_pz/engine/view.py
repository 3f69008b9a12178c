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
    history: Tuple[PastMove, ...]
    legal_moves: Tuple[int, ...]
    score: int
    is_terminal: bool

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
    a cache of the (immutable) PastMove of each distinct record: views of many worlds
    that share a history share these objects."""
    moves = tuple(decode_move(config, m) for m in range(config.num_moves))
    slots = tuple(tuple(i for i in range(config.hand_size) if (mask >> i) & 1)
                  for mask in range(1 << config.hand_size))
    return moves, slots, {}


def player_view(state, player: int) -> PlayerView:
    """Build the PlayerView of `player` from a HanabiState."""
    config = state.config
    decoded, slots, past = _tables(config)
    if len(past) > 100_000:
        past.clear()
    seer = config.observation_type == "seer"
    minimal = config.observation_type == "minimal"
    hands = tuple(
        tuple(card if (p != player or seer) else None for card in hand)
        for p, hand in enumerate(state.hands)
    )
    all_colors, all_ranks = tuple(range(config.colors)), tuple(range(config.ranks))
    knowledge = []
    for p in range(config.players):
        if minimal:
            knowledge.append(tuple(CardKnowledge(all_colors, all_ranks, None, None)
                                   for _ in state.hand(p)))
        else:
            knowledge.append(tuple(
                CardKnowledge(colors, ranks, None if hc < 0 else hc, None if hr < 0 else hr)
                for colors, ranks, hc, hr in state.card_knowledge(p)
            ))
    history = []
    for rec in state.move_records():
        hidden_draw = rec["player"] == player and not seer
        drawn = None if (rec["drawn"] < 0 or hidden_draw) else rec["drawn"]
        key = (rec["player"], rec["move"], rec["card"], rec["reveal"], rec["scored"],
               rec["info_token"], drawn)
        entry = past.get(key)
        if entry is None:
            entry = past[key] = PastMove(
                player=rec["player"],
                move_id=rec["move"],
                move=decoded[rec["move"]],
                card=None if rec["card"] < 0 else rec["card"],
                revealed=slots[rec["reveal"]],
                scored=bool(rec["scored"]),
                information_token=bool(rec["info_token"]),
                drawn=drawn,
            )
        history.append(entry)
    return PlayerView(
        player=player,
        num_players=config.players,
        current_player=state.current_player,
        fireworks=state.fireworks,
        information_tokens=state.information_tokens,
        life_tokens=state.life_tokens,
        deck_size=state.deck_size,
        discard_pile=tuple(state.discard_pile),
        hands=hands,
        knowledge=tuple(knowledge),
        history=tuple(history),
        legal_moves=tuple(state.legal_moves()) if state.current_player == player else (),
        score=state.score,
        is_terminal=state.is_terminal,
    )
