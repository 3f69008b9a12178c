"""Hardening of the engine's Cython entry points (issue 12): every misuse that once crashed the
interpreter or wrote into memory it must not touch now ends in a Python exception.

Each misuse runs in a child process (tests/helpers/isolated.py), several independent cases
per child: the child prints one line per case (`name: ExceptionClass`) and the test asserts on
them, so a crash in any case fails the test instead of the run.
"""
import pickle
import random
import textwrap

import numpy as np
import pytest

from tests.helpers.isolated import assert_raises_cleanly, assert_runs_cleanly
from tests.helpers.waiting import HANG_SECONDS
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState

PRELUDE = """
import numpy as np, pickle, random, threading, time, os, tempfile
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState
cfg = HanabiConfig()
def attempt(name, call):
    try:
        call()
    except Exception as err:
        print(f"{name}: {type(err).__name__}: {err}", flush=True)
    else:
        print(f"{name}: no error", flush=True)
"""


def _outcomes(stdout):
    """{case name: exception class name (or 'no error')} from the child's lines."""
    out = {}
    for line in stdout.splitlines():
        if ": " in line and not line.startswith("__"):
            name, rest = line.split(": ", 1)
            out[name] = rest.split(":")[0]
    return out


def _code(snippet):
    return PRELUDE + textwrap.dedent(snippet)


def _run(snippet):
    return _outcomes(assert_runs_cleanly(_code(snippet)))


# --- 1. out= arrays ---------------------------------------------------------------------------

def test_out_arrays_that_are_read_only_or_malformed_are_refused():
    got = _run("""
    N = 4
    b = HanabiBatch(cfg, N, seeds=3)
    specs = {"legal_masks": ((N, cfg.num_moves), np.int8),
             "encode": ((N, cfg.encoding_size), np.float32),
             "terminals": ((N,), np.bool_), "scores": ((N,), np.int32),
             "current_players": ((N,), np.int32), "hands": ((N, cfg.hand_size), np.int8)}
    folder = tempfile.mkdtemp()
    for method, (shape, dtype) in specs.items():
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        raw = bytes(size)
        frozen = np.frombuffer(raw, dtype).reshape(shape)            # view of an immutable bytes
        path = os.path.join(folder, method + ".bin")
        open(path, "wb").write(bytes(size))
        mapped = np.memmap(path, dtype=dtype, mode="r", shape=shape)  # read-only memmap
        wide = (np.zeros(shape[:-1] + (2 * shape[-1],), dtype) if len(shape) > 1
                else np.zeros(2 * shape[0], dtype))
        strided = wide[..., ::2]
        unaligned = np.frombuffer(bytearray(size + 1), np.uint8)[1:].view(dtype).reshape(shape)
        swapped = (np.zeros(shape, np.dtype(dtype).newbyteorder())
                   if np.dtype(dtype).itemsize > 1 else None)
        cases = {"bytes": frozen, "memmap": mapped, "strided": strided,
                 "list": np.zeros(shape, dtype).tolist(),
                 "shape": np.zeros((N + 1,) + shape[1:], dtype),
                 "dtype": np.zeros(shape, np.float64)}
        if np.dtype(dtype).itemsize > 1:
            cases["unaligned"] = unaligned
            cases["swapped"] = swapped
        for case, out in cases.items():
            attempt(f"{method}-{case}", lambda: getattr(b, method)(out=out))
        assert raw == bytes(size), f"{method} wrote into an immutable bytes object"
        assert not np.asarray(mapped).any(), f"{method} wrote into a read-only memmap"
    frozen_rewards = np.frombuffer(bytes(4 * N), np.float32)
    attempt("step-rewards-bytes",
            lambda: b.step(b.legal_masks().argmax(axis=1), rewards=frozen_rewards))
    assert not frozen_rewards.any()
    """)
    assert len(got) >= 6 * 6 + 1
    wrong = {name: exc for name, exc in got.items() if exc != "ValueError"}
    assert not wrong, wrong


