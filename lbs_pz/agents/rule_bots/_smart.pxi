# Included by _bots.pyx (one extension, so every call can be inlined): SmartBot, Arthur
# O'Dwyer's rule bot (Quuxplusone/Hanabi, SmartBot.cc).

# --- SmartBot -----------------------------------------------------------------------------
#
# Every seat keeps its own view of every hand (SmartMemory.know[seat]), card by card, as the
# bitmask of the card types it may still be (SmartBot's CardKnowledge: `cantBe` inverted).
# What SmartBot caches per card (playable / valuable / worthless as yes-maybe-no and the
# share of its possible types that are) is recomputed here from the mask and the board:
# SmartBot invalidates its caches exactly when those change, so both agree. Types are
# counted unweighted, as SmartBot does. Words as in SmartBot:
#   gone       copies played or discarded (SmartBot's playedCount_);
#   playable   the next card of its color;
#   worthless  already played, or a lower rank of its color has all copies discarded;
#   valuable   not worthless and the last copy (every other one played or discarded).
# Before every move each view drops, from every card it does not know exactly, the types
# whose copies are all gone or identified exactly in some hand (to a fixed point); a seat
# deciding drops from its own cards also the types whose copies it sees ("eyesight").
#
# The conventions (every observer, from its view, before the move changes the board):
# - a hint: touched cards get the hint's color or rank, untouched ones lose it; if no card
#   that was maybe playable became surely playable, the newest touched card that was and
#   still is maybe playable is playable;
# - a rank hint from the player on the receiver's right touching the receiver's "next
#   discard" (see smart_next_discard), when that card could be valuable with that rank, is
#   a valuable warning: the card is valuable (and no play is inferred);
# - any move of player G other than a hint to G + 1, while hint tokens and deck cards
#   remain, says G + 1's next discard is not valuable;
# - at full hint tokens, a rank hint to the player on the giver's right touching its oldest
#   card reclaims a token (no discard is legal): nothing is inferred from it;
# - a discard of a card known exactly and surely playable is a discard finesse: the player
#   (not the discarder, not me) whose newest card is that card holds it; if I see no such
#   player, my newest card is it.
# An inference that contradicts what the view already knows is ignored; a hint that
# contradicts it resets the card to what the hint says (SmartBot would corrupt its tables
# there; under the convention neither happens).
#
# Where this engine's rules differ: SmartBot plays a "mystery" card (its likeliest
# playable one) once the deck holds at most 3 / 1 / 1 cards with 3 / 2 / 1 lives left; its
# framework keeps the points on the third strike, HLE scores 0, so here it never gambles
# its last life. With SmartBot's table the points kept stay within 0.03 of these, but
# 0.4% / 1.8% / 2.8% / 8.6% of 2/3/4/5-player games end at 0 (HLE means 23.02 / 22.91 /
# 21.84 / 19.07 instead of 23.11 / 23.29 / 22.41 / 20.65, 20,000 deals). Hints touching
# no card are illegal in both. Colors are in this engine's order (SmartBot's RED..BLUE
# tie-breaks between colors fall the same way by symmetry). Points kept over 20,000
# evaluation deals: 23.11 / 23.29 / 22.41 / 20.65, SmartBot's published 23.09 / 23.30 /
# 22.44 / 20.69: every difference under 0.05.

cdef enum:
    TRI_NO = 0
    TRI_MAYBE = 1
    TRI_YES = 2


ctypedef struct SmartBoard:
    uint32_t playable
    uint32_t worthless
    uint32_t valuable
    int8_t gone[MAX_CARD_TYPES]


cdef void smart_board(const GameConfig* cfg, const int8_t* fireworks,
                      const int8_t* discard_count, SmartBoard* b) noexcept nogil:
    cdef int t, c, r, q
    b.playable = 0
    b.worthless = 0
    b.valuable = 0
    for t in range(cfg.card_types):
        c = cfg.color_of[t]
        r = cfg.rank_of[t]
        b.gone[t] = discard_count[t] + (1 if fireworks[c] > r else 0)
    for t in range(cfg.card_types):
        c = cfg.color_of[t]
        r = cfg.rank_of[t]
        if r == fireworks[c]:
            b.playable |= 1u << t
        if r < fireworks[c]:
            b.worthless |= 1u << t
        else:
            for q in range(fireworks[c], r):
                if b.gone[c * cfg.ranks + q] == cfg.card_count[c * cfg.ranks + q]:
                    b.worthless |= 1u << t
                    break
        if not (b.worthless >> t) & 1 and b.gone[t] == cfg.card_count[t] - 1:
            b.valuable |= 1u << t


