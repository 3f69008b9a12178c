# Included by _bots.pyx (one extension, so every call can be inlined): memories shared along a common history prefix (the worlds of one search root).

# --- memories shared along a common history prefix -------------------------------------

cdef inline bint same_public_record(const MoveRecord* a, const MoveRecord* b) noexcept nogil:
    """The fields the memory fold reads (whether a card was drawn, never which)."""
    return (a.move == b.move and a.player == b.player and a.card == b.card
            and a.reveal == b.reveal and a.scored == b.scored
            and (a.drawn >= 0) == (b.drawn >= 0))


cdef void memo_init(int kind, const GameConfig* cfg, MemoCache* c) noexcept nogil:
    c.kind = kind
    c.len = 0
    bot_memory_init(kind, cfg, &c.snap[0])


cdef void memo_memory(const GameConfig* cfg, const BotTables* tb, MemoCache* c,
                      const GameState* s, BotMemory* out) noexcept nogil:
    """out = the memory of s's history (what bot_memory_replay computes), folding only the
    records after the longest prefix s shares with the cache; the cache then follows s."""
    cdef int k = 0, n = s.num_history, i
    while k < c.len and k < n and same_public_record(&c.ref[k], &s.history[k]):
        k += 1
    if k < n:
        for i in range(k, n):
            memcpy(&c.snap[i + 1], &c.snap[i], sizeof(BotMemory))
            bot_memory_step(c.kind, cfg, tb, &c.snap[i + 1], &s.history[i])
            c.ref[i] = s.history[i]
        c.len = n
    memcpy(out, &c.snap[n], sizeof(BotMemory))


cdef MemoCache* memo_new(int kind, const GameConfig* cfg) except NULL:
    cdef MemoCache* c = <MemoCache*>calloc(1, sizeof(MemoCache))
    if c == NULL:
        raise MemoryError("cannot allocate the bot memory cache")
    memo_init(kind, cfg, c)
    return c
