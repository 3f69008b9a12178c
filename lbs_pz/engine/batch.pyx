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

from lbs_pz.engine._core cimport (
    ERR_NOT_PLAUSIBLE, ERR_OK, ERR_TERMINAL, GameState, apply_move, config_init, legal_mask,
    play_random_to_end, rng_next, set_hand, state_reset, state_score, state_terminal,
)
from lbs_pz.engine._encode cimport encode_canonical
from lbs_pz.engine.state cimport HanabiState
from lbs_pz.engine.config import HanabiConfig
from lbs_pz.engine.moves import move_name
from lbs_pz.engine.state import seed_to_u64

cnp.import_array()

_GOLDEN = 0x9E3779B97F4A7C15
_MASK64 = (1 << 64) - 1


def game_seeds(seed, int first, int count):
    """Seeds of games first .. first+count-1 of a run seeded with `seed`: exactly the seeds
    `HanabiBatch(config, n, seeds=seed)` gives its games (splitmix64 outputs)."""
    cdef uint64_t base = (seed_to_u64(seed) + (<uint64_t>first) * <uint64_t>_GOLDEN) & _MASK64
    cdef cnp.ndarray[uint64_t, ndim=1] out = np.empty(count, dtype=np.uint64)
    cdef int i
    for i in range(count):
        out[i] = rng_next(&base)
    return out




