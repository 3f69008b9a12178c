# cython: language_level=3
"""The rules of Hanabi at C level, exactly as the Hanabi Learning Environment plays them.

Every function here works on plain structs and releases the GIL; the Python classes in
`state.pyx` and `batch.pyx` are thin shells around them.
"""

from libc.string cimport memset


cdef int config_init(GameConfig* cfg, int players, int colors, int ranks, int hand_size,
                     int max_info, int max_life, int obs_type, int random_start) noexcept nogil:
    """Fill the derived fields of a config. Values are validated in Python beforehand."""
    cdef int c, r, card, bits
    cfg.players = players
    cfg.colors = colors
    cfg.ranks = ranks
    cfg.hand_size = hand_size
    cfg.max_info = max_info
    cfg.max_life = max_life
    cfg.obs_type = obs_type
    cfg.random_start = random_start
    cfg.card_types = colors * ranks
    cfg.num_moves = 2 * hand_size + (players - 1) * (colors + ranks)
    cfg.deck_size = 0
    for c in range(colors):
        for r in range(ranks):
            card = c * ranks + r
            # HLE: three 1s, one copy of the top rank, two of everything else.
            cfg.card_count[card] = 3 if r == 0 else (1 if r == ranks - 1 else 2)
            cfg.color_of[card] = c
            cfg.rank_of[card] = r
            cfg.deck_size += cfg.card_count[card]
    bits = cfg.card_types
    cfg.encoding_size = (
        (players - 1) * hand_size * bits + players                        # hands
        + cfg.deck_size - players * hand_size + bits + max_info + max_life  # board
        + cfg.deck_size                                                    # discards
        + players + 4 + players + colors + ranks + 2 * hand_size + bits + 2  # last action
    )
    if obs_type != OBS_MINIMAL:
        cfg.encoding_size += players * hand_size * (bits + colors + ranks)  # card knowledge
    return 0


cdef void state_shuffle_deck(const GameConfig* cfg, GameState* s) noexcept nogil:
    """Fisher-Yates shuffle of the cards not yet drawn."""
    cdef int i, j, lo = s.deck_pos
    cdef int8_t tmp
    for i in range(cfg.deck_size - 1, lo, -1):
        j = lo + rng_below(&s.rng, i - lo + 1)
        tmp = s.deck[i]
        s.deck[i] = s.deck[j]
        s.deck[j] = tmp


cdef inline void fresh_knowledge(const GameConfig* cfg, GameState* s, int p, int slot,
                                 int card) noexcept nogil:
    if cfg.obs_type == OBS_SEER:
        # HLE reveals every dealt card to its holder in seer mode.
        s.color_plausible[p][slot] = 1 << cfg.color_of[card]
        s.rank_plausible[p][slot] = 1 << cfg.rank_of[card]
        s.color_hinted[p][slot] = cfg.color_of[card]
        s.rank_hinted[p][slot] = cfg.rank_of[card]
    else:
        s.color_plausible[p][slot] = (1 << cfg.colors) - 1
        s.rank_plausible[p][slot] = (1 << cfg.ranks) - 1
        s.color_hinted[p][slot] = -1
        s.rank_hinted[p][slot] = -1


cdef inline int draw_card(const GameConfig* cfg, GameState* s, int p) noexcept nogil:
    """Append the top of the deck to player p's hand; returns the card or -1."""
    if s.deck_pos >= cfg.deck_size:
        return -1
    cdef int slot = s.hand_len[p]
    cdef int card = s.deck[s.deck_pos]
    s.hand[p][slot] = card
    s.hand_deck_index[p][slot] = s.deck_pos
    fresh_knowledge(cfg, s, p, slot, card)
    s.hand_len[p] += 1
    s.deck_pos += 1
    return card