def test_out_check_message_names_the_argument_and_the_problem():
    msg = assert_raises_cleanly(_code("""
    out = np.frombuffer(bytes(80), np.int8).reshape(4, 20)
    HanabiBatch(cfg, 4).legal_masks(out=out)
    """), "ValueError", "read-only")
    assert "out must be a writeable C-contiguous int8 array of shape (4, 20)" in msg


def test_valid_out_arrays_are_filled_in_place():
    b = HanabiBatch(HanabiConfig(), 5, seeds=2)
    for method, shape, dtype in [("legal_masks", (5, 20), np.int8),
                                 ("encode", (5, 658), np.float32),
                                 ("terminals", (5,), np.bool_), ("scores", (5,), np.int32),
                                 ("current_players", (5,), np.int32), ("hands", (5, 5), np.int8)]:
        out = np.full(shape, 7, dtype)
        got = getattr(b, method)(out=out)
        assert got is out and np.array_equal(out, getattr(b, method)())


# --- 2. None and wrong types where a state, batch or config is typed -----------------------------

def test_none_and_wrong_types_raise_type_error():
    got = _run("""
    b = HanabiBatch(cfg, 2)
    s = HanabiState(cfg, seed=1)
    attempt("set_state-none", lambda: b.set_state(0, None))
    attempt("set_state-str", lambda: b.set_state(0, "state"))
    attempt("set_state-batch", lambda: b.set_state(0, b))
    attempt("from_state-none", lambda: HanabiBatch.from_state(None, 2))
    attempt("from_states-none", lambda: HanabiBatch.from_states([s, None]))
    attempt("from_states-int", lambda: HanabiBatch.from_states([3]))
    attempt("blank-none", lambda: HanabiBatch._blank(None, 2))
    attempt("state-dict-config", lambda: HanabiState({"players": 2}))
    attempt("batch-dict-config", lambda: HanabiBatch({"players": 2}, 2))
    attempt("state-batch-config", lambda: HanabiState(b))
    """)
    assert got and all(exc == "TypeError" for exc in got.values()), got


# --- 3. pickles -------------------------------------------------------------------------------

def test_corrupted_state_pickles_raise_value_error():
    got = _run("""
    from lbs_pz.engine.state import _state_from_bytes, _state_from_record
    rng = random.Random(0)
    s = HanabiState(cfg, seed=5)
    for _ in range(12):
        s.apply(s.legal_moves()[-1])
    version, config, deck, start, moves, seed = s.__reduce__()[1]
    # Format 1 (the raw struct): random blobs of the old struct size, and an honest one.
    for i in range(50):
        attempt(f"raw-random-{i}",
                lambda: _state_from_bytes(cfg, bytes(rng.getrandbits(8) for _ in range(1928))))
    attempt("raw-empty", lambda: _state_from_bytes(cfg, b""))
    bad = {
        "version-old": (1, config, deck, start, moves, seed),
        "version-str": ("2", config, deck, start, moves, seed),
        "config-dict": (version, {"players": 2}, deck, start, moves, seed),
        "deck-short": (version, config, deck[:-1], start, moves, seed),
        "deck-card-127": (version, config, bytes([127]) + deck[1:], start, moves, seed),
        "deck-counts": (version, config, bytes([(deck[0] + 1) % 25]) + deck[1:], start, moves,
                        seed),
        "deck-list": (version, config, list(deck), start, moves, seed),
        "start-5": (version, config, deck, 5, moves, seed),
        "start-negative": (version, config, deck, -1, moves, seed),
        "start-bool": (version, config, deck, True, moves, seed),
        "moves-illegal": (version, config, deck, start, moves + bytes([200]), seed),
        "moves-too-many": (version, config, deck, start, bytes(300), seed),
        "moves-str": (version, config, deck, start, "abc", seed),
        "rng-negative": (version, config, deck, start, moves, -1),
        "rng-2-64": (version, config, deck, start, moves, 2**64),
    }
    for name, args in bad.items():
        attempt(name, lambda: _state_from_record(*args))
    # Random corruptions of the payload: either a clean ValueError or a state that works.
    for i in range(300):
        d, m = bytearray(deck), bytearray(moves)
        for _ in range(rng.randint(1, 4)):
            target = d if rng.random() < 0.5 or not m else m
            target[rng.randrange(len(target))] = rng.getrandbits(8)
        try:
            t = _state_from_record(version, config, bytes(d), start, bytes(m), seed)
        except ValueError:
            continue
        t.encode(0); t.legal_moves(); HanabiBatch.from_states([t]).play_random()
    """)
    raw = {k: v for k, v in got.items() if k.startswith("raw-")}
    assert len(raw) == 51 and set(raw.values()) == {"ValueError"}, raw
    rest = {k: v for k, v in got.items() if not k.startswith("raw-")}
    assert len(rest) == 15 and set(rest.values()) == {"ValueError"}, rest


