# Included by _bots.pyx (one extension, so every call can be inlined): hint evaluation for the convention bots (danger of a discard, scoring a hint, the best hint).

# --- the convention bots ----------------------------------------------------------------

cdef int danger(const BotParams* pr, const GameConfig* cfg, const BotTables* tb,
                const Board* bd, const GameState* s, int me, int t,
                const HandMem* h) noexcept nogil:
    """How bad seat t's next discard would be, as `me` sees it: 0 if t has a known play or
    a known worthless card (it will not discard its chop), else the value of its chop."""
    cdef int j, card, q, i
    cdef uint32_t k, b
    for j in range(h.len):
        k = knowledge(tb, bd, h, j)
        if subset(k, bd.playable) or subset(k, bd.worthless):
            return 0
    j = chop_of(tb, bd, h)
    if j < 0:
        return 0
    card = s.hand[t][j]
    b = 1u << card
    if b & bd.critical:
        return 500
    if not (pr.save_twos and (b & bd.saveworthy)):
        return 0
    for q in range(cfg.players):     # a 2 whose other copy is in sight can go
        if q == me:
            continue
        for i in range(s.hand_len[q]):
            if s.hand[q][i] == card and not (q == t and i == j):
                return 0
    return 60


cdef int eval_hint(const BotParams* pr, const GameConfig* cfg, const BotTables* tb,
                   const Board* bd, const GameState* s, const BotMemory* mem, int me, int t,
                   int is_rank, int value, uint32_t queued, int* danger_after,
                   const uint32_t* known_before, const int* known_count,
                   float* parts) noexcept nogil:
    """Score of hinting `value` to seat t, or REJECT if, interpreted by the conventions,
    the hint would make some card's knowledge exclude its true type. known_before: the
    knowledge of t's slots before the hint (the same for every hint to t) and its bit
    counts, or NULL (computed here). parts: NULL, or HINT_PARTS floats (zeroed by the
    caller) that receive the score's terms one by one (`convention_features`)."""
    cdef HandMem h = mem.hands[t]
    cdef const HandMem* before = &mem.hands[t]
    cdef int16_t ng = mem.next_group
    cdef uint32_t touched = 0, kb, ka, tbit, seen
    cdef int j, card, score = 0, rank, narrowed
    cdef bint pa, pb
    for j in range(h.len):
        card = s.hand[t][j]
        if (cfg.rank_of[card] if is_rank else cfg.color_of[card]) == value:
            touched |= 1u << j
    interpret_hint(pr, tb, bd, &h, is_rank, value, touched, &ng)
    if pr.group_elim and ng != mem.next_group:
        # The cards one play clue promises must be of distinct types.
        seen = 0
        for j in range(h.len):
            if h.group[j] == mem.next_group:
                tbit = 1u << s.hand[t][j]
                if seen & tbit:
                    return REJECT
                seen |= tbit
    for j in range(h.len):
        card = s.hand[t][j]
        tbit = 1u << card
        ka = knowledge(tb, bd, &h, j)
        if not (ka & tbit):
            if parts != NULL:
                parts[0] = 1.0
            return REJECT
        kb = known_before[j] if known_before != NULL else knowledge(tb, bd, before, j)
        pa = subset(ka, bd.playable | bd.soon)
        pb = subset(kb, bd.playable | bd.soon)
        if pa and not pb:
            if queued & tbit:
                score += 2
                if parts != NULL:
                    parts[3] += 1.0
            else:
                rank = cfg.rank_of[card]
                score += 100 + 10 * (cfg.ranks - 1 - rank)
                queued |= tbit
                if parts != NULL:
                    parts[1] += 1.0
                    parts[2] += (cfg.ranks - 1 - rank) / <float>(cfg.ranks if cfg.ranks > 1 else 1)
        elif not pa and subset(ka, bd.worthless) and not subset(kb, bd.worthless):
            score += 10
            if parts != NULL:
                parts[4] += 1.0
        elif pr.info_hints and (tbit & bd.playable) and ka != kb and not (queued & tbit):
            score += 50
            if parts != NULL:
                parts[5] += 1.0
        elif h.touched[j] and not before.touched[j]:
            # Newly protected from discards: good for a critical card, bad for junk.
            if tbit & bd.critical:
                score += 20
                if parts != NULL:
                    parts[6] += 1.0
            elif tbit & bd.worthless:
                score -= 40
                if parts != NULL:
                    parts[7] += 1.0
        narrowed = (known_count[j] if known_count != NULL else popcount32(kb)) - popcount32(ka)
        score += narrowed
        if parts != NULL:
            parts[8] += narrowed / <float>cfg.card_types
    danger_after[0] = danger(pr, cfg, tb, bd, s, me, t, &h)
    if parts != NULL:
        parts[9] = danger_after[0] / 500.0
    return score


cdef int best_hint(const BotParams* pr, const GameConfig* cfg, const BotTables* tb,
                   const Board* bd, const GameState* s, const BotMemory* mem, int me,
                   int only_target, uint32_t queued, int min_score,
                   int max_danger, HintCache* hc) noexcept nogil:
    """The truthful hint with the best score minus the danger it leaves (the receiver's
    next discard), among those scoring >= min_score with danger <= max_danger; or -1.
    Scores come from `hc` (filled on first use per receiver; one decision, one queue)."""
    cdef int P = cfg.players, off, t, j, v, sc, d, best = -1, best_score = REJECT
    cdef int is_rank, e
    cdef uint32_t present
    cdef uint32_t known[MAX_HAND]
    cdef int known_count[MAX_HAND]
    for off in range(1, P):
        t = (me + off) % P
        if only_target >= 0 and t != only_target:
            continue
        if not hc.filled[t]:
            hc.filled[t] = 1
            hc.count[t] = 0
            for j in range(mem.hands[t].len):
                known[j] = knowledge(tb, bd, &mem.hands[t], j)
                known_count[j] = popcount32(known[j])
            for is_rank in range(2):
                present = 0
                for j in range(s.hand_len[t]):
                    present |= 1u << (cfg.rank_of[s.hand[t][j]] if is_rank
                                      else cfg.color_of[s.hand[t][j]])
                for v in range(cfg.ranks if is_rank else cfg.colors):
                    if not (present >> v) & 1:
                        continue
                    d = 0
                    e = hc.count[t]
                    hc.score[t][e] = eval_hint(pr, cfg, tb, bd, s, mem, me, t, is_rank, v,
                                               queued, &d, known, known_count, NULL)
                    hc.danger[t][e] = d
                    hc.move[t][e] = hint_move(cfg, off, is_rank, v)
                    hc.count[t] = e + 1
        for e in range(hc.count[t]):
            sc = hc.score[t][e]
            d = hc.danger[t][e]
            if sc < min_score or d > max_danger:
                continue
            sc -= d
            if sc > best_score:
                best_score = sc
                best = hc.move[t][e]
    return best
