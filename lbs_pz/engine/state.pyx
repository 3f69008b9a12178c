# cython: language_level=3
"""`HanabiState`: one Hanabi game, the Python face of the C engine."""

import os

import numpy as np
cimport cython
cimport numpy as cnp
from libc.stdint cimport int8_t, uint8_t, uint64_t
from libc.string cimport memcpy, memset
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize

from lbs_pz.engine._core cimport (
    ERR_BAD_CARD, ERR_NOT_AVAILABLE, ERR_NOT_PLAUSIBLE, ERR_OK, ERR_TERMINAL, MAX_CARD_TYPES,
    MAX_HISTORY, MAX_MOVES, GameConfig, config_init, deck_remaining, legal_mask, legal_moves, move_is_legal,
    apply_move, set_hand, state_deal, state_max_score, state_reset, state_score, state_shuffle_deck,
    state_terminal, rng_below,
)
from lbs_pz.engine._encode cimport encode_canonical
from lbs_pz.checks import is_int as _is_int   # private: not part of this module's API
from lbs_pz.engine.config import OBSERVATION_TYPES, HanabiConfig
from lbs_pz.engine.moves import move_name
from lbs_pz.engine.seeds import check_engine_seed
from lbs_pz.engine.render import render_state
from lbs_pz.engine.view import player_view

cnp.import_array()

# Version of the pickle format (see HanabiState.__reduce__). Format 1 was the raw struct.
PICKLE_FORMAT = 2

# A valid configuration (the standard 2-player game) copied into every new object before
# __init__ runs, so that even an object that never got initialised holds no config a C
# loop could divide by zero or overrun with (its Python methods refuse it anyway).
cdef GameConfig _SAFE_CFG
config_init(&_SAFE_CFG, 2, 5, 5, 5, 8, 3, 1, 0)


cdef bint int_arg(object value) except -1:
    """`lbs_pz.checks.is_int(value)` (an int or a NumPy integer, never a bool) for the
    compiled modules' argument checks (this one, batch, the rule bots), which sit on every
    move's path (apply, is_legal, a bot's act): a plain int or a NumPy integer scalar is
    answered in C, anything else (a bool, an int subclass, a wrong type) by is_int itself,
    so the rule is written once, in lbs_pz/checks.py."""
    if type(value) is int or isinstance(value, cnp.integer):
        return True
    return _is_int(value)


def _card_id(card):
    """An integer card id (numpy integers included); TypeError for anything else."""
    if not int_arg(card):
        raise TypeError(f"{card!r} is not an integer")
    return int(card)


def seed_to_u64(seed, name="seed"):
    """The engine's 64-bit seed: `seed` itself if it is an integer in [0, 2**64) (ValueError
    otherwise, see `lbs_pz.engine.seeds.check_engine_seed`), or fresh entropy for None."""
    if seed is None:
        return int.from_bytes(os.urandom(8), "little")
    return check_engine_seed(seed, name)


cdef int _config_int(object config, str name, int lo, int hi) except? -1:
    value = getattr(config, name)
    cdef long v
    if type(value) is int and -64 < value < 64:
        v = value
        if lo <= v <= hi:
            return v
    raise ValueError(f"config.{name} must be an integer in [{lo}, {hi}], got {value!r}")


_TWO_64 = 2**64


cdef inline uint64_t _seed64(seed) except? 0:
    """seed_to_u64 with a fast path for the common case (a Python int in range)."""
    if type(seed) is int and 0 <= seed < _TWO_64:
        return seed
    return seed_to_u64(seed)


