"""Plain-text rendering of a game, for people and for error messages."""

from __future__ import annotations

from typing import Optional

import numpy as np

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


# --- picture ------------------------------------------------------------------------

_RGB = {  # card colors in HLE's order R, Y, G, W, B
    0: (220, 50, 47), 1: (240, 200, 40), 2: (60, 170, 70), 3: (235, 235, 235), 4: (40, 110, 220),
}
_DIGITS = {  # 3x5 bitmap font for ranks and counts
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111",
    "3": "111001111001111", "4": "101101111001001", "5": "111100111001111",
    "6": "111100111101111", "7": "111001001001001", "8": "111101111101111",
    "9": "111101111001111", "?": "111001011000010",
}
_CARD_W, _CARD_H, _GAP, _SCALE = 36, 50, 6, 4


def _draw_text(img, text, top, left, color=(20, 20, 20)):
    for k, ch in enumerate(text):
        bits = _DIGITS[ch]
        for r in range(5):
            for c in range(3):
                if bits[3 * r + c] == "1":
                    y, x = top + r * _SCALE, left + k * 4 * _SCALE + c * _SCALE
                    img[y:y + _SCALE, x:x + _SCALE] = color


def _draw_card(img, top, left, color, label):
    img[top:top + _CARD_H, left:left + _CARD_W] = (90, 90, 90) if color is None else _RGB[color]
    _draw_text(img, label, top + 15, left + (_CARD_W - 4 * _SCALE * len(label) + _SCALE) // 2)


def render_rgb(state, viewer: Optional[int] = None) -> "np.ndarray":
    """An RGB picture of the table, shape (H, W, 3) uint8: one row of cards per player
    (the viewer's hidden cards grey with '?'), the fireworks, then information tokens
    (blue squares) and lives (red squares)."""
    config = state.config
    seer = config.observation_type == "seer"
    columns = max(config.hand_size, config.colors, config.max_information_tokens // 2 + 1)
    rows = config.players + 2
    img = np.full((rows * (_CARD_H + _GAP) + _GAP, columns * (_CARD_W + _GAP) + _GAP, 3),
                  30, dtype=np.uint8)
    for p, hand in enumerate(state.hands):
        top = _GAP + p * (_CARD_H + _GAP)
        if p == state.current_player and not state.is_terminal:
            img[top - 3:top + _CARD_H + 3, 0:3] = (255, 255, 255)
        for i, card in enumerate(hand):
            left = _GAP + i * (_CARD_W + _GAP)
            if viewer == p and not seer:
                _draw_card(img, top, left, None, "?")
            else:
                _draw_card(img, top, left, card // config.ranks, str(card % config.ranks + 1))
    top = _GAP + config.players * (_CARD_H + _GAP)
    for c, height in enumerate(state.fireworks):
        _draw_card(img, top, _GAP + c * (_CARD_W + _GAP), c, str(height))
    top += _CARD_H + _GAP
    size = _CARD_H // 2 - 2
    for k in range(config.max_information_tokens):
        x = _GAP + k * (size + 4)
        img[top:top + size, x:x + size] = \
            (40, 110, 220) if k < state.information_tokens else (70, 70, 70)
    for k in range(config.max_life_tokens):
        x = _GAP + k * (size + 4)
        img[top + size + 4:top + 2 * size + 4, x:x + size] = \
            (220, 50, 47) if k < state.life_tokens else (70, 70, 70)
    return img
