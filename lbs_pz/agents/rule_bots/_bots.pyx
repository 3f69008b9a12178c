# cython: language_level=3
"""Rule-based Hanabi bots in C, from random to SmartBot strength.

Each bot is a nogil function of (GameConfig, GameState, seat). It reads only what the seat
may see: the other players' hands, the card knowledge (hint masks) of every hand, the
fireworks, the discard pile, the tokens, the deck size and the move history. It never
reads `s.hand[seat]` or the undrawn deck. Conventions that need memory ("this card was
promised playable by a hint") are a fold over the public move history (`BotMemory`), so a
cloned or re-dealt state plays on correctly and rollouts need no side state: `bot_act`
replays the history, `bot_play` carries the fold along move by move (same moves).

Bots (BOT_NAMES), weakest first; 2-player self-play means from benchmarks/bots.py:

random   a random-looking legal move drawn from a hash of the public move history
         (deterministic given what every player has seen). Scores 0: it bombs out.

simple   (~16.4) in the spirit of HLE's SimpleAgent, without its bomb-outs:
         1. play a card whose hint masks pin it to a playable card;
         2. with a hint token, hint a playable card of the next players (its color if
            the color was never hinted, else its rank);
         3. with fewer than the maximum tokens, discard the oldest card;
         4. otherwise give the first legal hint (never a blind play).

weak, medium, strong: one family of convention bots (`act_conv`), with more conventions
switched on (`BotParams`) as they get stronger. Shared vocabulary:
  - knowledge K of a card: the card types its hint masks allow, minus types whose copies
    are all played or discarded (for the holder, also minus the copies it sees in the
    other hands and the cards of its own hand it knows exactly), narrowed to what a
    convention promised about it (a promise that contradicts the rest is ignored);
  - a card is known playable / known worthless when every type in K is;
  - critical: a useful card type with one copy left (so every 5);
  - the giver sees the receiver's cards, so it only gives a hint after interpreting it
    exactly as the receiver will (from public information only) and checking that every
    card's true type stays in its knowledge: hints never lie, and K is always sound.
  Turn order: (strong only: a save) -> play a known-playable card, lowest rank first ->
  a play clue -> (strong: final-round gamble, stall) -> discard a known-worthless card,
  else the chop, else the least valuable card (or a harmless hint if every card is
  probably critical) -> with all tokens, the most useful harmless hint (if none exists,
  the likeliest playable card when 2+ lives remain, else the first legal hint).

weak     (~17.3) hint masks and card counting only, no promises. A hint is worth giving
         when it makes a card known playable, else when it narrows down a playable card
         (color or rank it lacks). The chop is simply the oldest card.
medium   (~20.8) weak + H-group play clues: the focus of a hint (the chop if the hint
         newly touches it, else the newest newly touched card) is promised playable now;
         the giver checks the focus really is. Cards a hint touched are never discarded:
         the chop is the oldest untouched card.
strong   (>= 23) medium +
         - saves: a rank hint whose focus is the chop promises a critical card (or, for
           2s, an unplayed 2) and is never a play clue; before anything else, if the next
           player has no known play or worthless card and its chop is critical (or a 2
           whose twin is not in sight), give the hint that leaves it safe (a save, a play
           clue on the chop, or a play elsewhere), never one that uncovers a worse chop;
         - delayed play clues: the focus may be the card right after the cards publicly
           known (exactly) to be queued for play in its color;
         - among known-playable cards, play first those the others do not know about;
         - stall: with 12 or fewer cards to draw and a known play pending, give a harmless
           hint rather than discard (a hint does not advance the clock);
         - final round (deck empty) with 2+ lives: play the likeliest playable card.
"""

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, uint8_t, int16_t, int32_t, uint32_t, int64_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcmp, memcpy, memset

from lbs_pz.engine._core cimport (
    ERR_OK, MAX_MOVES, apply_move, legal_moves, rng_below, rng_next,
    state_reset, state_score, state_terminal,
)
from lbs_pz.engine.batch cimport HanabiBatch
from lbs_pz.engine.state cimport HanabiState
from lbs_pz.engine.batch import game_seeds

