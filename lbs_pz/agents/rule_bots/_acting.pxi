# Included by _bots.pyx (one extension, so every call can be inlined): the convention bots' decision, dispatch and self-play.

cdef void seat_view(const BotParams* pr, const GameConfig* cfg, const BotTables* tb,
                    const GameState* s, const BotMemory* mem, int me, Board* bd, int* rem,
                    uint32_t* K, uint32_t* queued_out) noexcept nogil:
    """What seat `me` knows before deciding: the board (with the queue of delayed plays),
    the copies it cannot see per card type (rem), its knowledge K of each own card, and
    the card types everybody already expects to be played (queued)."""
    cdef int P = cfg.players
    cdef int left[MAX_CARD_TYPES]
    cdef uint32_t eyes = 0, base, k, q, queued = 0
    cdef int j, i, t, q_, n
    cdef const HandMem* hm = &mem.hands[me]
    bd[0] = mem.board          # the board of s: mem is folded over s's history
    if pr.delayed:
        board_queue(cfg, tb, bd, s.fireworks, mem)

    # What this seat can rule out: copies played, discarded, or in the other hands.
    for t in range(cfg.card_types):
        rem[t] = cfg.card_count[t] - s.discard_count[t]
        if cfg.rank_of[t] < s.fireworks[cfg.color_of[t]]:
            rem[t] -= 1
    for q_ in range(P):
        if q_ != me:
            for j in range(s.hand_len[q_]):
                rem[s.hand[q_][j]] -= 1
    for t in range(cfg.card_types):
        if rem[t] > 0:
            eyes |= 1u << t
    if not pr.use_eyes:
        eyes = bd.possible
    n = s.hand_len[me]
    for j in range(n):
        base = tb.cset[hm.cm[j]] & tb.rset[hm.rm[j]]
        k = base & eyes
        q = k & hm.promise[j]
        K[j] = q if q else k
        if K[j] == 0:
            K[j] = base
    if pr.use_eyes:
        # Cards of my own hand I know exactly use up copies too (one pass).
        memcpy(left, rem, MAX_CARD_TYPES * sizeof(int))
        for j in range(n):
            if popcount32(K[j]) == 1:
                t = ctz32(K[j])
                left[t] -= 1
                if left[t] <= 0:
                    for i in range(n):
                        if i != j and (K[i] >> t) & 1 and K[i] != (1u << t):
                            K[i] &= ~(1u << t)
    # Cards everybody already expects to be played (no need to hint them again).
    for j in range(n):
        if popcount32(K[j]) == 1 and subset(K[j], bd.playable):
            queued |= K[j]
    for q_ in range(P):
        if q_ == me:
            continue
        for j in range(s.hand_len[q_]):
            if subset(knowledge(tb, bd, &mem.hands[q_], j), bd.playable):
                queued |= 1u << s.hand[q_][j]
    queued_out[0] = queued


