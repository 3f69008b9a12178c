# Rule-based Hanabi bots at C level (see _bots.pyx for the conventions of each bot).
#
# Every bot is a pure function of (config, game state, seat) that never reads the seat's
# own cards (`s.hand[seat]`) nor the undrawn deck: only the other hands, the card
# knowledge, fireworks, discards, tokens and the move history `s.history`. What a bot
# "remembers" (which cards a hint promised, which cards were saved) is a fold over the
# public history (`BotMemory`), recomputed from scratch by `bot_act`, or carried along
# incrementally by `bot_play` during rollouts (the same fold, so the same moves).

from libc.stdint cimport int8_t, uint8_t, int16_t, uint32_t, uint64_t
from lbs_pz.engine._core cimport (
    GameConfig, GameState, MoveRecord, MAX_PLAYERS, MAX_HAND, MAX_COLORS, MAX_RANKS,
    MAX_CARD_TYPES, MAX_HISTORY,
)

# Bot kinds, weakest first (index = position in BOT_NAMES).
cdef enum:
    BOT_RANDOM = 0
    BOT_SIMPLE = 1
    BOT_WEAK = 2
    BOT_MEDIUM = 3
    BOT_STRONG = 4
    BOT_INFO = 5
    BOT_SMART = 6
    NUM_BOTS = 7

# The convention switches of the convention bots.
ctypedef struct BotParams:
    int use_eyes          # eliminate card types seen in other hands / discards / fireworks
    int promise_play      # play clues promise playable cards: every newly touched card
                          # (SmartBot style), or only the focus card (with focus)
    int warn              # a rank hint touching the chop is a save of a valuable card, and
                          # the bot saves the next player's endangered chop first
    int save_twos         # 2s count as save-worthy (H-group 2-save)
    int group_elim        # (with promise_play, not focus) the cards one play clue promises
                          # are of distinct types: playing one rules its type out for the rest
    int gamble            # play unknown cards in the final round while lives remain
    int stall             # with this few cards left to draw, hint rather than discard
    int play_best         # among known-playable cards, prefer those nobody knows I know
    int delayed           # play clues may promise the card after publicly queued plays
    int focus             # a play clue promises only its focus card (H-group style)
    int info_hints        # without a play clue, hint what is missing about a playable card
    int keep_touched      # never discard a card a hint has touched (the chop skips it)

# Per-configuration lookup tables (bitmasks over card types: bit c * ranks + r).
ctypedef struct BotTables:
    int colors
    int ranks
    int types
    uint32_t all_types
    uint32_t color_bits[MAX_COLORS]
    uint32_t rank_bits[MAX_RANKS]
    uint32_t cset[32]      # types allowed by a plausible-color bitmask
    uint32_t rset[32]      # types allowed by a plausible-rank bitmask

# Public facts derived from fireworks + discard pile.
ctypedef struct Board:
    uint32_t possible      # types with a copy neither played nor discarded
    uint32_t playable      # next card of its color
    uint32_t worthless     # already played, or unreachable (a lower rank is gone)
    uint32_t critical      # useful types with one copy left
    uint32_t saveworthy    # critical (and 2s when save_twos)
    uint32_t soon          # per color, the card after the publicly known queued plays

# What everybody knows about one hand, slot by slot (slot 0 oldest, as in GameState).
ctypedef struct HandMem:
    int8_t len
    uint8_t cm[MAX_HAND]           # plausible colors (as HLE's card knowledge)
    uint8_t rm[MAX_HAND]           # plausible ranks
    uint32_t promise[MAX_HAND]     # types a hint promised (0: none)
    int16_t group[MAX_HAND]        # id of the play clue that promised it (0: none)
    uint8_t touched[MAX_HAND]      # 1 once any hint has touched the card

ctypedef struct BotMemory:
    HandMem hands[MAX_PLAYERS]
    int8_t fireworks[MAX_COLORS]
    int8_t discard_count[MAX_CARD_TYPES]
    int16_t next_group
    int16_t folded                 # history records folded in so far
    Board board                    # board_init of fireworks + discards (this bot's
                                   # save_twos; soon unset), renewed at each play/discard

# The information bot's memory: every seat's view of every hand, card by card, as the
# bitmask of the card types it may still be (know[seat][seat]: its own hand as it decoded
# it; know[seat][p]: p's hand as everyone but p knows it).
ctypedef struct InfoMemory:
    uint32_t know[MAX_PLAYERS][MAX_PLAYERS][MAX_HAND]

# SmartBot's memory: every seat's view of every hand, card by card, as the bitmask of the
# card types it may still be (SmartBot's CardKnowledge; know[seat][p]: p's hand as `seat`
# tracks what p knows about it).
ctypedef struct SmartMemory:
    uint32_t know[MAX_PLAYERS][MAX_PLAYERS][MAX_HAND]

# Bot memories of many positions that share a history prefix (the worlds of one search
# root), each computed once: snap[k] is the memory after ref[0:k]. A position whose
# public history starts with ref[0:k] starts from snap[k] and folds only the rest.
ctypedef struct MemoCache:
    int kind
    int len                               # records in ref (snap[0 .. len] are valid)
    MoveRecord ref[MAX_HISTORY]
    BotMemory snap[MAX_HISTORY + 1]

cdef void bot_tables_init(const GameConfig* cfg, BotTables* tb) noexcept nogil
cdef void bot_memory_init(int kind, const GameConfig* cfg, BotMemory* mem) noexcept nogil
cdef void bot_memory_step(int kind, const GameConfig* cfg, const BotTables* tb,
                          BotMemory* mem, const MoveRecord* rec) noexcept nogil
cdef void bot_memory_replay(int kind, const GameConfig* cfg, const BotTables* tb,
                            const GameState* s, BotMemory* mem) noexcept nogil

# The move `seat` makes (it must be the player to move), or -1 if the game is over or it
# is not that seat's turn. Reads nothing hidden from `seat`.
cdef int bot_act(int kind, const GameConfig* cfg, const GameState* s, int seat) noexcept nogil
cdef int bot_act_mem(int kind, const GameConfig* cfg, const BotTables* tb,
                     const GameState* s, const BotMemory* mem, int seat) noexcept nogil

cdef void memo_init(int kind, const GameConfig* cfg, MemoCache* c) noexcept nogil
cdef void memo_memory(const GameConfig* cfg, const BotTables* tb, MemoCache* c,
                      const GameState* s, BotMemory* out) noexcept nogil

# Self-play with one bot for every seat: at most max_moves moves (to the end if negative).
# Returns the number of moves made, or -1 if a bot chose an illegal move (a bug).
cdef int bot_play(int kind, const GameConfig* cfg, GameState* s, int max_moves) noexcept nogil
# The same from a memory already folded over s's history (it is carried along in place).
cdef int bot_play_mem(int kind, const GameConfig* cfg, const BotTables* tb, GameState* s,
                      BotMemory* mem, int max_moves) noexcept nogil
