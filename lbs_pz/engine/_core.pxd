# C-level Hanabi: plain structs and nogil functions shared by every engine module.
#
# A game is one `GameState` struct (about 1.6 KB, no pointers), so cloning is a
# memcpy and N games are just a contiguous array of structs. The rules follow the
# Hanabi Learning Environment (HLE) exactly; the only difference is that chance
# (dealing) is folded into the move that causes it, drawing from an explicit deck
# order instead of sampling each card at draw time.

from libc.stdint cimport int8_t, uint8_t, int16_t, uint16_t, uint64_t

cdef enum:
    MAX_PLAYERS = 5
    MAX_COLORS = 5
    MAX_RANKS = 5
    MAX_HAND = 8           # HLE's reveal bitmask is 8 bits wide
    MAX_CARD_TYPES = 25
    MAX_DECK = 50
    MAX_MOVES = 56         # 2 * MAX_HAND + (MAX_PLAYERS - 1) * (MAX_COLORS + MAX_RANKS)
    MAX_HISTORY = 192      # > 50 plays/discards + 71 hints, the longest possible game

# Observation types, numbered as in HLE.
cdef enum:
    OBS_MINIMAL = 0
    OBS_CARD_KNOWLEDGE = 1
    OBS_SEER = 2

# Move kinds, in HLE move-id order.
cdef enum:
    KIND_DISCARD = 0
    KIND_PLAY = 1
    KIND_REVEAL_COLOR = 2
    KIND_REVEAL_RANK = 3

# Error codes returned by the nogil functions (0 = success).
cdef enum:
    ERR_OK = 0
    ERR_ILLEGAL_MOVE = 1
    ERR_TERMINAL = 2
    ERR_BAD_CARD = 3       # set_hand: not a card id of this game
    ERR_NOT_PLAUSIBLE = 4  # set_hand: contradicts the slot's card knowledge
    ERR_NOT_AVAILABLE = 5  # set_hand: more copies than remain unseen by the player

ctypedef struct GameConfig:
    int players
    int colors
    int ranks
    int hand_size
    int max_info
    int max_life
    int obs_type
    int random_start
    int num_moves
    int deck_size          # cards in a full deck
    int card_types         # colors * ranks
    int encoding_size
    int8_t card_count[MAX_CARD_TYPES]   # copies of each card type in the deck
    int8_t color_of[MAX_CARD_TYPES]     # lookup tables: no division on hot paths
    int8_t rank_of[MAX_CARD_TYPES]

# One entry of the move history. `player` is absolute.
ctypedef struct MoveRecord:
    uint8_t move           # move id
    int8_t player
    int8_t card            # card played or discarded, -1 for hints
    uint8_t reveal         # hints: bitmask of hand slots that match
    uint8_t newly          # hints: bitmask of slots whose color/rank was not known before
    uint8_t scored         # plays: 1 if the card was added to the fireworks
    uint8_t info_token     # play/discard: 1 if an information token was gained
    int8_t drawn           # card drawn after a play/discard, -1 if none

ctypedef struct GameState:
    uint64_t rng           # splitmix64 state; used by re-deals and random play
    int8_t deck[MAX_DECK]  # full dealing order; deck[deck_pos:] is still to be drawn
    int8_t deck_pos
    int8_t hand[MAX_PLAYERS][MAX_HAND]
    int8_t hand_deck_index[MAX_PLAYERS][MAX_HAND]  # where in `deck` each hand card was dealt from
    int8_t hand_len[MAX_PLAYERS]
    # Card knowledge per slot, exactly HLE's: plausible colors/ranks as bitmasks, and the
    # directly hinted color/rank (-1 when not hinted).
    uint8_t color_plausible[MAX_PLAYERS][MAX_HAND]
    uint8_t rank_plausible[MAX_PLAYERS][MAX_HAND]
    int8_t color_hinted[MAX_PLAYERS][MAX_HAND]
    int8_t rank_hinted[MAX_PLAYERS][MAX_HAND]
    int8_t fireworks[MAX_COLORS]
    int8_t discard_count[MAX_CARD_TYPES]
    int8_t discard_pile[MAX_DECK]
    int8_t discard_len
    int8_t info_tokens
    int8_t life_tokens
    int8_t cur_player
    int8_t turns_to_play   # as HLE: decremented on each move made with an empty deck
    int16_t num_history
    MoveRecord history[MAX_HISTORY]


