# Included by _bots.pyx (one extension, so every call can be inlined): the information
# (hat-guessing) bot of Cox et al. 2015, in the form of hanabi.rs's "info" strategy.

# --- the information bot ----------------------------------------------------------------
#
# Knowledge of a card is a bitmask of the card types it may still be; a type counts with
# the weight of its copies not yet played or discarded (for one's own cards, also minus
# the copies seen in the other hands). Every seat keeps its own view of every hand
# (InfoMemory.know[seat]): the other hands as everyone knows them, its own as it decoded
# it. Under the convention these views agree; after a move outside it (a search's
# deviation) they may not, and each seat goes on from what it saw.
#
# A hint encodes one number modulo the count of hint choices (3 or 4 per other player,
# see info_choices): the sum of the "hat values" of the other players. A hat value
# answers questions about a player's own cards (info_ask: which card is playable or
# dead, whether one card is playable, which block of a partition of its types holds it),
# as many as the modulus holds (mixed radix). Each receiver subtracts the hat values it
# sees and reads its own. A discard among 2+ publicly useless cards encodes the same way.

cdef enum:
    Q_NONE = 0
    Q_COMBO = 1         # the first yes among (is playable / is dead) questions, 0: none
    Q_PLAY = 2          # is the card playable
    Q_PART = 3          # which block of a partition of the card's types
    MAX_SUBQ = 2 * MAX_HAND
    MAX_SEQ = 64                  # cards ever in one hand: MAX_HAND + a 50-card deck


ctypedef struct InfoQuestion:
    int kind
    int amount                    # answers 0 .. amount-1
    int n                         # Q_COMBO: sub-questions
    int8_t slot[MAX_SUBQ]
    int8_t dead[MAX_SUBQ]         # Q_COMBO: 1 asks "is dead", 0 "is playable"
    int8_t block[MAX_CARD_TYPES]  # Q_PART: block of each type


ctypedef struct InfoBoard:
    Board bd
    int w[MAX_CARD_TYPES]         # public weight: copies neither played nor discarded
    uint32_t live                 # types of positive public weight


cdef void info_board(const GameConfig* cfg, const GameState* s, InfoBoard* ib) noexcept nogil:
    cdef int t
    board_init(cfg, s.fireworks, s.discard_count, 0, &ib.bd)
    ib.live = 0
    for t in range(cfg.card_types):
        ib.w[t] = cfg.card_count[t] - s.discard_count[t] - \
            (1 if s.fireworks[cfg.color_of[t]] > cfg.rank_of[t] else 0)
        if ib.w[t] > 0:
            ib.live |= 1u << t


cdef inline void card_weights(const GameConfig* cfg, uint32_t k, const int* w, uint32_t play,
                              uint32_t dead, int* tot, int* good, int* bad) noexcept nogil:
    """Total weight of the types of k, of those in `play`, of those in `dead`."""
    cdef int t
    tot[0] = 0
    good[0] = 0
    bad[0] = 0
    while k:
        t = ctz32(k)
        k &= k - 1
        if w[t] > 0:
            tot[0] += w[t]
            if (play >> t) & 1:
                good[0] += w[t]
            if (dead >> t) & 1:
                bad[0] += w[t]


cdef inline uint32_t eff(uint32_t k, const int* w, const GameConfig* cfg) noexcept nogil:
    cdef uint32_t out = 0, m = k
    cdef int t
    while m:
        t = ctz32(m)
        m &= m - 1
        if w[t] > 0:
            out |= 1u << t
    return out


cdef inline bint determined(uint32_t k, const int* w, const GameConfig* cfg) noexcept nogil:
    k = eff(k, w, cfg)
    return k != 0 and (k & (k - 1)) == 0


# --- questions ----------------------------------------------------------------------------

cdef void sort_asks(int n, int8_t* dead, int8_t* slot, double* p, int desc) noexcept nogil:
    """Stable sort by (dead, p), p descending if desc."""
    cdef int i, j
    cdef int8_t d, s
    cdef double x
    for i in range(1, n):
        d = dead[i]
        s = slot[i]
        x = p[i]
        j = i - 1
        while j >= 0 and (dead[j] > d or (dead[j] == d and ((p[j] < x) if desc else (p[j] > x)))):
            dead[j + 1] = dead[j]
            slot[j + 1] = slot[j]
            p[j + 1] = p[j]
            j -= 1
        dead[j + 1] = d
        slot[j + 1] = s
        p[j + 1] = x