def test_pickle_of_an_old_format_explains_itself():
    assert_raises_cleanly(_code("""
    from lbs_pz.engine.state import _state_from_bytes
    _state_from_bytes(cfg, bytes(1928))
    """), "ValueError", "format 1")


def test_config_pickles_are_validated():
    got = _run("""
    import copyreg
    reduce = cfg.__reduce_ex__(2)
    state = dict(reduce[2])
    def load(**change):
        obj = copyreg._reconstructor(HanabiConfig, object, None)
        obj.__setstate__(dict(state, **change))
        return obj
    attempt("players-50", lambda: HanabiState(load(players=50)))
    attempt("hand-size-127", lambda: load(hand_size=127))
    attempt("colors-0", lambda: load(colors=0))
    attempt("obs-7", lambda: load(observation_type=7))
    attempt("unknown-field", lambda: load(extra=1))
    attempt("not-a-dict",
            lambda: copyreg._reconstructor(HanabiConfig, object, None).__setstate__([1]))
    # An unvalidated config object (made without __init__, or altered after it) is re-checked
    # by the engine before it sizes anything with it.
    empty = copyreg._reconstructor(HanabiConfig, object, None)
    attempt("empty-config-state", lambda: HanabiState(empty))
    altered = HanabiConfig()
    object.__setattr__(altered, "players", 50)
    attempt("altered-state", lambda: HanabiState(altered))
    attempt("altered-batch", lambda: HanabiBatch(altered, 2))
    object.__setattr__(altered, "players", 2)
    object.__setattr__(altered, "hand_size", 30)
    attempt("altered-hand-size", lambda: HanabiState(altered))
    """)
    assert got.pop("empty-config-state") in ("AttributeError", "ValueError")
    assert len(got) == 9 and set(got.values()) == {"ValueError"}, got


def _random_game(config, seed, rng):
    """A game changed every way the API allows: moves, set_hand, shuffle_deck."""
    s = HanabiState(config, seed=seed)
    while not s.is_terminal:
        r = rng.random()
        if r < 0.1:
            seat = rng.randrange(config.players)
            s.set_hand(seat, s.hand(seat), seed=rng.randrange(2**64))
        elif r < 0.15:
            s.shuffle_deck()
        s.apply(rng.choice(s.legal_moves()))
        if rng.random() < 0.08:
            break
    return s


def _everything(s):
    P = s.config.players
    return (s.deck, s.hands, s.move_records(), [s.knowledge_key(p) for p in range(P)],
            [s.encode(p).tobytes() for p in range(P)], s.legal_moves(), s.fireworks,
            s.information_tokens, s.life_tokens, s.discard_pile, s.deck_size, s.turns_to_play,
            s.current_player, s.start_player, [s.hand_deck_indices(p) for p in range(P)])


@pytest.mark.parametrize("config", [
    HanabiConfig(), HanabiConfig(players=4, random_start_player=True),
    HanabiConfig(players=3, observation_type="seer"), HanabiConfig(players=5, hand_size=8),
    HanabiConfig(colors=2, ranks=3, hand_size=2, observation_type="minimal"),
])
def test_pickle_replays_to_the_same_game(config):
    """The pickle stores (config, deck, start player, moves, RNG) and replays them: the loaded
    state equals the original in everything observable, RNG included, after any mix of moves,
    set_hand and shuffle_deck."""
    rng = random.Random(config.players)
    for game in range(25):
        s = _random_game(config, game, rng)
        t = pickle.loads(pickle.dumps(s))
        assert _everything(t) == _everything(s)
        a, b = s.clone(), t.clone()
        a.shuffle_deck()
        b.shuffle_deck()
        assert a.deck == b.deck                            # same RNG state
        assert len(pickle.dumps(s)) < 600