cdef void state_deal(const GameConfig* cfg, GameState* s, int start_player) noexcept nogil:
    """Start a game from s.deck (the full dealing order): player 0 gets the first
    hand_size cards, player 1 the next, and so on, as HLE deals them."""
    cdef int p, k
    s.deck_pos = 0
    memset(s.hand_len, 0, sizeof(s.hand_len))
    memset(s.fireworks, 0, sizeof(s.fireworks))
    memset(s.discard_count, 0, sizeof(s.discard_count))
    s.discard_len = 0
    s.info_tokens = cfg.max_info
    s.life_tokens = cfg.max_life
    s.turns_to_play = cfg.players
    s.num_history = 0
    for p in range(cfg.players):
        for k in range(cfg.hand_size):
            draw_card(cfg, s, p)
    s.cur_player = start_player


cdef void state_reset(const GameConfig* cfg, GameState* s, uint64_t seed) noexcept nogil:
    """A new game from a seed: start player (if random), then a shuffled deck."""
    cdef int card, k, n = 0, start = 0
    s.rng = seed
    if cfg.random_start:
        start = rng_below(&s.rng, cfg.players)
    for card in range(cfg.card_types):
        for k in range(cfg.card_count[card]):
            s.deck[n] = card
            n += 1
    s.deck_pos = 0
    state_shuffle_deck(cfg, s)
    state_deal(cfg, s, start)


cdef int legal_moves(const GameConfig* cfg, const GameState* s, uint8_t* out) noexcept nogil:
    """Write the legal move ids of the current player, ascending, into out; return the count."""
    if state_terminal(cfg, s):
        return 0
    cdef int n = 0, i, off, t, c, r, base
    cdef int cur = s.cur_player
    cdef int hl = s.hand_len[cur]
    cdef int hs = cfg.hand_size
    cdef unsigned int colors_present, ranks_present
    if s.info_tokens < cfg.max_info:
        for i in range(hl):
            out[n] = i
            n += 1
    for i in range(hl):
        out[n] = hs + i
        n += 1
    if s.info_tokens > 0:
        base = 2 * hs
        for off in range(1, cfg.players):
            t = (cur + off) % cfg.players
            colors_present = 0
            for i in range(s.hand_len[t]):
                colors_present |= 1u << cfg.color_of[s.hand[t][i]]
            for c in range(cfg.colors):
                if (colors_present >> c) & 1:
                    out[n] = base + (off - 1) * cfg.colors + c
                    n += 1
        base = 2 * hs + (cfg.players - 1) * cfg.colors
        for off in range(1, cfg.players):
            t = (cur + off) % cfg.players
            ranks_present = 0
            for i in range(s.hand_len[t]):
                ranks_present |= 1u << cfg.rank_of[s.hand[t][i]]
            for r in range(cfg.ranks):
                if (ranks_present >> r) & 1:
                    out[n] = base + (off - 1) * cfg.ranks + r
                    n += 1
    return n


cdef int legal_mask(const GameConfig* cfg, const GameState* s, uint8_t* mask) noexcept nogil:
    """Write a 0/1 mask over all num_moves move ids; return the number of legal moves."""
    cdef uint8_t moves[MAX_MOVES]
    cdef int n = legal_moves(cfg, s, moves), i
    memset(mask, 0, cfg.num_moves)
    for i in range(n):
        mask[moves[i]] = 1
    return n


cdef bint move_is_legal(const GameConfig* cfg, const GameState* s, int move) noexcept nogil:
    if move < 0 or move >= cfg.num_moves or state_terminal(cfg, s):
        return False
    cdef int cur = s.cur_player, hs = cfg.hand_size, m, off, t, i, value
    if move < hs:
        return s.info_tokens < cfg.max_info and move < s.hand_len[cur]
    if move < 2 * hs:
        return move - hs < s.hand_len[cur]
    if s.info_tokens <= 0:
        return False
    m = move - 2 * hs
    if m < (cfg.players - 1) * cfg.colors:
        off = 1 + m // cfg.colors
        value = m % cfg.colors
        t = (cur + off) % cfg.players
        for i in range(s.hand_len[t]):
            if cfg.color_of[s.hand[t][i]] == value:
                return True
        return False
    m -= (cfg.players - 1) * cfg.colors
    off = 1 + m // cfg.ranks
    value = m % cfg.ranks
    t = (cur + off) % cfg.players
    for i in range(s.hand_len[t]):
        if cfg.rank_of[s.hand[t][i]] == value:
            return True
    return False


