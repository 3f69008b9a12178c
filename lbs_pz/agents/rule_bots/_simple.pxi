# Included by _bots.pyx (one extension, so every call can be inlined): the random and simple bots.

# --- random and simple ------------------------------------------------------------------

cdef int act_random(const GameConfig* cfg, const GameState* s) noexcept nogil:
    """A legal move drawn from a hash of the public move history: random-looking, yet a
    deterministic function of what every player has seen (so usable as a blueprint)."""
    cdef uint8_t moves[MAX_MOVES]
    cdef int n = legal_moves(cfg, s, moves), i
    cdef uint64_t x = <uint64_t>0x243F6A8885A308D3
    if n == 0:
        return -1
    for i in range(s.num_history):
        x ^= <uint64_t>(s.history[i].move + 1) << (8 * (i & 7))
        if (i & 7) == 7:
            rng_next(&x)
    x ^= <uint64_t>s.num_history
    rng_next(&x)
    return moves[rng_below(&x, n)]


cdef inline int hint_move(const GameConfig* cfg, int off, int is_rank, int value) noexcept nogil:
    if is_rank:
        return 2 * cfg.hand_size + (cfg.players - 1) * cfg.colors + (off - 1) * cfg.ranks + value
    return 2 * cfg.hand_size + (off - 1) * cfg.colors + value


cdef int act_simple(const GameConfig* cfg, const GameState* s, int me) noexcept nogil:
    cdef int j, off, t, card, c, r, cm, rm
    cdef uint8_t moves[MAX_MOVES]
    cdef int n
    for j in range(s.hand_len[me]):
        cm = s.color_plausible[me][j]
        rm = s.rank_plausible[me][j]
        if popcount32(cm) == 1 and popcount32(rm) == 1:
            if s.fireworks[ctz32(cm)] == ctz32(rm):
                return cfg.hand_size + j
    if s.info_tokens > 0:
        for off in range(1, cfg.players):
            t = (me + off) % cfg.players
            for j in range(s.hand_len[t]):
                card = s.hand[t][j]
                c = cfg.color_of[card]
                r = cfg.rank_of[card]
                if s.fireworks[c] != r:
                    continue
                if s.color_hinted[t][j] < 0:
                    return hint_move(cfg, off, 0, c)
                if s.rank_hinted[t][j] < 0:
                    return hint_move(cfg, off, 1, r)
    if s.info_tokens < cfg.max_info:
        return 0
    n = legal_moves(cfg, s, moves)
    for j in range(n):
        if moves[j] >= 2 * cfg.hand_size:
            return moves[j]
    return moves[0] if n > 0 else -1