def test_config_pickle_round_trip_and_old_layout():
    for config in (HanabiConfig(), HanabiConfig(players=5, hand_size=3, observation_type=0)):
        again = pickle.loads(pickle.dumps(config))
        assert again == config and again.num_moves == config.num_moves
        assert hash(again) == hash(config)
    # Pickles written before the fields-only state carried the derived sizes too.
    old = HanabiConfig.__new__(HanabiConfig)
    old.__setstate__(dict(HanabiConfig(players=3).__dict__))
    assert (old == HanabiConfig(players=3)
            and old.encoding_size == HanabiConfig(players=3).encoding_size)


# --- 4. objects made with __new__, and __init__ called twice --------------------------------------

def test_uninitialised_objects_raise_runtime_error_everywhere():
    got = _run("""
    s = HanabiState.__new__(HanabiState)
    b = HanabiBatch.__new__(HanabiBatch)
    good = HanabiState(cfg, seed=0)
    args = {"hand": (0,), "hand_deck_indices": (0,), "view_records": (0,), "knowledge_key": (0,),
            "card_knowledge": (0,), "is_legal": (0,), "encode": (), "apply": (0,),
            "set_hand": (0, [0, 1, 2, 3, 4]), "shuffle_deck": (), "view": (), "render": (),
            "reset": (0,), "reset_game": (0, 0), "step": ([0],), "set_state": (0, good),
            "take": ([0],), "hands": (), "set_hands": (0, np.zeros((1, 5), int)),
            "get_state": (0,), "play_random": (), "legal_masks": (), "encode_sparse": ()}
    skip = {"config", "num_games", "from_state", "from_states", "_blank"}
    for obj, cls in ((s, HanabiState), (b, HanabiBatch)):
        for name in sorted(n for n in dir(cls) if not n.startswith("__") and n not in skip):
            def call(name=name, obj=obj):
                attr = getattr(obj, name)
                if callable(attr):
                    attr(*args.get(name, ()))
            attempt(f"{cls.__name__}.{name}", call)
    attempt("HanabiState.clone-copy", lambda: __import__("copy").copy(s))
    attempt("HanabiState.pickle", lambda: pickle.dumps(s))
    attempt("HanabiBatch.config", lambda: b.config)
    attempt("from_state-uninit", lambda: HanabiBatch.from_state(s, 2))
    attempt("set_state-uninit", lambda: HanabiBatch(cfg, 1).set_state(0, s))
    assert repr(s) == "<HanabiState (not initialised)>" and len(b) == 0
    """)
    assert len(got) > 40
    wrong = {name: exc for name, exc in got.items() if exc != "RuntimeError"}
    assert not wrong, wrong


def test_init_twice_is_refused_and_leaves_the_object_intact():
    got = _run("""
    b = HanabiBatch(cfg, 4, seeds=1)
    before = b.encode().copy()
    attempt("batch-reinit", lambda: b.__init__(HanabiConfig(players=5), 4))
    attempt("batch-reinit-same", lambda: b.__init__(cfg, 4))
    assert b.config == cfg and np.array_equal(b.encode(), before)
    b.play_random()
    s = HanabiState(cfg, seed=1)
    attempt("state-reinit", lambda: s.__init__(HanabiConfig(players=5), seed=1))
    assert s.config == cfg and len(s.hands) == 2 and s.encode(0).shape == (658,)
    # A failed first __init__ leaves the object uninitialised, not half-built.
    t = HanabiState.__new__(HanabiState)
    attempt("state-bad-deck", lambda: t.__init__(cfg, deck=[0] * 50))
    attempt("state-after-bad-init", lambda: t.legal_moves())
    attempt("state-init-after-failure", lambda: t.__init__(cfg, seed=3))
    assert t.legal_moves() == HanabiState(cfg, seed=3).legal_moves()
    c = HanabiBatch.__new__(HanabiBatch)
    attempt("batch-bad-seeds", lambda: c.__init__(cfg, 3, seeds=[1, 2]))
    attempt("batch-after-bad-init", lambda: c.encode())
    """)
    assert got == {"batch-reinit": "RuntimeError", "batch-reinit-same": "RuntimeError",
                   "state-reinit": "RuntimeError", "state-bad-deck": "ValueError",
                   "state-after-bad-init": "RuntimeError", "state-init-after-failure": "no error",
                   "batch-bad-seeds": "ValueError", "batch-after-bad-init": "RuntimeError"}