cnp.import_array()

cdef extern from *:
    int ctz32 "__builtin_ctz"(unsigned int) nogil
    int __builtin_clz(unsigned int) nogil

BOT_NAMES = ("random", "simple", "weak", "medium", "strong")

cdef BotParams PARAMS[NUM_BOTS]
memset(PARAMS, 0, sizeof(PARAMS))
# weak: card knowledge only; hints complete what a playable card's holder lacks.
PARAMS[BOT_WEAK].use_eyes = 1
PARAMS[BOT_WEAK].info_hints = 1
# medium: H-group play clues (the focus card is playable), touched cards are kept.
PARAMS[BOT_MEDIUM].use_eyes = 1
PARAMS[BOT_MEDIUM].promise_play = 1
PARAMS[BOT_MEDIUM].focus = 1
PARAMS[BOT_MEDIUM].keep_touched = 1
# strong: medium + saves, 2-saves, delayed play clues, stalling, final-round gambles.
PARAMS[BOT_STRONG] = PARAMS[BOT_MEDIUM]
PARAMS[BOT_STRONG].warn = 1
PARAMS[BOT_STRONG].save_twos = 1
PARAMS[BOT_STRONG].delayed = 1
PARAMS[BOT_STRONG].stall = 12
PARAMS[BOT_STRONG].gamble = 1
PARAMS[BOT_STRONG].play_best = 1

cdef enum:
    REJECT = -1000000000
    MAX_HINT_VALUES = MAX_COLORS + MAX_RANKS


cdef inline int popcount32(uint32_t x) noexcept nogil:
    """Bit count, inline on every x86-64 (no libgcc call, no -mpopcnt needed)."""
    x = x - ((x >> 1) & 0x55555555u)
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u)
    x = (x + (x >> 4)) & 0x0F0F0F0Fu
    return <int>((x * 0x01010101u) >> 24)


# The hints one decision has scored, per receiver, in best_hint's order: a decision asks
# for its best hint under several thresholds, and every hint is scored once.
ctypedef struct HintCache:
    int filled[MAX_PLAYERS]
    int count[MAX_PLAYERS]
    int move[MAX_PLAYERS][MAX_HINT_VALUES]
    int score[MAX_PLAYERS][MAX_HINT_VALUES]
    int danger[MAX_PLAYERS][MAX_HINT_VALUES]


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


# --- the public-history fold -----------------------------------------------------------

cdef void bot_memory_init(const GameConfig* cfg, BotMemory* mem) noexcept nogil:
    cdef int p, j
    memset(mem, 0, sizeof(BotMemory))
    for p in range(cfg.players):
        mem.hands[p].len = cfg.hand_size
        for j in range(cfg.hand_size):
            mem.hands[p].cm[j] = (1 << cfg.colors) - 1
            mem.hands[p].rm[j] = (1 << cfg.ranks) - 1
    mem.next_group = 1


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
    board_init(cfg, mem.fireworks, mem.discard_count, pr.save_twos, &bd)
    if pr.delayed:
        board_queue(cfg, tb, &bd, mem.fireworks, mem)
    interpret_hint(pr, tb, &bd, &mem.hands[t], is_rank, value, rec.reveal, &mem.next_group)


