# Included by _bots.pyx (one extension, so every call can be inlined): the Python API.

# --- Python API ---------------------------------------------------------------------------

# The int checks call the engine's `int_arg` (lbs_pz.checks.is_int answered in C for a
# plain int or a NumPy integer, see lbs_pz/engine/state.pyx): once per call, never per game.

def bot_kind(bot):
    """The kind index of a bot given by name (see BOT_NAMES) or index."""
    if isinstance(bot, str):
        name = bot.lower()
        if name in BOT_NAMES:
            return BOT_NAMES.index(name)
        raise ValueError(f"unknown bot {bot!r}; choose one of {', '.join(BOT_NAMES)}")
    if int_arg(bot) and 0 <= bot < NUM_BOTS:
        return int(bot)
    raise ValueError(f"bot must be a name in {BOT_NAMES} or an index in [0, {NUM_BOTS}), got {bot!r}")


cdef int _check_state(HanabiState state, str what) except -1:
    """Refuse a HanabiState made without __init__ (no config: its C structs are empty)."""
    if state.config is None:
        raise ValueError(f"{what} is an uninitialised HanabiState (made with __new__ and no "
                         f"__init__); create it with HanabiState(config, seed=...)")
    return 0


cdef int _check_batch(HanabiBatch batch, str what) except -1:
    """Refuse a HanabiBatch made without __init__ (no games allocated)."""
    if batch._proto is None or batch.games == NULL or batch._proto.config is None:
        raise ValueError(f"{what} is an uninitialised HanabiBatch (made with __new__ and no "
                         f"__init__); create it with HanabiBatch(config, num_games, ...)")
    return 0


def act(bot, HanabiState state not None, seat=None):
    """The move id bot `bot` makes as `seat` (default: the player to move) in `state`,
    or -1 if the game is over. Raises ValueError if it is not `seat`'s turn or `seat` is
    not a seat of the game, TypeError if `state` is not a HanabiState."""
    cdef int kind = bot_kind(bot)
    _check_state(state, "state")
    cdef int who = state.s.cur_player
    if seat is not None:
        if not int_arg(seat):
            raise TypeError(f"seat must be an int or None, got {type(seat).__name__} {seat!r}")
        if not 0 <= seat < state.cfg.players:
            raise ValueError(f"seat {seat} out of range [0, {state.cfg.players})")
        who = int(seat)
    if who != state.s.cur_player and not state_terminal(&state.cfg, &state.s):
        raise ValueError(f"it is seat {state.s.cur_player}'s turn, not seat {who}'s")
    return bot_act(kind, &state.cfg, &state.s, who)


cdef GameState** _state_pointers(list states, GameConfig* cfg_out) except NULL:
    """Pointers to the C game of every state (the caller frees the array). Every element
    must be an initialised HanabiState of one config: TypeError / ValueError otherwise,
    and then nothing is left allocated."""
    cdef Py_ssize_t n = len(states), i
    cdef HanabiState st
    if n == 0:
        raise ValueError("states: need at least one state")
    for i in range(n):
        if not isinstance(states[i], HanabiState):
            raise TypeError(f"states[{i}] must be a HanabiState, got "
                            f"{type(states[i]).__name__}")
    config = (<HanabiState>states[0]).config
    for i in range(n):
        st = <HanabiState>states[i]
        if st.config is None:
            _check_state(st, f"states[{i}]")
        if st.config != config:
            raise ValueError(f"all states must share one config: states[{i}] has "
                             f"{st.config}, states[0] {config}")
    cdef GameState** ptrs = <GameState**>calloc(n, sizeof(GameState*))
    if ptrs == NULL:
        raise MemoryError(f"cannot allocate {n} state pointers")
    for i in range(n):
        ptrs[i] = &(<HanabiState>states[i]).s
    cfg_out[0] = (<HanabiState>states[0]).cfg
    return ptrs


def act_states(bot, states):
    """Moves of the player to move in each state (a sequence of HanabiState of one
    config): int64 array (N,), -1 where the game is over. The states are not changed."""
    cdef int kind = bot_kind(bot)
    states = list(states)
    cdef GameConfig cfg
    cdef int n = len(states), i
    cdef cnp.ndarray[int64_t, ndim=1] out = np.empty(n, dtype=np.int64)
    cdef int64_t* o = <int64_t*>cnp.PyArray_DATA(out)
    cdef GameState** ptrs = _state_pointers(states, &cfg)
    cdef int entered = 0
    try:
        for i in range(n):      # held for reading: changes from other threads are refused
            (<HanabiState>states[i])._enter_read()
            entered += 1
        with nogil:
            for i in range(n):
                o[i] = bot_act(kind, &cfg, ptrs[i], ptrs[i].cur_player)
    finally:
        for i in range(entered):
            (<HanabiState>states[i])._busy -= 1
        free(ptrs)
    return out