# --- 5. threads -------------------------------------------------------------------------------

# Two threads race for at least 1.5 s and on until the engine's guard has caught them once
# (however loaded the machine), giving up after RACE_SECONDS.
RACE_SECONDS = HANG_SECONDS // 2


def test_two_threads_on_one_batch_get_runtime_errors_not_a_crash():
    out = assert_runs_cleanly(_code(f"""
    b = HanabiBatch(cfg, 2048)
    errors, others = [], []
    start = time.time()
    def racing():
        elapsed = time.time() - start
        return elapsed < 1.5 or (not errors and elapsed < {RACE_SECONDS})
    def work(k):
        while racing():
            try:
                b.reset(k); b.play_random(); b.encode(); b.legal_masks()
                b.step(np.where(b.terminals(), -1, b.legal_masks().argmax(axis=1)))
                b.take(np.arange(16)); b.hands(0)
            except RuntimeError as err:
                errors.append(str(err))
            except ValueError as err:       # an action computed before the other thread reset
                others.append(str(err))
    ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    [t.start() for t in ts]; [t.join() for t in ts]
    assert errors, "no conflict detected in {RACE_SECONDS} s of two threads"
    assert all("in use by another thread" in e for e in errors), set(errors)
    # The guard is released after every conflict: the batch works single-threaded again.
    b.reset(0); b.play_random(); assert b.terminals().all()
    print("conflicts", len(errors))
    """))
    assert "conflicts" in out


def test_two_threads_on_one_state_get_runtime_errors_not_a_crash():
    out = assert_runs_cleanly(_code(f"""
    s = HanabiState(cfg, seed=0)
    start = time.time()
    errors = []
    def racing():
        elapsed = time.time() - start
        return elapsed < 1.5 or (not errors and elapsed < {RACE_SECONDS})
    def copier():
        while racing():
            HanabiBatch.from_state(s, 20000)          # copies without the GIL
    def mover():
        rng = random.Random(0)
        while racing():
            try:
                m = s.legal_moves()
                if m:
                    s.apply(m[rng.randrange(len(m))])
                else:
                    s.shuffle_deck(1)
                seat = s.current_player
                if s.hand(seat):
                    s.set_hand(seat, s.hand(seat), seed=1)
            except RuntimeError as err:
                errors.append(str(err))
    ts = [threading.Thread(target=copier), threading.Thread(target=mover)]
    [t.start() for t in ts]; [t.join() for t in ts]
    assert errors and all("in use by another thread" in e for e in errors), set(errors)
    print("conflicts", len(errors))
    """))
    assert "conflicts" in out


def test_different_batches_in_different_threads_run_and_match_one_thread():
    out = assert_runs_cleanly(_code("""
    def run(k, results):
        b = HanabiBatch(cfg, 500, seeds=k)
        b.play_random()
        results[k] = b.scores().tolist()
    threaded, serial = {}, {}
    ts = [threading.Thread(target=run, args=(k, threaded)) for k in range(4)]
    [t.start() for t in ts]; [t.join() for t in ts]
    for k in range(4):
        run(k, serial)
    assert threaded == serial
    # Concurrent reads of one batch are allowed.
    b = HanabiBatch(cfg, 3000, seeds=1)
    errs = []
    def reader():
        for _ in range(20):
            try:
                b.encode(); b.legal_masks()
            except RuntimeError as err:
                errs.append(err)
    ts = [threading.Thread(target=reader) for _ in range(2)]
    [t.start() for t in ts]; [t.join() for t in ts]
    assert not errs, errs
    """))
    assert out