cdef void bot_memory_replay(int kind, const GameConfig* cfg, const BotTables* tb,
                            const GameState* s, BotMemory* mem) noexcept nogil:
    cdef int i
    bot_memory_init(cfg, mem)
    for i in range(s.num_history):
        bot_memory_step(kind, cfg, tb, mem, &s.history[i])


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
                   const uint32_t* known_before) noexcept nogil:
    """Score of hinting `value` to seat t, or REJECT if, interpreted by the conventions,
    the hint would make some card's knowledge exclude its true type. known_before: the
    knowledge of t's slots before the hint (the same for every hint to t), or NULL."""
    cdef HandMem h = mem.hands[t]
    cdef const HandMem* before = &mem.hands[t]
    cdef int16_t ng = mem.next_group
    cdef uint32_t touched = 0, kb, ka, tbit, seen
    cdef int j, card, score = 0, rank
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
            return REJECT
        kb = known_before[j] if known_before != NULL else knowledge(tb, bd, before, j)
        pa = subset(ka, bd.playable | bd.soon)
        pb = subset(kb, bd.playable | bd.soon)
        if pa and not pb:
            if queued & tbit:
                score += 2
            else:
                rank = cfg.rank_of[card]
                score += 100 + 10 * (cfg.ranks - 1 - rank)
                queued |= tbit
        elif not pa and subset(ka, bd.worthless) and not subset(kb, bd.worthless):
            score += 10
        elif pr.info_hints and (tbit & bd.playable) and ka != kb and not (queued & tbit):
            score += 50
        elif h.touched[j] and not before.touched[j]:
            # Newly protected from discards: good for a critical card, bad for junk.
            if tbit & bd.critical:
                score += 20
            elif tbit & bd.worthless:
                score -= 40
        score += popcount32(kb) - popcount32(ka)
    danger_after[0] = danger(pr, cfg, tb, bd, s, me, t, &h)
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
    for off in range(1, P):
        t = (me + off) % P
        if only_target >= 0 and t != only_target:
            continue
        if not hc.filled[t]:
            hc.filled[t] = 1
            hc.count[t] = 0
            for j in range(mem.hands[t].len):
                known[j] = knowledge(tb, bd, &mem.hands[t], j)
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
                                               queued, &d, known)
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


cdef int act_conv(const BotParams* pr, const GameConfig* cfg, const BotTables* tb,
                  const GameState* s, const BotMemory* mem, int me) noexcept nogil:
    cdef Board bd
    cdef int P = cfg.players, H = cfg.hand_size
    cdef int rem[MAX_CARD_TYPES]      # copies this seat cannot see, per card type
    cdef int left[MAX_CARD_TYPES]
    cdef uint32_t K[MAX_HAND]         # this seat's knowledge of its own cards
    cdef uint32_t eyes = 0, base, k, q, queued = 0
    cdef int j, i, t, q_, n, best, best_key, key, nxt, chop, dnow
    cdef double risk = 0
    cdef int info = s.info_tokens, deck_left = cfg.deck_size - s.deck_pos
    cdef const HandMem* hm = &mem.hands[me]
    cdef const HandMem* hn
    cdef HintCache hc
    for t in range(P):
        hc.filled[t] = 0
    board_init(cfg, s.fireworks, s.discard_count, pr.save_twos, &bd)
    if pr.delayed:
        board_queue(cfg, tb, &bd, s.fireworks, mem)

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
        memcpy(left, rem, sizeof(rem))
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
            if subset(knowledge(tb, &bd, &mem.hands[q_], j), bd.playable):
                queued |= 1u << s.hand[q_][j]

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

cdef int bot_act_mem(int kind, const GameConfig* cfg, const BotTables* tb,
                     const GameState* s, const BotMemory* mem, int seat) noexcept nogil:
    if seat != s.cur_player or state_terminal(cfg, s):
        return -1
    if kind == BOT_RANDOM:
        return act_random(cfg, s)
    if kind == BOT_SIMPLE:
        return act_simple(cfg, s, seat)
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
    bot_tables_init(cfg, &tb)
    bot_memory_replay(kind, cfg, &tb, s, &mem)
    return act_conv(&PARAMS[kind], cfg, &tb, s, &mem, seat)


cdef int bot_play(int kind, const GameConfig* cfg, GameState* s, int max_moves) noexcept nogil:
    cdef BotTables tb
    cdef BotMemory mem
    bot_tables_init(cfg, &tb)
    if kind >= BOT_WEAK:
        bot_memory_replay(kind, cfg, &tb, s, &mem)
    return bot_play_mem(kind, cfg, &tb, s, &mem, max_moves)


