# Included by _bots.pyx (one extension, so every call can be inlined): the conventions' reading of a position, as network inputs.

# --- convention features ----------------------------------------------------------------
#
# What the strong bot's conventions (H-group play clues, saves, delayed play clues) make of
# a position, seen by one seat: a function of the public history and the cards that seat
# sees, never of its own cards. A network imitating a convention player needs this fold
# over the history ("this card was promised playable three turns ago and has since moved
# two slots"), which an LSTM learns only slowly from the raw observations.


CONVENTION_SLOT_PARTS = SLOT_PARTS      # features per card of every hand
CONVENTION_HINT_PARTS = HINT_PARTS      # features per hint move


def convention_feature_size(config):
    """Length of one seat's `convention_features` row in a game of `config`:
    P * H * SLOT_PARTS + (P - 1) + (P - 1) * (C + R) * HINT_PARTS."""
    P, H = config.players, config.hand_size
    return P * H * SLOT_PARTS + (P - 1) + (P - 1) * (config.colors + config.ranks) * HINT_PARTS


cdef void seat_features(const GameConfig* cfg, const BotTables* tb, const GameState* s,
                        const BotMemory* mem, int me, float* o) noexcept nogil:
    """One row of `convention_features` (zeroed by the caller)."""
    cdef const BotParams* pr = &PARAMS[BOT_STRONG]
    cdef int P = cfg.players, H = cfg.hand_size, C = cfg.colors, R = cfg.ranks
    cdef Board bd
    cdef int rem[MAX_CARD_TYPES]
    cdef uint32_t K[MAX_HAND]
    cdef uint32_t known[MAX_HAND]
    cdef int known_count[MAX_HAND]
    cdef uint32_t queued, k, present
    cdef int rel, p, j, chop, off, t, is_rank, v, m, d
    cdef const HandMem* hm
    cdef float* f
    seat_view(pr, cfg, tb, s, mem, me, &bd, rem, K, &queued)
    for rel in range(P):
        p = (me + rel) % P
        hm = &mem.hands[p]
        chop = chop_of(tb, &bd, hm)
        for j in range(min(hm.len, H)):
            k = K[j] if p == me else knowledge(tb, &bd, hm, j)
            f = o + (rel * H + j) * SLOT_PARTS
            f[0] = subset(k, bd.playable)
            f[1] = subset(k, bd.worthless)
            f[2] = subset(k, bd.playable | bd.soon)
            f[3] = is_protected(tb, &bd, hm, j)
            f[4] = hm.touched[j] != 0
            f[5] = j == chop
    o += P * H * SLOT_PARTS
    for off in range(1, P):
        t = (me + off) % P
        o[off - 1] = danger(pr, cfg, tb, &bd, s, me, t, &mem.hands[t]) / 500.0
    o += P - 1
    for off in range(1, P):
        t = (me + off) % P
        for j in range(mem.hands[t].len):
            known[j] = knowledge(tb, &bd, &mem.hands[t], j)
            known_count[j] = popcount32(known[j])
        for is_rank in range(2):
            present = 0
            for j in range(s.hand_len[t]):
                present |= 1u << (cfg.rank_of[s.hand[t][j]] if is_rank
                                  else cfg.color_of[s.hand[t][j]])
            for v in range(R if is_rank else C):
                if not (present >> v) & 1:
                    continue        # not a legal hint: no features
                m = (P - 1) * C + (off - 1) * R + v if is_rank else (off - 1) * C + v
                d = 0
                eval_hint(pr, cfg, tb, &bd, s, mem, me, t, is_rank, v, queued, &d, known,
                          known_count, o + m * HINT_PARTS)