cdef int init_config_struct(GameConfig* cfg, object config) except -1:
    """Fill `cfg` from a HanabiConfig, re-checking every value the C code relies on (a
    config can come from a pickle or be altered with object.__setattr__)."""
    if not isinstance(config, HanabiConfig):
        raise TypeError(f"config must be a HanabiConfig, got {type(config).__name__}")
    cdef int players = _config_int(config, "players", 2, 5)
    cdef int colors = _config_int(config, "colors", 1, 5)
    cdef int ranks = _config_int(config, "ranks", 1, 5)
    cdef int hand_size = _config_int(config, "hand_size", 1, 8)
    cdef int max_info = _config_int(config, "max_information_tokens", 1, 16)
    cdef int max_life = _config_int(config, "max_life_tokens", 1, 8)
    obs = config.observation_type
    if type(obs) is not str or obs not in OBSERVATION_TYPES:
        raise ValueError(f"config.observation_type must be one of {OBSERVATION_TYPES}, got {obs!r}")
    start = config.random_start_player
    if type(start) is not bool:
        raise ValueError(f"config.random_start_player must be a bool, got {start!r}")
    cdef GameConfig tmp
    config_init(&tmp, players, colors, ranks, hand_size, max_info, max_life,
                OBSERVATION_TYPES.index(obs), start)
    if players * hand_size > tmp.deck_size:
        raise ValueError(f"config.hand_size {hand_size} does not fit {players} players and a "
                         f"{tmp.deck_size}-card deck")
    cfg[0] = tmp
    return 0


cdef inline int _ready(HanabiState st) except -1:
    if st.config is None:
        raise RuntimeError("HanabiState is not initialised (made with HanabiState.__new__ "
                           "without __init__); create it as HanabiState(config, seed=...)")
    return 0


cdef object _busy_error():
    return RuntimeError("HanabiState is in use by another thread: one state must not be used "
                        "from two threads at once (give each thread its own clone())")


cdef int _check_deck(const GameConfig* cfg, object config, cards) except -1:
    """cards: a list of ints; ValueError unless it is a full deck of this config."""
    if len(cards) != cfg.deck_size:
        raise ValueError(f"deck must hold {cfg.deck_size} cards, got {len(cards)}")
    counts = [0] * cfg.card_types
    for c in cards:
        if not 0 <= c < cfg.card_types:
            raise ValueError(f"deck holds card id {c}, not in [0, {cfg.card_types})")
        counts[c] += 1
    for c in range(cfg.card_types):
        if counts[c] != cfg.card_count[c]:
            raise ValueError(
                f"deck must hold {cfg.card_count[c]} copies of "
                f"{config.card_name(c)} (card id {c}), got {counts[c]}")
    return 0