def test_guard_is_released_after_errors():
    b = HanabiBatch(HanabiConfig(), 3, seeds=1)
    with pytest.raises(ValueError):
        b.step([99, 99, 99])                               # error path reads game 0
    with pytest.raises(ValueError):
        b.set_hands(0, np.zeros((3, 2), int))              # wrong hand length
    with pytest.raises(ValueError):
        b.encode(players=[5, 0, 0])
    b.step(b.legal_masks().argmax(axis=1))
    b.reset(2)
    assert b.play_random() > 0
    s = HanabiState(HanabiConfig(), seed=1)
    with pytest.raises(ValueError):
        s.set_hand(0, [0, 0, 0, 0, 0])
    HanabiBatch.from_state(s, 2)
    s.apply(s.legal_moves()[0])


# --- 6. sizes and seeds -------------------------------------------------------------------------

def test_bad_sizes_raise():
    got = _run("""
    for value in (1.5, True, "3", None, 2.0, np.float64(2)):
        attempt(f"num_games-{value!r}-type", lambda: HanabiBatch(cfg, num_games=value))
    for value in (0, -1, 2**31, 2**70):
        attempt(f"num_games-{value}-value", lambda: HanabiBatch(cfg, num_games=value))
    s = HanabiState(cfg, seed=0)
    for value in (1.5, True):
        attempt(f"from_state-{value!r}-type", lambda: HanabiBatch.from_state(s, value))
    for value in (0, -3):
        attempt(f"from_state-{value}-value", lambda: HanabiBatch.from_state(s, value))
    b = HanabiBatch(cfg, 2)
    attempt("play_random-1.5-type", lambda: b.play_random(1.5))
    attempt("get_state-1.5-type", lambda: b.get_state(1.5))
    attempt("get_state-True-type", lambda: b.get_state(True))
    attempt("reset_game-None-type", lambda: b.reset_game(None, 1))
    from lbs_pz.engine import game_seeds
    attempt("game_seeds-count-value", lambda: game_seeds(0, 0, -1))
    attempt("game_seeds-first-value", lambda: game_seeds(0, -1, 2))
    attempt("game_seeds-count-type", lambda: game_seeds(0, 0, 2.5))
    """)
    wrong = {k: v for k, v in got.items()
             if v != ("TypeError" if k.endswith("-type") else "ValueError")}
    assert len(got) == 21 and not wrong, wrong
    assert HanabiBatch(HanabiConfig(), num_games=np.int64(3)).num_games == 3


def test_out_of_range_seeds_raise_everywhere():
    got = _run("""
    from lbs_pz.engine import game_seeds
    from lbs_pz.engine.seeds import check_engine_seed, deal_seeds
    b = HanabiBatch(cfg, 2)
    s = HanabiState(cfg, seed=0)
    for value in (-1, 2**64, -2**70, 1.5, "1", True, np.float32(3)):
        attempt(f"state-{value!r}", lambda: HanabiState(cfg, seed=value))
        attempt(f"shuffle-{value!r}", lambda: s.shuffle_deck(seed=value))
        attempt(f"set_hand-{value!r}", lambda: s.set_hand(0, s.hand(0), seed=value))
        attempt(f"batch-{value!r}", lambda: HanabiBatch(cfg, 2, seeds=value))
        attempt(f"reset-{value!r}", lambda: b.reset(value))
        attempt(f"reset-list-{value!r}", lambda: b.reset([0, value]))
        attempt(f"reset_game-{value!r}", lambda: b.reset_game(0, value))
        attempt(f"game_seeds-{value!r}", lambda: game_seeds(value, 0, 2))
        attempt(f"check-{value!r}", lambda: check_engine_seed(value))
    attempt("reset-array", lambda: b.reset(np.array([0, -1])))
    attempt("set_hands-array", lambda: b.set_hands(0, b.hands(0), seeds=np.array([3, -5])))
    attempt("set_hands-float", lambda: b.set_hands(0, b.hands(0), seeds=np.array([3.0, 5.0])))
    attempt("deal_seeds", lambda: deal_seeds("eval", -1, 0, 2))
    """)
    assert len(got) == 7 * 9 + 4
    wrong = {k: v for k, v in got.items() if v != "ValueError"}
    assert not wrong, wrong