cdef object _checked_seats(seats, Py_ssize_t k, int players, str per):
    """seats as a C-contiguous int64 array of k seats of a `players`-player game:
    TypeError if not a 1-D integer array, ValueError for a wrong length (one entry
    per `per`) or a seat out of range."""
    arr = np.asarray(seats)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise TypeError(f"seats must be a 1-D integer array, got {arr.dtype} of shape {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    if arr.shape[0] != k:
        raise ValueError(f"seats must have one entry per {per} ({k}), got {arr.shape[0]}")
    bad = np.flatnonzero((arr < 0) | (arr >= players))
    if bad.size:
        raise ValueError(f"seats[{bad[0]}] = {arr[bad[0]]} is not a seat of a "
                         f"{players}-player game")
    return arr


cdef int _check_out_shape(const float[:, ::1] out, Py_ssize_t k, int size) except -1:
    if out.shape[0] != k or out.shape[1] != size:
        raise ValueError(f"out must have shape ({k}, {size}), got "
                         f"({out.shape[0]}, {out.shape[1]})")
    return 0


def convention_features(HanabiBatch batch not None, seats, float[:, ::1] out not None):
    """The strong bot's conventions' reading of every game of `batch`, seen by seats[i]
    (seats: integer (N,)): fills out (N, convention_feature_size(config)), float32,
    C-contiguous, writeable.

    Row layout (seat-relative, as HLE's canonical vector: the seat's own hand first):
      - per card of every hand (P * H, SLOT_PARTS each; zeros past a hand's end): known
        playable, known worthless, known playable or queued next ("soon"), promised by a
        convention, touched by a hint, is the hand's chop. Knowledge is the public one
        narrowed by promises, and for the seat's own cards also by the copies it sees;
      - per other player (P - 1): how bad its next discard would be (0, 0.12: a 2 to
        save, 1: a critical card);
      - per hint move, in HLE's move order (colors to the next players, then ranks;
        zeros where the hint touches no card), HINT_PARTS terms of the bot's hint score:
        untruthful under the conventions, cards newly known playable (not queued), their
        rank bonus ((R - 1 - rank) / R summed), cards newly known playable already queued,
        cards newly known worthless, information on a playable card (a weak-bot term:
        always 0 under the strong switches; kept so the layout follows eval_hint's
        terms), newly touched critical cards, newly touched worthless cards, knowledge narrowed
        (card types ruled out / types), the receiver's discard danger afterwards.
    Everything is a function of the public history and the cards seats[i] sees."""
    _check_batch(batch, "batch")
    cdef GameConfig* cfg = &batch._proto.cfg
    cdef Py_ssize_t n = batch.num_games, i
    cdef int size = convention_feature_size(batch.config)
    cdef const int64_t[::1] seat = _checked_seats(seats, n, cfg.players, "game")
    _check_out_shape(out, n, size)
    cdef BotTables tb
    cdef BotMemory mem
    cdef MemoCache* cache = memo_new(BOT_STRONG, cfg)
    try:
        batch._enter_read()     # RuntimeError if another thread is changing the batch
    except BaseException:
        free(cache)
        raise
    with nogil:
        bot_tables_init(cfg, &tb)
        for i in range(n):
            memo_memory(cfg, &tb, cache, &batch.games[i], &mem)
            memset(&out[i, 0], 0, size * sizeof(float))
            seat_features(cfg, &tb, &batch.games[i], &mem, <int>seat[i], &out[i, 0])
    batch._busy -= 1
    free(cache)
    return out


cdef class ConventionReader:
    """`convention_features` of one batch's games, followed move by move: each game's
    memory (the fold over its public history) is kept between calls, and a call folds
    only the moves made since the last one. A rollout that reads its worlds at every step
    so folds each move once, instead of replaying every world's history at every step.

    Every call checks each game's history against the moves its memory folded (exactly,
    record by record) and refolds a game whose history changed in any other way (reset,
    replaced, rewound), so the features always equal `convention_features`' own. Use it
    from one thread at a time (RuntimeError otherwise), with batches of the configuration
    and size it was made for."""

    cdef BotMemory* mem             # per game: the memory of its first folded[i] records
    cdef MoveRecord* ref            # per game: those records (MAX_HISTORY each)
    cdef int* folded                # per game: records folded, -1 before the first call
    cdef MemoCache* cache           # shared prefixes of games read for the first time
    cdef BotTables tb
    cdef BotParams _params          # the strong switches the memories were folded with
    cdef object _config
    cdef readonly Py_ssize_t num_games
    cdef int _busy

    def __cinit__(self, HanabiBatch batch not None):
        _check_batch(batch, "batch")
        cdef Py_ssize_t n = batch.num_games
        self.mem = <BotMemory*>calloc(max(n, 1), sizeof(BotMemory))
        self.ref = <MoveRecord*>calloc(max(n, 1) * MAX_HISTORY, sizeof(MoveRecord))
        self.folded = <int*>calloc(max(n, 1), sizeof(int))
        if self.mem == NULL or self.ref == NULL or self.folded == NULL:
            raise MemoryError(f"cannot allocate the convention memories of {n} games")
        self.cache = memo_new(BOT_STRONG, &batch._proto.cfg)
        memset(self.folded, 0xFF, max(n, 1) * sizeof(int))     # every game unread (-1)
        bot_tables_init(&batch._proto.cfg, &self.tb)
        self._params = PARAMS[BOT_STRONG]
        self._config = batch.config
        self.num_games = n

    def __dealloc__(self):
        free(self.mem)
        free(self.ref)
        free(self.folded)
        free(self.cache)

    def __reduce__(self):
        raise TypeError("a ConventionReader holds per-game memories of one batch and cannot "
                        "be pickled; make a new one where the batch is")

    def features(self, HanabiBatch batch not None, seats, out, rows=None):
        """As `convention_features(batch, seats, out)` for the games `rows` (integer (K,),
        default every game): out (K, convention_feature_size(config)) row j is game
        rows[j] seen by seats[j]. Returns out."""
        _check_batch(batch, "batch")
        if batch.num_games != self.num_games or batch.config != self._config:
            raise ValueError(f"this reader follows batches of {self.num_games} games of "
                             f"{self._config}; got {batch.num_games} games of {batch.config}")
        cdef GameConfig* cfg = &batch._proto.cfg
        cdef Py_ssize_t n = batch.num_games, k, j, i
        cdef int size = convention_feature_size(self._config), start, end, r
        if rows is None:
            pick = np.arange(n, dtype=np.int64)
        else:
            pick = np.asarray(rows)
            if pick.ndim != 1 or (pick.size and pick.dtype.kind not in "iu"):
                raise TypeError(f"rows must be a 1-D integer array, got {pick.dtype} of "
                                f"shape {pick.shape}")
        cdef const int64_t[::1] row = np.ascontiguousarray(pick, dtype=np.int64)
        cdef float[:, ::1] o = out     # float32, C-contiguous, writeable (ValueError if not)
        k = row.shape[0]
        for j in range(k):
            if not 0 <= row[j] < n:
                raise IndexError(f"rows[{j}] = {row[j]} is not a game of a batch of {n}")
        cdef const int64_t[::1] seat = _checked_seats(seats, k, cfg.players, "row")
        _check_out_shape(o, k, size)
        if self._busy:
            raise RuntimeError("this ConventionReader is in use by another thread")
        if memcmp(&self._params, &PARAMS[BOT_STRONG], sizeof(BotParams)) != 0:
            # the bot's switches changed: every memory was folded under the old ones
            self._params = PARAMS[BOT_STRONG]
            memset(self.folded, 0xFF, max(n, 1) * sizeof(int))
            memo_init(BOT_STRONG, cfg, self.cache)
        batch._enter_read()         # RuntimeError if another thread is changing the batch
        self._busy = 1
        cdef GameState* g
        cdef BotMemory* m
        cdef MoveRecord* seen
        with nogil:
            for j in range(k):
                i = row[j]
                g = &batch.games[i]
                m = &self.mem[i]
                seen = &self.ref[i * MAX_HISTORY]
                start, end = self.folded[i], g.num_history
                if 0 <= start <= end and \
                        memcmp(seen, g.history, start * sizeof(MoveRecord)) == 0:
                    for r in range(start, end):
                        bot_memory_step(BOT_STRONG, cfg, &self.tb, m, &g.history[r])
                else:               # first read, or the game changed: from the shared cache
                    memo_memory(cfg, &self.tb, self.cache, g, m)
                    start = 0
                memcpy(seen + start, g.history + start, (end - start) * sizeof(MoveRecord))
                self.folded[i] = end
                memset(&o[j, 0], 0, size * sizeof(float))
                seat_features(cfg, &self.tb, g, m, <int>seat[j], &o[j, 0])
        batch._busy -= 1
        self._busy = 0
        return out