cdef inline int tri(uint32_t k, uint32_t yes) noexcept nogil:
    if (k & yes) == k:
        return TRI_YES
    return TRI_MAYBE if k & yes else TRI_NO


cdef inline double share(uint32_t k, uint32_t yes) noexcept nogil:
    return (<double>popcount32(k & yes)) / popcount32(k) if k else 0.0


cdef inline bint single(uint32_t k) noexcept nogil:
    return k != 0 and (k & (k - 1)) == 0


cdef inline int value_of(const BotTables* tb, uint32_t k) noexcept nogil:
    """SmartBot's value(): the rank (1-based) every type of k shares, else -1."""
    cdef int r, v = -1
    for r in range(tb.ranks):
        if k & tb.rank_bits[r]:
            if v != -1:
                return -1
            v = r + 1
    return v


cdef inline uint32_t infer(uint32_t k, uint32_t m) noexcept nogil:
    """A convention's inference: k narrowed to m, ignored if it leaves nothing."""
    return (k & m) if (k & m) else k


cdef inline uint32_t told(const BotTables* tb, uint32_t k, uint32_t m) noexcept nogil:
    """A hint's fact: k narrowed to m, or m alone if k contradicts it."""
    return (k & m) if (k & m) else (m & tb.all_types)


cdef void smart_update(const GameConfig* cfg, const SmartBoard* b,
                       uint32_t (*know)[MAX_HAND], const int8_t* hand_len) noexcept nogil:
    """One view: drop the types whose copies are all gone or located (known exactly in
    some hand) from every card not known exactly, to a fixed point."""
    cdef int located[MAX_CARD_TYPES]
    cdef int p, j, t, changed
    cdef uint32_t full, k
    while True:
        memset(located, 0, sizeof(located))
        for p in range(cfg.players):
            for j in range(hand_len[p]):
                if single(know[p][j]):
                    located[ctz32(know[p][j])] += 1
        full = 0
        for t in range(cfg.card_types):
            if b.gone[t] + located[t] == cfg.card_count[t]:
                full |= 1u << t
        changed = 0
        for p in range(cfg.players):
            for j in range(hand_len[p]):
                k = know[p][j]
                if single(k) or not (k & full):
                    continue
                k = infer(k, ~full)
                if k != know[p][j]:
                    know[p][j] = k
                    if single(k):
                        changed = 1
        if not changed:
            return


cdef void smart_update_all(const GameConfig* cfg, const GameState* s,
                           SmartMemory* mem) noexcept nogil:
    cdef SmartBoard b
    cdef int x
    smart_board(cfg, s.fireworks, s.discard_count, &b)
    for x in range(cfg.players):
        smart_update(cfg, &b, mem.know[x], s.hand_len)


cdef int smart_next_discard(const SmartBoard* b, const uint32_t* k, int n) noexcept nogil:
    """SmartBot's nextDiscardIndex: -1 if the holder has a surely playable or surely
    worthless card (or every card is surely valuable), else its card most likely worthless
    among those not surely valuable (the oldest first on ties)."""
    cdef int i, best = -1
    cdef double fit, best_fit = 0.0
    for i in range(n):
        if tri(k[i], b.playable) == TRI_YES or tri(k[i], b.worthless) == TRI_YES:
            return -1
        if tri(k[i], b.valuable) == TRI_YES:
            continue
        fit = 100.0 + share(k[i], b.worthless)
        if fit > best_fit:
            best_fit = fit
            best = i
    return best


cdef inline bint could_be_valuable_with(const BotTables* tb, const SmartBoard* b, uint32_t k,
                                        int r) noexcept nogil:
    """couldBeValuableWithValue: k may have rank r, is maybe valuable, and a rank-r card of
    k may be valuable."""
    if r < 0 or r >= tb.ranks or not (k & tb.rank_bits[r]):
        return 0
    if tri(k, b.valuable) != TRI_MAYBE:
        return 0
    return tri(k & tb.rank_bits[r], b.valuable) != TRI_NO