cdef void info_ask(const GameConfig* cfg, const InfoBoard* ib, const uint32_t* k, int n,
                   int total, InfoQuestion* q) noexcept nogil:
    """The next question about a hand whose knowledge is k[0:n] (answers so far applied),
    with `total` answers available (q.kind Q_NONE: nothing worth asking)."""
    cdef double pp[MAX_HAND]
    cdef double pd[MAX_HAND]
    cdef double p[MAX_SUBQ]
    cdef int cand[MAX_HAND]
    cdef int i, j, m = 0, tot, good, bad, know_play = 0, know_dead = 0, best = -1
    cdef double score, best_score = 1e9
    cdef const Board* bd = &ib.bd
    q.kind = Q_NONE
    if total <= 1:
        return
    for i in range(n):
        card_weights(cfg, k[i], ib.w, bd.playable, bd.worthless, &tot, &good, &bad)
        pp[i] = (<double>good / tot) if tot else 0.0
        pd[i] = (<double>bad / tot) if tot else 0.0
        know_play |= tot > 0 and good == tot
        know_dead |= tot > 0 and bad == tot
        if tot > 0 and bad != tot and not determined(k[i], ib.w, cfg):
            cand[m] = i
            m += 1
    if not know_play:
        q.n = 0
        for j in range(m):
            if pp[cand[j]] > 0:
                q.slot[q.n] = cand[j]
                q.dead[q.n] = 0
                p[q.n] = pp[cand[j]]
                q.n += 1
        if not know_dead:
            for j in range(m):
                if pd[cand[j]] > 0:
                    q.slot[q.n] = cand[j]
                    q.dead[q.n] = 1
                    p[q.n] = pd[cand[j]]
                    q.n += 1
        if q.n > total - 1:
            sort_asks(q.n, q.dead, q.slot, p, 1)
            q.n = total - 1
        sort_asks(q.n, q.dead, q.slot, p, 0)
        if q.n > 0:
            q.kind = Q_COMBO
            q.amount = q.n + 1
            return
    for j in range(m):                   # is one card playable (p near 0.7)?
        score = pp[cand[j]] - 0.7
        score = -score if score < 0 else score
        if score < 0.2 and score < best_score:
            best_score = score
            best = cand[j]
    if best >= 0:
        q.kind = Q_PLAY
        q.amount = 2
        q.slot[0] = best
        return
    for j in range(m):                   # partition the least likely dead card's types
        if best < 0 or pd[cand[j]] < pd[best]:
            best = cand[j]
    if best >= 0:
        info_partition(cfg, ib, k[best], best, total, q)


cdef void info_partition(const GameConfig* cfg, const InfoBoard* ib, uint32_t k, int slot,
                         int total, InfoQuestion* q) noexcept nogil:
    cdef uint32_t m = eff(k, ib.w, cfg), live_dead = m & ib.bd.worthless
    cdef int t, cur = 0, n = 0, cap = total - (1 if live_dead else 0)
    memset(q.block, 0, sizeof(q.block))
    if cap < 1:
        return
    while m:
        t = ctz32(m)
        m &= m - 1
        if not (ib.bd.worthless >> t) & 1:
            q.block[t] = cur
            cur = (cur + 1) % cap
            if n < cap:
                n += 1
    m = live_dead
    while m:
        t = ctz32(m)
        m &= m - 1
        q.block[t] = n
    if live_dead:
        n += 1
    if n >= 2:
        q.kind = Q_PART
        q.amount = n
        q.slot[0] = slot


cdef inline int sub_answer(const InfoBoard* ib, int dead, int card) noexcept nogil:
    return ((ib.bd.worthless if dead else ib.bd.playable) >> card) & 1


cdef int info_answer(const InfoQuestion* q, const InfoBoard* ib, const int8_t* cards) noexcept nogil:
    cdef int i
    if q.kind == Q_COMBO:
        for i in range(q.n):
            if sub_answer(ib, q.dead[i], cards[q.slot[i]]):
                return i + 1
        return 0
    if q.kind == Q_PLAY:
        return sub_answer(ib, 0, cards[q.slot[0]])
    return q.block[cards[q.slot[0]]]


cdef inline void learn(const InfoBoard* ib, uint32_t* k, int slot, int dead, int yes) noexcept nogil:
    cdef uint32_t prop = ib.bd.worthless if dead else ib.bd.playable
    k[slot] &= prop if yes else ~prop