cdef int bot_play_mem(int kind, const GameConfig* cfg, const BotTables* tb, GameState* s,
                      BotMemory* mem, int max_moves) noexcept nogil:
    cdef int played = 0, move
    while max_moves < 0 or played < max_moves:
        if state_terminal(cfg, s):
            break
        move = bot_act_mem(kind, cfg, tb, s, mem, s.cur_player)
        if apply_move(cfg, s, move) != ERR_OK:
            return -1
        if kind >= BOT_WEAK:
            bot_memory_step(kind, cfg, tb, mem, &s.history[s.num_history - 1])
        played += 1
    return played


# --- memories shared along a common history prefix -------------------------------------

cdef inline bint same_public_record(const MoveRecord* a, const MoveRecord* b) noexcept nogil:
    """The fields the memory fold reads (whether a card was drawn, never which)."""
    return (a.move == b.move and a.player == b.player and a.card == b.card
            and a.reveal == b.reveal and a.scored == b.scored
            and (a.drawn >= 0) == (b.drawn >= 0))


cdef void memo_init(int kind, const GameConfig* cfg, MemoCache* c) noexcept nogil:
    c.kind = kind
    c.len = 0
    bot_memory_init(cfg, &c.snap[0])


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


# --- Python API ---------------------------------------------------------------------------

def bot_kind(bot):
    """The kind index of a bot given by name (see BOT_NAMES) or index."""
    if isinstance(bot, str):
        name = bot.lower()
        if name in BOT_NAMES:
            return BOT_NAMES.index(name)
        raise ValueError(f"unknown bot {bot!r}; choose one of {', '.join(BOT_NAMES)}")
    if isinstance(bot, (int, np.integer)) and not isinstance(bot, bool) and 0 <= bot < NUM_BOTS:
        return int(bot)
    raise ValueError(f"bot must be a name in {BOT_NAMES} or an index in [0, {NUM_BOTS}), got {bot!r}")


def act(bot, HanabiState state, seat=None):
    """The move id bot `bot` makes as `seat` (default: the player to move) in `state`,
    or -1 if the game is over. Raises ValueError if it is not `seat`'s turn."""
    cdef int kind = bot_kind(bot)
    cdef int who = state.s.cur_player if seat is None else int(seat)
    if who != state.s.cur_player and not state_terminal(&state.cfg, &state.s):
        raise ValueError(f"it is seat {state.s.cur_player}'s turn, not seat {who}'s")
    return bot_act(kind, &state.cfg, &state.s, who)


cdef GameState** _state_pointers(list states, GameConfig* cfg_out) except NULL:
    cdef int n = len(states), i
    cdef HanabiState st
    if n == 0:
        raise ValueError("need at least one state")
    cdef GameState** ptrs = <GameState**>calloc(n, sizeof(GameState*))
    if ptrs == NULL:
        raise MemoryError()
    config = None
    for i in range(n):
        st = states[i]
        if config is None:
            config = st.config
            cfg_out[0] = st.cfg
        elif st.config != config:
            free(ptrs)
            raise ValueError("all states must share one config")
        ptrs[i] = &st.s
    return ptrs


def act_states(bot, states):
    """Moves of the player to move in each state: int64 array (N,), -1 where the game is
    over. The states are not changed."""
    cdef int kind = bot_kind(bot)
    states = list(states)
    cdef GameConfig cfg
    cdef GameState** ptrs = _state_pointers(states, &cfg)
    cdef int n = len(states), i
    cdef cnp.ndarray[int64_t, ndim=1] out = np.empty(n, dtype=np.int64)
    cdef int64_t* o = <int64_t*>cnp.PyArray_DATA(out)
    with nogil:
        for i in range(n):
            o[i] = bot_act(kind, &cfg, ptrs[i], ptrs[i].cur_player)
    free(ptrs)
    return out


