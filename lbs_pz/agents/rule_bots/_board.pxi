# Included by _bots.pyx (one extension, so every call can be inlined): lookup tables, the public board and card knowledge.

# --- tables, board, knowledge ----------------------------------------------------------

cdef void bot_tables_init(const GameConfig* cfg, BotTables* tb) noexcept nogil:
    cdef int c, r, m
    memset(tb, 0, sizeof(BotTables))
    tb.colors = cfg.colors
    tb.ranks = cfg.ranks
    tb.types = cfg.card_types
    for c in range(cfg.colors):
        for r in range(cfg.ranks):
            tb.color_bits[c] |= 1u << (c * cfg.ranks + r)
            tb.rank_bits[r] |= 1u << (c * cfg.ranks + r)
    tb.all_types = (1u << cfg.card_types) - 1u
    for m in range(32):
        for c in range(cfg.colors):
            if (m >> c) & 1:
                tb.cset[m] |= tb.color_bits[c]
        for r in range(cfg.ranks):
            if (m >> r) & 1:
                tb.rset[m] |= tb.rank_bits[r]


cdef void board_init(const GameConfig* cfg, const int8_t* fw, const int8_t* dc, int save_twos,
                     Board* bd) noexcept nogil:
    cdef int c, r, t, f, left, dead
    cdef uint32_t b, twos = 0
    memset(bd, 0, sizeof(Board))
    for c in range(cfg.colors):
        f = fw[c]
        dead = 0
        for r in range(cfg.ranks):
            t = c * cfg.ranks + r
            b = 1u << t
            left = cfg.card_count[t] - dc[t]
            if r < f:
                bd.worthless |= b
                if left > 1:
                    bd.possible |= b
                continue
            if left > 0:
                bd.possible |= b
            if dead or left <= 0:
                bd.worthless |= b
                dead = 1
                continue
            if r == f:
                bd.playable |= b
            if left == 1:
                bd.critical |= b
            if r == 1:
                twos |= b
    bd.saveworthy = bd.critical
    if save_twos:
        bd.saveworthy |= twos


cdef inline uint32_t knowledge(const BotTables* tb, const Board* bd, const HandMem* h,
                               int j) noexcept nogil:
    """Public knowledge of slot j: hint masks and card counts, narrowed by its promise
    (a promise that contradicts the rest is ignored)."""
    cdef uint32_t k = tb.cset[h.cm[j]] & tb.rset[h.rm[j]] & bd.possible
    cdef uint32_t q = k & h.promise[j]
    return q if q else k


cdef inline bint is_protected(const BotTables* tb, const Board* bd, const HandMem* h,
                              int j) noexcept nogil:
    return (h.promise[j] & tb.cset[h.cm[j]] & tb.rset[h.rm[j]] & bd.possible) != 0


cdef inline int chop_of(const BotTables* tb, const Board* bd, const HandMem* h) noexcept nogil:
    """The oldest card no hint has touched, or -1."""
    cdef int j
    for j in range(h.len):
        if not h.touched[j] and not is_protected(tb, bd, h, j):
            return j
    return -1


cdef inline bint subset(uint32_t k, uint32_t of) noexcept nogil:
    return k != 0 and (k & ~of) == 0


cdef void board_queue(const GameConfig* cfg, const BotTables* tb, Board* bd,
                      const int8_t* fw, const BotMemory* mem) noexcept nogil:
    """bd.soon: per color, the card after every card publicly known to be exactly the
    next one of that color (a chain of queued plays); the playable card if none."""
    cdef int ext[MAX_COLORS]
    cdef int c, p, j, t, changed = 1
    cdef uint32_t k
    for c in range(cfg.colors):
        ext[c] = fw[c]
    while changed:
        changed = 0
        for p in range(cfg.players):
            for j in range(mem.hands[p].len):
                k = knowledge(tb, bd, &mem.hands[p], j)
                if k != 0 and (k & (k - 1)) == 0:
                    t = ctz32(k)
                    c = cfg.color_of[t]
                    if cfg.rank_of[t] == ext[c]:
                        ext[c] += 1
                        changed = 1
    bd.soon = 0
    for c in range(cfg.colors):
        if ext[c] < cfg.ranks:
            bd.soon |= 1u << (c * cfg.ranks + ext[c])
    bd.soon &= ~bd.worthless