cdef void info_learn(const InfoQuestion* q, const InfoBoard* ib, uint32_t* k, int a) noexcept nogil:
    """Apply answer a to the knowledge k."""
    cdef int i, t
    cdef uint32_t keep = 0
    if q.kind == Q_COMBO:
        for i in range(q.n):
            if a == i + 1:
                learn(ib, k, q.slot[i], q.dead[i], 1)
                return
            learn(ib, k, q.slot[i], q.dead[i], 0)
        return
    if q.kind == Q_PLAY:
        learn(ib, k, q.slot[0], 0, a)
        return
    for t in range(MAX_CARD_TYPES):
        if q.block[t] == a:
            keep |= 1u << t
    k[q.slot[0]] &= keep


cdef int hat_encode(const GameConfig* cfg, const InfoBoard* ib, uint32_t* k, int n,
                    const int8_t* cards, int total) noexcept nogil:
    """The hat value of a hand (cards seen) modulo total; k learns the answers."""
    cdef InfoQuestion q
    cdef int mod = 1, val = 0, left, a
    while True:
        left = (total - val - 1) // mod + 1
        info_ask(cfg, ib, k, n, left, &q)
        if q.kind == Q_NONE:
            break
        a = info_answer(&q, ib, cards)
        if a >= q.amount:
            a = 0
        info_learn(&q, ib, k, a)
        val += mod * a
        mod = mod * q.amount
        if mod > total:
            mod = total
    return val


cdef void hat_decode(const GameConfig* cfg, const InfoBoard* ib, uint32_t* k, int n,
                     int value, int total) noexcept nogil:
    """Learn from one's own hat value (the inverse of hat_encode)."""
    cdef InfoQuestion q
    cdef int a
    while True:
        info_ask(cfg, ib, k, n, total, &q)
        if q.kind == Q_NONE:
            break
        a = value % q.amount
        value //= q.amount
        total = (total - a - 1) // q.amount + 1
        info_learn(&q, ib, k, a)


cdef void commit(const InfoBoard* ib, uint32_t* dst, const uint32_t* src, int n) noexcept nogil:
    """dst = src card by card, except where src is inconsistent (no live type left)."""
    cdef int j
    for j in range(n):
        if (src[j] & ib.live) or not (dst[j] & ib.live):
            dst[j] = src[j]


cdef void hat_update(const GameConfig* cfg, const InfoBoard* ib, const GameState* s,
                     uint32_t (*know)[MAX_HAND], int me, int source, int value,
                     int total) noexcept nogil:
    """Seat `me`'s view after `source` encoded `value` (mod total) over the others' hat
    values: the hands `me` sees learn their answers, its own hand decodes the rest."""
    cdef uint32_t work[MAX_HAND]
    cdef int P = cfg.players, p, n
    for p in range(P):
        if p == source or p == me:
            continue
        n = s.hand_len[p]
        memcpy(work, know[p], sizeof(work))
        value -= hat_encode(cfg, ib, work, n, s.hand[p], total)
        commit(ib, know[p], work, n)
    if me != source:
        value %= total
        if value < 0:
            value += total
        n = s.hand_len[me]
        memcpy(work, know[me], sizeof(work))
        hat_decode(cfg, ib, work, n, value, total)
        commit(ib, know[me], work, n)


# --- hints as numbers ---------------------------------------------------------------------

cdef int info_choices(const GameConfig* cfg, const BotTables* tb, const InfoBoard* ib,
                      const uint32_t* k, int n) noexcept nogil:
    """Hint choices a hand offers: 0 if empty; 2 (a rank or a color hint touching the hint
    card) for one card; 3 (+ any hint missing it); 4 when it is public that the hand
    holds 2+ colors and 2+ ranks (+ a rank hint / a color hint missing it)."""
    cdef int c, r, j
    cdef bint one_color = 0, one_rank = 0, all_can
    cdef uint32_t e
    if n == 0:
        return 0
    if n == 1:
        return 2
    for c in range(cfg.colors):
        all_can = 1
        for j in range(n):
            e = eff(k[j], ib.w, cfg)
            all_can = all_can and (e == 0 or (e & tb.color_bits[c]) != 0)
        one_color = one_color or all_can
    for r in range(cfg.ranks):
        all_can = 1
        for j in range(n):
            e = eff(k[j], ib.w, cfg)
            all_can = all_can and (e == 0 or (e & tb.rank_bits[r]) != 0)
        one_rank = one_rank or all_can
    return 3 if one_color or one_rank else 4