def play_states(bot, states, int max_moves=-1):
    """Self-play every state in place with `bot` in every seat: max_moves moves, or to the
    end if negative. Returns the moves made per state, int32 (N,)."""
    cdef int kind = bot_kind(bot)
    states = list(states)
    cdef GameConfig cfg
    cdef GameState** ptrs = _state_pointers(states, &cfg)
    cdef int n = len(states), i, bad = -1
    cdef cnp.ndarray[int32_t, ndim=1] out = np.empty(n, dtype=np.int32)
    cdef int32_t* o = <int32_t*>cnp.PyArray_DATA(out)
    with nogil:
        for i in range(n):
            o[i] = bot_play(kind, &cfg, ptrs[i], max_moves)
            if o[i] < 0 and bad < 0:
                bad = i
    free(ptrs)
    if bad >= 0:
        raise RuntimeError(f"bot {BOT_NAMES[kind]} chose an illegal move in state {bad}")
    return out


def act_batch(bot, HanabiBatch batch not None):
    """Moves of each game's player to move in a HanabiBatch: int64 (N,), -1 if over.

    Games whose public histories share a prefix (the worlds of one search) share the
    bot's memory of it: it is folded once, not once per game (same moves)."""
    cdef int kind = bot_kind(bot)
    cdef int n = batch.num_games, i
    cdef GameConfig* cfg = &batch._proto.cfg
    cdef cnp.ndarray[int64_t, ndim=1] out = np.empty(n, dtype=np.int64)
    cdef int64_t* o = <int64_t*>cnp.PyArray_DATA(out)
    cdef BotTables tb
    cdef BotMemory mem
    cdef GameState* g
    cdef MemoCache* cache = memo_new(kind, cfg)
    with nogil:
        bot_tables_init(cfg, &tb)
        for i in range(n):
            g = &batch.games[i]
            if kind >= BOT_WEAK and not state_terminal(cfg, g):
                memo_memory(cfg, &tb, cache, g, &mem)
            o[i] = bot_act_mem(kind, cfg, &tb, g, &mem, g.cur_player)
    free(cache)
    return out


def play_batch(bot, HanabiBatch batch not None, int max_moves=-1):
    """Self-play every game of a HanabiBatch in place (see play_states); returns the moves
    made per game, int32 (N,). The bot's memory of a history prefix that games share is
    folded once (see act_batch)."""
    cdef int kind = bot_kind(bot)
    cdef int n = batch.num_games, i, bad = -1
    cdef GameConfig* cfg = &batch._proto.cfg
    cdef cnp.ndarray[int32_t, ndim=1] out = np.empty(n, dtype=np.int32)
    cdef int32_t* o = <int32_t*>cnp.PyArray_DATA(out)
    cdef BotTables tb
    cdef BotMemory mem
    cdef GameState* g
    cdef MemoCache* cache = memo_new(kind, cfg)
    with nogil:
        bot_tables_init(cfg, &tb)
        for i in range(n):
            g = &batch.games[i]
            if kind >= BOT_WEAK and max_moves != 0 and not state_terminal(cfg, g):
                memo_memory(cfg, &tb, cache, g, &mem)
            o[i] = bot_play_mem(kind, cfg, &tb, g, &mem, max_moves)
            if o[i] < 0 and bad < 0:
                bad = i
    free(cache)
    if bad >= 0:
        raise RuntimeError(f"bot {BOT_NAMES[kind]} chose an illegal move in game {bad}")
    return out