cdef void smart_no_warning(const GameConfig* cfg, const GameState* g, const SmartBoard* b,
                           uint32_t (*know)[MAX_HAND], int giver) noexcept nogil:
    """noValuableWarningWasGiven: the next player's next discard is not valuable."""
    cdef int w = (giver + 1) % cfg.players, d
    if cfg.deck_size - g.deck_pos == 0 or g.info_tokens == 0:
        return
    d = smart_next_discard(b, know[w], g.hand_len[w])
    if d != -1:
        know[w][d] = infer(know[w][d], ~b.valuable)


cdef void smart_observe(const GameConfig* cfg, const BotTables* tb, SmartMemory* mem,
                        const GameState* g, int move, uint8_t reveal, int card) noexcept nogil:
    """Fold one move of the player to move in g (g: the position before it; reveal: the
    slots a hint touched; card: the card played or discarded) into every seat's view. A
    seat's view reads only the hands that seat sees."""
    cdef SmartBoard b
    cdef int G = g.cur_player, P = cfg.players, H = cfg.hand_size
    cdef int x, p, j, i, n, slot, off, is_rank, value, t, w, d, identified, inferred
    cdef int seen, was_maybe, warning, reclaim, now
    cdef uint32_t m, k
    cdef uint32_t (*kn)[MAX_HAND]
    smart_board(cfg, g.fireworks, g.discard_count, &b)
    if move < 2 * H:
        slot = move % H
        n = g.hand_len[G]
        for x in range(P):
            kn = mem.know[x]
            smart_no_warning(cfg, g, &b, kn, G)
            if move < H and single(kn[G][slot]) and tri(kn[G][slot], b.playable) == TRI_YES:
                # a discard finesse: who holds the discarded card as their newest card
                seen = 0
                for p in range(P):
                    if p == G or p == x or g.hand_len[p] == 0:
                        continue
                    if g.hand[p][g.hand_len[p] - 1] == card:
                        j = g.hand_len[p] - 1
                        kn[p][j] = infer(kn[p][j], 1u << card)
                        seen = 1
                        break
                if not seen and g.hand_len[x] > 0:
                    j = g.hand_len[x] - 1
                    kn[x][j] = infer(kn[x][j], 1u << card)
            for j in range(slot, n - 1):
                kn[G][j] = kn[G][j + 1]
            kn[G][n - 1] = tb.all_types
        return
    split_hint(cfg, move, &off, &is_rank, &value)
    t = (G + off) % P
    w = (G + 1) % P
    m = tb.rank_bits[value] if is_rank else tb.color_bits[value]
    n = g.hand_len[t]
    for x in range(P):
        kn = mem.know[x]
        warning = 0
        reclaim = 0
        if is_rank:
            d = smart_next_discard(&b, kn[w], g.hand_len[w])
            reclaim = g.info_tokens == cfg.max_info and G == (t + 1) % P and (reveal & 1)
            warning = (not reclaim and t == w and d != -1 and (reveal >> d) & 1
                       and could_be_valuable_with(tb, &b, kn[t][d], value))
            if warning:
                kn[t][d] = infer(kn[t][d], b.valuable)
        identified = 0
        inferred = -1
        for i in range(n - 1, -1, -1):
            k = kn[t][i]
            was_maybe = tri(k, b.playable) == TRI_MAYBE
            k = told(tb, k, m if (reveal >> i) & 1 else ~m)
            kn[t][i] = k
            if was_maybe:
                now = tri(k, b.playable)
                if now == TRI_YES:
                    identified = 1
                elif now == TRI_MAYBE and (reveal >> i) & 1 and inferred == -1:
                    inferred = i
        if not warning and not reclaim and not identified and inferred >= 0:
            kn[t][inferred] = infer(kn[t][inferred], b.playable)
        if t != w:
            smart_no_warning(cfg, g, &b, kn, G)


