# cython: language_level=3
# distutils: extra_compile_args = -falign-functions=64
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

info     (hat guessing) the information strategy of Cox et al. 2015 ("How to Make the
         Perfect Fireworks Display"), in the form of hanabi.rs's "info" strategy
         (WuTheFWasThat/hanabi.rs): every seat tracks, per card of every hand, the set of
         card types it may still be (weighted by copies not yet played or discarded).
         A hint encodes one number modulo the hint choices (3 or 4 per other player: a
         rank or a color hint touching that player's least known card, or one missing
         it): the sum of the others' hat values, each the answers to questions about a
         player's own cards (which card is playable or dead; whether one card is
         playable; which block of a partition of its types holds a card), packed in
         mixed radix. Each receiver subtracts the hat values it sees and reads its own.
         A discard among 2+ publicly useless cards encodes the same way, and a discard
         while hint tokens remain tells everyone who knows no playable card that they
         hold none. Turn: play the most urgent surely playable card; (2+ lives, few
         discards) a card surely playable or dead with p(playable) > 0.75; hint at
         full tokens, when someone holds a playable card unknown to them, when someone
         can play and no useless card can go, or with 5+ tokens; else discard (a useless
         card, else the likeliest seen / dispensable / highest one). Plays any variant.

smart    (~23.1 / 23.3 / 22.4 / 20.7 at 2-5 players) SmartBot, Arthur O'Dwyer's rule bot
         (Quuxplusone/Hanabi, SmartBot.cc), rule for rule. Every seat tracks, per card of
         every hand, the card types that hand's holder may still think it is (from hints,
         from copies all played, discarded or identified elsewhere, and from the
         conventions): a hint's newest touched card that was and still is maybe playable
         is playable (unless some maybe-playable card became surely playable); a rank hint
         from the right-hand player touching the receiver's next discard (its card most
         likely worthless, not surely valuable) is a valuable warning when that card could
         be valuable with that rank; every other move says the next player's next discard
         is not valuable; at full hint tokens a rank hint on the right-hand player's oldest
         card only reclaims a token; a discard of a known playable card is a discard
         finesse (the partner holding that card as their newest card has it, else me).
         Turn: (deck empty: play a surely playable card, else the mystery play) -> a
         valuable warning to the next player (a play clue to it if there is one, else the
         rank hint) -> a discard finesse -> play a surely playable card (first one the
         others do not know I know, then the lowest) -> the play clue removing the most
         possibilities -> the mystery play (the likeliest playable card, once the deck
         holds at most 3 / 1 cards with 3 / 2 lives left) -> at full tokens the reclaim
         hint -> discard a surely worthless card, else the next discard, else the highest.
         Differences from SmartBot, from this engine's rules: no mystery play on the last
         life (SmartBot's framework keeps the points on the third strike, this engine
         scores 0: with it, 0.4% / 1.8% / 2.8% / 8.6% of 2-5-player games end at 0, HLE
         means down 0.1 / 0.4 / 0.6 / 1.6 points, points-kept means within 0.03 of these); an inference
         that contradicts what a view knows is ignored, a hint that contradicts it resets
         the card to the hint (SmartBot's tables would break; never under the
         convention). Colors go in this engine's order (SmartBot's ties between colors
         fall the same way by symmetry). Over 20,000 deals, points kept: 23.11 / 23.29 /
         22.41 / 20.65 against SmartBot's published 23.09 / 23.30 / 22.44 / 20.69.

Build: every function is aligned to 64 bytes (the distutils line above): without it the
bots' speed moved by up to +-5% whenever unrelated code of the module (e.g. an argument
check) shifted the hot functions' alignment.

Source layout: this file holds the switches and shared types; the bot's steps are
textually included, in this order, into the one C module (so every call can be inlined):
_board.pxi (lookup tables, board, card knowledge), _memory.pxi (the public-history fold),
_simple.pxi (random, simple), _hints.pxi (hint evaluation), _info.pxi (the
information bot), _smart.pxi (SmartBot), _acting.pxi (the convention
bots' decision, dispatch, self-play), _shared_memory.pxi (memories shared by positions
with a common history prefix), _features.pxi (the conventions' reading of a position as
network inputs), _api.pxi (the Python API).
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
from lbs_pz.engine.state cimport HanabiState, int_arg

cnp.import_array()

cdef extern from *:
    int ctz32 "__builtin_ctz"(unsigned int) nogil
    int __builtin_clz(unsigned int) nogil

BOT_NAMES = ("random", "simple", "weak", "medium", "strong", "info", "smart")

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
    HINT_PARTS = 10          # eval_hint's terms, one feature each (convention_features)
    SLOT_PARTS = 6           # per card of every hand (convention_features)


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


# The bot, step by step (textual includes: one C module, nothing loses inlining).
include "_board.pxi"
include "_memory.pxi"
include "_simple.pxi"
include "_hints.pxi"
include "_info.pxi"
include "_smart.pxi"
include "_acting.pxi"
include "_shared_memory.pxi"
include "_api.pxi"
include "_features.pxi"