@cython.freelist(32)   # clones are made and dropped in bursts: reuse the allocations
cdef class HanabiState:
    """One game of Hanabi with HLE's exact rules, move ids and observation encoding.

    Create it from a seed (shuffled deck, reproducible on every machine) or from an
    explicit deck: a list of `config.deck_size` card ids (`color * ranks + rank`) in the
    order they are dealt. Player 0 receives the first `hand_size` cards, player 1 the
    next, and so on; the remaining cards are drawn in list order.

    Seeds are integers in [0, 2**64) (Python or numpy); anything else, negative values
    and values >= 2**64 included, raises ValueError (seeds are never wrapped or hashed).
    None draws a fresh seed from the OS.

    Threading: a state is not shared between threads. Each call is atomic under the GIL,
    and a call that would change a state while another thread is inside `set_hand` or
    is copying it (`HanabiBatch.from_state`) raises RuntimeError instead of racing.
    Different states (e.g. clones) in different threads are fine.

    Pickling stores the config, the dealing order, the start player, the moves and the
    RNG state (about 200 bytes), and loading replays the moves: anything that loads is a
    reachable game, and a corrupted pickle raises ValueError.

    >>> s = HanabiState(HanabiConfig(players=2), seed=7)
    >>> s.apply(s.legal_moves()[0]); s.encode(s.current_player).shape
    (658,)
    """

    def __cinit__(self):
        self.cfg = _SAFE_CFG

    def __init__(self, config=None, seed=None, deck=None, start_player=None):
        if self.config is not None:
            raise RuntimeError("HanabiState is already initialised; create a new HanabiState "
                               "instead of calling __init__ again")
        if config is None:
            config = HanabiConfig()
        cdef GameConfig cfg
        init_config_struct(&cfg, config)
        cdef uint64_t useed = _seed64(seed)
        cdef int start = 0
        if start_player is not None and (
                not int_arg(start_player) or not 0 <= start_player < cfg.players):
            raise ValueError(f"start_player must be an integer in [0, {cfg.players}), "
                             f"got {start_player!r}")
        cards = None
        if deck is not None:
            if isinstance(deck, (str, bytes)) or not hasattr(deck, "__iter__"):
                raise ValueError(f"deck must be a sequence of {cfg.deck_size} card ids, "
                                 f"got {deck!r}")
            try:
                cards = [_card_id(c) for c in deck]
            except TypeError as err:
                raise ValueError(f"deck must hold integer card ids: {err}") from None
            _check_deck(&cfg, config, cards)
        # Everything is checked: commit (config last, it marks the object as ready).
        self.cfg = cfg
        if cards is None:
            state_reset(&self.cfg, &self.s, useed)
            if start_player is not None:
                self.s.cur_player = int(start_player)
        else:
            for i, c in enumerate(cards):
                self.s.deck[i] = c
            self.s.rng = useed
            if cfg.random_start:
                start = rng_below(&self.s.rng, cfg.players)
            if start_player is not None:
                start = int(start_player)
            state_deal(&self.cfg, &self.s, start)
        self.config = config

    cdef int _check_free(self) except -1:
        """RuntimeError unless the state may change now: called right before the C call
        that changes it, with no Python code in between, so the change is atomic."""
        if self.config is None:
            _ready(self)
        if self._busy != 0:
            raise _busy_error()
        return 0

    cdef int _enter_read(self) except -1:
        """Hold the state for a copy made without the GIL (others may copy it too); the
        caller decrements `_busy` when done. Changes raise RuntimeError meanwhile."""
        if self.config is None:
            _ready(self)
        self._busy += 1
        return 0

    # --- copying ------------------------------------------------------------------

    cdef HanabiState _new_like(self):
        cdef HanabiState other = HanabiState.__new__(HanabiState)
        other.config = self.config
        other.cfg = self.cfg
        return other

    def clone(self):
        """An independent copy (a memcpy of the game struct)."""
        _ready(self)
        cdef HanabiState other = self._new_like()
        memcpy(&other.s, &self.s, sizeof(self.s))
        return other

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        return self.clone()

    def __reduce__(self):
        """(config, dealing order, start player, moves, RNG state), replayed on load."""
        _ready(self)
        cdef bytes deck = (<char*>self.s.deck)[:self.cfg.deck_size]
        cdef int n = self.s.num_history, i
        moves = PyBytes_FromStringAndSize(NULL, n)
        cdef char* m = PyBytes_AS_STRING(moves)
        for i in range(n):
            m[i] = <char>self.s.history[i].move
        return (_state_from_record,
                (PICKLE_FORMAT, self.config, deck, self.start_player, moves, self.s.rng))

    # --- queries --------------------------------------------------------------------

    @property
    def current_player(self):
        """Seat to move (the last mover's successor once the game is over)."""
        _ready(self)
        return self.s.cur_player

    @property
    def score(self):
        """Sum of the fireworks, or 0 once the last life token is lost (HLE's rule)."""
        _ready(self)
        return state_score(&self.cfg, &self.s)

    @property
    def max_score(self):
        """The most this game can still score, from public facts alone: each firework
        grows only while some copy of its next rank is undiscarded, by at most one card
        per move left (one per card in the deck, then `turns_to_play`); 0 once the last
        life is lost. No estimate of the final score should exceed it."""
        _ready(self)
        return state_max_score(&self.cfg, &self.s)

    @property
    def is_terminal(self):
        _ready(self)
        return state_terminal(&self.cfg, &self.s)

    @property
    def information_tokens(self):
        _ready(self)
        return self.s.info_tokens

    @property
    def life_tokens(self):
        _ready(self)
        return self.s.life_tokens

    @property
    def fireworks(self):
        """Cards played per color, a tuple of length `colors`."""
        _ready(self)
        return tuple(self.s.fireworks[c] for c in range(self.cfg.colors))

    @property
    def deck_size(self):
        """Cards left to draw."""
        _ready(self)
        return deck_remaining(&self.cfg, &self.s)

    @property
    def turns_to_play(self):
        """HLE's counter: once the deck is empty, moves left before the game ends."""
        _ready(self)
        return self.s.turns_to_play

    @property
    def discard_pile(self):
        """Card ids of discarded and misplayed cards, oldest first."""
        _ready(self)
        return [self.s.discard_pile[i] for i in range(self.s.discard_len)]

    @property
    def hands(self):
        """Every player's cards (hidden information included), oldest card first."""
        _ready(self)
        return [[self.s.hand[p][i] for i in range(self.s.hand_len[p])]
                for p in range(self.cfg.players)]

    def hand(self, player):
        """Player's cards, oldest first (hidden information: not for agents)."""
        _ready(self)
        cdef int p = self._check_player(player)
        return [self.s.hand[p][i] for i in range(self.s.hand_len[p])]

    def hand_deck_indices(self, player):
        """For each card of `player`'s hand, its position in the dealing order (`deck`)."""
        _ready(self)
        cdef int p = self._check_player(player)
        return [self.s.hand_deck_index[p][i] for i in range(self.s.hand_len[p])]

    @property
    def deck(self):
        """The full dealing order: dealt cards first, then the cards still to be drawn."""
        _ready(self)
        return [self.s.deck[i] for i in range(self.cfg.deck_size)]

    @property
    def start_player(self):
        """Seat of the first mover (every move passes the turn to the next seat)."""
        _ready(self)
        cdef int seat = (self.s.cur_player - self.s.num_history) % self.cfg.players
        return seat + self.cfg.players if seat < 0 else seat  # C modulo can be negative

    @property
    def num_moves_played(self):
        _ready(self)
        return self.s.num_history

    @property
    def move_history(self):
        """Move ids played so far, in order (the first by `start_player`)."""
        _ready(self)
        return [self.s.history[i].move for i in range(self.s.num_history)]

    def move_records(self):
        """One dict per move played: player, move, card (played/discarded, -1 for hints),
        reveal (bitmask of hinted slots), newly (bitmask of slots newly revealed),
        scored, info_token (gained), drawn (card drawn after it, -1 if none)."""
        _ready(self)
        return [dict(self.s.history[i]) for i in range(self.s.num_history)]

    def view_records(self, player, bint hide_own_draws=True):
        """The move history as `player` sees it, as bytes: per move 7 bytes (move id,
        player, card played or discarded (255 for a hint), bitmask of hinted slots, scored,
        information token gained, card drawn (255 if none, or if `player` drew it and
        `hide_own_draws`)). `PlayerView.history` decodes it on first use."""
        _ready(self)
        cdef int p = self._check_player(player), n = self.s.num_history, i
        out = PyBytes_FromStringAndSize(NULL, 7 * n)
        cdef char* o = PyBytes_AS_STRING(out)
        for i in range(n):
            o[7 * i] = <char>self.s.history[i].move
            o[7 * i + 1] = <char>self.s.history[i].player
            o[7 * i + 2] = <char>self.s.history[i].card
            o[7 * i + 3] = <char>self.s.history[i].reveal
            o[7 * i + 4] = <char>self.s.history[i].scored
            o[7 * i + 5] = <char>self.s.history[i].info_token
            o[7 * i + 6] = <char>(-1 if hide_own_draws and self.s.history[i].player == p
                                  else self.s.history[i].drawn)
        return out

    def public_history_key(self):
        """The public history as bytes: the start player, then (move id, card played or
        discarded (255 for a hint), bitmask of hinted slots) per move, one byte each.
        Drawn cards are left out, so it holds nothing hidden; the first 1 + 3 * t bytes are
        the key of the game after t moves. A cache key for blueprints whose state is a
        function of the public history (the public-LSTM)."""
        _ready(self)
        cdef int n = self.s.num_history, i
        out = PyBytes_FromStringAndSize(NULL, 1 + 3 * n)
        cdef char* p = PyBytes_AS_STRING(out)
        p[0] = <char>self.start_player
        for i in range(n):
            p[1 + 3 * i] = <char>self.s.history[i].move
            p[2 + 3 * i] = <char>self.s.history[i].card
            p[3 + 3 * i] = <char>self.s.history[i].reveal
        return out

    def knowledge_key(self, player):
        """What `card_knowledge(player)` returns, as bytes (4 per card: plausible color
        mask, plausible rank mask, hinted color, hinted rank (255: not hinted)): a cache
        key for views."""
        _ready(self)
        cdef int p = self._check_player(player), n = self.s.hand_len[p], i
        out = PyBytes_FromStringAndSize(NULL, 4 * n)
        cdef char* o = PyBytes_AS_STRING(out)
        for i in range(n):
            o[4 * i] = <char>self.s.color_plausible[p][i]
            o[4 * i + 1] = <char>self.s.rank_plausible[p][i]
            o[4 * i + 2] = <char>self.s.color_hinted[p][i]
            o[4 * i + 3] = <char>self.s.rank_hinted[p][i]
        return out

    def card_knowledge(self, player):
        """What `player` knows (from hints) about each of its cards: a list of
        (plausible_colors, plausible_ranks, hinted_color, hinted_rank), with the plausible
        sets as tuples of indices and -1 for a color/rank not directly hinted."""
        _ready(self)
        cdef int p = self._check_player(player)
        out = []
        for i in range(self.s.hand_len[p]):
            cm, rm = self.s.color_plausible[p][i], self.s.rank_plausible[p][i]
            out.append((tuple(c for c in range(self.cfg.colors) if (cm >> c) & 1),
                        tuple(r for r in range(self.cfg.ranks) if (rm >> r) & 1),
                        self.s.color_hinted[p][i], self.s.rank_hinted[p][i]))
        return out

    def legal_moves(self):
        """Legal move ids of the current player, ascending (empty once the game is over)."""
        _ready(self)
        cdef uint8_t moves[MAX_MOVES]
        cdef int n = legal_moves(&self.cfg, &self.s, moves)
        return [moves[i] for i in range(n)]

    def legal_mask(self):
        """int8 array of shape (num_moves,): 1 where the move is legal."""
        _ready(self)
        cdef cnp.npy_intp dim = self.cfg.num_moves
        cdef cnp.ndarray mask = cnp.PyArray_EMPTY(1, &dim, cnp.NPY_INT8, 0)
        legal_mask(&self.cfg, &self.s, <uint8_t*>cnp.PyArray_DATA(mask))
        return mask

    def is_legal(self, move):
        _ready(self)
        if not int_arg(move):
            return False
        return 0 <= move < self.cfg.num_moves and move_is_legal(&self.cfg, &self.s, move)

    def encode(self, player=None):
        """HLE's canonical observation of `player` (default: the current player),
        a float32 array of shape (encoding_size,)."""
        _ready(self)
        cdef int p = self.s.cur_player if player is None else self._check_player(player)
        cdef cnp.npy_intp dim = self.cfg.encoding_size
        cdef cnp.ndarray out = cnp.PyArray_EMPTY(1, &dim, cnp.NPY_FLOAT32, 0)
        encode_canonical(&self.cfg, &self.s, p, False, <float*>cnp.PyArray_DATA(out))
        return out

    cdef int _check_player(self, player) except -1:
        if not int_arg(player) or not 0 <= player < self.cfg.players:
            raise ValueError(f"player must be an integer in [0, {self.cfg.players}), got {player!r}")
        return player

    # --- changing the game ------------------------------------------------------------

    def apply(self, move):
        """Play move id `move` for the current player (and draw its replacement).

        Raises ValueError, leaving the state unchanged, if the move is illegal or the
        game is over."""
        _ready(self)
        if not int_arg(move):
            raise ValueError(f"move must be an integer move id, got {move!r}")
        cdef int err = -1, m
        if 0 <= move < self.cfg.num_moves:
            m = move
            self._check_free()
            err = apply_move(&self.cfg, &self.s, m)
        if err == ERR_OK:
            return
        if err == ERR_TERMINAL:
            raise ValueError(f"move {move}: the game is over (score {self.score})")
        name = move_name(self.config, move) if 0 <= move < self.cfg.num_moves else "(out of range)"
        raise ValueError(f"illegal move {move} {name} for player {self.s.cur_player}; "
                         f"legal moves: {self.legal_moves()}")

    def set_hand(self, player, cards, seed=None):
        """Replace `player`'s hidden hand by `cards`, consistently with what that player
        knows: each card must fit its slot's card knowledge, and the cards must be among
        those the player cannot see (deck + own hand). The undrawn deck is re-dealt from
        what remains, shuffled with this state's RNG, or, given `seed`, with an RNG reset
        to `seed` (then the new deck depends only on what `player` sees, the cards and
        the seed: what a search that must not peek needs). Every other card, every card
        knowledge and the history are unchanged. Raises ValueError otherwise."""
        _ready(self)
        cdef int seat = self._check_player(player)
        cdef uint64_t new_rng = 0 if seed is None else seed_to_u64(seed)
        try:
            cards = [_card_id(c) for c in cards]
        except TypeError as not_int:
            raise ValueError(f"cards must be integer card ids: {not_int}") from None
        cdef int n = self.s.hand_len[seat], bad = -1, i, err
        if len(cards) != n:
            raise ValueError(f"player {player} holds {n} cards, got a hand of {len(cards)}")
        cdef int8_t buf[8]
        for i in range(n):
            if not 0 <= cards[i] < self.cfg.card_types:
                raise ValueError(f"card id {cards[i]} at slot {i} is not in [0, {self.cfg.card_types})")
            buf[i] = cards[i]
        self._check_free()
        if self.s.hand_len[seat] != n:     # changed by another thread meanwhile
            raise _busy_error()
        cdef uint64_t old_rng = self.s.rng
        if seed is not None:
            self.s.rng = new_rng
        err = set_hand(&self.cfg, &self.s, seat, buf, &bad)
        if err != ERR_OK:
            self.s.rng = old_rng
        if err == ERR_OK:
            return
        name = self.config.card_name(cards[bad])
        if err == ERR_NOT_PLAUSIBLE:
            raise ValueError(f"{name} cannot be at slot {bad} of player {player}: "
                             f"the player's card knowledge rules it out")
        raise ValueError(f"hand {[self.config.card_name(c) for c in cards]} needs more copies of "
                         f"{name} than remain unseen by player {player} (deck + own hand)")

    def shuffle_deck(self, seed=None):
        """Re-shuffle the cards still to be drawn (with `seed`, or this state's RNG)."""
        _ready(self)
        cdef uint64_t new_rng = 0 if seed is None else seed_to_u64(seed)
        self._check_free()
        if seed is not None:
            self.s.rng = new_rng
        state_shuffle_deck(&self.cfg, &self.s)

    # --- presentation -------------------------------------------------------------------

    def view(self, player=None):
        """What `player` (None: the player to move) may see, as a `PlayerView` (no hidden
        information)."""
        _ready(self)
        if player is None:
            player = self.s.cur_player
        self._check_player(player)
        return player_view(self, player)

    def render(self, viewer=None):
        """Human-readable text; with a viewer seat, that seat's own cards are hidden."""
        _ready(self)
        if viewer is not None:
            self._check_player(viewer)
        return render_state(self, viewer)

    def __str__(self):
        return self.render()

    def __repr__(self):
        if self.config is None:
            return "<HanabiState (not initialised)>"
        return (f"<HanabiState {self.cfg.players}p score={self.score} "
                f"info={self.s.info_tokens} life={self.s.life_tokens} deck={self.deck_size} "
                f"player={self.s.cur_player}{' terminal' if self.is_terminal else ''}>")