cdef int hint_card(const GameConfig* cfg, const BotTables* tb, const InfoBoard* ib,
                   const uint32_t* k, int n) noexcept nogil:
    """The card a hint to this hand is about: the first of the least known live cards."""
    cdef int j, tot, good, bad, score, best = 0, best_score = -1
    cdef uint32_t e
    for j in range(n):
        card_weights(cfg, k[j], ib.w, ib.bd.playable, ib.bd.worthless, &tot, &good, &bad)
        e = eff(k[j], ib.w, cfg)
        score = 0
        if not (tot > 0 and bad == tot) and not determined(k[j], ib.w, cfg):
            score = 1
            score += 0 if one_value(tb.color_bits, cfg.colors, e) else 1
            score += 0 if one_value(tb.rank_bits, cfg.ranks, e) else 1
        if score > best_score:
            best_score = score
            best = j
    return best


cdef inline bint one_value(const uint32_t* bits, int count, uint32_t e) noexcept nogil:
    """e's types share one color (bits = color_bits) or one rank (rank_bits)."""
    cdef int v, seen = 0
    for v in range(count):
        if e & bits[v]:
            seen += 1
    return seen <= 1


ctypedef struct HintFrame:
    int total
    int first[MAX_PLAYERS]        # choices of the players before (by offset from giver)
    int choices[MAX_PLAYERS]
    int card[MAX_PLAYERS]


cdef void hint_frame(const GameConfig* cfg, const BotTables* tb, const InfoBoard* ib,
                     const GameState* s, uint32_t (*know)[MAX_HAND], int giver,
                     HintFrame* f) noexcept nogil:
    cdef int off, p
    f.total = 0
    for off in range(1, cfg.players):
        p = (giver + off) % cfg.players
        f.first[off] = f.total
        f.choices[off] = info_choices(cfg, tb, ib, know[p], s.hand_len[p])
        f.card[off] = hint_card(cfg, tb, ib, know[p], s.hand_len[p])
        f.total += f.choices[off]


cdef int hint_value(const GameConfig* cfg, const HintFrame* f, int off, int is_rank,
                    uint8_t reveal) noexcept nogil:
    """The number a hint (to offset off, rank or color, touching `reveal`) stands for."""
    cdef int touched = (reveal >> f.card[off]) & 1, kind
    if touched or f.choices[off] == 2:
        kind = 0 if is_rank else 1
    elif f.choices[off] == 3:
        kind = 2
    else:
        kind = 2 if is_rank else 3
    return f.first[off] + kind


cdef inline void split_hint(const GameConfig* cfg, int move, int* off, int* is_rank,
                            int* value) noexcept nogil:
    cdef int m = move - 2 * cfg.hand_size
    if m < (cfg.players - 1) * cfg.colors:
        off[0] = 1 + m // cfg.colors
        value[0] = m % cfg.colors
        is_rank[0] = 0
    else:
        m -= (cfg.players - 1) * cfg.colors
        off[0] = 1 + m // cfg.ranks
        value[0] = m % cfg.ranks
        is_rank[0] = 1


# --- the memory: every seat's view, folded over the game ----------------------------------

cdef void info_memory_init(const GameConfig* cfg, InfoMemory* mem) noexcept nogil:
    cdef int x, p, j
    memset(mem, 0, sizeof(InfoMemory))
    for x in range(cfg.players):
        for p in range(cfg.players):
            for j in range(MAX_HAND):
                mem.know[x][p][j] = (1u << cfg.card_types) - 1u


cdef inline bint knows_playable(const GameConfig* cfg, const InfoBoard* ib, const uint32_t* k,
                                int n) noexcept nogil:
    cdef int j, tot, good, bad
    for j in range(n):
        card_weights(cfg, k[j], ib.w, ib.bd.playable, 0, &tot, &good, &bad)
        if tot > 0 and good == tot:
            return 1
    return 0