def selfplay(bot, config, int num_games, seed=0, int first_game=0):
    """Play games first_game .. first_game+num_games-1 of a run seeded with `seed` (the
    deals of `HanabiBatch(config, n, seeds=seed)`) to the end with `bot` in every seat,
    in C. Returns a dict of arrays (num_games,): score, moves, lives (left at the end)."""
    cdef int kind = bot_kind(bot)
    cdef HanabiState proto = HanabiState(config, seed=0)
    cdef cnp.ndarray[uint64_t, ndim=1] seeds = game_seeds(seed, first_game, num_games)
    cdef GameState* games = <GameState*>calloc(max(num_games, 1), sizeof(GameState))
    if games == NULL:
        raise MemoryError()
    cdef cnp.ndarray[int32_t, ndim=1] score = np.empty(num_games, dtype=np.int32)
    cdef cnp.ndarray[int32_t, ndim=1] moves = np.empty(num_games, dtype=np.int32)
    cdef cnp.ndarray[int32_t, ndim=1] lives = np.empty(num_games, dtype=np.int32)
    cdef uint64_t* sd = <uint64_t*>cnp.PyArray_DATA(seeds)
    cdef int32_t* sc = <int32_t*>cnp.PyArray_DATA(score)
    cdef int32_t* mv = <int32_t*>cnp.PyArray_DATA(moves)
    cdef int32_t* lv = <int32_t*>cnp.PyArray_DATA(lives)
    cdef int i, bad = -1
    with nogil:
        for i in range(num_games):
            state_reset(&proto.cfg, &games[i], sd[i])
            mv[i] = bot_play(kind, &proto.cfg, &games[i], -1)
            if mv[i] < 0 and bad < 0:
                bad = i
            sc[i] = state_score(&proto.cfg, &games[i])
            lv[i] = games[i].life_tokens
    free(games)
    if bad >= 0:
        raise RuntimeError(f"bot {BOT_NAMES[kind]} chose an illegal move in game "
                           f"{first_game + bad} (seed {seed})")
    return {"score": score, "moves": moves, "lives": lives}


def memory(bot, HanabiState state):
    """The bot's public-history memory of `state` (for inspection and tests): per seat a
    list of (plausible color mask, plausible rank mask, promised types mask, group,
    touched)."""
    cdef int kind = bot_kind(bot)
    cdef BotTables tb
    cdef BotMemory mem
    bot_tables_init(&state.cfg, &tb)
    bot_memory_replay(kind, &state.cfg, &tb, &state.s, &mem)
    return [[(mem.hands[p].cm[j], mem.hands[p].rm[j], mem.hands[p].promise[j],
              mem.hands[p].group[j], mem.hands[p].touched[j]) for j in range(mem.hands[p].len)]
            for p in range(state.cfg.players)]


_PARAM_NAMES = ("use_eyes", "promise_play", "warn", "save_twos", "group_elim", "gamble",
                "stall", "play_best", "delayed", "focus", "info_hints",
                "keep_touched")


def get_params(bot):
    """The convention switches of a convention bot, as a dict."""
    return dict(PARAMS[bot_kind(bot)])


def _set_params(bot, **switches):
    """Change convention switches of a bot kind for this process (tuning and tests only)."""
    cdef int kind = bot_kind(bot)
    for name, value in switches.items():
        if name not in _PARAM_NAMES:
            raise ValueError(f"unknown switch {name!r}; choose from {_PARAM_NAMES}")
        d = dict(PARAMS[kind])
        d[name] = int(value)
        PARAMS[kind] = d


def _hint_scores(bot, HanabiState state):
    """(move, score, danger) of every hint the player to move could give, as a
    convention bot scores it (score None: rejected as untruthful). For debugging."""
    cdef int kind = bot_kind(bot)
    cdef BotTables tb
    cdef BotMemory mem
    cdef Board bd
    cdef const BotParams* pr = &PARAMS[kind]
    cdef int me = state.s.cur_player, off, t, is_rank, v, j, d, sc
    bot_tables_init(&state.cfg, &tb)
    bot_memory_replay(kind, &state.cfg, &tb, &state.s, &mem)
    board_init(&state.cfg, state.s.fireworks, state.s.discard_count, pr.save_twos, &bd)
    if pr.delayed:
        board_queue(&state.cfg, &tb, &bd, state.s.fireworks, &mem)
    out = []
    for off in range(1, state.cfg.players):
        t = (me + off) % state.cfg.players
        for is_rank in range(2):
            present = set(state.cfg.rank_of[state.s.hand[t][j]] if is_rank
                          else state.cfg.color_of[state.s.hand[t][j]]
                          for j in range(state.s.hand_len[t]))
            for v in sorted(present):
                d = 0
                sc = eval_hint(pr, &state.cfg, &tb, &bd, &state.s, &mem, me, t, is_rank, v, 0, &d,
                               NULL)
                out.append((hint_move(&state.cfg, off, is_rank, v), None if sc == REJECT else sc, d))
    return out