def _int_vector(values, n, name):
    """values as an int64 array of shape (n,); ValueError naming `name` otherwise."""
    arr = np.asarray(values)
    if arr.shape != (n,) or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise ValueError(f"{name} must be {n} integers (shape ({n},)), got an array of "
                         f"shape {arr.shape} and dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _out_array(out, shape, dtype, name):
    """Validate a caller-provided output array, or allocate one."""
    if out is None:
        return np.empty(shape, dtype=dtype)
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != dtype \
            or not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError(f"{name} must be a writeable C-contiguous {np.dtype(dtype).name} "
                         f"array of shape {shape}")
    return out


cdef class HanabiBatch:
    """N independent games of one configuration.

    Args:
        config: the game variant (HanabiConfig).
        num_games: N >= 1.
        seeds: optional; passed to `reset`.

    Shapes: actions (N,) int64; legal masks (N, num_moves) int8; encodings
    (N, encoding_size) float32; scores, current players (N,) int32; terminals (N,) bool;
    hands (N, hand_size) int8.

    Search builds its worlds here: `from_state(state, n)` (n copies of one position),
    `set_hands(seat, hands, seeds)` (one sampled hand per world, the deck re-dealt from a
    per-world seed), `take(indices)` (a sub-batch or repeated worlds), `step` (one move
    per world).
    """

    def __cinit__(self, config=None, int num_games=1, seeds=None):
        if num_games < 1:
            raise ValueError(f"num_games must be >= 1, got {num_games}")
        self.games = <GameState*>calloc(num_games, sizeof(GameState))
        if self.games == NULL:
            raise MemoryError(f"cannot allocate {num_games} games")
        self.num_games = num_games

    def __init__(self, config=None, int num_games=1, seeds=None):
        if config is None:
            config = HanabiConfig()
        if not isinstance(config, HanabiConfig):
            raise TypeError(f"config must be a HanabiConfig, got {type(config).__name__}")
        self._config = config
        self._proto = HanabiState(config, seed=0)
        self.reset(0 if seeds is None else seeds)

    def __dealloc__(self):
        free(self.games)

    @property
    def config(self):
        return self._config

    def __len__(self):
        return self.num_games

    # --- resetting ----------------------------------------------------------------

    def reset(self, seeds):
        """Start new games. `seeds` is one integer (game i then gets a seed derived from
        it and i) or a sequence of N integers, one per game."""
        cdef uint64_t[::1] s = self._seed_array(seeds)
        cdef int i
        with nogil:
            for i in range(self.num_games):
                state_reset(&self._proto.cfg, &self.games[i], s[i])

    def reset_game(self, int index, seed):
        """Start a new game in slot `index` only."""
        self._check_index(index)
        state_reset(&self._proto.cfg, &self.games[index], seed_to_u64(seed))

    def _seed_array(self, seeds):
        cdef uint64_t base
        cdef int i
        if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
            base = seed_to_u64(int(seeds))
            arr = np.empty(self.num_games, dtype=np.uint64)
            for i in range(self.num_games):
                # Spread consecutive games far apart in the splitmix64 sequence.
                arr[i] = rng_next(&base)
            return arr
        if isinstance(seeds, (str, bytes, float)) or not hasattr(seeds, "__len__"):
            raise ValueError(f"seeds must be an integer or a sequence of {self.num_games} "
                             f"integers, got {seeds!r}")
        values = [seed_to_u64(x) for x in seeds]
        if len(values) != self.num_games:
            raise ValueError(f"expected {self.num_games} seeds, got {len(values)}")
        return np.asarray(values, dtype=np.uint64)

    cdef int _check_index(self, index) except -1:
        if not 0 <= index < self.num_games:
            raise IndexError(f"game index {index} out of range [0, {self.num_games})")
        return 0

    # --- moving -----------------------------------------------------------------------

    def step(self, actions, rewards=None):
        """Apply actions[i] in every unfinished game i; entries for finished games must
        be -1 (nothing happens there). Returns rewards (N,) float32: the change of score,
        so losing the last life costs the whole score, as in HLE's rl_env.

        Raises ValueError naming the first game whose action is illegal; games before it
        in the batch have already moved."""
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] act = _int_vector(actions, self.num_games, "actions")
        cdef float[::1] rew = _out_array(rewards, (self.num_games,), np.float32, "rewards")
        cdef int i, before, err = ERR_OK, bad = -1
        cdef int64_t a
        cdef int num_moves = self._proto.cfg.num_moves
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
        if bad >= 0:
            if err == ERR_TERMINAL:
                raise ValueError(f"game {bad} is over; its action must be -1, got {act[bad]}")
            state = self.get_state(bad)
            name = move_name(self._config, act[bad]) if 0 <= act[bad] < num_moves else "(out of range)"
            raise ValueError(f"game {bad}: illegal move {act[bad]} {name}; legal moves: "
                             f"{state.legal_moves()}")
        return np.asarray(rew)

    def play_random(self, int max_moves=-1):
        """Random-legal self-play in every game, in C without the GIL: at most
        `max_moves` moves per game (all, to the end, if negative). Each game draws from
        its own RNG, so the result depends only on the seeds. Returns the total number
        of moves made."""
        cdef long total = 0
        cdef int i
        with nogil:
            for i in range(self.num_games):
                total += play_random_to_end(&self._proto.cfg, &self.games[i], max_moves)
        return total

    # --- observing ----------------------------------------------------------------------

    def legal_masks(self, out=None):
        """(N, num_moves) int8: the legal moves of each game's current player."""
        cdef cnp.ndarray arr = _out_array(out, (self.num_games, self._proto.cfg.num_moves),
                                          np.int8, "out")
        cdef uint8_t* base = <uint8_t*>cnp.PyArray_DATA(arr)
        cdef int i, n = self._proto.cfg.num_moves
        with nogil:
            for i in range(self.num_games):
                legal_mask(&self._proto.cfg, &self.games[i], base + i * n)
        return arr

    def encode(self, out=None, players=None):
        """(N, encoding_size) float32: HLE's canonical observation of game i seen by
        players[i] (default: each game's current player)."""
        cdef int E = self._proto.cfg.encoding_size, i, P = self._proto.cfg.players
        cdef cnp.ndarray arr = _out_array(out, (self.num_games, E), np.float32, "out")
        cdef float* base = <float*>cnp.PyArray_DATA(arr)
        cdef int[::1] who
        if players is None:
            with nogil:
                for i in range(self.num_games):
                    encode_canonical(&self._proto.cfg, &self.games[i], self.games[i].cur_player,
                                     base + <long>i * E)
            return arr
        seats = _int_vector(players, self.num_games, "players")
        if np.any(seats < 0) or np.any(seats >= P):
            raise ValueError(f"players must be {self.num_games} seat numbers in [0, {P})")
        who = seats.astype(np.int32)
        with nogil:
            for i in range(self.num_games):
                encode_canonical(&self._proto.cfg, &self.games[i], who[i], base + <long>i * E)
        return arr

    def encode_sparse(self, players=None):
        """The canonical encodings of `encode` as the positions of their ones (they are
        binary), for first layers that sum embedding rows instead of multiplying a
        mostly-zero matrix (`torch.nn.functional.embedding_bag(indices, W, offsets)`).

        Returns (indices, offsets), both int64: indices (nnz,) the feature positions of
        game 0's ones, then game 1's, ...; offsets (N,) where each game's run starts."""
        cdef int E = self._proto.cfg.encoding_size, i, j, P = self._proto.cfg.players
        cdef int[::1] who
        cdef bint given = players is not None
        if given:
            seats = _int_vector(players, self.num_games, "players")
            if np.any(seats < 0) or np.any(seats >= P):
                raise ValueError(f"players must be {self.num_games} seat numbers in [0, {P})")
            who = seats.astype(np.int32)
        cdef cnp.ndarray[int64_t, ndim=1] offsets = np.empty(self.num_games, dtype=np.int64)
        cdef int64_t* off = <int64_t*>cnp.PyArray_DATA(offsets)
        cdef float* scratch = <float*>malloc(E * sizeof(float))
        cdef int64_t cap = <int64_t>self.num_games * 256 + E, nnz = 0
        cdef int64_t* idx = <int64_t*>malloc(cap * sizeof(int64_t))
        cdef int64_t* grown
        cdef bint failed = scratch == NULL or idx == NULL
        if not failed:
            with nogil:
                for i in range(self.num_games):
                    encode_canonical(&self._proto.cfg, &self.games[i],
                                     who[i] if given else self.games[i].cur_player, scratch)
                    if nnz + E > cap:
                        cap = 2 * cap + E
                        grown = <int64_t*>realloc(idx, cap * sizeof(int64_t))
                        if grown == NULL:
                            failed = True
                            break
                        idx = grown
                    off[i] = nnz
                    for j in range(E):          # branch-free: the ones are unpredictable
                        idx[nnz] = j
                        nnz += scratch[j] != 0
        free(scratch)
        if failed:
            free(idx)
            raise MemoryError("cannot allocate the sparse encodings")
        cdef cnp.ndarray[int64_t, ndim=1] indices = np.empty(nnz, dtype=np.int64)
        if nnz:
            memcpy(cnp.PyArray_DATA(indices), idx, nnz * sizeof(int64_t))
        free(idx)
        return indices, offsets

    def scores(self, out=None):
        cdef int[::1] o = _out_array(out, (self.num_games,), np.int32, "out")
        cdef int i
        for i in range(self.num_games):
            o[i] = state_score(&self._proto.cfg, &self.games[i])
        return np.asarray(o)

    def terminals(self, out=None):
        cdef cnp.ndarray arr = _out_array(out, (self.num_games,), np.bool_, "out")
        cdef uint8_t* o = <uint8_t*>cnp.PyArray_DATA(arr)
        cdef int i
        for i in range(self.num_games):
            o[i] = state_terminal(&self._proto.cfg, &self.games[i])
        return arr

    def current_players(self, out=None):
        cdef int[::1] o = _out_array(out, (self.num_games,), np.int32, "out")
        cdef int i
        for i in range(self.num_games):
            o[i] = self.games[i].cur_player
        return np.asarray(o)

    # --- moving games in and out ---------------------------------------------------------

    def get_state(self, int index):
        """A HanabiState copy of game `index`."""
        self._check_index(index)
        cdef HanabiState st = self._proto.clone()
        memcpy(&st.s, &self.games[index], sizeof(GameState))
        return st

    def set_state(self, int index, HanabiState state):
        """Copy `state` into slot `index` (it must have the same config)."""
        self._check_index(index)
        if state.config != self._config:
            raise ValueError(f"state has config {state.config}, batch has {self._config}")
        memcpy(&self.games[index], &state.s, sizeof(GameState))

    @classmethod
    def from_states(cls, states):
        """A batch holding copies of the given states (all of one config)."""
        states = list(states)
        if not states:
            raise ValueError("from_states needs at least one state")
        cdef HanabiBatch batch = cls(states[0].config, len(states))
        for i, st in enumerate(states):
            batch.set_state(i, st)
        return batch

    @classmethod
    def _blank(cls, config, int n):
        """A batch of n games of `config` whose slots the caller fills (no deal)."""
        cdef HanabiBatch batch = cls.__new__(cls, config, n)
        batch._config = config
        batch._proto = HanabiState(config, seed=0)
        return batch

    @classmethod
    def from_state(cls, HanabiState state not None, int n):
        """A batch of `n` copies of `state` (one memcpy each)."""
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        cdef HanabiBatch batch = cls._blank(state.config, n)
        cdef int i
        with nogil:
            for i in range(n):
                memcpy(&batch.games[i], &state.s, sizeof(GameState))
        return batch

    def copy(self):
        """An independent copy of this batch."""
        return self.take(np.arange(self.num_games))

    def take(self, indices):
        """A new batch holding copies of games indices[0], indices[1], ... (int (M,),
        M >= 1; an index may repeat, e.g. `np.tile(np.arange(n), k)` repeats the batch
        k times). IndexError for an index outside [0, N)."""
        arr = np.asarray(indices)
        if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
            raise ValueError(f"indices must be a 1-D array of game indices, got an array of "
                             f"shape {arr.shape} and dtype {arr.dtype}")
        cdef cnp.ndarray[int64_t, ndim=1, mode="c"] idx = np.ascontiguousarray(arr, np.int64)
        cdef int64_t m = idx.shape[0], i
        if m < 1:
            raise ValueError("take needs at least one index")
        if np.any(idx < 0) or np.any(idx >= self.num_games):
            bad = idx[(idx < 0) | (idx >= self.num_games)][0]
            raise IndexError(f"game index {bad} out of range [0, {self.num_games})")
        cdef HanabiBatch out = type(self)._blank(self._config, <int>m)
        cdef const int64_t[::1] iv = idx
        with nogil:
            for i in range(m):
                memcpy(&out.games[i], &self.games[iv[i]], sizeof(GameState))
        return out

    def hands(self, seat=None, out=None):
        """int8 (N, hand_size): the hand of `seat` in every game (default: each game's
        player to move), card ids `color * ranks + rank`, slot 0 the oldest, -1 in empty
        slots (a hand shrinks at the end of the game)."""
        cdef int H = self._proto.cfg.hand_size, P = self._proto.cfg.players, i, j, who = -1
        if seat is not None:
            if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) \
                    or not 0 <= seat < P:
                raise ValueError(f"seat must be None or a seat number in [0, {P}), got {seat!r}")
            who = int(seat)
        cdef cnp.ndarray arr = _out_array(out, (self.num_games, H), np.int8, "out")
        cdef int8_t* o = <int8_t*>cnp.PyArray_DATA(arr)
        cdef int p
        cdef GameState* g
        with nogil:
            for i in range(self.num_games):
                g = &self.games[i]
                p = g.cur_player if who < 0 else who
                for j in range(H):
                    o[<long>i * H + j] = g.hand[p][j] if j < g.hand_len[p] else -1
        return arr

    def set_hands(self, seat, hands, seeds=None):
        """Give `seat` the hand hands[i] in every game i, as `HanabiState.set_hand` does:
        each card must fit its slot's card knowledge and be among the cards the seat
        cannot see; the undrawn deck is re-dealt from what remains, shuffled with the
        game's RNG or, given seeds (N integers, one per game), with an RNG reset to
        seeds[i], exactly as `state.set_hand(seat, hands[i], seed=seeds[i])`.

        hands: int array (N, hand_len) with hand_len the seat's current hand length in
        every game (games of different hand lengths need separate calls).
        Raises ValueError naming the first game whose hand is impossible; the games
        before it have their new hands, that game and those after it are unchanged."""
        cdef int P = self._proto.cfg.players, N = self.num_games
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < P:
            raise ValueError(f"seat must be a seat number in [0, {P}), got {seat!r}")
        cdef int who = int(seat)
        arr = np.asarray(hands)
        if arr.ndim != 2 or arr.shape[0] != N or not (np.issubdtype(arr.dtype, np.integer)
                                                      or arr.size == 0):
            raise ValueError(f"hands must be an integer array of shape ({N}, hand_len), got "
                             f"shape {arr.shape} and dtype {arr.dtype}")
        cdef int T = self._proto.cfg.card_types, n = arr.shape[1], i, j, err = ERR_OK
        cdef int bad = -1, bad_slot = -1
        if arr.size and (arr.min() < 0 or arr.max() >= T):
            row = int(np.flatnonzero(((arr < 0) | (arr >= T)).any(axis=1))[0])
            raise ValueError(f"game {row}: card ids must be in [0, {T}), got {arr[row].tolist()}")
        for i in range(N):
            if self.games[i].hand_len[who] != n:
                raise ValueError(f"game {i}: seat {who} holds {self.games[i].hand_len[who]} "
                                 f"cards, got hands of {n}")
        cdef const int8_t[:, ::1] h = np.ascontiguousarray(arr, dtype=np.int8)
        cdef uint64_t[::1] sd
        cdef bint seeded = seeds is not None
        if seeded:
            sd = _seed_vector(seeds, N)
        cdef uint64_t old_rng
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
        if bad < 0:
            return
        names = [self._config.card_name(int(c)) for c in h[bad]]
        card = names[bad_slot]
        if err == ERR_NOT_PLAUSIBLE:
            raise ValueError(f"game {bad}: {card} cannot be at slot {bad_slot} of player "
                             f"{who}: the player's card knowledge rules it out")
        raise ValueError(f"game {bad}: hand {names} needs more copies of {card} than remain "
                         f"unseen by player {who} (deck + own hand)")


def _seed_vector(seeds, n):
    """seeds as uint64 (n,), each mapped as `HanabiState.set_hand(..., seed=)` maps it."""
    arr = np.asarray(seeds)
    if arr.shape != (n,) or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise ValueError(f"seeds must be {n} integers (shape ({n},)), got an array of shape "
                         f"{arr.shape} and dtype {arr.dtype}")
    if arr.dtype == np.uint64:
        return np.ascontiguousarray(arr)
    if arr.dtype.kind == "u" or arr.size == 0 or arr.min() >= 0:
        return np.ascontiguousarray(arr, dtype=np.uint64)
    # Negative seeds wrap modulo 2**64, as seed_to_u64 maps them.
    return np.ascontiguousarray(arr.astype(np.int64).view(np.uint64))