cdef int find_useless(const GameConfig* cfg, const InfoBoard* ib, const int* w,
                      const uint32_t* k, int n, int* out) noexcept nogil:
    """Slots surely dead, or two slots surely of one type; their count (in out, sorted)."""
    cdef int j, i, tot, good, bad, m = 0
    cdef int useless[MAX_HAND]
    cdef int dead[MAX_HAND]
    cdef uint32_t e[MAX_HAND]
    for j in range(n):
        card_weights(cfg, k[j], w, 0, ib.bd.worthless, &tot, &good, &bad)
        e[j] = eff(k[j], w, cfg)
        dead[j] = tot > 0 and bad == tot
        useless[j] = dead[j]
        if not dead[j] and e[j] and (e[j] & (e[j] - 1)) == 0:
            for i in range(j):
                if not dead[i] and e[i] == e[j]:
                    useless[i] = 1
                    useless[j] = 1
    for j in range(n):
        if useless[j]:
            out[m] = j
            m += 1
    return m


cdef void forget_playable(const GameConfig* cfg, const InfoBoard* ib, InfoMemory* mem,
                          const GameState* s, int giver) noexcept nogil:
    """A discard while hint tokens remained: whoever does not know a playable card of
    theirs holds none (else the discarder would have hinted)."""
    cdef uint32_t work[MAX_HAND]
    cdef int x, p, j, n
    for x in range(cfg.players):
        for p in range(cfg.players):
            n = s.hand_len[p]
            if p == giver or knows_playable(cfg, ib, mem.know[x][p], n):
                continue
            for j in range(n):
                work[j] = mem.know[x][p][j] & ~ib.bd.playable
            commit(ib, mem.know[x][p], work, n)


cdef void info_observe(const GameConfig* cfg, const BotTables* tb, InfoMemory* mem,
                       const GameState* s, int move, uint8_t reveal) noexcept nogil:
    """Fold one move of the player to move in s (s: the position before it; reveal: the
    slots a hint touched) into every seat's view. A seat's view reads only the hands that
    seat sees."""
    cdef InfoBoard ib
    cdef HintFrame f
    cdef int G = s.cur_player, H = cfg.hand_size, P = cfg.players
    cdef int x, j, n, slot, off, is_rank, value, t
    cdef int useless[MAX_PLAYERS][MAX_HAND]
    cdef int count[MAX_PLAYERS]
    cdef uint32_t mask
    cdef uint32_t work[MAX_HAND]
    info_board(cfg, s, &ib)
    if move < 2 * H:
        slot = move if move < H else move - H
        n = s.hand_len[G]
        if move < H:
            for x in range(P):
                count[x] = find_useless(cfg, &ib, ib.w, mem.know[x][G], n, useless[x])
            if s.info_tokens > 0:
                forget_playable(cfg, &ib, mem, s, G)
            for x in range(P):
                for j in range(count[x]):
                    if useless[x][j] == slot and count[x] > 1:
                        hat_update(cfg, &ib, s, mem.know[x], x, G, j, count[x])
        for x in range(P):
            for j in range(slot, n - 1):
                mem.know[x][G][j] = mem.know[x][G][j + 1]
            mem.know[x][G][n - 1] = tb.all_types
        return
    split_hint(cfg, move, &off, &is_rank, &value)
    t = (G + off) % P
    mask = tb.rank_bits[value] if is_rank else tb.color_bits[value]
    for x in range(P):
        hint_frame(cfg, tb, &ib, s, mem.know[x], G, &f)
        hat_update(cfg, &ib, s, mem.know[x], x, G, hint_value(cfg, &f, off, is_rank, reveal),
                   f.total)
        for j in range(s.hand_len[t]):
            work[j] = mem.know[x][t][j] & (mask if (reveal >> j) & 1 else ~mask)
        commit(&ib, mem.know[x][t], work, s.hand_len[t])


cdef void info_memory_replay(const GameConfig* cfg, const BotTables* tb, const GameState* s,
                             InfoMemory* mem) noexcept nogil:
    """Every seat's view after s's history. The hands of the past are rebuilt from the
    current hands and the cards played or discarded since (each seat's view reads only the
    cards it saw)."""
    cdef GameState g
    cdef int8_t seq[MAX_PLAYERS][MAX_SEQ]
    cdef int8_t entry[MAX_PLAYERS][MAX_HAND]
    cdef int next_entry[MAX_PLAYERS]
    cdef int i, p, j, slot, n, H = cfg.hand_size
    cdef const MoveRecord* rec
    info_memory_init(cfg, mem)
    cdef int elen[MAX_PLAYERS]
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
    for i in range(s.num_history):
        rec = &s.history[i]
        p = rec.player
        g.cur_player = p
        info_observe(cfg, tb, mem, &g, rec.move, rec.reveal)
        if rec.move >= 2 * H:
            g.info_tokens -= 1
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