# --- RNG: splitmix64, identical on every platform -------------------------------------

cdef inline uint64_t rng_next(uint64_t* state) noexcept nogil:
    state[0] += <uint64_t>0x9E3779B97F4A7C15
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EB
    return z ^ (z >> 31)

cdef inline int rng_below(uint64_t* state, int n) noexcept nogil:
    """Uniform integer in [0, n) by multiply-shift (bias < 2**-32)."""
    return <int>(((rng_next(state) >> 32) * <uint64_t>n) >> 32)


# --- Small queries, inlined into every caller ------------------------------------------

cdef inline int card_color(const GameConfig* cfg, int card) noexcept nogil:
    return cfg.color_of[card]

cdef inline int card_rank(const GameConfig* cfg, int card) noexcept nogil:
    return cfg.rank_of[card]

cdef inline int state_score(const GameConfig* cfg, const GameState* s) noexcept nogil:
    if s.life_tokens <= 0:
        return 0
    cdef int c, total = 0
    for c in range(cfg.colors):
        total += s.fireworks[c]
    return total

cdef inline int state_max_score(const GameConfig* cfg, const GameState* s) noexcept nogil:
    """The most this game can still score: each firework grows only while some copy of
    its next rank is not discarded, and by at most one card per move left (a move per
    card still in the deck, then `turns_to_play`). 0 once the last life is lost."""
    if s.life_tokens <= 0:
        return 0
    cdef int c, h, t, score = 0, reach = 0
    for c in range(cfg.colors):
        score += s.fireworks[c]
        h = s.fireworks[c]
        while h < cfg.ranks:
            t = c * cfg.ranks + h
            if s.discard_count[t] >= cfg.card_count[t]:
                break
            h += 1
        reach += h
    cdef int moves_left = cfg.deck_size - s.deck_pos + s.turns_to_play
    if s.turns_to_play <= 0 or reach <= score:
        return score
    return reach if reach < score + moves_left else score + moves_left

cdef inline bint state_terminal(const GameConfig* cfg, const GameState* s) noexcept nogil:
    if s.life_tokens < 1 or s.turns_to_play <= 0:
        return True
    cdef int c, total = 0
    for c in range(cfg.colors):
        total += s.fireworks[c]
    return total >= cfg.colors * cfg.ranks

cdef inline int deck_remaining(const GameConfig* cfg, const GameState* s) noexcept nogil:
    return cfg.deck_size - s.deck_pos


# --- Rules (defined in _core.pyx) ----------------------------------------------------

cdef int config_init(GameConfig* cfg, int players, int colors, int ranks, int hand_size,
                     int max_info, int max_life, int obs_type, int random_start) noexcept nogil
cdef void state_shuffle_deck(const GameConfig* cfg, GameState* s) noexcept nogil
cdef void state_reset(const GameConfig* cfg, GameState* s, uint64_t seed) noexcept nogil
cdef void state_deal(const GameConfig* cfg, GameState* s, int start_player) noexcept nogil
cdef int legal_moves(const GameConfig* cfg, const GameState* s, uint8_t* out) noexcept nogil
cdef int legal_mask(const GameConfig* cfg, const GameState* s, uint8_t* mask) noexcept nogil
cdef bint move_is_legal(const GameConfig* cfg, const GameState* s, int move) noexcept nogil
cdef int apply_move(const GameConfig* cfg, GameState* s, int move) noexcept nogil
cdef int set_hand(const GameConfig* cfg, GameState* s, int player, const int8_t* cards,
                  int* bad_slot) noexcept nogil
cdef int random_legal_move(const GameConfig* cfg, GameState* s) noexcept nogil
cdef int play_random_to_end(const GameConfig* cfg, GameState* s, int max_moves) noexcept nogil
