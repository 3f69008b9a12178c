"""Plain-text rendering of a game, for people and for error messages."""

from __future__ import annotations

from typing import Optional

from lbs_pz.engine.config import COLOR_CHARS
from lbs_pz.engine.moves import move_name


def _knowledge_text(config, colors, ranks) -> str:
    """'RG 12' style: the colors and ranks a card may still have ('?' for anything)."""
    c = "".join(COLOR_CHARS[i] for i in colors) if len(colors) < config.colors else "?"
    r = "".join(str(i + 1) for i in ranks) if len(ranks) < config.ranks else "?"
    return f"{c}{r}"


def render_state(state, viewer: Optional[int] = None) -> str:
    """A table of the game. With `viewer` set, that seat's cards show as '??' (seer games
    excepted) and only what the seat may know is printed."""
    config = state.config
    seer = config.observation_type == "seer"
    lines = [
        f"Score {state.score}   Info {state.information_tokens}/{config.max_information_tokens}"
        f"   Lives {state.life_tokens}/{config.max_life_tokens}   Deck {state.deck_size}"
        + ("   GAME OVER" if state.is_terminal else ""),
        "Fireworks: " + " ".join(f"{COLOR_CHARS[c]}{n}" for c, n in enumerate(state.fireworks)),
    ]
    for p, hand in enumerate(state.hands):
        hidden = viewer == p and not seer
        cards = " ".join("??" if hidden else config.card_name(card) for card in hand)
        knowledge = " ".join(_knowledge_text(config, cs, rs)
                             for cs, rs, _, _ in state.card_knowledge(p))
        marker = "*" if p == state.current_player and not state.is_terminal else " "
        who = " (you)" if viewer == p else ""
        lines.append(f"{marker}P{p}{who}: {cards}   knows: {knowledge}")
    discards = " ".join(config.card_name(c) for c in sorted(state.discard_pile))
    lines.append(f"Discards: {discards or '-'}")
    records = state.move_records()
    if records:
        last = records[-1]
        text = move_name(config, last["move"])
        if last["card"] >= 0:
            text += f" {config.card_name(last['card'])}"
            if last["move"] >= config.hand_size:
                text += " scored" if last["scored"] else " misplayed"
        lines.append(f"Last move: P{last['player']} {text}")
    return "\n".join(lines)