# --- the decision -------------------------------------------------------------------------

ctypedef struct InfoView:
    InfoBoard ib
    int wp[MAX_CARD_TYPES]        # private weights: public, minus the copies `me` sees
    int holders[MAX_CARD_TYPES]   # other players holding a copy
    int n                         # cards in my hand
    uint32_t k[MAX_HAND]          # my cards (types of positive private weight)


cdef void info_view(const GameConfig* cfg, const GameState* s, const InfoMemory* mem, int me,
                    InfoView* v) noexcept nogil:
    cdef int p, j, t
    cdef uint32_t seen
    info_board(cfg, s, &v.ib)
    memcpy(v.wp, v.ib.w, sizeof(v.wp))
    memset(v.holders, 0, sizeof(v.holders))
    for p in range(cfg.players):
        if p == me:
            continue
        seen = 0
        for j in range(s.hand_len[p]):
            t = s.hand[p][j]
            if v.wp[t] > 0:
                v.wp[t] -= 1
            if not (seen >> t) & 1:
                v.holders[t] += 1
            seen |= 1u << t
    v.n = s.hand_len[me]
    for j in range(v.n):
        v.k[j] = mem.know[me][me][j]


cdef double mean_over(const GameConfig* cfg, uint32_t k, const int* w, const double* score) noexcept nogil:
    cdef int t, tot = 0
    cdef double acc = 0.0
    while k:
        t = ctz32(k)
        k &= k - 1
        if w[t] > 0:
            tot += w[t]
            acc += w[t] * score[t]
    return acc / tot if tot else 0.0


cdef int info_play_choice(const GameConfig* cfg, const GameState* s, const InfoView* v) noexcept nogil:
    """A surely playable card (the most urgent), else a likely one when it is cheap to
    try; -1 for none."""
    cdef double score[MAX_CARD_TYPES]
    cdef int j, t, tot, good, bad, best = -1, thr
    cdef double val, best_val = -1e9
    cdef const Board* bd = &v.ib.bd
    for t in range(cfg.card_types):
        score[t] = (9.0 - cfg.rank_of[t]) / ((1 + v.holders[t]) if s.deck_pos < cfg.deck_size else 1)
    for j in range(v.n):
        card_weights(cfg, v.k[j], v.wp, bd.playable, 0, &tot, &good, &bad)
        if tot > 0 and good == tot:
            val = mean_over(cfg, v.k[j], v.wp, score)
            if val > best_val:
                best_val = val
                best = j
    if best >= 0:
        return best
    thr = cfg.deck_size - cfg.card_types - cfg.players * cfg.hand_size
    if s.life_tokens <= 1 or s.discard_len > thr:
        return -1
    best_val = 0.75
    for j in range(v.n):
        card_weights(cfg, v.k[j], v.wp, bd.playable, bd.playable | bd.worthless, &tot, &good, &bad)
        if tot > 0 and bad == tot and <double>good / tot > best_val:
            best_val = <double>good / tot
            best = j
    return best


cdef bint someone_needs_hint(const GameConfig* cfg, const GameState* s, const InfoMemory* mem,
                             const InfoBoard* ib, int me, bint* can_play) noexcept nogil:
    """Another player holds a playable card but knows none (can_play: holds one)."""
    cdef int p, j
    cdef bint has
    can_play[0] = 0
    for p in range(cfg.players):
        if p == me:
            continue
        has = 0
        for j in range(s.hand_len[p]):
            has = has or (ib.bd.playable >> s.hand[p][j]) & 1
        can_play[0] = can_play[0] or has
        if has and not knows_playable(cfg, ib, mem.know[me][p], s.hand_len[p]):
            return 1
    return 0


cdef double hint_goodness(const GameConfig* cfg, const BotTables* tb, const InfoBoard* ib,
                          const uint32_t* k, const int8_t* cards, int n, int is_rank,
                          int value) noexcept nogil:
    cdef int j, tot, good, bad, tot2, good2, bad2
    cdef uint32_t mask = tb.rank_bits[value] if is_rank else tb.color_bits[value]
    cdef uint32_t after
    cdef bint hit
    cdef double g = 1.0
    for j in range(n):
        card_weights(cfg, k[j], ib.w, 0, ib.bd.worthless, &tot, &good, &bad)
        if tot == 0 or bad == tot or determined(k[j], ib.w, cfg):
            continue
        hit = (cfg.rank_of[cards[j]] if is_rank else cfg.color_of[cards[j]]) == value
        after = k[j] & (mask if hit else ~mask)
        card_weights(cfg, after, ib.w, 0, ib.bd.worthless, &tot2, &good2, &bad2)
        if tot2 == 0:
            continue
        g *= (2.0 if (tot2 == bad2 or determined(after, ib.w, cfg)) else 1.0) * tot / tot2
    return g