cdef inline void remove_from_hand(GameState* s, int p, int slot) noexcept nogil:
    """Erase a slot; later cards shift left (HLE's vector erase)."""
    cdef int i
    for i in range(slot, s.hand_len[p] - 1):
        s.hand[p][i] = s.hand[p][i + 1]
        s.hand_deck_index[p][i] = s.hand_deck_index[p][i + 1]
        s.color_plausible[p][i] = s.color_plausible[p][i + 1]
        s.rank_plausible[p][i] = s.rank_plausible[p][i + 1]
        s.color_hinted[p][i] = s.color_hinted[p][i + 1]
        s.rank_hinted[p][i] = s.rank_hinted[p][i + 1]
    s.hand_len[p] -= 1


cdef inline void add_to_discards(GameState* s, int card) noexcept nogil:
    s.discard_pile[s.discard_len] = card
    s.discard_len += 1
    s.discard_count[card] += 1


cdef inline uint8_t gain_info_token(const GameConfig* cfg, GameState* s) noexcept nogil:
    if s.info_tokens < cfg.max_info:
        s.info_tokens += 1
        return 1
    return 0


cdef int apply_move(const GameConfig* cfg, GameState* s, int move) noexcept nogil:
    """Apply a move of the current player if it is legal; returns an ERR_ code."""
    if state_terminal(cfg, s):
        return ERR_TERMINAL
    if not move_is_legal(cfg, s, move) or s.num_history >= MAX_HISTORY:
        return ERR_ILLEGAL_MOVE
    apply_legal_move(cfg, s, move)
    return ERR_OK


cdef inline void apply_legal_move(const GameConfig* cfg, GameState* s, int move) noexcept nogil:
    """Apply a legal move of the current player, draw its replacement, pass the turn."""
    cdef int cur = s.cur_player, hs = cfg.hand_size, P = cfg.players
    cdef int slot, card, color, rank, m, off, t, i
    cdef uint8_t bit
    cdef MoveRecord* rec = &s.history[s.num_history]
    if s.deck_pos >= cfg.deck_size:
        s.turns_to_play -= 1
    rec.move = move
    rec.player = cur
    rec.card = -1
    rec.reveal = 0
    rec.newly = 0
    rec.scored = 0
    rec.info_token = 0
    rec.drawn = -1
    if move < 2 * hs:
        slot = move if move < hs else move - hs
        card = s.hand[cur][slot]
        rec.card = card
        if move < hs:                                   # discard
            rec.info_token = gain_info_token(cfg, s)
            add_to_discards(s, card)
        else:                                           # play
            color = cfg.color_of[card]
            if s.fireworks[color] == cfg.rank_of[card]:
                s.fireworks[color] += 1
                rec.scored = 1
                if s.fireworks[color] == cfg.ranks:
                    rec.info_token = gain_info_token(cfg, s)
            else:
                s.life_tokens -= 1
                add_to_discards(s, card)
        remove_from_hand(s, cur, slot)
        rec.drawn = draw_card(cfg, s, cur)
    else:
        s.info_tokens -= 1
        m = move - 2 * hs
        if m < (P - 1) * cfg.colors:                    # reveal color
            off = 1 + m // cfg.colors
            color = m % cfg.colors
            t = (cur + off) % P
            for i in range(s.hand_len[t]):
                bit = 1 << i
                if cfg.color_of[s.hand[t][i]] == color:
                    rec.reveal |= bit
                    if s.color_hinted[t][i] < 0:
                        rec.newly |= bit
                    s.color_hinted[t][i] = color
                    s.color_plausible[t][i] = 1 << color
                else:
                    s.color_plausible[t][i] &= ~(1 << color)
        else:                                           # reveal rank
            m -= (P - 1) * cfg.colors
            off = 1 + m // cfg.ranks
            rank = m % cfg.ranks
            t = (cur + off) % P
            for i in range(s.hand_len[t]):
                bit = 1 << i
                if cfg.rank_of[s.hand[t][i]] == rank:
                    rec.reveal |= bit
                    if s.rank_hinted[t][i] < 0:
                        rec.newly |= bit
                    s.rank_hinted[t][i] = rank
                    s.rank_plausible[t][i] = 1 << rank
                else:
                    s.rank_plausible[t][i] &= ~(1 << rank)
    s.num_history += 1
    s.cur_player = (cur + 1) % P