cdef void smart_memory_replay(const GameConfig* cfg, const BotTables* tb, const GameState* s,
                              SmartMemory* mem) noexcept nogil:
    """Every seat's view after s's history. The hands of the past are rebuilt from the
    current hands and the cards played or discarded since (as the info bot's replay; each
    seat's view reads only the cards it saw)."""
    cdef GameState g
    cdef int8_t seq[MAX_PLAYERS][MAX_SEQ]
    cdef int8_t entry[MAX_PLAYERS][MAX_HAND]
    cdef int next_entry[MAX_PLAYERS]
    cdef int elen[MAX_PLAYERS]
    cdef int i, p, j, x, slot, n, H = cfg.hand_size
    cdef const MoveRecord* rec
    memset(mem, 0, sizeof(SmartMemory))
    for x in range(cfg.players):
        for p in range(cfg.players):
            for j in range(MAX_HAND):
                mem.know[x][p][j] = tb.all_types
    for p in range(cfg.players):            # which entry into each hand left when
        next_entry[p] = H
        elen[p] = H
        for j in range(H):
            entry[p][j] = j
    for i in range(s.num_history):
        rec = &s.history[i]
        if rec.move >= 2 * H:
            continue
        p = rec.player
        slot = rec.move % H
        seq[p][entry[p][slot]] = rec.card
        for j in range(slot, elen[p] - 1):
            entry[p][j] = entry[p][j + 1]
        elen[p] -= 1
        if rec.drawn >= 0:
            entry[p][elen[p]] = next_entry[p]
            next_entry[p] += 1
            elen[p] += 1
    memset(&g, 0, sizeof(GameState))
    for p in range(cfg.players):
        for j in range(s.hand_len[p]):
            seq[p][entry[p][j]] = s.hand[p][j]
        for j in range(H):
            g.hand[p][j] = seq[p][j]
        g.hand_len[p] = H
        next_entry[p] = H
    g.info_tokens = cfg.max_info
    g.life_tokens = cfg.max_life
    g.deck_pos = cfg.players * H
    for i in range(s.num_history):
        rec = &s.history[i]
        p = rec.player
        g.cur_player = p
        smart_observe(cfg, tb, mem, &g, rec.move, rec.reveal, rec.card)
        if rec.move >= 2 * H:
            g.info_tokens -= 1
            smart_update_all(cfg, &g, mem)
            continue
        if rec.move < H:
            g.discard_count[rec.card] += 1
            g.discard_len += 1
        elif rec.scored:
            g.fireworks[cfg.color_of[rec.card]] += 1
        else:
            g.discard_count[rec.card] += 1
            g.discard_len += 1
            g.life_tokens -= 1
        g.info_tokens += rec.info_token
        slot = rec.move % H
        n = g.hand_len[p]
        for j in range(slot, n - 1):
            g.hand[p][j] = g.hand[p][j + 1]
        g.hand_len[p] = n - 1
        if rec.drawn >= 0:
            g.hand[p][n - 1] = seq[p][next_entry[p]]
            next_entry[p] += 1
            g.hand_len[p] = n
            g.deck_pos += 1
        smart_update_all(cfg, &g, mem)


# --- the decision -------------------------------------------------------------------------

ctypedef struct SmartHint:
    int fitness
    int to
    int is_rank
    int value


cdef void smart_best_hint(const GameConfig* cfg, const BotTables* tb, const SmartBoard* b,
                          const GameState* s, uint32_t (*know)[MAX_HAND], int me, int to,
                          SmartHint* best) noexcept nogil:
    """bestHintForPlayer: among the hints to `to` that reveal a playable card or whose
    newest touched maybe-playable card is really playable (never a rank hint that would
    read as a valuable warning), the one removing the most possible types."""
    cdef int n = s.hand_len[to], i, is_rank, v, d, avoid = -1, reveals, misleading, fit
    cdef int present[MAX_COLORS + MAX_RANKS]
    cdef bint really[MAX_HAND]
    cdef uint32_t m, nk
    cdef int card
    best.fitness = -1
    best.to = to
    best.is_rank = 0
    best.value = -1
    memset(present, 0, sizeof(present))
    for i in range(n):
        card = s.hand[to][i]
        present[cfg.color_of[card]] = 1
        present[MAX_COLORS + cfg.rank_of[card]] = 1
        really[i] = (b.playable >> card) & 1
    if to == (me + 1) % cfg.players:
        d = smart_next_discard(b, know[to], n)
        if d != -1:
            avoid = cfg.rank_of[s.hand[to][d]]
            if not could_be_valuable_with(tb, b, know[to][d], avoid):
                avoid = -1
    for is_rank in range(2):
        for v in range(tb.ranks if is_rank else tb.colors):
            if not present[MAX_COLORS * is_rank + v]:
                continue
            if is_rank and v == avoid:
                continue
            m = tb.rank_bits[v] if is_rank else tb.color_bits[v]
            reveals = 0
            misleading = -1
            fit = 0
            for i in range(n - 1, -1, -1):
                card = s.hand[to][i]
                nk = told(tb, know[to][i], m if (m >> card) & 1 else ~m)
                fit += popcount32(know[to][i]) - popcount32(nk)
                if tri(know[to][i], b.playable) != TRI_MAYBE:
                    continue
                if tri(nk, b.playable) == TRI_YES:
                    reveals = 1
                elif tri(nk, b.playable) == TRI_MAYBE and (m >> card) & 1:
                    if misleading == -1:
                        misleading = 0 if really[i] else 1
            if not (reveals or misleading == 0):
                continue
            if fit > best.fitness:
                best.fitness = fit
                best.is_rank = is_rank
                best.value = v
    return