cdef int info_hint(const GameConfig* cfg, const BotTables* tb, const GameState* s,
                   const InfoMemory* mem, const InfoBoard* ib, int me) noexcept nogil:
    """The hint that encodes the sum of the others' hat values, or -1 if none does."""
    cdef uint32_t know[MAX_PLAYERS][MAX_HAND]
    cdef HintFrame f
    cdef int off, p, total_v = 0, kind, c, j, is_rank, value, best = -1, card
    cdef double g, best_g = -1.0
    memcpy(know, mem.know[me], sizeof(know))
    hint_frame(cfg, tb, ib, s, know, me, &f)
    if f.total == 0:
        return -1
    for off in range(1, cfg.players):
        p = (me + off) % cfg.players
        total_v += hat_encode(cfg, ib, know[p], s.hand_len[p], s.hand[p], f.total)
    total_v %= f.total
    off = 1
    while total_v >= f.first[off] + f.choices[off]:
        off += 1
    kind = total_v - f.first[off]
    p = (me + off) % cfg.players
    c = f.card[off]
    card = s.hand[p][c]
    for j in range(2 * MAX_HAND):       # candidates: (slot, rank?) of the target's cards
        is_rank = j & 1
        if (j >> 1) >= s.hand_len[p]:
            break
        value = cfg.rank_of[s.hand[p][j >> 1]] if is_rank else cfg.color_of[s.hand[p][j >> 1]]
        if not hint_fits(cfg, f.choices[off], kind, is_rank, value, card):
            continue
        g = hint_goodness(cfg, tb, ib, know[p], s.hand[p], s.hand_len[p], is_rank, value)
        if g > best_g or (g == best_g and hint_move(cfg, off, is_rank, value) < best):
            best_g = g
            best = hint_move(cfg, off, is_rank, value)
    return best


cdef inline bint hint_fits(const GameConfig* cfg, int choices, int kind, int is_rank, int value,
                           int card) noexcept nogil:
    """Whether a hint (rank or color `value`) stands for choice `kind` about `card`."""
    cdef int own = cfg.rank_of[card] if is_rank else cfg.color_of[card]
    if kind == 0 or kind == 1:
        return is_rank == (kind == 0) and value == own
    if choices == 3:
        return value != own
    return is_rank == (kind == 2) and value != own


cdef int info_discard(const GameConfig* cfg, const BotTables* tb, const GameState* s,
                      const InfoMemory* mem, const InfoView* v, int me) noexcept nogil:
    cdef uint32_t know[MAX_PLAYERS][MAX_HAND]
    cdef int pub[MAX_HAND]
    cdef int priv[MAX_HAND]
    cdef double score[MAX_CARD_TYPES]
    cdef double val, best_val = -1e18
    cdef int npub, npriv, off, p, total_v = 0, j, t, best = 0, tot, good, bad
    cdef InfoMemory tmp
    npub = find_useless(cfg, &v.ib, v.ib.w, mem.know[me][me], v.n, pub)
    npriv = find_useless(cfg, &v.ib, v.wp, v.k, v.n, priv)
    if npub > 1:
        memcpy(&tmp, mem, sizeof(InfoMemory))
        if s.info_tokens > 0:
            forget_playable(cfg, &v.ib, &tmp, s, me)
        for off in range(1, cfg.players):
            p = (me + off) % cfg.players
            total_v += hat_encode(cfg, &v.ib, tmp.know[me][p], s.hand_len[p], s.hand[p], npub)
        return pub[total_v % npub]
    if npriv > 0:
        return priv[0]
    for t in range(cfg.card_types):
        score[t] = 20.0 * (v.holders[t] > 0) + cfg.rank_of[t] + 1.0 + \
            (10.0 if ((v.ib.bd.worthless >> t) & 1 or not (v.ib.bd.critical >> t) & 1) else 0.0)
    for j in range(v.n):
        val = mean_over(cfg, v.k[j], v.wp, score)
        if val > best_val:
            best_val = val
            best = j
    return best


