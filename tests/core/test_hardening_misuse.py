"""Misuses the other hardening tests do not reach: engine pickles tampered anywhere in
their reduce tuple (state and config, any game size, any point of the game), a rule bot
asked to move for a seat the game does not have, and a trainer sent to a Ray address where
nothing answers. What could crash the interpreter runs in a child process
(tests/helpers/isolated.py)."""

import os

import pytest

from tests.helpers.isolated import assert_runs_cleanly
from lbs_pz.agents.rule_bots import RuleBot
from lbs_pz.cli import main
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.optional import RAY_TIMEOUT_VARIABLE, ray_available

# Unpickle an object from a reduce tuple changed at random, as a corrupted or forged file
# would hold it: bytes overwritten, ints replaced by ones out of every range, bools flipped.
TAMPER = """
import copyreg, pickle, random
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState

class Forged:
    def __init__(self, reduce):
        self.reduce = reduce
    def __reduce__(self):
        return self.reduce

def forge(reduce):
    if reduce[0] is copyreg.__newobj__:
        reduce = (copyreg._reconstructor, (reduce[1][0], object, None)) + tuple(reduce[2:3])
    return pickle.loads(pickle.dumps(Forged(reduce)))

NASTY = [-1, -2**31, 2**31 - 1, 127, 128, 255, 2**63 - 1, 0, 50, 10**9]

def tamper(value, rng):
    if isinstance(value, (bytes, bytearray)) and value:
        data = bytearray(value)
        if rng.random() < 0.3:
            return bytes(rng.getrandbits(8) for _ in data)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.getrandbits(8)
        return bytes(data)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice(NASTY)
    if isinstance(value, (tuple, list)):
        return type(value)(tamper(v, rng) if rng.random() < 0.5 else v for v in value)
    if isinstance(value, dict):
        return {k: tamper(v, rng) if rng.random() < 0.5 else v for k, v in value.items()}
    return value

def play(state):
    '''Use a loaded state the way search does: any exception here fails the child.'''
    moves = state.legal_moves()
    state.encode(state.current_player)
    state.clone()
    if moves:
        state.apply(moves[-1])
    HanabiBatch.from_states([state]).legal_masks()

counts = {"refused": 0, "loaded": 0}

def load(reduce, use):
    try:
        obj = forge(reduce)
    except ValueError:
        counts["refused"] += 1
        return
    use(obj)
    counts["loaded"] += 1
"""


def test_a_tampered_engine_pickle_is_a_value_error_or_a_state_that_plays():
    """400 corruptions of one state's pickle, 200 of states of 2-5 players taken at any
    move, 300 of a config's: each load raises ValueError or gives an object that plays."""
    out = assert_runs_cleanly(TAMPER + """
rng = random.Random(0)
reduce = HanabiState(HanabiConfig(), seed=1).__reduce_ex__(2)
for _ in range(400):
    load(tamper(reduce, rng), play)
rng = random.Random(1)
for game in range(200):
    state = HanabiState(HanabiConfig(players=rng.randint(2, 5)), seed=game)
    for _ in range(rng.randint(0, 40)):
        if state.is_terminal:
            break
        state.apply(rng.choice(state.legal_moves()))
    load(tamper(state.__reduce_ex__(2), rng), play)
rng = random.Random(2)
for game in range(300):
    def use(config, game=game):
        play(HanabiState(config, seed=game))
        HanabiBatch(config, 3).play_random()
    load(tamper(HanabiConfig().__reduce_ex__(2), rng), use)
print("COUNTS", counts["refused"], counts["loaded"])
""")
    refused, loaded = map(int, out.split("COUNTS")[1].split()[:2])
    assert refused + loaded == 900 and refused > 100 and loaded > 100, (refused, loaded)


def test_a_rule_bot_refuses_a_seat_the_game_does_not_have():
    state = HanabiState(HanabiConfig(players=2), seed=1)
    for seat in (7, 2, -1):
        with pytest.raises(ValueError, match=rf"seat {seat} out of range \[0, 2\)"):
            RuleBot().act(state, seat=seat)
    assert RuleBot().act(state, seat=state.current_player) in state.legal_moves()


@pytest.mark.skipif(not ray_available(), reason="needs ray (the [distributed] extra)")
def test_a_trainer_sent_where_no_ray_cluster_answers_stops_at_once_and_writes_nothing(
        tmp_path, monkeypatch, capsys):
    """`train-value --backend ray --address` with nothing listening there: one line naming
    the address, exit status 2 from the probe bounded by the timeout (`ray.init`, which has
    no timeout of its own, is never called), no checkpoint and no lock left."""
    import ray
    monkeypatch.setenv(RAY_TIMEOUT_VARIABLE, "1")
    inits = []
    monkeypatch.setattr(ray, "init", lambda *args, **kwargs: inits.append(kwargs))
    out = str(tmp_path / "value.pt")
    try:
        status = main(["train-value", "--blueprint", "simple", "--games-per-step", "2",
                       "--val-games", "4", "--hidden", "16", "--batch-size", "64",
                       "--threads", "1", "--no-progress", "--minutes", "1", "--backend", "ray",
                       "--address", "127.0.0.1:1", "--out", out])
    except SystemExit as stop:
        status = stop.code
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and inits == [], (status, err)
    assert len(err) == 1 and "'127.0.0.1:1'" in err[0] and "within 1 s" in err[0], err
    assert os.listdir(tmp_path) == [] and not ray.is_initialized()