cdef inline int smart_hint_move(const GameConfig* cfg, int me, const SmartHint* h) noexcept nogil:
    return hint_move(cfg, (h.to - me + cfg.players) % cfg.players, h.is_rank, h.value)


cdef int smart_play_lowest(const BotTables* tb, const SmartBoard* b, const uint32_t* k,
                           const uint32_t* eye, int n) noexcept nogil:
    """maybePlayLowestPlayableCard: a card surely playable by eyesight, first one nobody
    knows I know, then the lowest rank (an unknown rank counts as rank -1); -1: none."""
    cdef int i, best = -1
    cdef double fit, best_fit = 0.0
    for i in range(n):
        if tri(k[i], b.playable) == TRI_NO or tri(eye[i], b.playable) != TRI_YES:
            continue
        fit = 6 - value_of(tb, eye[i])
        if tri(k[i], b.playable) != TRI_YES:
            fit += 100
        if fit > best_fit:
            best_fit = fit
            best = i
    return best


cdef int smart_mystery(const GameConfig* cfg, const GameState* s, const SmartBoard* b,
                       const uint32_t* eye, int n) noexcept nogil:
    """maybePlayMysteryCard: near the end of the deck, the card likeliest playable by
    eyesight (the newest on ties); -1: none. SmartBot's deck threshold per lives left is
    {-99, 1, 1, 3}; here never on the last life (this engine scores 0 on the third
    strike, SmartBot's framework keeps the points)."""
    cdef int i, best = -1, limit
    cdef int lives = s.life_tokens
    cdef double fit, best_fit = 0.0
    limit = -99 if lives <= 1 else (1 if lives == 2 else 3)
    if cfg.deck_size - s.deck_pos > limit:
        return -1
    for i in range(n - 1, -1, -1):
        if tri(eye[i], b.playable) == TRI_MAYBE:
            fit = share(eye[i], b.playable)
            if fit > best_fit:
                best_fit = fit
                best = i
    return best


