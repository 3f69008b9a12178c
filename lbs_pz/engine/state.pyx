# cython: language_level=3
"""`HanabiState`: one Hanabi game, the Python face of the C engine."""

import os

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, uint8_t, uint64_t
from libc.string cimport memcpy
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize

from lbs_pz.engine._core cimport (
    ERR_BAD_CARD, ERR_NOT_AVAILABLE, ERR_NOT_PLAUSIBLE, ERR_OK, ERR_TERMINAL, MAX_MOVES,
    config_init, deck_remaining, legal_mask, legal_moves, move_is_legal, apply_move,
    set_hand, state_deal, state_reset, state_score, state_shuffle_deck, state_terminal,
    rng_below,
)
from lbs_pz.engine._encode cimport encode_canonical
from lbs_pz.engine.config import HanabiConfig
from lbs_pz.engine.moves import move_name

cnp.import_array()

_U64 = (1 << 64) - 1


def _card_id(card):
    """An integer card id (numpy integers included); TypeError for anything else."""
    if isinstance(card, bool) or not isinstance(card, (int, np.integer)):
        raise TypeError(f"{card!r} is not an integer")
    return int(card)


def seed_to_u64(seed):
    """Map any Python int seed (or None: fresh entropy) to the engine's 64-bit seed."""
    if seed is None:
        return int.from_bytes(os.urandom(8), "little")
    if isinstance(seed, (bool, float)) or not hasattr(seed, "__index__"):
        raise ValueError(f"seed must be an integer or None, got {seed!r}")
    return int(seed) & _U64


cdef void init_config_struct(GameConfig* cfg, object config):
    config_init(cfg, config.players, config.colors, config.ranks, config.hand_size,
                config.max_information_tokens, config.max_life_tokens,
                config.observation_type_id, config.random_start_player)