cdef int act_conv(const BotParams* pr, const GameConfig* cfg, const BotTables* tb,
                  const GameState* s, const BotMemory* mem, int me) noexcept nogil:
    cdef Board bd
    cdef int P = cfg.players, H = cfg.hand_size
    cdef int rem[MAX_CARD_TYPES]      # copies this seat cannot see, per card type
    cdef uint32_t K[MAX_HAND]         # this seat's knowledge of its own cards
    cdef uint32_t queued
    cdef int j, n, best, best_key, key, nxt, chop, dnow
    cdef double risk = 0
    cdef int info = s.info_tokens, deck_left = cfg.deck_size - s.deck_pos
    cdef const HandMem* hm = &mem.hands[me]
    cdef HintCache hc
    for j in range(P):
        hc.filled[j] = 0
    seat_view(pr, cfg, tb, s, mem, me, &bd, rem, K, &queued)
    n = s.hand_len[me]

    # 1. Save the next player's chop if it is about to be discarded.
    if pr.warn and info > 0:
        nxt = (me + 1) % P
        dnow = danger(pr, cfg, tb, &bd, s, me, nxt, &mem.hands[nxt])
        if dnow > 0:
            best = best_hint(pr, cfg, tb, &bd, s, mem, me, nxt, queued, REJECT + 1, dnow - 1, &hc)
            if best >= 0:
                return best

    # 2. Play a card known to be playable.
    best = -1
    best_key = 1 << 30
    for j in range(n):
        if subset(K[j], bd.playable):
            key = 16 * lowest_rank(tb, K[j]) + j
            if pr.play_best and subset(knowledge(tb, &bd, hm, j), bd.playable):
                key += 1000         # the others know it: it can wait
            if key < best_key:
                best_key = key
                best = j
    if best >= 0:
        return H + best

    # 3. A play clue.
    if info > 0:
        best = best_hint(pr, cfg, tb, &bd, s, mem, me, -1, queued, 100, 1 << 30, &hc)
        if best >= 0:
            return best

    # 3b. (weak) A hint that narrows down a playable card.
    if pr.info_hints and info > 0:
        best = best_hint(pr, cfg, tb, &bd, s, mem, me, -1, queued, 50, 1 << 30, &hc)
        if best >= 0:
            return best

    # 4. Final round: gamble while a life can be spared.
    if pr.gamble and deck_left == 0 and s.life_tokens > 1:
        best = most_playable(cfg, &bd, rem, K, n)
        if best >= 0:
            return H + best

    # 5. Stall: keep the last cards in the deck while the others still have plays.
    if pr.stall and info > 0 and 0 < deck_left <= pr.stall and info < cfg.max_info and queued != 0:
        best = best_hint(pr, cfg, tb, &bd, s, mem, me, -1, queued, REJECT + 1, 1 << 30, &hc)
        if best >= 0:
            return best

    # 6. Discard: a card known worthless, else the chop, else the least valuable card.
    if info < cfg.max_info:
        for j in range(n):
            if subset(K[j], bd.worthless):
                return j
        chop = chop_of(tb, &bd, hm)
        if chop >= 0:
            return chop
        best = least_valuable(cfg, &bd, rem, K, n, &risk)
        if risk < 0.75 or info == 0:
            return best
        # Every card is probably critical: rather spend a token on a harmless hint.
        best = best_hint(pr, cfg, tb, &bd, s, mem, me, -1, queued, REJECT + 1, 1 << 30, &hc)
        if best >= 0:
            return best
        return least_valuable(cfg, &bd, rem, K, n, &risk)

    # 7. All tokens: the most useful harmless hint, else the likeliest play.
    best = best_hint(pr, cfg, tb, &bd, s, mem, me, -1, queued, REJECT + 1, 1 << 30, &hc)
    if best >= 0:
        return best
    if s.life_tokens > 1:
        best = most_playable(cfg, &bd, rem, K, n)
        if best >= 0:
            return H + best
    return first_hint(cfg, s)


cdef inline int lowest_rank(const BotTables* tb, uint32_t k) noexcept nogil:
    cdef int r
    for r in range(tb.ranks):
        if k & tb.rank_bits[r]:
            return r
    return tb.ranks


cdef int most_playable(const GameConfig* cfg, const Board* bd, const int* rem,
                       const uint32_t* K, int n) noexcept nogil:
    """Slot with the highest chance of being playable (weighted by unseen copies), or -1."""
    cdef int j, t, tot, good, best = -1
    cdef double p, best_p = 0.0
    for j in range(n):
        tot = 0
        good = 0
        for t in range(cfg.card_types):
            if (K[j] >> t) & 1 and rem[t] > 0:
                tot += rem[t]
                if (bd.playable >> t) & 1:
                    good += rem[t]
        if tot > 0:
            p = <double>good / tot
            if p > best_p:
                best_p = p
                best = j
    return best


cdef int least_valuable(const GameConfig* cfg, const Board* bd, const int* rem,
                        const uint32_t* K, int n, double* risk) noexcept nogil:
    """Slot with the lowest chance of being save-worthy (critical / needed), oldest first."""
    cdef int j, t, tot, bad, best = 0
    cdef double p, best_p = 1e9
    for j in range(n):
        tot = 0
        bad = 0
        for t in range(cfg.card_types):
            if (K[j] >> t) & 1 and rem[t] > 0:
                tot += rem[t]
                if (bd.critical >> t) & 1:
                    bad += rem[t] * 4 * (cfg.ranks - cfg.rank_of[t])
                elif not (bd.worthless >> t) & 1:
                    bad += rem[t]
        p = (<double>bad / tot) if tot > 0 else 1.0
        if p < best_p:
            best_p = p
            best = j
    risk[0] = best_p / 4.0      # >= 1: surely critical
    return best