def _state_from_bytes(config, raw):
    """Loader of pickle format 1 (the raw C struct), refused: such a blob cannot be checked."""
    raise ValueError("this HanabiState pickle uses format 1 (a raw engine struct, lbs_pz before "
                     f"pickle format {PICKLE_FORMAT}), which cannot be validated and is no longer "
                     "loaded; re-create the state (e.g. from its seed and moves) and pickle it again")


def _state_from_record(version, config, deck, start_player, moves, rng):
    """Loader of pickle format 2: deal `deck` from `start_player`, replay `moves`, set the
    RNG. Every field is checked and every move must be legal, so what loads is a reachable
    game; ValueError otherwise."""
    if type(version) is not int or version != PICKLE_FORMAT:
        raise ValueError(f"pickled HanabiState has format {version!r}; this lbs_pz reads "
                         f"format {PICKLE_FORMAT}")
    if not isinstance(config, HanabiConfig):
        raise ValueError(f"pickled HanabiState: config must be a HanabiConfig, got "
                         f"{type(config).__name__}")
    cdef HanabiState st = HanabiState.__new__(HanabiState)
    cdef GameConfig cfg
    init_config_struct(&cfg, config)
    if type(deck) is not bytes or len(deck) != cfg.deck_size:
        raise ValueError(f"pickled HanabiState: deck must be {cfg.deck_size} bytes, got {deck!r}")
    cdef const unsigned char* d = deck
    cdef int counts[MAX_CARD_TYPES]
    cdef int i, c
    memset(counts, 0, sizeof(counts))
    for i in range(cfg.deck_size):
        if d[i] >= cfg.card_types:
            break
        counts[d[i]] += 1
    else:
        for c in range(cfg.card_types):
            if counts[c] != cfg.card_count[c]:
                break
        else:
            c = -1
        if c < 0:
            d = NULL                                  # marks the deck as checked
    if d != NULL:
        _check_deck(&cfg, config, list(deck))         # raises, naming what is wrong
    if type(start_player) is not int or not 0 <= start_player < cfg.players:
        raise ValueError(f"pickled HanabiState: start player must be in [0, {cfg.players}), "
                         f"got {start_player!r}")
    if type(moves) is not bytes or len(moves) > MAX_HISTORY:
        raise ValueError(f"pickled HanabiState: moves must be at most {MAX_HISTORY} bytes, "
                         f"got {type(moves).__name__} of length {len(moves) if type(moves) is bytes else '?'}")
    if type(rng) is not int or not 0 <= rng < 2**64:
        raise ValueError(f"pickled HanabiState: RNG state must be in [0, 2**64), got {rng!r}")
    st.cfg = cfg
    d = deck
    cdef const unsigned char* m = moves
    cdef int n = len(moves), err
    for i in range(cfg.deck_size):
        st.s.deck[i] = d[i]
    state_deal(&st.cfg, &st.s, start_player)
    for i in range(n):
        err = apply_move(&st.cfg, &st.s, m[i])
        if err != ERR_OK:
            raise ValueError(f"pickled HanabiState: move {i} (id {m[i]}) is illegal in the "
                             f"replayed game")
    st.s.rng = rng
    st.config = config
    return st
