# Included by _bots.pyx (one extension, so every call can be inlined): the bot's memory: the fold over the public history.

# --- the public-history fold -----------------------------------------------------------

cdef void bot_memory_init(int kind, const GameConfig* cfg, BotMemory* mem) noexcept nogil:
    cdef int p, j
    memset(mem, 0, sizeof(BotMemory))
    for p in range(cfg.players):
        mem.hands[p].len = cfg.hand_size
        for j in range(cfg.hand_size):
            mem.hands[p].cm[j] = (1 << cfg.colors) - 1
            mem.hands[p].rm[j] = (1 << cfg.ranks) - 1
    mem.next_group = 1
    board_init(cfg, mem.fireworks, mem.discard_count, PARAMS[kind].save_twos, &mem.board)


cdef int interpret_hint(const BotParams* pr, const BotTables* tb, const Board* bd, HandMem* h,
                        int is_rank, int value, uint32_t touched,
                        int16_t* next_group) noexcept nogil:
    """Apply a hint to a hand's memory: masks as HLE, then the conventions.
    Returns 1 for a save, 0 otherwise."""
    cdef int chop = chop_of(tb, bd, h), j
    cdef uint8_t bit = 1 << value
    cdef uint32_t k, p, fresh = 0
    cdef int16_t g
    for j in range(h.len):
        if (touched >> j) & 1:
            if not h.touched[j]:
                fresh |= 1u << j
            h.touched[j] = pr.keep_touched
            if is_rank:
                h.rm[j] = bit
            else:
                h.cm[j] = bit
        else:
            if is_rank:
                h.rm[j] &= ~bit
            else:
                h.cm[j] &= ~bit
    if pr.warn and is_rank and chop >= 0 and (touched >> chop) & 1:
        k = tb.cset[h.cm[chop]] & tb.rset[h.rm[chop]] & bd.possible & bd.saveworthy
        if k:
            h.promise[chop] = k
            h.group[chop] = 0
            return 1
    if pr.promise_play and pr.focus and fresh:
        # Focus: the chop if freshly touched, else the newest freshly touched card.
        if chop >= 0 and (fresh >> chop) & 1:
            j = chop
        else:
            j = 31 - __builtin_clz(fresh)
        k = tb.cset[h.cm[j]] & tb.rset[h.rm[j]] & bd.possible
        p = k & (bd.soon if pr.delayed else bd.playable)
        if p:
            h.promise[j] = p
            h.group[j] = 0
        return 0
    if pr.promise_play:
        g = next_group[0]
        next_group[0] += 1
        for j in range(h.len):
            if not (fresh >> j) & 1 or is_protected(tb, bd, h, j):
                continue
            k = tb.cset[h.cm[j]] & tb.rset[h.rm[j]] & bd.possible
            p = k & (bd.soon if pr.delayed else bd.playable)
            if p:
                h.promise[j] = p
                h.group[j] = g
    return 0


cdef void bot_memory_step(int kind, const GameConfig* cfg, const BotTables* tb,
                          BotMemory* mem, const MoveRecord* rec) noexcept nogil:
    """Fold one move of the public history into the memory."""
    cdef const BotParams* pr = &PARAMS[kind]
    cdef int P = cfg.players, H = cfg.hand_size, move = rec.move, p = rec.player
    cdef int slot, card, j, m, off, t, value, is_rank
    cdef HandMem* h
    cdef int16_t g
    cdef Board bd
    mem.folded += 1
    if move < 2 * H:
        h = &mem.hands[p]
        slot = move if move < H else move - H
        card = rec.card
        g = h.group[slot]
        if pr.group_elim and g > 0:
            for j in range(h.len):
                if j != slot and h.group[j] == g:
                    h.promise[j] &= ~(1u << card)
        if rec.scored:
            mem.fireworks[cfg.color_of[card]] += 1
        else:
            mem.discard_count[card] += 1
        board_init(cfg, mem.fireworks, mem.discard_count, pr.save_twos, &mem.board)
        for j in range(slot, h.len - 1):
            h.cm[j] = h.cm[j + 1]
            h.rm[j] = h.rm[j + 1]
            h.promise[j] = h.promise[j + 1]
            h.group[j] = h.group[j + 1]
            h.touched[j] = h.touched[j + 1]
        h.len -= 1
        if rec.drawn >= 0:          # only whether a card was drawn, never which
            j = h.len
            h.cm[j] = (1 << cfg.colors) - 1
            h.rm[j] = (1 << cfg.ranks) - 1
            h.promise[j] = 0
            h.group[j] = 0
            h.touched[j] = 0
            h.len += 1
        return
    m = move - 2 * H
    if m < (P - 1) * cfg.colors:
        off = 1 + m // cfg.colors
        value = m % cfg.colors
        is_rank = 0
    else:
        m -= (P - 1) * cfg.colors
        off = 1 + m // cfg.ranks
        value = m % cfg.ranks
        is_rank = 1
    t = (p + off) % P
    bd = mem.board
    if pr.delayed:
        board_queue(cfg, tb, &bd, mem.fireworks, mem)
    interpret_hint(pr, tb, &bd, &mem.hands[t], is_rank, value, rec.reveal, &mem.next_group)


cdef void bot_memory_replay(int kind, const GameConfig* cfg, const BotTables* tb,
                            const GameState* s, BotMemory* mem) noexcept nogil:
    cdef int i
    bot_memory_init(kind, cfg, mem)
    for i in range(s.num_history):
        bot_memory_step(kind, cfg, tb, mem, &s.history[i])