cdef int smart_act(const GameConfig* cfg, const BotTables* tb, const GameState* s,
                   const SmartMemory* mem, int me) noexcept nogil:
    """SmartBot's pleaseMakeMove from `me`'s view."""
    cdef SmartBoard b
    cdef SmartHint hint, cand
    cdef uint32_t know[MAX_PLAYERS][MAX_HAND]
    cdef uint32_t eye[MAX_HAND]
    cdef uint32_t full = 0, k
    cdef int seen[MAX_CARD_TYPES]
    cdef int P = cfg.players, H = cfg.hand_size, n = s.hand_len[me]
    cdef int deck_left = cfg.deck_size - s.deck_pos, tokens = s.info_tokens
    cdef int p, i, j, t, w, d, best, cnt, card, right
    cdef double fit, best_fit
    cdef uint8_t moves[MAX_MOVES]
    memcpy(know, mem.know[me], sizeof(know))
    smart_board(cfg, s.fireworks, s.discard_count, &b)
    # eyesight: my cards lose the types whose copies are all gone or in sight
    memset(seen, 0, sizeof(seen))
    for p in range(P):
        for j in range(s.hand_len[p]):
            if p != me:
                seen[s.hand[p][j]] += 1
            elif single(know[me][j]):
                seen[ctz32(know[me][j])] += 1
    for t in range(cfg.card_types):
        if b.gone[t] + seen[t] == cfg.card_count[t]:
            full |= 1u << t
    for j in range(n):
        eye[j] = know[me][j] if single(know[me][j]) else infer(know[me][j], ~full)
    # 1. deck empty: play a surely playable card, else the mystery play
    if deck_left == 0:
        best = smart_play_lowest(tb, &b, know[me], eye, n)
        if best == -1:
            best = smart_mystery(cfg, s, &b, eye, n)
        if best != -1:
            return H + best
    # 2. a valuable warning: the next player is about to discard a valuable card
    w = (me + 1) % P
    if tokens > 0:
        d = smart_next_discard(&b, know[w], s.hand_len[w])
        if d != -1 and (b.valuable >> s.hand[w][d]) & 1:
            smart_best_hint(cfg, tb, &b, s, know, me, w, &hint)
            if hint.fitness > 0:        # a play clue keeps it from discarding
                return smart_hint_move(cfg, me, &hint)
            return hint_move(cfg, 1, 1, cfg.rank_of[s.hand[w][d]])
    # 3. a discard finesse: a known, playable, not valuable card of mine that exactly one
    #    partner holds as their newest card
    if tokens < cfg.max_info:
        for i in range(n):
            k = know[me][i]
            if not (single(k) and not (k & b.valuable) and (k & b.playable)):
                continue
            card = ctz32(k)
            cnt = 0
            for j in range(1, P):
                p = (me + j) % P
                if s.hand_len[p] > 0 and s.hand[p][s.hand_len[p] - 1] == card:
                    cnt += 1
            if cnt == 1:
                return i
    # 4. play a surely playable card
    best = smart_play_lowest(tb, &b, know[me], eye, n)
    if best != -1:
        return H + best
    # 5. a helpful hint: the best play clue to anyone (nearest partner first on ties)
    if tokens > 0:
        hint.fitness = -1
        for i in range(1, P):
            smart_best_hint(cfg, tb, &b, s, know, me, (me + i) % P, &cand)
            if cand.fitness > hint.fitness:
                hint = cand
        if hint.fitness > 0:
            return smart_hint_move(cfg, me, &hint)
    # 6. the mystery play
    best = smart_mystery(cfg, s, &b, eye, n)
    if best != -1:
        return H + best
    # 7. at full hint tokens no discard is legal: a rank hint about the oldest card of the
    #    player on my right
    if tokens == cfg.max_info:
        right = (me + P - 1) % P
        if tokens > 0 and s.hand_len[right] > 0:
            return hint_move(cfg, P - 1, 1, cfg.rank_of[s.hand[right][0]])
        n = legal_moves(cfg, s, moves)
        return moves[0] if n > 0 else -1
    # 8. discard a card surely worthless by eyesight, first one nobody knows I know
    best = -1
    best_fit = 0.0
    for i in range(n):
        if tri(know[me][i], b.worthless) == TRI_NO:
            continue
        if tri(know[me][i], b.worthless) == TRI_MAYBE and tri(eye[i], b.worthless) != TRI_YES:
            continue
        fit = 2.0 - share(know[me][i], b.worthless)
        if fit > best_fit:
            best_fit = fit
            best = i
    if best != -1:
        return best
    # 9. discard my next discard (the likeliest worthless card not surely valuable)
    best = smart_next_discard(&b, know[me], n)
    if best != -1:
        return best
    # 10. every card surely valuable: the highest known rank goes
    best = 0
    for i in range(n):
        if value_of(tb, know[me][i]) > value_of(tb, know[me][best]):
            best = i
    return best


cdef int smart_bot_act(const GameConfig* cfg, const GameState* s, int seat) noexcept nogil:
    cdef BotTables tb
    cdef SmartMemory mem
    if seat != s.cur_player or state_terminal(cfg, s):
        return -1
    bot_tables_init(cfg, &tb)
    smart_memory_replay(cfg, &tb, s, &mem)
    return smart_act(cfg, &tb, s, &mem, seat)


cdef int smart_play_mem(const GameConfig* cfg, const BotTables* tb, GameState* s,
                        SmartMemory* mem, int max_moves) noexcept nogil:
    """Self-play from a memory folded over s's history (carried along in place)."""
    cdef int played = 0, move
    while max_moves < 0 or played < max_moves:
        if state_terminal(cfg, s):
            break
        move = smart_act(cfg, tb, s, mem, s.cur_player)
        if move < 0:
            return -1
        smart_observe(cfg, tb, mem, s, move, reveal_of(cfg, s, move),
                      s.hand[s.cur_player][move % cfg.hand_size]
                      if move < 2 * cfg.hand_size else -1)
        if apply_move(cfg, s, move) != ERR_OK:
            return -1
        smart_update_all(cfg, s, mem)
        played += 1
    return played


cdef int smart_bot_play(const GameConfig* cfg, GameState* s, int max_moves) noexcept nogil:
    cdef BotTables tb
    cdef SmartMemory mem
    bot_tables_init(cfg, &tb)
    if max_moves != 0 and not state_terminal(cfg, s):
        smart_memory_replay(cfg, &tb, s, &mem)
    return smart_play_mem(cfg, &tb, s, &mem, max_moves)