cdef class MemoryCache:
    """A bot's memories of the positions of one game, kept between calls: a call on a
    later position of the same game folds only the moves made since (counterfactual
    filters walk a game's partner decisions one after another). Use it with the GIL held
    (one thread at a time); results never depend on it."""

    cdef MemoCache* c
    cdef readonly int kind
    cdef object _config
    cdef BotParams _params              # the switches the memories were folded with

    def __cinit__(self, bot):
        self.kind = bot_kind(bot)
        self.c = <MemoCache*>calloc(1, sizeof(MemoCache))
        if self.c == NULL:
            raise MemoryError("cannot allocate the bot memory cache")
        self.c.len = -1                 # no configuration yet

    def __dealloc__(self):
        free(self.c)

    def __reduce__(self):
        return (MemoryCache, (self.kind,))     # a copy starts empty

    cdef void fetch(self, HanabiState state, BotTables* tb, BotMemory* out):
        if self.c.len < 0 or state.config != self._config or \
                memcmp(&self._params, &PARAMS[self.kind], sizeof(BotParams)) != 0:
            self._config = state.config
            self._params = PARAMS[self.kind]
            memo_init(self.kind, &state.cfg, self.c)
        memo_memory(&state.cfg, tb, self.c, &state.s, out)


def counterfactual_mask(bot, HanabiState before not None, int seat, int move,
                        const int8_t[:, ::1] hands not None, MemoryCache cache=None):
    """uint8 (N,): 1 where rule bot `bot`, acting for the player to move in `before`,
    makes `move` when `seat` (another player) holds hands[r] (int8 (N, hand_len)).

    Only `seat`'s hand is replaced (in a private copy of the game); the bots read neither
    the actor's own cards nor the undrawn deck, and their memory is a fold over the public
    history, computed once for all candidates (with `cache`, a MemoryCache of this bot,
    only the moves since its previous call on the same game are folded)."""
    cdef int kind = bot_kind(bot)
    cdef int64_t N = hands.shape[0], r
    cdef int n = hands.shape[1], i
    if not 0 <= seat < before.cfg.players:
        raise ValueError(f"seat {seat} out of range [0, {before.cfg.players})")
    if n != before.s.hand_len[seat]:
        raise ValueError(f"hands have {n} cards, seat {seat} holds {before.s.hand_len[seat]}")
    if N and (np.min(hands) < 0 or np.max(hands) >= before.cfg.card_types):
        raise ValueError(f"card ids must be in [0, {before.cfg.card_types})")
    if cache is not None and cache.kind != kind:
        raise ValueError(f"the cache holds memories of bot {BOT_NAMES[cache.kind]}, not "
                         f"{BOT_NAMES[kind]}")
    cdef cnp.ndarray out = np.empty(N, dtype=np.uint8)
    cdef uint8_t* o = <uint8_t*>cnp.PyArray_DATA(out)
    cdef GameState s
    cdef BotTables tb
    cdef BotMemory mem
    cdef int actor = before.s.cur_player
    memcpy(&s, &before.s, sizeof(GameState))
    bot_tables_init(&before.cfg, &tb)
    if kind >= BOT_WEAK:
        if cache is not None:
            cache.fetch(before, &tb, &mem)
        else:
            bot_memory_replay(kind, &before.cfg, &tb, &s, &mem)
    with nogil:
        for r in range(N):
            for i in range(n):
                s.hand[seat][i] = hands[r, i]
            o[r] = bot_act_mem(kind, &before.cfg, &tb, &s, &mem, actor) == move
    return out