def test_seed_range_boundaries_are_accepted_and_distinct():
    top = 2**64 - 1
    assert (HanabiState(HanabiConfig(), seed=top).deck
            == HanabiState(HanabiConfig(), seed=np.uint64(top)).deck)
    assert HanabiState(HanabiConfig(), seed=0).deck != HanabiState(HanabiConfig(), seed=top).deck
    b = HanabiBatch(HanabiConfig(), 2, seeds=np.array([0, top], dtype=np.uint64))
    assert b.get_state(1).deck == HanabiState(HanabiConfig(), seed=top).deck
    b.reset(top)
    b.reset_game(0, top)
    assert b.get_state(0).deck == HanabiState(HanabiConfig(), seed=top).deck


# --- 7. the rest of the sweep ------------------------------------------------------------------

def test_other_entry_points_check_their_inputs():
    got = _run("""
    from lbs_pz.engine._core import derived_sizes
    attempt("derived_sizes-colors-100", lambda: derived_sizes(2, 100, 100, 5, 8, 3, 1))
    attempt("derived_sizes-hand-50", lambda: derived_sizes(2, 5, 5, 50, 8, 3, 1))
    attempt("derived_sizes-players-0", lambda: derived_sizes(0, 5, 5, 5, 8, 3, 1))
    b = HanabiBatch(cfg, 3, seeds=2)
    big = np.full(3, 2**64 - 1, np.uint64)
    attempt("step-uint64", lambda: b.step(big))
    attempt("encode-players-uint64", lambda: b.encode(players=big))
    attempt("encode_sparse-players-7", lambda: b.encode_sparse(players=[7, 0, 0]))
    attempt("encode_sparse-own_hand-str", lambda: b.encode_sparse(own_hand="no"))
    attempt("encode-own_hand-str", lambda: b.encode(own_hand="no"))
    attempt("encode-own_hand-out-658", lambda: b.encode(np.zeros((3, 658), np.float32),
                                                        own_hand=True))
    attempt("take-uint64", lambda: b.take(big))
    attempt("set_hands-card-127", lambda: b.set_hands(0, np.full((3, 5), 127)))
    attempt("set_hands-9-cards", lambda: b.set_hands(0, np.zeros((3, 9), int)))
    attempt("set_hands-seat-9", lambda: b.set_hands(9, b.hands(0)))
    attempt("hands-seat-2", lambda: b.hands(2))
    attempt("state-deck-str", lambda: HanabiState(cfg, deck="R1R2"))
    attempt("state-deck-int", lambda: HanabiState(cfg, deck=5))
    attempt("state-deck-card-99", lambda: HanabiState(cfg, deck=[99] * 50))
    attempt("state-start-7", lambda: HanabiState(cfg, seed=1, start_player=7))
    s = HanabiState(cfg, seed=1)
    attempt("set_hand-9-cards", lambda: s.set_hand(0, list(range(9))))
    attempt("set_hand-not-iterable", lambda: s.set_hand(0, 5))
    attempt("view_records-player-2", lambda: s.view_records(2))
    attempt("apply-2**64", lambda: s.apply(2**64))
    attempt("apply-uint64", lambda: s.apply(np.uint64(2**64 - 1)))
    """)
    exc = {k: v for k, v in got.items()}
    assert exc.pop("take-uint64") == "IndexError"
    assert exc.pop("hands-seat-2") == "ValueError"
    assert exc.pop("encode_sparse-own_hand-str") == "TypeError"
    assert exc.pop("encode-own_hand-str") == "TypeError"
    assert len(exc) == 19 and set(exc.values()) == {"ValueError"}, exc