cdef class HanabiState:
    """One game of Hanabi with HLE's exact rules, move ids and observation encoding.

    Create it from a seed (shuffled deck, reproducible on every machine) or from an
    explicit deck: a list of `config.deck_size` card ids (`color * ranks + rank`) in the
    order they are dealt. Player 0 receives the first `hand_size` cards, player 1 the
    next, and so on; the remaining cards are drawn in list order.

    >>> s = HanabiState(HanabiConfig(players=2), seed=7)
    >>> s.apply(s.legal_moves()[0]); s.encode(s.current_player).shape
    (658,)
    """

    def __init__(self, config=None, seed=None, deck=None, start_player=None):
        if config is None:
            config = HanabiConfig()
        if not isinstance(config, HanabiConfig):
            raise TypeError(f"config must be a HanabiConfig, got {type(config).__name__}")
        self.config = config
        init_config_struct(&self.cfg, config)
        cdef uint64_t useed = seed_to_u64(seed)
        cdef int start
        if start_player is not None and (
                isinstance(start_player, bool) or not isinstance(start_player, (int, np.integer))
                or not 0 <= start_player < config.players):
            raise ValueError(f"start_player must be an integer in [0, {config.players}), "
                             f"got {start_player!r}")
        if deck is None:
            state_reset(&self.cfg, &self.s, useed)
            if start_player is not None:
                self.s.cur_player = int(start_player)
            return
        self._load_deck(deck)
        self.s.rng = useed
        start = 0
        if config.random_start_player:
            start = rng_below(&self.s.rng, config.players)
        if start_player is not None:
            start = int(start_player)
        state_deal(&self.cfg, &self.s, start)

    cdef _load_deck(self, deck):
        try:
            cards = [_card_id(c) for c in deck]
        except TypeError as err:
            raise ValueError(f"deck must hold integer card ids: {err}") from None
        if len(cards) != self.cfg.deck_size:
            raise ValueError(f"deck must hold {self.cfg.deck_size} cards, got {len(cards)}")
        counts = [0] * self.cfg.card_types
        for c in cards:
            if not 0 <= c < self.cfg.card_types:
                raise ValueError(f"deck holds card id {c}, not in [0, {self.cfg.card_types})")
            counts[c] += 1
        for c in range(self.cfg.card_types):
            if counts[c] != self.cfg.card_count[c]:
                raise ValueError(
                    f"deck must hold {self.cfg.card_count[c]} copies of "
                    f"{self.config.card_name(c)} (card id {c}), got {counts[c]}")
        for i, c in enumerate(cards):
            self.s.deck[i] = c

    # --- copying ------------------------------------------------------------------

    cdef HanabiState _new_like(self):
        cdef HanabiState other = HanabiState.__new__(HanabiState)
        other.config = self.config
        other.cfg = self.cfg
        return other

    def clone(self):
        """An independent copy (a memcpy of the game struct)."""
        cdef HanabiState other = self._new_like()
        memcpy(&other.s, &self.s, sizeof(self.s))
        return other

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        return self.clone()

    def __reduce__(self):
        cdef bytes raw = (<char*>&self.s)[:sizeof(self.s)]
        return (_state_from_bytes, (self.config, raw))

    cdef void _set_raw(self, const char* raw):
        memcpy(&self.s, raw, sizeof(self.s))

    # --- queries --------------------------------------------------------------------

    @property
    def current_player(self):
        """Seat to move (the last mover's successor once the game is over)."""
        return self.s.cur_player

    @property
    def score(self):
        """Sum of the fireworks, or 0 once the last life token is lost (HLE's rule)."""
        return state_score(&self.cfg, &self.s)

    @property
    def is_terminal(self):
        return state_terminal(&self.cfg, &self.s)

    @property
    def information_tokens(self):
        return self.s.info_tokens

    @property
    def life_tokens(self):
        return self.s.life_tokens

    @property
    def fireworks(self):
        """Cards played per color, a tuple of length `colors`."""
        return tuple(self.s.fireworks[c] for c in range(self.cfg.colors))

    @property
    def deck_size(self):
        """Cards left to draw."""
        return deck_remaining(&self.cfg, &self.s)

    @property
    def turns_to_play(self):
        """HLE's counter: once the deck is empty, moves left before the game ends."""
        return self.s.turns_to_play

    @property
    def discard_pile(self):
        """Card ids of discarded and misplayed cards, oldest first."""
        return [self.s.discard_pile[i] for i in range(self.s.discard_len)]

    @property
    def hands(self):
        """Every player's cards (hidden information included), oldest card first."""
        return [[self.s.hand[p][i] for i in range(self.s.hand_len[p])]
                for p in range(self.cfg.players)]

    def hand(self, player):
        """Player's cards, oldest first (hidden information: not for agents)."""
        cdef int p = self._check_player(player)
        return [self.s.hand[p][i] for i in range(self.s.hand_len[p])]

    def hand_deck_indices(self, player):
        """For each card of `player`'s hand, its position in the dealing order (`deck`)."""
        cdef int p = self._check_player(player)
        return [self.s.hand_deck_index[p][i] for i in range(self.s.hand_len[p])]

    @property
    def deck(self):
        """The full dealing order: dealt cards first, then the cards still to be drawn."""
        return [self.s.deck[i] for i in range(self.cfg.deck_size)]

    @property
    def start_player(self):
        """Seat of the first mover (every move passes the turn to the next seat)."""
        cdef int seat = (self.s.cur_player - self.s.num_history) % self.cfg.players
        return seat + self.cfg.players if seat < 0 else seat  # C modulo can be negative

    @property
    def num_moves_played(self):
        return self.s.num_history

    @property
    def move_history(self):
        """Move ids played so far, in order (the first by `start_player`)."""
        return [self.s.history[i].move for i in range(self.s.num_history)]

    def move_records(self):
        """One dict per move played: player, move, card (played/discarded, -1 for hints),
        reveal (bitmask of hinted slots), newly (bitmask of slots newly revealed),
        scored, info_token (gained), drawn (card drawn after it, -1 if none)."""
        return [dict(self.s.history[i]) for i in range(self.s.num_history)]

    def view_records(self, player, bint hide_own_draws=True):
        """The move history as `player` sees it, as bytes: per move 7 bytes (move id,
        player, card played or discarded (255 for a hint), bitmask of hinted slots, scored,
        information token gained, card drawn (255 if none, or if `player` drew it and
        `hide_own_draws`)). `PlayerView.history` decodes it on first use."""
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
        cdef uint8_t moves[MAX_MOVES]
        cdef int n = legal_moves(&self.cfg, &self.s, moves)
        return [moves[i] for i in range(n)]

    def legal_mask(self):
        """int8 array of shape (num_moves,): 1 where the move is legal."""
        cdef cnp.npy_intp dim = self.cfg.num_moves
        cdef cnp.ndarray mask = cnp.PyArray_EMPTY(1, &dim, cnp.NPY_INT8, 0)
        legal_mask(&self.cfg, &self.s, <uint8_t*>cnp.PyArray_DATA(mask))
        return mask

    def is_legal(self, move):
        if isinstance(move, bool) or not isinstance(move, (int, np.integer)):
            return False
        return 0 <= move < self.cfg.num_moves and move_is_legal(&self.cfg, &self.s, move)

    def encode(self, player=None):
        """HLE's canonical observation of `player` (default: the current player),
        a float32 array of shape (encoding_size,)."""
        cdef int p = self.s.cur_player if player is None else self._check_player(player)
        cdef cnp.npy_intp dim = self.cfg.encoding_size
        cdef cnp.ndarray out = cnp.PyArray_EMPTY(1, &dim, cnp.NPY_FLOAT32, 0)
        encode_canonical(&self.cfg, &self.s, p, <float*>cnp.PyArray_DATA(out))
        return out

    cdef int _check_player(self, player) except -1:
        if isinstance(player, bool) or not isinstance(player, (int, np.integer)) \
                or not 0 <= player < self.cfg.players:
            raise ValueError(f"player must be an integer in [0, {self.cfg.players}), got {player!r}")
        return player

    # --- changing the game ------------------------------------------------------------

    def apply(self, move):
        """Play move id `move` for the current player (and draw its replacement).

        Raises ValueError, leaving the state unchanged, if the move is illegal or the
        game is over."""
        if isinstance(move, bool) or not isinstance(move, (int, np.integer)):
            raise ValueError(f"move must be an integer move id, got {move!r}")
        cdef int err = apply_move(&self.cfg, &self.s, move) if 0 <= move < self.cfg.num_moves else -1
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
        if seed is not None:
            self.s.rng = seed_to_u64(seed)
        state_shuffle_deck(&self.cfg, &self.s)

    # --- presentation -------------------------------------------------------------------

    def view(self, player=None):
        """What `player` (None: the player to move) may see, as a `PlayerView` (no hidden
        information)."""
        from lbs_pz.engine.view import player_view
        if player is None:
            player = self.s.cur_player
        self._check_player(player)
        return player_view(self, player)

    def render(self, viewer=None):
        """Human-readable text; with a viewer seat, that seat's own cards are hidden."""
        from lbs_pz.engine.render import render_state
        if viewer is not None:
            self._check_player(viewer)
        return render_state(self, viewer)

    def __str__(self):
        return self.render()

    def __repr__(self):
        return (f"<HanabiState {self.cfg.players}p score={self.score} "
                f"info={self.s.info_tokens} life={self.s.life_tokens} deck={self.deck_size} "
                f"player={self.s.cur_player}{' terminal' if self.is_terminal else ''}>")


def _state_from_bytes(config, bytes raw):
    cdef HanabiState st = HanabiState.__new__(HanabiState)
    st.config = config
    init_config_struct(&st.cfg, config)
    if len(raw) != sizeof(st.s):
        raise ValueError("pickled HanabiState comes from an incompatible engine build")
    st._set_raw(raw)
    return st