cdef int info_act(const GameConfig* cfg, const BotTables* tb, const GameState* s,
                  const InfoMemory* mem, int me) noexcept nogil:
    cdef InfoView v
    cdef int useless[MAX_HAND]
    cdef int j, nuse, move, thr
    cdef bint will_hint, can_play, needs
    if me != s.cur_player or state_terminal(cfg, s):
        return -1
    info_view(cfg, s, mem, me, &v)
    j = info_play_choice(cfg, s, &v)
    if j >= 0:
        return cfg.hand_size + j
    thr = cfg.deck_size - cfg.card_types - cfg.players * cfg.hand_size
    nuse = find_useless(cfg, &v.ib, v.wp, v.k, v.n, useless)
    needs = someone_needs_hint(cfg, s, mem, &v.ib, me, &can_play)
    if s.info_tokens == cfg.max_info or (s.info_tokens > 0 and needs):
        will_hint = 1
    elif s.discard_len <= thr and nuse > 0:
        will_hint = 0
    elif s.info_tokens > 0 and can_play:
        will_hint = 1
    else:
        will_hint = s.info_tokens > 4
    if will_hint and s.info_tokens > 0:
        move = info_hint(cfg, tb, s, mem, &v.ib, me)
        if move >= 0:
            return move
    if s.info_tokens < cfg.max_info and v.n > 0:
        return info_discard(cfg, tb, s, mem, &v, me)
    return info_fallback(cfg, s, &v)


cdef int info_fallback(const GameConfig* cfg, const GameState* s, const InfoView* v) noexcept nogil:
    """No hint encodes the number and no discard is allowed: the likeliest playable card,
    else the first legal move."""
    cdef uint8_t moves[MAX_MOVES]
    cdef int j, tot, good, bad, best = -1, n
    cdef double p, best_p = -1.0
    for j in range(v.n):
        card_weights(cfg, v.k[j], v.wp, v.ib.bd.playable, 0, &tot, &good, &bad)
        p = (<double>good / tot) if tot else 0.0
        if p > best_p:
            best_p = p
            best = j
    if best >= 0 and s.life_tokens > 1:
        return cfg.hand_size + best
    n = legal_moves(cfg, s, moves)
    return moves[n - 1] if n > 0 else -1


# --- play ---------------------------------------------------------------------------------

cdef inline uint8_t reveal_of(const GameConfig* cfg, const GameState* s, int move) noexcept nogil:
    """The slots a hint move touches (what the move's public record will say)."""
    cdef int off, is_rank, value, t, j
    cdef uint8_t out = 0
    if move < 2 * cfg.hand_size:
        return 0
    split_hint(cfg, move, &off, &is_rank, &value)
    t = (s.cur_player + off) % cfg.players
    for j in range(s.hand_len[t]):
        if (cfg.rank_of[s.hand[t][j]] if is_rank else cfg.color_of[s.hand[t][j]]) == value:
            out |= 1 << j
    return out


cdef int info_bot_act(const GameConfig* cfg, const GameState* s, int seat) noexcept nogil:
    cdef BotTables tb
    cdef InfoMemory mem
    if seat != s.cur_player or state_terminal(cfg, s):
        return -1
    bot_tables_init(cfg, &tb)
    info_memory_replay(cfg, &tb, s, &mem)
    return info_act(cfg, &tb, s, &mem, seat)


cdef int info_play_mem(const GameConfig* cfg, const BotTables* tb, GameState* s,
                       InfoMemory* mem, int max_moves) noexcept nogil:
    """Self-play from a memory folded over s's history (carried along in place)."""
    cdef int played = 0, move
    while max_moves < 0 or played < max_moves:
        if state_terminal(cfg, s):
            break
        move = info_act(cfg, tb, s, mem, s.cur_player)
        if move < 0:
            return -1
        info_observe(cfg, tb, mem, s, move, reveal_of(cfg, s, move))
        if apply_move(cfg, s, move) != ERR_OK:
            return -1
        played += 1
    return played


cdef int info_bot_play(const GameConfig* cfg, GameState* s, int max_moves) noexcept nogil:
    cdef BotTables tb
    cdef InfoMemory mem
    bot_tables_init(cfg, &tb)
    if max_moves != 0 and not state_terminal(cfg, s):
        info_memory_replay(cfg, &tb, s, &mem)
    return info_play_mem(cfg, &tb, s, &mem, max_moves)
