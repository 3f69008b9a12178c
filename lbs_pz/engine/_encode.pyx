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
and, on request (own_hand), the observer's own cards one-hot by slot after them: the
features of `lbs_pz.search.value.value_features`.
"""

from libc.stdint cimport int64_t
from libc.string cimport memset

from lbs_pz.engine._core cimport (
    GameConfig, GameState, MoveRecord, OBS_MINIMAL, deck_remaining,
)


ctypedef fused Sink:
    float       # the encoding as floats
    int64_t     # the positions of its ones


cdef void encode_canonical(const GameConfig* cfg, const GameState* s, int observer,
                           bint own_hand, float* out) noexcept nogil:
    """The encoding as floats: out (encoding_size,) is overwritten; with own_hand, out
    (encoding_size + hand_size * card_types,) also gets the observer's own cards."""
    memset(out, 0, (cfg.encoding_size + (cfg.hand_size * cfg.card_types if own_hand else 0))
           * sizeof(float))
    _encode(cfg, s, observer, out)
    if own_hand:
        _own_hand(cfg, s, observer, out, 0)


cdef int encode_canonical_ones(const GameConfig* cfg, const GameState* s, int observer,
                               bint own_hand, int64_t* positions) noexcept nogil:
    """The positions of the encoding's ones (and, with own_hand, of the observer's own
    cards), ascending, into positions (room for encoding_size + hand_size); returns how
    many."""
    cdef int n = _encode(cfg, s, observer, positions)
    if own_hand:
        n = _own_hand(cfg, s, observer, positions, n)
    return n


cdef inline int _bit(Sink* out, int n, int at, int bit) noexcept nogil:
    """Feature `at` is the lowest bit of `bit`: a float in the floats, or the next of the
    positions when it is one (one code path per Sink, chosen at compile time; no branch
    on `bit`). Every section is written in ascending order, each feature once."""
    if Sink is float:
        out[at] = bit & 1
        return n
    else:
        out[n] = at
        return n + (bit & 1)


cdef inline int _one(Sink* out, int n, int at) noexcept nogil:
    """Set feature `at`."""
    return _bit(out, n, at, 1)


cdef inline int _own_hand(const GameConfig* cfg, const GameState* s, int seat, Sink* out,
                          int n) noexcept nogil:
    """After the encoding, `seat`'s own cards one-hot by slot: feature encoding_size +
    slot * card_types + card (an empty slot is all zeros). Only search's sampled worlds
    are encoded this way: a seat's own cards are hidden from it in the real game."""
    cdef int j
    for j in range(s.hand_len[seat]):
        n = _one(out, n, cfg.encoding_size + j * cfg.card_types + s.hand[seat][j])
    return n


cdef inline int _encode(const GameConfig* cfg, const GameState* s, int observer,
                 Sink* out) noexcept nogil:
    cdef int P = cfg.players, C = cfg.colors, R = cfg.ranks, hs = cfg.hand_size
    cdef int bits = cfg.card_types
    cdef int off, rel, p, i, c, r, card, kind, target, m, k
    cdef int offset = 0, n = 0
    cdef const MoveRecord* last

    # Hands of the other players.
    for rel in range(1, P):
        p = (observer + rel) % P
        for i in range(s.hand_len[p]):
            n = _one(out, n, offset + i * bits + s.hand[p][i])
        offset += hs * bits
    for rel in range(P):
        if s.hand_len[(observer + rel) % P] < hs:
            n = _one(out, n, offset + rel)
    offset += P

    # Board.
    for i in range(deck_remaining(cfg, s)):
        n = _one(out, n, offset + i)
    offset += cfg.deck_size - P * hs
    for c in range(C):
        if s.fireworks[c] > 0:
            n = _one(out, n, offset + s.fireworks[c] - 1)
        offset += R
    for i in range(s.info_tokens):
        n = _one(out, n, offset + i)
    offset += cfg.max_info
    for i in range(s.life_tokens):
        n = _one(out, n, offset + i)
    offset += cfg.max_life

    # Discards.
    for card in range(bits):
        for i in range(s.discard_count[card]):
            n = _one(out, n, offset + i)
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
        n = _one(out, n, offset + rel)
        offset += P
        n = _one(out, n, offset + kind)
        offset += 4
        if kind >= 2:
            m -= 2 * hs
            if kind == 2:
                target = 1 + m // C
            else:
                m -= (P - 1) * C
                target = 1 + m // R
            n = _one(out, n, offset + (rel + target) % P)
        offset += P
        if kind == 2:
            n = _one(out, n, offset + m % C)
        offset += C
        if kind == 3:
            n = _one(out, n, offset + m % R)
        offset += R
        if kind >= 2:
            for i in range(hs):
                if (last.reveal >> i) & 1:
                    n = _one(out, n, offset + i)
        offset += hs
        if kind <= 1:
            n = _one(out, n, offset + (last.move if kind == 1 else last.move - hs))
        offset += hs
        if kind <= 1:
            n = _one(out, n, offset + last.card)
        offset += bits
        if kind == 0:
            if last.scored:
                n = _one(out, n, offset)
            if last.info_token:
                n = _one(out, n, offset + 1)
        offset += 2
    else:
        offset += 2 * P + 4 + C + R + 2 * hs + bits + 2

    if cfg.obs_type == OBS_MINIMAL:
        return n

    # Common card knowledge of every hand, the observer's first.
    for rel in range(P):
        p = (observer + rel) % P
        for i in range(s.hand_len[p]):
            for c in range(C):
                if (s.color_plausible[p][i] >> c) & 1:
                    for r in range(R):      # branch-free: the rank bits are unpredictable
                        n = _bit(out, n, offset + c * R + r, s.rank_plausible[p][i] >> r)
            offset += bits
            if s.color_hinted[p][i] >= 0:
                n = _one(out, n, offset + s.color_hinted[p][i])
            offset += C
            if s.rank_hinted[p][i] >= 0:
                n = _one(out, n, offset + s.rank_hinted[p][i])
            offset += R
        offset += (hs - s.hand_len[p]) * (bits + C + R)
    return n
