# cython: language_level=3
"""`HanabiBatch`: N games in one contiguous C array, stepped, masked and encoded in C.

This is the API rollouts, data generation and vectorised training use: every method
works on all games at once and writes into numpy arrays (optionally caller-provided), so
no Python code runs per game or per move.
"""

import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, uint8_t, int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.long cimport PyLong_AsLongLongAndOverflow

from lbs_pz.engine._core cimport (
    ERR_NOT_PLAUSIBLE, ERR_OK, ERR_TERMINAL, GameState, apply_move, config_init, legal_mask,
    play_random_to_end, rng_next, set_hand, state_max_score, state_reset, state_score, state_terminal,
)
from lbs_pz.engine._encode cimport encode_canonical, encode_canonical_ones
from lbs_pz.engine.state cimport HanabiState, int_arg
from lbs_pz.engine.config import HanabiConfig
from lbs_pz.engine.moves import move_name
from lbs_pz.engine.seeds import check_engine_seed, check_engine_seeds
from lbs_pz.engine.state import seed_to_u64

cnp.import_array()

_GOLDEN = 0x9E3779B97F4A7C15
_MASK64 = (1 << 64) - 1
_TWO_64 = 1 << 64
MAX_BATCH = 2**31 - 1        # games per batch (a C int); memory runs out long before


# The int checks of this compiled module call `int_arg` (lbs_pz.checks.is_int answered in
# C for a plain int or a NumPy integer, see state.pyx): once per call, never per game.
def _check_count(value, name, int lo=1):
    """`value` as an int in [lo, MAX_BATCH]: TypeError for a non-integer (floats and bools
    included), ValueError out of range."""
    if not int_arg(value):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if not lo <= value <= MAX_BATCH:
        raise ValueError(f"{name} must be in [{lo}, {MAX_BATCH}], got {value}")
    return int(value)


def game_seeds(seed, first, count):
    """uint64 (count,): seeds of games first .. first+count-1 of a run seeded with `seed`
    (an integer in [0, 2**64)): exactly the seeds `HanabiBatch(config, n, seeds=seed)`
    gives its games (splitmix64 outputs)."""
    cdef uint64_t base = check_engine_seed(seed)
    first = _check_count(first, "first", 0)
    cdef int n = _check_count(count, "count", 0), i
    base = (base + (<uint64_t>first) * <uint64_t>_GOLDEN) & _MASK64
    cdef cnp.ndarray[uint64_t, ndim=1] out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        out[i] = rng_next(&base)
    return out


def _int_vector(values, n, name):
    """values as an int64 array of shape (n,); ValueError naming `name` otherwise."""
    arr = np.asarray(values)
    if arr.shape != (n,) or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise ValueError(f"{name} must be {n} integers (shape ({n},)), got an array of "
                         f"shape {arr.shape} and dtype {arr.dtype}")
    if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} must be {n} integers, got {arr.max()} (too large)")
    return np.ascontiguousarray(arr, dtype=np.int64)


def check_out(out, shape, dtype, name="out"):
    """A caller-provided output array, checked, or a new one if `out` is None.

    The one check of every `out=` argument of the engine: an ndarray of exactly `shape`
    and `dtype` (native byte order), C-contiguous, aligned and writeable (a read-only
    buffer, a read-only memmap or a view of an immutable bytes object is refused).
    ValueError naming `name` and what was wrong otherwise."""
    dtype = np.dtype(dtype)
    if out is None:
        return np.empty(shape, dtype=dtype)
    if not isinstance(out, np.ndarray):
        problem = f"a {type(out).__name__}"
    elif out.shape != shape or out.dtype != dtype:
        problem = f"an array of shape {out.shape} and dtype {out.dtype}"
    elif not out.flags.writeable:
        problem = "a read-only array"
    elif not out.flags.c_contiguous:
        problem = "a non-contiguous array"
    elif not out.flags.aligned:
        problem = "an unaligned array"
    else:
        return out
    raise ValueError(f"{name} must be a writeable C-contiguous {dtype.name} array of shape "
                     f"{shape} (aligned, native byte order), got {problem}")


