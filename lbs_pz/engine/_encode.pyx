# cython: language_level=3
"""HLE's canonical observation encoding, as a pure function of (state, observer).

Sections, in order (sizes for 2 players, 5 colors, 5 ranks, 5 cards = 658 floats):
  hands (127)          other players' cards one-hot, then one bit per player whose hand
                       is short (relative seat order: the observer is seat 0)
  board (76)           deck size, fireworks, information and life tokens (thermometers,
                       fireworks one-hot of the top card)
  discards (50)        per card type, a thermometer of discarded copies
  last action (55)     the most recent player move: who, kind, target, color, rank,
                       cards touched, slot, card played/discarded, scored, token gained
  card knowledge (350) per hand slot of every player: plausible cards and hinted
                       color/rank; absent in the "minimal" observation type
"""

from libc.string cimport memset

from lbs_pz.engine._core cimport (
    GameConfig, GameState, MoveRecord, OBS_MINIMAL, deck_remaining,
)


cdef void encode_canonical(const GameConfig* cfg, const GameState* s, int observer,
                           float* out) noexcept nogil:
    cdef int P = cfg.players, C = cfg.colors, R = cfg.ranks, hs = cfg.hand_size
    cdef int bits = cfg.card_types
    cdef int off, rel, p, i, c, r, card, kind, target, m, k
    cdef int offset = 0
    cdef const MoveRecord* last
    memset(out, 0, cfg.encoding_size * sizeof(float))

    # Hands of the other players.
    for rel in range(1, P):
        p = (observer + rel) % P
        for i in range(s.hand_len[p]):
            out[offset + i * bits + s.hand[p][i]] = 1.0
        offset += hs * bits
    for rel in range(P):
        if s.hand_len[(observer + rel) % P] < hs:
            out[offset + rel] = 1.0
    offset += P

    # Board.
    for i in range(deck_remaining(cfg, s)):
        out[offset + i] = 1.0
    offset += cfg.deck_size - P * hs
    for c in range(C):
        if s.fireworks[c] > 0:
            out[offset + s.fireworks[c] - 1] = 1.0
        offset += R
    for i in range(s.info_tokens):
        out[offset + i] = 1.0
    offset += cfg.max_info
    for i in range(s.life_tokens):
        out[offset + i] = 1.0
    offset += cfg.max_life

    # Discards.
    for card in range(bits):
        for i in range(s.discard_count[card]):
            out[offset + i] = 1.0
        offset += cfg.card_count[card]

    # Last action: HLE's observer sees moves back to its own last one, so the last
    # non-deal move it encodes is simply the most recent move of the game.
    if s.num_history > 0:
        last = &s.history[s.num_history - 1]
        m = last.move
        rel = (last.player - observer + P) % P
        if m < hs:
            kind = 1
        elif m < 2 * hs:
            kind = 0
        elif m < 2 * hs + (P - 1) * C:
            kind = 2
        else:
            kind = 3
        out[offset + rel] = 1.0
        offset += P
        out[offset + kind] = 1.0
        offset += 4
        if kind >= 2:
            m -= 2 * hs
            if kind == 2:
                target = 1 + m // C
            else:
                m -= (P - 1) * C
                target = 1 + m // R
            out[offset + (rel + target) % P] = 1.0
        offset += P
        if kind == 2:
            out[offset + m % C] = 1.0
        offset += C
        if kind == 3:
            out[offset + m % R] = 1.0
        offset += R
        if kind >= 2:
            for i in range(hs):
                if (last.reveal >> i) & 1:
                    out[offset + i] = 1.0
        offset += hs
        if kind <= 1:
            out[offset + (last.move if kind == 1 else last.move - hs)] = 1.0
        offset += hs
        if kind <= 1:
            out[offset + last.card] = 1.0
        offset += bits
        if kind == 0:
            if last.scored:
                out[offset] = 1.0
            if last.info_token:
                out[offset + 1] = 1.0
        offset += 2
    else:
        offset += 2 * P + 4 + C + R + 2 * hs + bits + 2

    if cfg.obs_type == OBS_MINIMAL:
        return

    # Common card knowledge of every hand, the observer's first.
    for rel in range(P):
        p = (observer + rel) % P
        for i in range(s.hand_len[p]):
            for c in range(C):
                if (s.color_plausible[p][i] >> c) & 1:
                    for r in range(R):
                        if (s.rank_plausible[p][i] >> r) & 1:
                            out[offset + c * R + r] = 1.0
            offset += bits
            if s.color_hinted[p][i] >= 0:
                out[offset + s.color_hinted[p][i]] = 1.0
            offset += C
            if s.rank_hinted[p][i] >= 0:
                out[offset + s.rank_hinted[p][i]] = 1.0
            offset += R
        offset += (hs - s.hand_len[p]) * (bits + C + R)