cdef int first_hint(const GameConfig* cfg, const GameState* s) noexcept nogil:
    cdef uint8_t moves[MAX_MOVES]
    cdef int n = legal_moves(cfg, s, moves), j
    for j in range(n):
        if moves[j] >= 2 * cfg.hand_size:
            return moves[j]
    return moves[n - 1] if n > 0 else -1


# --- dispatch ---------------------------------------------------------------------------

cdef inline bint folds_history(int kind) noexcept nogil:
    """Whether a bot's BotMemory is a fold of the public history alone (the convention
    bots), shared by the games of one history prefix. The info and smart bots fold the
    hands seen too (InfoMemory, SmartMemory), once per game."""
    return kind >= BOT_WEAK and kind != BOT_INFO and kind != BOT_SMART


cdef int bot_act_mem(int kind, const GameConfig* cfg, const BotTables* tb,
                     const GameState* s, const BotMemory* mem, int seat) noexcept nogil:
    if seat != s.cur_player or state_terminal(cfg, s):
        return -1
    if kind == BOT_RANDOM:
        return act_random(cfg, s)
    if kind == BOT_SIMPLE:
        return act_simple(cfg, s, seat)
    if kind == BOT_INFO:            # its memory depends on the hands: folded per game
        return info_bot_act(cfg, s, seat)
    if kind == BOT_SMART:
        return smart_bot_act(cfg, s, seat)
    return act_conv(&PARAMS[kind], cfg, tb, s, mem, seat)


cdef int bot_act(int kind, const GameConfig* cfg, const GameState* s, int seat) noexcept nogil:
    cdef BotTables tb
    cdef BotMemory mem
    if seat != s.cur_player or state_terminal(cfg, s):
        return -1
    if kind == BOT_RANDOM:
        return act_random(cfg, s)
    if kind == BOT_SIMPLE:
        return act_simple(cfg, s, seat)
    if kind == BOT_INFO:
        return info_bot_act(cfg, s, seat)
    if kind == BOT_SMART:
        return smart_bot_act(cfg, s, seat)
    bot_tables_init(cfg, &tb)
    bot_memory_replay(kind, cfg, &tb, s, &mem)
    return act_conv(&PARAMS[kind], cfg, &tb, s, &mem, seat)


cdef int bot_play(int kind, const GameConfig* cfg, GameState* s, int max_moves) noexcept nogil:
    cdef BotTables tb
    cdef BotMemory mem
    if kind == BOT_INFO:
        return info_bot_play(cfg, s, max_moves)
    if kind == BOT_SMART:
        return smart_bot_play(cfg, s, max_moves)
    bot_tables_init(cfg, &tb)
    if folds_history(kind):
        bot_memory_replay(kind, cfg, &tb, s, &mem)
    return bot_play_mem(kind, cfg, &tb, s, &mem, max_moves)


cdef int bot_play_mem(int kind, const GameConfig* cfg, const BotTables* tb, GameState* s,
                      BotMemory* mem, int max_moves) noexcept nogil:
    cdef int played = 0, move
    if kind == BOT_INFO:            # its memory depends on the hands: folded per game
        return info_bot_play(cfg, s, max_moves)
    if kind == BOT_SMART:
        return smart_bot_play(cfg, s, max_moves)
    while max_moves < 0 or played < max_moves:
        if state_terminal(cfg, s):
            break
        move = bot_act_mem(kind, cfg, tb, s, mem, s.cur_player)
        if apply_move(cfg, s, move) != ERR_OK:
            return -1
        if folds_history(kind):
            bot_memory_step(kind, cfg, tb, mem, &s.history[s.num_history - 1])
        played += 1
    return played