cdef int _OUT_FLAGS = cnp.NPY_ARRAY_C_CONTIGUOUS | cnp.NPY_ARRAY_ALIGNED | cnp.NPY_ARRAY_WRITEABLE


cdef bint _flag(object value, str name) except -1:
    """A bool argument, refused as a TypeError when it is anything else."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {value!r}")
    return value


cdef cnp.ndarray _out(object out, Py_ssize_t d0, Py_ssize_t d1, int typenum, str name):
    """`check_out` for the methods: shape (d0,) if d1 < 0 else (d0, d1), dtype `typenum`.
    The common cases (None, or an array that passes) are decided in C; anything else goes
    to `check_out`, which accepts nothing this fast path refuses and raises the error."""
    cdef cnp.npy_intp dims[2]
    cdef int ndim = 1 if d1 < 0 else 2
    cdef cnp.ndarray arr
    dims[0] = d0
    dims[1] = d1
    if out is None:
        return cnp.PyArray_EMPTY(ndim, dims, typenum, 0)
    if cnp.PyArray_Check(out):
        arr = <cnp.ndarray>out
        if (cnp.PyArray_NDIM(arr) == ndim and cnp.PyArray_DIMS(arr)[0] == d0
                and (ndim == 1 or cnp.PyArray_DIMS(arr)[1] == d1)
                and cnp.PyArray_TYPE(arr) == typenum and cnp.PyArray_ISNOTSWAPPED(arr)
                and (cnp.PyArray_FLAGS(arr) & _OUT_FLAGS) == _OUT_FLAGS):
            return arr
    if d1 < 0:
        shape = (d0,)
    else:
        shape = (d0, d1)
    return check_out(out, shape, cnp.PyArray_DescrFromType(typenum), name)


cdef HanabiState _UNSET_PROTO = HanabiState(HanabiConfig(), seed=0)


cdef class HanabiBatch:
    """N independent games of one configuration.

    Args:
        config: the game variant (HanabiConfig).
        num_games: N, an integer >= 1 (TypeError for floats and bools).
        seeds: optional; passed to `reset` (default 0).

    Shapes: actions (N,) int64; legal masks (N, num_moves) int8; encodings
    (N, encoding_size) float32; scores, current players (N,) int32; terminals (N,) bool;
    hands (N, hand_size) int8. Every `out=` must be a writeable, aligned, C-contiguous
    array of exactly that shape and dtype (`check_out`), else ValueError.

    Seeds are integers in [0, 2**64) (Python or numpy); negative values and values
    >= 2**64 raise ValueError, never wrap (as `HanabiState` and `lbs_pz.engine.seeds`).

    Search builds its worlds here: `from_state(state, n)` (n copies of one position),
    `set_hands(seat, hands, seeds)` (one sampled hand per world, the deck re-dealt from a
    per-world seed), `take(indices)` (a sub-batch or repeated worlds), `step` (one move
    per world).

    Threading: the loops run in C without the GIL, so different batches in different
    threads run in parallel. One batch must not be used from two threads at once: while a
    call changes the games (reset, reset_game, step, play_random, set_state, set_hands),
    any other call on the same batch raises RuntimeError, and a change raises while
    another call reads it (concurrent reads, e.g. two `encode`s, are allowed). The batch
    is not initialised until `__init__` succeeds (methods raise RuntimeError before), and
    `__init__` cannot be called twice.

    `generation` counts the calls that have changed the games (each of the calls above,
    and a rule bot's rollout, adds one): code that hands the batch to other code (a
    user's blueprint) compares it before and after to tell whether the batch was changed.
    """

    def __cinit__(self):
        self.games = NULL
        self.num_games = 0
        self._proto = _UNSET_PROTO   # a valid config for C code that reads it regardless

    def __init__(self, config=None, num_games=1, seeds=None):
        if self.games != NULL:
            raise RuntimeError("HanabiBatch is already initialised; create a new HanabiBatch "
                               "instead of calling __init__ again")
        cdef Py_ssize_t n = _check_count(num_games, "num_games")
        if config is None:
            config = HanabiConfig()
        if not isinstance(config, HanabiConfig):
            raise TypeError(f"config must be a HanabiConfig, got {type(config).__name__}")
        proto = HanabiState(config, seed=0)
        cdef uint64_t[::1] s = _seed_array(0 if seeds is None else seeds, n)
        self._allocate(config, proto, n)
        cdef int i
        with nogil:
            for i in range(self.num_games):
                state_reset(&self._proto.cfg, &self.games[i], s[i])

    cdef int _allocate(self, object config, HanabiState proto, Py_ssize_t n) except -1:
        """Give an uninitialised batch n zeroed games of `proto`'s config (no deal)."""
        cdef GameState* games = <GameState*>calloc(n, sizeof(GameState))
        if games == NULL:
            raise MemoryError(f"cannot allocate {n} games ({n * sizeof(GameState)} bytes)")
        self._config = config
        self._proto = proto
        self.num_games = n
        self.games = games
        return 0

    def __dealloc__(self):
        free(self.games)

    cdef int _enter_read(self) except -1:
        if self.games == NULL:
            raise _not_initialised()
        if self._busy < 0:
            raise _in_use()
        self._busy += 1
        return 0

    cdef int _enter_write(self) except -1:
        if self.games == NULL:
            raise _not_initialised()
        if self._busy != 0:
            raise _in_use()
        self._busy = -1
        self._generation += 1
        return 0

    @property
    def config(self):
        if self.games == NULL:
            raise _not_initialised()
        return self._config

    @property
    def generation(self):
        """Calls that have changed the games so far (an int that only grows)."""
        if self.games == NULL:
            raise _not_initialised()
        return self._generation

    def __len__(self):
        return self.num_games

    def __repr__(self):
        if self.games == NULL:
            return "<HanabiBatch (not initialised)>"
        return f"<HanabiBatch {self.num_games} games of {self._config}>"

    # --- resetting ----------------------------------------------------------------

    def reset(self, seeds):
        """Start new games. `seeds` is one integer in [0, 2**64) (game i then gets a seed
        derived from it and i, see `game_seeds`) or a sequence of N such integers."""
        if self.games == NULL:
            raise _not_initialised()
        cdef uint64_t[::1] s = _seed_array(seeds, self.num_games)
        cdef int i
        self._enter_write()
        try:
            with nogil:
                for i in range(self.num_games):
                    state_reset(&self._proto.cfg, &self.games[i], s[i])
        finally:
            self._busy = 0

    def reset_game(self, index, seed):
        """Start a new game in slot `index` only (seed: an integer in [0, 2**64))."""
        if self.games == NULL:
            raise _not_initialised()
        cdef int i = self._check_index(index)
        cdef uint64_t useed = check_engine_seed(seed)
        self._enter_write()
        state_reset(&self._proto.cfg, &self.games[i], useed)
        self._busy = 0

    cdef int _check_index(self, index) except -1:
        """index as a C int in [0, num_games): TypeError for a non-integer, IndexError out
        of range."""
        cdef int overflow = 0
        cdef long long i
        if type(index) is int:
            i = PyLong_AsLongLongAndOverflow(index, &overflow)
            if overflow == 0 and 0 <= i < self.num_games:
                return <int>i
        elif not int_arg(index):
            raise TypeError(f"game index must be an integer, got {index!r}")
        if not 0 <= index < self.num_games:
            raise IndexError(f"game index {index} out of range [0, {self.num_games})")
        return index

    # --- moving -----------------------------------------------------------------------

    def step(self, actions, rewards=None):
        """Apply actions[i] (int (N,)) in every unfinished game i; entries for finished
        games must be -1 (nothing happens there). Returns rewards (N,) float32 (written
        into `rewards` if given): the change of score, so losing the last life costs the
        whole score, as in HLE's rl_env.

        Raises ValueError naming the first game whose action is illegal; games before it
        in the batch have already moved."""
        if self.games == NULL:
            raise _not_initialised()
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] act = _int_vector(actions, self.num_games, "actions")
        rewards = _out(rewards, self.num_games, -1, cnp.NPY_FLOAT32, "rewards")
        cdef float[::1] rew = rewards
        cdef int i, before, err = ERR_OK, bad = -1
        cdef int64_t a
        cdef int num_moves = self._proto.cfg.num_moves
        self._enter_write()
        try:
            with nogil:
                for i in range(self.num_games):
                    a = act[i]
                    rew[i] = 0
                    if state_terminal(&self._proto.cfg, &self.games[i]):
                        if a == -1:
                            continue
                        err = ERR_TERMINAL
                        bad = i
                        break
                    before = state_score(&self._proto.cfg, &self.games[i])
                    if a < 0 or a >= num_moves:
                        err = -1
                    else:
                        err = apply_move(&self._proto.cfg, &self.games[i], <int>a)
                    if err != ERR_OK:
                        bad = i
                        break
                    rew[i] = state_score(&self._proto.cfg, &self.games[i]) - before
        finally:
            self._busy = 0
        if bad >= 0:
            if err == ERR_TERMINAL:
                raise ValueError(f"game {bad} is over; its action must be -1, got {act[bad]}")
            state = self.get_state(bad)
            name = move_name(self._config, act[bad]) if 0 <= act[bad] < num_moves else "(out of range)"
            raise ValueError(f"game {bad}: illegal move {act[bad]} {name}; legal moves: "
                             f"{state.legal_moves()}")
        return rewards

    def play_random(self, max_moves=-1):
        """Random-legal self-play in every game, in C without the GIL: at most
        `max_moves` moves per game (all, to the end, if negative). Each game draws from
        its own RNG, so the result depends only on the seeds. Returns the total number
        of moves made."""
        if self.games == NULL:
            raise _not_initialised()
        if not int_arg(max_moves):
            raise TypeError(f"max_moves must be an integer, got {max_moves!r}")
        cdef int limit = -1 if max_moves < 0 else min(max_moves, 1 << 30)
        cdef long total = 0
        cdef int i
        self._enter_write()
        try:
            with nogil:
                for i in range(self.num_games):
                    total += play_random_to_end(&self._proto.cfg, &self.games[i], limit)
        finally:
            self._busy = 0
        return total

    # --- observing ----------------------------------------------------------------------

    def legal_masks(self, out=None):
        """(N, num_moves) int8: the legal moves of each game's current player."""
        if self.games == NULL:
            raise _not_initialised()
        cdef cnp.ndarray arr = _out(out, self.num_games, self._proto.cfg.num_moves,
                                    cnp.NPY_INT8, "out")
        cdef uint8_t* base = <uint8_t*>cnp.PyArray_DATA(arr)
        cdef int i, n = self._proto.cfg.num_moves
        self._enter_read()
        try:
            with nogil:
                for i in range(self.num_games):
                    legal_mask(&self._proto.cfg, &self.games[i], base + <long>i * n)
        finally:
            self._busy -= 1
        return arr

    def encode(self, out=None, players=None, own_hand=False):
        """(N, encoding_size) float32: HLE's canonical observation of game i seen by
        players[i] (int (N,), seats in [0, players); default: each game's current
        player). own_hand: bool; also that seat's own cards one-hot by slot after the
        encoding, (N, encoding_size + hand_size * card_types): feature encoding_size +
        slot * card_types + card (the features of `lbs_pz.search.value.value_features`,
        which search reads on sampled worlds only: a seat's own cards are hidden from it
        in the real game)."""
        if self.games == NULL:
            raise _not_initialised()
        cdef bint with_hand = _flag(own_hand, "own_hand")
        cdef int E = self._proto.cfg.encoding_size, i, P = self._proto.cfg.players
        cdef int F = E + (self._proto.cfg.hand_size * self._proto.cfg.card_types
                          if with_hand else 0)
        cdef cnp.ndarray arr = _out(out, self.num_games, F, cnp.NPY_FLOAT32, "out")
        cdef float* base = <float*>cnp.PyArray_DATA(arr)
        cdef int[::1] who
        cdef bint given = players is not None
        if given:
            who = _seat_vector(players, self.num_games, P)
        self._enter_read()
        try:
            if given:
                with nogil:
                    for i in range(self.num_games):
                        encode_canonical(&self._proto.cfg, &self.games[i], who[i],
                                         with_hand, base + <long>i * F)
            else:
                with nogil:
                    for i in range(self.num_games):
                        encode_canonical(&self._proto.cfg, &self.games[i],
                                         self.games[i].cur_player, with_hand,
                                         base + <long>i * F)
        finally:
            self._busy -= 1
        return arr

    def encode_sparse(self, players=None, own_hand=False):
        """The canonical encodings of `encode` as the positions of their ones (they are
        binary), for first layers that sum embedding rows instead of multiplying a
        mostly-zero matrix (`torch.nn.functional.embedding_bag(indices, W, offsets)`).

        players: int (N,) seats in [0, players), default each game's current player.
        own_hand: bool; also list that seat's own cards, as in `encode(own_hand=True)`.
        Returns (indices, offsets), both int64: indices (nnz,) the feature positions of
        game 0's ones, then game 1's, ...; offsets (N,) where each game's run starts."""
        if self.games == NULL:
            raise _not_initialised()
        cdef bint with_hand = _flag(own_hand, "own_hand")
        cdef int E = self._proto.cfg.encoding_size, i, P = self._proto.cfg.players
        cdef int H = self._proto.cfg.hand_size if with_hand else 0, p
        cdef int[::1] who
        cdef bint given = players is not None
        if given:
            who = _seat_vector(players, self.num_games, P)
        cdef cnp.ndarray[int64_t, ndim=1] offsets = np.empty(self.num_games, dtype=np.int64)
        cdef int64_t* off = <int64_t*>cnp.PyArray_DATA(offsets)
        cdef int64_t cap = <int64_t>self.num_games * 256 + E + H, nnz = 0
        cdef int64_t* idx = <int64_t*>malloc(cap * sizeof(int64_t))
        cdef int64_t* grown
        cdef bint failed = idx == NULL
        if not failed:
            try:
                self._enter_read()
            except BaseException:
                free(idx)
                raise
            try:
                with nogil:
                    for i in range(self.num_games):
                        if nnz + E + H > cap:       # room for every feature of a game
                            cap = 2 * cap + E + H
                            grown = <int64_t*>realloc(idx, cap * sizeof(int64_t))
                            if grown == NULL:
                                failed = True
                                break
                            idx = grown
                        off[i] = nnz
                        p = who[i] if given else self.games[i].cur_player
                        nnz += encode_canonical_ones(&self._proto.cfg, &self.games[i], p,
                                                     with_hand, idx + nnz)
            finally:
                self._busy -= 1
        if failed:
            free(idx)
            raise MemoryError("cannot allocate the sparse encodings")
        try:
            indices = np.empty(nnz, dtype=np.int64)
        except BaseException:
            free(idx)
            raise
        if nnz:
            memcpy(cnp.PyArray_DATA(indices), idx, nnz * sizeof(int64_t))
        free(idx)
        return indices, offsets

    def scores(self, out=None):
        """(N,) int32: each game's score (0 once its last life token is lost)."""
        return self._per_game(out, state_score)

    def max_scores(self, out=None):
        """(N,) int32: the most each game can still score (`HanabiState.max_score`): an
        upper bound for any estimate of its final score."""
        return self._per_game(out, state_max_score)

    cdef object _per_game(self, object out, GameQuery query):
        """(N,) int32 `out` (checked, or new) holding query(game) for every game."""
        if self.games == NULL:
            raise _not_initialised()
        out = _out(out, self.num_games, -1, cnp.NPY_INT32, "out")
        cdef int[::1] o = out
        cdef int i
        self._enter_read()
        for i in range(self.num_games):
            o[i] = query(&self._proto.cfg, &self.games[i])
        self._busy -= 1
        return out

    def terminals(self, out=None):
        """(N,) bool: whether each game is over."""
        if self.games == NULL:
            raise _not_initialised()
        cdef cnp.ndarray arr = _out(out, self.num_games, -1, cnp.NPY_BOOL, "out")
        cdef uint8_t* o = <uint8_t*>cnp.PyArray_DATA(arr)
        cdef int i
        self._enter_read()
        for i in range(self.num_games):
            o[i] = state_terminal(&self._proto.cfg, &self.games[i])
        self._busy -= 1
        return arr

    def current_players(self, out=None):
        """(N,) int32: the seat to move in each game."""
        if self.games == NULL:
            raise _not_initialised()
        out = _out(out, self.num_games, -1, cnp.NPY_INT32, "out")
        cdef int[::1] o = out
        cdef int i
        self._enter_read()
        for i in range(self.num_games):
            o[i] = self.games[i].cur_player
        self._busy -= 1
        return out

    # --- moving games in and out ---------------------------------------------------------

    def public_history_keys(self, rows=None):
        """`HanabiState.public_history_key()` of games `rows` (int (M,); default all), a
        list of bytes, without a state copy per game (what a search's worlds are keyed on)."""
        if self.games == NULL:
            raise _not_initialised()
        idx = np.arange(self.num_games, dtype=np.int64) if rows is None else \
            np.asarray(rows)
        if idx.ndim != 1 or not (np.issubdtype(idx.dtype, np.integer) or idx.size == 0):
            raise ValueError(f"rows must be a 1-D array of game indices, got an array of "
                             f"shape {idx.shape} and dtype {idx.dtype}")
        if idx.size and (idx.min() < 0 or idx.max() >= self.num_games):
            raise IndexError(f"rows must be in [0, {self.num_games}), got "
                             f"{int(idx.min())}..{int(idx.max())}")
        cdef int64_t[::1] rr = np.ascontiguousarray(idx, dtype=np.int64)
        cdef int P = self._proto.cfg.players, n, t, start
        cdef Py_ssize_t j
        cdef GameState* g
        cdef char* o
        out = []
        self._enter_read()
        try:
            for j in range(rr.shape[0]):
                g = &self.games[rr[j]]
                n = g.num_history
                start = (g.cur_player - n) % P
                if start < 0:
                    start += P
                key = PyBytes_FromStringAndSize(NULL, 1 + 3 * n)
                o = PyBytes_AS_STRING(key)
                o[0] = <char>start
                for t in range(n):
                    o[1 + 3 * t] = <char>g.history[t].move
                    o[2 + 3 * t] = <char>g.history[t].card
                    o[3 + 3 * t] = <char>g.history[t].reveal
                out.append(key)
        finally:
            self._busy -= 1
        return out

    def get_state(self, index):
        """A HanabiState copy of game `index`."""
        if self.games == NULL:
            raise _not_initialised()
        cdef int i = self._check_index(index)
        cdef HanabiState st = self._proto.clone()
        self._enter_read()
        memcpy(&st.s, &self.games[i], sizeof(GameState))
        self._busy -= 1
        return st

    def set_state(self, index, HanabiState state not None):
        """Copy `state` into slot `index` (it must have the same config)."""
        if self.games == NULL:
            raise _not_initialised()
        cdef int i = self._check_index(index)
        if state.config is None:
            state.clone()                   # raises: the state is not initialised
        if state.config != self._config:
            raise ValueError(f"state has config {state.config}, batch has {self._config}")
        self._enter_write()
        memcpy(&self.games[i], &state.s, sizeof(GameState))
        self._busy = 0

    @classmethod
    def from_states(cls, states):
        """A batch holding copies of the given HanabiStates (at least one, all of one
        config); TypeError for anything that is not a HanabiState."""
        states = list(states)
        if not states:
            raise ValueError("from_states needs at least one state")
        for k, st in enumerate(states):
            if not isinstance(st, HanabiState):
                raise TypeError(f"states[{k}] must be a HanabiState, got {type(st).__name__}")
        cdef HanabiBatch batch = cls(states[0].config, len(states))
        for i, st in enumerate(states):
            batch.set_state(i, st)
        return batch

    @classmethod
    def _blank(cls, HanabiState proto not None, n):
        """A batch of n zeroed games of `proto`'s config whose slots the caller fills (no
        deal)."""
        cdef HanabiBatch batch = cls.__new__(cls)
        batch._allocate(proto.config, proto._new_like(), _check_count(n, "n"))
        return batch

    @classmethod
    def from_state(cls, HanabiState state not None, n):
        """A batch of `n` (an integer >= 1) copies of `state` (one memcpy each)."""
        cdef int count = _check_count(n, "n"), i
        state._enter_read()
        try:
            batch = cls._blank(state, count)
            with nogil:
                for i in range(count):
                    memcpy(&(<HanabiBatch>batch).games[i], &state.s, sizeof(GameState))
        finally:
            state._busy -= 1
        return batch

    def copy(self):
        """An independent copy of this batch."""
        return self.take(np.arange(self.num_games))

    def take(self, indices):
        """A new batch holding copies of games indices[0], indices[1], ... (int (M,),
        M >= 1; an index may repeat, e.g. `np.tile(np.arange(n), k)` repeats the batch
        k times). IndexError for an index outside [0, N)."""
        if self.games == NULL:
            raise _not_initialised()
        arr = np.asarray(indices)
        if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
            raise ValueError(f"indices must be a 1-D array of game indices, got an array of "
                             f"shape {arr.shape} and dtype {arr.dtype}")
        if arr.dtype == np.uint64 and arr.size and arr.max() > np.iinfo(np.int64).max:
            raise IndexError(f"game index {arr.max()} out of range [0, {self.num_games})")
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] idx = np.ascontiguousarray(arr, np.int64)
        cdef int64_t m = idx.shape[0], i
        if m < 1:
            raise ValueError("take needs at least one index")
        if np.any(idx < 0) or np.any(idx >= self.num_games):
            bad = idx[(idx < 0) | (idx >= self.num_games)][0]
            raise IndexError(f"game index {bad} out of range [0, {self.num_games})")
        cdef HanabiBatch out = type(self)._blank(self._proto, m)
        cdef const int64_t[::1] iv = idx
        self._enter_read()
        try:
            with nogil:
                for i in range(m):
                    memcpy(&out.games[i], &self.games[iv[i]], sizeof(GameState))
        finally:
            self._busy -= 1
        return out

    def hands(self, seat=None, out=None):
        """int8 (N, hand_size): the hand of `seat` in every game (default: each game's
        player to move), card ids `color * ranks + rank`, slot 0 the oldest, -1 in empty
        slots (a hand shrinks at the end of the game)."""
        if self.games == NULL:
            raise _not_initialised()
        cdef int H = self._proto.cfg.hand_size, P = self._proto.cfg.players, i, j, who = -1
        if seat is not None:
            if not int_arg(seat) or not 0 <= seat < P:
                raise ValueError(f"seat must be None or a seat number in [0, {P}), got {seat!r}")
            who = int(seat)
        cdef cnp.ndarray arr = _out(out, self.num_games, H, cnp.NPY_INT8, "out")
        cdef int8_t* o = <int8_t*>cnp.PyArray_DATA(arr)
        cdef int p
        cdef GameState* g
        self._enter_read()
        try:
            with nogil:
                for i in range(self.num_games):
                    g = &self.games[i]
                    p = g.cur_player if who < 0 else who
                    for j in range(H):
                        o[<long>i * H + j] = g.hand[p][j] if j < g.hand_len[p] else -1
        finally:
            self._busy -= 1
        return arr

    def set_hands(self, seat, hands, seeds=None):
        """Give `seat` the hand hands[i] in every game i, as `HanabiState.set_hand` does:
        each card must fit its slot's card knowledge and be among the cards the seat
        cannot see; the undrawn deck is re-dealt from what remains, shuffled with the
        game's RNG or, given seeds (N integers in [0, 2**64), one per game), with an RNG
        reset to seeds[i], exactly as `state.set_hand(seat, hands[i], seed=seeds[i])`.

        hands: int array (N, hand_len) with hand_len the seat's current hand length in
        every game (games of different hand lengths need separate calls).
        Raises ValueError naming the first game whose hand is impossible; the games
        before it have their new hands, that game and those after it are unchanged."""
        if self.games == NULL:
            raise _not_initialised()
        cdef int P = self._proto.cfg.players, N = self.num_games
        if not int_arg(seat) or not 0 <= seat < P:
            raise ValueError(f"seat must be a seat number in [0, {P}), got {seat!r}")
        cdef int who = int(seat)
        arr = np.asarray(hands)
        if arr.ndim != 2 or arr.shape[0] != N or not (np.issubdtype(arr.dtype, np.integer)
                                                      or arr.size == 0):
            raise ValueError(f"hands must be an integer array of shape ({N}, hand_len), got "
                             f"shape {arr.shape} and dtype {arr.dtype}")
        cdef int T = self._proto.cfg.card_types, n, i, j, err = ERR_OK
        cdef int bad = -1, bad_slot = -1
        n = arr.shape[1]
        if arr.size and (arr.min() < 0 or arr.max() >= T):
            row = int(np.flatnonzero(((arr < 0) | (arr >= T)).any(axis=1))[0])
            raise ValueError(f"game {row}: card ids must be in [0, {T}), got {arr[row].tolist()}")
        cdef const int8_t[:, ::1] h = np.ascontiguousarray(arr, dtype=np.int8)
        cdef uint64_t[::1] sd
        cdef bint seeded = seeds is not None
        if seeded:
            sd = check_engine_seeds(seeds, N)
        cdef uint64_t old_rng
        self._enter_write()
        try:
            for i in range(N):
                if self.games[i].hand_len[who] != n:
                    raise ValueError(f"game {i}: seat {who} holds {self.games[i].hand_len[who]} "
                                     f"cards, got hands of {n}")
            with nogil:
                for i in range(N):
                    old_rng = self.games[i].rng
                    if seeded:
                        self.games[i].rng = sd[i]
                    err = set_hand(&self._proto.cfg, &self.games[i], who, &h[i, 0] if n else NULL,
                                   &bad_slot)
                    if err != ERR_OK:
                        self.games[i].rng = old_rng
                        bad = i
                        break
        finally:
            self._busy = 0
        if bad < 0:
            return
        names = [self._config.card_name(int(c)) for c in h[bad]]
        card = names[bad_slot]
        if err == ERR_NOT_PLAUSIBLE:
            raise ValueError(f"game {bad}: {card} cannot be at slot {bad_slot} of player "
                             f"{who}: the player's card knowledge rules it out")
        raise ValueError(f"game {bad}: hand {names} needs more copies of {card} than remain "
                         f"unseen by player {who} (deck + own hand)")