cdef int set_hand(const GameConfig* cfg, GameState* s, int player, const int8_t* cards,
                  int* bad_slot) noexcept nogil:
    """Give `player` the hand `cards` (hand_len[player] card ids), keep every card
    knowledge and every other card in view unchanged, and re-shuffle the undrawn deck from
    what remains. The new cards are also written into the deck order at the positions the
    old ones were dealt from (and into the history's draws), so the record of the game
    stays a valid deal.

    Fails, changing nothing, if a card contradicts its slot's knowledge or more copies
    are asked for than remain unseen by the player (deck + own hand)."""
    cdef int8_t unseen[MAX_CARD_TYPES]
    cdef int i, k, card, n
    memset(unseen, 0, sizeof(unseen))
    for i in range(s.deck_pos, cfg.deck_size):
        unseen[s.deck[i]] += 1
    for i in range(s.hand_len[player]):
        unseen[s.hand[player][i]] += 1
    for i in range(s.hand_len[player]):
        card = cards[i]
        bad_slot[0] = i
        if card < 0 or card >= cfg.card_types:
            return ERR_BAD_CARD
        if not ((s.color_plausible[player][i] >> cfg.color_of[card]) & 1) or \
           not ((s.rank_plausible[player][i] >> cfg.rank_of[card]) & 1):
            return ERR_NOT_PLAUSIBLE
        unseen[card] -= 1
        if unseen[card] < 0:
            return ERR_NOT_AVAILABLE
    bad_slot[0] = -1
    for i in range(s.hand_len[player]):
        s.hand[player][i] = cards[i]
        s.deck[s.hand_deck_index[player][i]] = cards[i]
    # Draws consume the deck in order after the initial deal: re-read each recorded draw.
    n = cfg.players * cfg.hand_size
    for i in range(s.num_history):
        if s.history[i].drawn >= 0:
            s.history[i].drawn = s.deck[n]
            n += 1
    n = s.deck_pos
    for card in range(cfg.card_types):
        for k in range(unseen[card]):
            s.deck[n] = card
            n += 1
    state_shuffle_deck(cfg, s)
    return ERR_OK


cdef int random_legal_move(const GameConfig* cfg, GameState* s) noexcept nogil:
    """A uniformly random legal move drawn from the state's own RNG, or -1 at the end."""
    cdef uint8_t moves[MAX_MOVES]
    cdef int n = legal_moves(cfg, s, moves)
    if n == 0:
        return -1
    return moves[rng_below(&s.rng, n)]


cdef int play_random_to_end(const GameConfig* cfg, GameState* s, int max_moves) noexcept nogil:
    """Random-legal self-play for at most max_moves moves (all, if negative)."""
    cdef int played = 0, move
    while max_moves < 0 or played < max_moves:
        move = random_legal_move(cfg, s)
        if move < 0:
            break
        apply_legal_move(cfg, s, move)
        played += 1
    return played


def derived_sizes(int players, int colors, int ranks, int hand_size, int max_info,
                  int max_life, int obs_type):
    """(num_moves, deck_size, encoding_size) of a configuration; the single source of
    these formulas, used by HanabiConfig. ValueError for a value outside the engine's
    limits (its C arrays are sized for them)."""
    for name, value, lo, hi in (("players", players, 2, MAX_PLAYERS),
                                ("colors", colors, 1, MAX_COLORS),
                                ("ranks", ranks, 1, MAX_RANKS),
                                ("hand_size", hand_size, 1, MAX_HAND),
                                ("max_info", max_info, 1, 16), ("max_life", max_life, 1, 8),
                                ("obs_type", obs_type, 0, 2)):
        if not lo <= value <= hi:
            raise ValueError(f"{name} must be in [{lo}, {hi}], got {value}")
    cdef GameConfig cfg
    config_init(&cfg, players, colors, ranks, hand_size, max_info, max_life, obs_type, 0)
    return cfg.num_moves, cfg.deck_size, cfg.encoding_size