def play_states(bot, states, int max_moves=-1):
    """Self-play every state (a sequence of HanabiState of one config) in place with `bot`
    in every seat: max_moves moves, or to the end if negative. Returns the moves made per
    state, int32 (N,). Runs with the GIL held (a HanabiState changes atomically); play a
    HanabiBatch with play_batch to run without it."""
    cdef int kind = bot_kind(bot)
    states = list(states)
    cdef GameConfig cfg
    cdef int n = len(states), i, bad = -1
    cdef cnp.ndarray[int32_t, ndim=1] out = np.empty(n, dtype=np.int32)
    cdef int32_t* o = <int32_t*>cnp.PyArray_DATA(out)
    cdef GameState** ptrs = _state_pointers(states, &cfg)
    try:
        for i in range(n):      # RuntimeError if another thread is copying one of them
            (<HanabiState>states[i])._check_free()
        # The GIL stays held: as every change of a HanabiState, the games change atomically
        # for other threads (the engine's threading contract).
        for i in range(n):
            o[i] = bot_play(kind, &cfg, ptrs[i], max_moves)
            if o[i] < 0 and bad < 0:
                bad = i
    finally:
        free(ptrs)
    if bad >= 0:
        raise RuntimeError(f"bot {BOT_NAMES[kind]} chose an illegal move in state {bad}")
    return out


def act_batch(bot, HanabiBatch batch not None):
    """Moves of each game's player to move in a HanabiBatch: int64 (N,), -1 if over.

    Games whose public histories share a prefix (the worlds of one search) share the
    bot's memory of it: it is folded once, not once per game (same moves)."""
    cdef int kind = bot_kind(bot)
    _check_batch(batch, "batch")
    cdef int n = batch.num_games, i
    cdef GameConfig* cfg = &batch._proto.cfg
    cdef cnp.ndarray[int64_t, ndim=1] out = np.empty(n, dtype=np.int64)
    cdef int64_t* o = <int64_t*>cnp.PyArray_DATA(out)
    cdef BotTables tb
    cdef BotMemory mem
    cdef GameState* g
    cdef MemoCache* cache = memo_new(kind, cfg)
    try:
        batch._enter_read()     # RuntimeError if another thread is changing the batch
    except BaseException:
        free(cache)
        raise
    with nogil:
        bot_tables_init(cfg, &tb)
        for i in range(n):
            g = &batch.games[i]
            if folds_history(kind) and not state_terminal(cfg, g):
                memo_memory(cfg, &tb, cache, g, &mem)
            o[i] = bot_act_mem(kind, cfg, &tb, g, &mem, g.cur_player)
    batch._busy -= 1
    free(cache)
    return out


def play_batch(bot, HanabiBatch batch not None, int max_moves=-1):
    """Self-play every game of a HanabiBatch in place (see play_states); returns the moves
    made per game, int32 (N,). The bot's memory of a history prefix that games share is
    folded once (see act_batch)."""
    cdef int kind = bot_kind(bot)
    _check_batch(batch, "batch")
    cdef int n = batch.num_games, i, bad = -1
    cdef GameConfig* cfg = &batch._proto.cfg
    cdef cnp.ndarray[int32_t, ndim=1] out = np.empty(n, dtype=np.int32)
    cdef int32_t* o = <int32_t*>cnp.PyArray_DATA(out)
    cdef BotTables tb
    cdef BotMemory mem
    cdef GameState* g
    cdef MemoCache* cache = memo_new(kind, cfg)
    try:
        batch._enter_write()    # RuntimeError if another thread is using the batch
    except BaseException:
        free(cache)
        raise
    with nogil:
        bot_tables_init(cfg, &tb)
        for i in range(n):
            g = &batch.games[i]
            if folds_history(kind) and max_moves != 0 and not state_terminal(cfg, g):
                memo_memory(cfg, &tb, cache, g, &mem)
            o[i] = bot_play_mem(kind, cfg, &tb, g, &mem, max_moves)
            if o[i] < 0 and bad < 0:
                bad = i
    batch._busy = 0
    free(cache)
    if bad >= 0:
        raise RuntimeError(f"bot {BOT_NAMES[kind]} chose an illegal move in game {bad}")
    return out


def memory(bot, HanabiState state not None):
    """The bot's public-history memory of `state` (for inspection and tests): per seat a
    list of (plausible color mask, plausible rank mask, promised types mask, group,
    touched)."""
    cdef int kind = bot_kind(bot)
    _check_state(state, "state")
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


def _hint_scores(bot, HanabiState state not None):
    """(move, score, danger) of every hint the player to move could give, as a
    convention bot scores it (score None: rejected as untruthful). For debugging."""
    cdef int kind = bot_kind(bot)
    _check_state(state, "state")
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
                               NULL, NULL, NULL)
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
    _check_state(before, "before")
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
    if folds_history(kind):
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