cdef object _not_initialised():
    return RuntimeError("HanabiBatch is not initialised (made with HanabiBatch.__new__ without "
                        "__init__); create it as HanabiBatch(config, num_games)")


cdef object _in_use():
    return RuntimeError("HanabiBatch is in use by another thread: one batch must not be used "
                        "from two threads at once (give each thread its own batch, e.g. "
                        "batch.copy())")


def _seed_array(seeds, Py_ssize_t n):
    """uint64 (n,): one seed per game, from a base seed (an integer in [0, 2**64): game i
    gets the i-th splitmix64 output after it, see `game_seeds`) or n seeds."""
    cdef uint64_t base
    cdef Py_ssize_t i
    cdef uint64_t[::1] view
    if int_arg(seeds):
        if type(seeds) is int and 0 <= seeds < _TWO_64:
            base = seeds
        else:
            base = check_engine_seed(seeds, "seeds")
        arr = np.empty(n, dtype=np.uint64)
        view = arr
        for i in range(n):
            # Spread consecutive games far apart in the splitmix64 sequence.
            view[i] = rng_next(&base)
        return arr
    if isinstance(seeds, np.ndarray):
        return check_engine_seeds(seeds, n)
    if isinstance(seeds, (str, bytes, float, bool, np.bool_)) or not hasattr(seeds, "__len__"):
        raise ValueError(f"seeds must be an integer in [0, 2**64) or a sequence of {n} such "
                         f"integers, got {seeds!r}")
    if len(seeds) != n:
        raise ValueError(f"expected {n} seeds, got {len(seeds)}")
    return np.array([check_engine_seed(x, "seeds") for x in seeds], dtype=np.uint64)


def _seat_vector(players, n, int P):
    """players as int32 (n,) seats in [0, P); ValueError otherwise."""
    seats = _int_vector(players, n, "players")
    if np.any(seats < 0) or np.any(seats >= P):
        raise ValueError(f"players must be {n} seat numbers in [0, {P}), got "
                         f"{seats[(seats < 0) | (seats >= P)][0]}")
    return seats.astype(np.int32)
