"""Hardening of the blueprint boundary, the model loaders and search's estimates.

- a user's blueprint cannot corrupt its caller: `act` receives a copy of the state, a batch
  changed from inside the blueprint (even the one being rolled out) is a BlueprintError,
  and a call that never returns ends as a BlueprintError after `time_limit` seconds;
- results that cannot be true are refused: a checkpoint with NaN or infinite weights, or
  an architecture above the caps or that does not fit its weights, is a CheckpointError
  before the network is allocated, and a non-finite estimate inside search is a counted
  fallback to the blueprint's move.

What could hang or exhaust memory runs in a child process (tests/helpers/isolated.py).
"""
from __future__ import annotations

import os
import re
import threading
import time
import warnings

import numpy as np
import pytest

from tests.helpers.paths import ROOT
from tests.helpers.isolated import assert_raises_cleanly, assert_runs_cleanly
from tests.helpers.waiting import HANG_SECONDS
from lbs_pz.agents import BlueprintError, RuleBot, as_blueprint
from lbs_pz.agents.python_blueprint import DEFAULT_TIME_LIMIT, PythonBlueprint
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState, Move, encode_move
from lbs_pz.search.agents import LBSAgent
from lbs_pz.search.beliefs import make_belief
from lbs_pz.search.rollout_search import FEW_WORLDS, NON_FINITE, search_move

CHECKPOINT_ERROR = "lbs_pz.models.checkpoint.CheckpointError"
BLUEPRINT_ERROR = "lbs_pz.agents.base.BlueprintError"
CFG = HanabiConfig()
DISCARD_0 = encode_move(CFG, Move("discard", card_index=0))


class FirstLegal:
    name = "first-legal"

    def act(self, state, seat=None):
        return state.legal_moves()[0]


class Cheat:
    """Spends a hint token in the state it is given, then discards: illegal at 8 tokens."""
    name = "cheat"

    def act(self, state, seat=None):
        state.apply(state.legal_moves()[-1])
        return DISCARD_0


class Meddler(FirstLegal):
    """Chooses as FirstLegal, then scribbles over the state it was given."""
    name = "meddler"

    def act(self, state, seat=None):
        move = state.legal_moves()[0]
        for _ in range(2):
            if not state.is_terminal:
                state.apply(state.legal_moves()[-1])
        return move


def _snapshot(state):
    return (state.move_history, state.deck, state.hands, state.information_tokens)


def _batch_snapshot(batch):
    return (batch.public_history_keys(), batch.hands().tolist(), batch.generation)


# --- act receives a copy ------------------------------------------------------------------------

def test_act_that_changes_its_state_is_judged_on_the_callers_untouched_state():
    state = HanabiState(CFG, seed=1)
    assert state.information_tokens == 8 and not state.is_legal(DISCARD_0)
    before = _snapshot(state)
    with pytest.raises(BlueprintError, match=r"'cheat': act returned the illegal move 0 "
                                             r"\(Discard 0\).*0 moves"):
        as_blueprint(Cheat()).act(state)
    assert _snapshot(state) == before
    batch = HanabiBatch(CFG, 3, seeds=1)
    before = _batch_snapshot(batch)
    for call in (lambda bp: bp.act_batch(batch), lambda bp: bp.rollout(batch, 4)):
        with pytest.raises(BlueprintError, match="illegal move 0"):
            call(as_blueprint(Cheat()))
        assert _batch_snapshot(batch) == before


def test_a_blueprint_that_scribbles_on_its_copy_changes_nothing():
    state = HanabiState(CFG, seed=2)
    before = _snapshot(state)
    assert as_blueprint(Meddler()).act(state) == as_blueprint(FirstLegal()).act(state)
    assert _snapshot(state) == before
    a, b = HanabiBatch(CFG, 4, seeds=3), HanabiBatch(CFG, 4, seeds=3)
    assert as_blueprint(Meddler()).rollout(a, 6).tolist() == \
        as_blueprint(FirstLegal()).rollout(b, 6).tolist()
    assert a.public_history_keys() == b.public_history_keys()


def test_search_with_a_scribbling_blueprint_sees_the_same_worlds():
    """Rollouts inside search hand the blueprint copies too: a blueprint that changes the
    states it is given searches exactly as the same blueprint that does not."""
    state = _position()
    before = _snapshot(state)
    results = []
    for obj in (Meddler(), FirstLegal()):
        agent = LBSAgent(obj, belief=make_belief("grounded"), depth=-1, rollouts=8, seed=1,
                         pruning="off")
        results.append(agent.search(state))
    assert _snapshot(state) == before
    assert results[0].move == results[1].move
    np.testing.assert_array_equal(results[0].means, results[1].means)


# --- a batch changed from inside the blueprint --------------------------------------------------

class Resetter(FirstLegal):
    """Resets the batch it was handed earlier from inside act."""
    name = "resetter"

    def __init__(self, batch):
        self.batch = batch

    def act(self, state, seat=None):
        self.batch.reset(7)
        return state.legal_moves()[0]


class OwnRollout(FirstLegal):
    def __init__(self, reset):
        self.reset = reset

    def rollout(self, batch, max_moves=-1):
        if self.reset:
            batch.reset(3)
        batch.step(np.argmax(batch.legal_masks(), 1))
        return np.ones(len(batch), dtype=np.int32)


class Stepper(FirstLegal):
    name = "stepper"

    def act_batch(self, batch):
        out = np.argmax(batch.legal_masks(), 1)
        batch.step(out)
        return np.argmax(batch.legal_masks(), 1)


def _played(n=4, moves=2):
    batch = HanabiBatch(CFG, n, seeds=1)
    for _ in range(moves):
        batch.step(np.argmax(batch.legal_masks(), 1))
    return batch


def test_a_batch_reset_inside_the_rollout_is_refused():
    batch = _played()
    with pytest.raises(BlueprintError, match="'resetter': the batch it was given changed "
                                             "while its act \\(in a rollout\\) ran"):
        as_blueprint(Resetter(batch)).rollout(batch, 5)
    batch = _played()
    with pytest.raises(BlueprintError, match="changed while its act ran"):
        as_blueprint(Resetter(batch)).act_batch(batch)
    # a user's own rollout: every call is checked, trusted or not
    for check_calls in (4, 0):
        bp = PythonBlueprint(OwnRollout(reset=True), check_calls=check_calls)
        with pytest.raises(BlueprintError, match="left world 0 in a position that does not "
                                                 "continue its game.*reset"):
            bp.rollout(_played(), 1)
        assert PythonBlueprint(OwnRollout(reset=False), check_calls=check_calls) \
            .rollout(_played(), 1).tolist() == [1] * 4
    batch = _played()
    with pytest.raises(BlueprintError, match="'stepper': the batch it was given changed while "
                                             "its act_batch ran"):
        as_blueprint(Stepper()).act_batch(batch)


def test_a_value_that_changes_the_batch_is_refused():
    class Meddling(FirstLegal):
        name = "meddling"

        def value(self, batch):
            batch.step(np.argmax(batch.legal_masks(), 1))
            return np.zeros(len(batch))
    for check_calls in (4, 0):
        with pytest.raises(BlueprintError, match="'meddling': the batch it was given changed "
                                                 "while its value ran"):
            PythonBlueprint(Meddling(), check_calls=check_calls).value(_played())


def test_the_batch_counts_its_changes():
    batch = HanabiBatch(CFG, 2, seeds=1)
    start = batch.generation
    batch.legal_masks(), batch.encode(), batch.get_state(0), batch.copy()
    assert batch.generation == start
    batch.step(np.argmax(batch.legal_masks(), 1))
    batch.set_state(0, batch.get_state(1))
    RuleBot("strong").rollout(batch, 2)
    assert batch.generation == start + 3
    with pytest.raises(AttributeError):
        batch.generation = 0


# --- time limit ---------------------------------------------------------------------------------

def test_time_limit_is_checked():
    assert PythonBlueprint(FirstLegal()).time_limit == DEFAULT_TIME_LIMIT
    assert PythonBlueprint(FirstLegal(), time_limit=None).time_limit is None
    for bad in (0, -1, float("nan"), float("inf"), "1", True):
        with pytest.raises(ValueError, match="time_limit must be a positive number"):
            PythonBlueprint(FirstLegal(), time_limit=bad)


def test_a_loaded_blueprint_keeps_its_time_limit_when_pickled():
    import pickle

    from lbs_pz.agents.python_blueprint import load_python_blueprint
    example = os.path.join(ROOT, "examples", "my_blueprint.py")
    spec = f"py:{example}:HintPlayDiscard"
    assert load_python_blueprint(spec).time_limit == DEFAULT_TIME_LIMIT
    bp = pickle.loads(pickle.dumps(load_python_blueprint(spec, time_limit=5)))
    assert bp.time_limit == 5.0 and bp.spec == spec


def test_an_act_that_never_returns_ends_as_a_blueprint_error():
    """A call that never returns ends as a BlueprintError once its time limit has passed
    (never before it: how long after depends on the machine's load, and only a hang fails),
    and a timer someone else set before is back afterwards, still pending, with its own
    handler."""
    assert_runs_cleanly(f"""
import signal, time, numpy as np
from lbs_pz.agents import BlueprintError
from lbs_pz.agents.python_blueprint import PythonBlueprint
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState
class Forever:
    name = "forever"
    def act(self, state, seat=None):
        while True:
            try:
                pass
            except Exception:        # the interruption is not an Exception
                pass
class Slow:
    name = "slow"
    def act(self, state, seat=None):
        return state.legal_moves()[0]
    def rollout(self, batch, max_moves=-1):
        while True:
            pass
    def value(self, batch):
        while True:
            pass
fired = []
def mine(signum, frame):
    fired.append(signum)
signal.signal(signal.SIGALRM, mine)
OTHER = {10 * HANG_SECONDS}                       # someone else's timer: pending throughout
signal.setitimer(signal.ITIMER_REAL, OTHER)
state = HanabiState(HanabiConfig(), seed=1)
calls = (lambda: PythonBlueprint(Forever(), time_limit=1).act(state),
         lambda: PythonBlueprint(Forever(), time_limit=0.5).rollout(HanabiBatch(HanabiConfig(), 2)),
         lambda: PythonBlueprint(Slow(), time_limit=0.5).rollout(HanabiBatch(HanabiConfig(), 2)),
         lambda: PythonBlueprint(Slow(), time_limit=0.5).value(HanabiBatch(HanabiConfig(), 2)))
for call, what, limit in zip(calls, ("act", "act", "rollout", "value"), (1, 0.5, 0.5, 0.5)):
    start = time.monotonic()
    try:
        call()
        raise SystemExit("no error")
    except BlueprintError as err:
        took = time.monotonic() - start
        assert took >= limit, took                # the limit, not less
        assert f"{{what}} did not return within its time limit" in str(err), err
    assert signal.getsignal(signal.SIGALRM) is mine
    left = signal.getitimer(signal.ITIMER_REAL)[0]
    assert OTHER - {HANG_SECONDS} < left <= OTHER, left   # the other timer is back, not lost
signal.setitimer(signal.ITIMER_REAL, 0.2)
while not fired:                                  # until it fires (a hang: the child's deadline)
    time.sleep(0.01)
assert fired == [signal.SIGALRM], fired           # and still the other handler's
""")


def test_an_endless_blueprint_inside_search_ends_as_a_blueprint_error():
    assert_raises_cleanly("""
import warnings
from lbs_pz.agents.python_blueprint import PythonBlueprint
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.search.agents import LBSAgent
from lbs_pz.search.beliefs import make_belief
class LoopsInRollouts:
    name = "loops-in-rollouts"
    calls = 0
    def act(self, state, seat=None):
        self.calls += 1
        while self.calls > 3:
            pass
        return state.legal_moves()[0]
agent = LBSAgent(PythonBlueprint(LoopsInRollouts(), time_limit=1),
                 belief=make_belief("grounded"), depth=-1, rollouts=8)
agent.search(HanabiState(HanabiConfig(), seed=1))
""", BLUEPRINT_ERROR, "did not return within its time limit of 1 s")


def test_off_the_main_thread_a_late_call_is_refused_when_it_returns():
    """Off the main thread no timer can stop a call: one that returns after its limit (a
    sleep of 1 s, ten times the limit, however loaded the machine) is refused then, saying
    how long it took."""
    class Sleepy(FirstLegal):
        def act(self, state, seat=None):
            time.sleep(1.0)
            return super().act(state, seat)
    bp = PythonBlueprint(Sleepy(), time_limit=0.1)
    errors = []

    def run():
        try:
            bp.act(HanabiState(CFG, seed=1))
        except BlueprintError as err:
            errors.append(str(err))
    thread = threading.Thread(target=run)
    thread.start()
    thread.join(HANG_SECONDS)
    assert len(errors) == 1, errors
    took = re.search(r"act took ([0-9.]+) s, more than its time limit of 0\.1 s", errors[0])
    assert took and float(took.group(1)) >= 1.0, errors[0]


# --- checkpoints: non-finite weights, caps, shapes ---------------------------------------------

def _tiny_checkpoints(folder):
    """A tiny value, belief and public-LSTM checkpoint in `folder`: {kind: path}."""
    import torch

    from lbs_pz.agents.public_lstm import PublicLSTMNet
    from lbs_pz.models.checkpoint import save_checkpoint
    from lbs_pz.search.beliefs.model import BeliefNet, BeliefNetConfig, save_belief
    from lbs_pz.search.value import ValueNetConfig, make_value_net, save_value

    torch.manual_seed(0)
    paths = {k: os.path.join(folder, f"{k}.pt") for k in ("value", "belief", "public_lstm")}
    value_cfg = ValueNetConfig(inputs=CFG.encoding_size + 5 * 25, hidden=8)
    save_value(paths["value"], make_value_net(value_cfg), value_cfg, CFG, None)
    save_belief(paths["belief"], BeliefNet(BeliefNetConfig(embed=8, hidden=8, decoder=8),
                                           CFG), CFG)
    arch = dict(pub_dim=533, obs_dim=658, players=2, num_moves=20, hidden=8)
    save_checkpoint(paths["public_lstm"], "public_lstm", CFG, arch,
                    PublicLSTMNet(**arch).state_dict())
    return paths


LOADERS = {"value": "from lbs_pz.search.value import load_value as load",
           "belief": "from lbs_pz.search.beliefs.model import load_belief as load",
           "public_lstm": "from lbs_pz.agents.public_lstm import PublicLSTMBlueprint\n"
                          "load = PublicLSTMBlueprint.load"}


def _rewrite(path, out, change):
    import torch
    ckpt = torch.load(path, weights_only=True)
    change(ckpt)
    torch.save(ckpt, out)
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("tiny"))
    return folder, _tiny_checkpoints(folder)


def test_tiny_checkpoints_load(tiny):
    from lbs_pz.agents.public_lstm import PublicLSTMBlueprint
    from lbs_pz.search.beliefs.model import load_belief
    from lbs_pz.search.value import load_value
    _, paths = tiny
    load_value(paths["value"]), load_belief(paths["belief"])
    PublicLSTMBlueprint.load(paths["public_lstm"])


@pytest.mark.parametrize("kind", ["value", "belief", "public_lstm"])
@pytest.mark.parametrize("bad", ["nan", "inf"])
def test_non_finite_weights_are_refused_on_load(tiny, kind, bad):
    from lbs_pz.agents.public_lstm import PublicLSTMBlueprint
    from lbs_pz.models.checkpoint import CheckpointError
    from lbs_pz.search.beliefs.model import load_belief
    from lbs_pz.search.value import load_value
    folder, paths = tiny
    key = {"value": "2.weight", "belief": "lstm.weight_hh_l0",
           "public_lstm": "a_head.weight"}[kind]

    def poison(ckpt):
        ckpt["weights"][key].view(-1)[3] = float(bad)
    path = _rewrite(paths[kind], os.path.join(folder, f"{kind}_{bad}.pt"), poison)
    load = {"value": load_value, "belief": load_belief,
            "public_lstm": PublicLSTMBlueprint.load}[kind]
    with pytest.raises(CheckpointError, match=f"{kind}_{bad}.pt.*weight '{key}' holds 1 NaN "
                                              f"or infinite value"):
        load(path)


@pytest.mark.parametrize("kind", ["value", "belief", "public_lstm"])
@pytest.mark.parametrize("bad", [3e38, -2e6])
def test_absurd_finite_weights_are_refused_on_load(tiny, kind, bad):
    """A finite weight no trained network reaches (above MAX_ABS_WEIGHT) is a forged or
    corrupted file, refused like NaN; a weight just under the bound loads."""
    from lbs_pz.agents.public_lstm import PublicLSTMBlueprint
    from lbs_pz.models.checkpoint import MAX_ABS_WEIGHT, CheckpointError
    from lbs_pz.search.beliefs.model import load_belief
    from lbs_pz.search.value import load_value
    folder, paths = tiny
    key = {"value": "2.weight", "belief": "lstm.weight_hh_l0",
           "public_lstm": "a_head.weight"}[kind]
    load = {"value": load_value, "belief": load_belief,
            "public_lstm": PublicLSTMBlueprint.load}[kind]
    for value, name in ((bad, f"{kind}_absurd.pt"), (MAX_ABS_WEIGHT / 2, f"{kind}_large.pt")):
        def poison(ckpt):
            ckpt["weights"][key].view(-1)[3] = value
        path = _rewrite(paths[kind], os.path.join(folder, name), poison)
        if abs(value) > MAX_ABS_WEIGHT:
            with pytest.raises(CheckpointError, match=f"{name}.*weight '{key}' holds a value "
                                                      f"of magnitude.*MAX_ABS_WEIGHT"):
                load(path)
        else:
            load(path)


@pytest.mark.parametrize("kind, field, value, cap", [
    ("belief", "hidden", 6000, 4096),
    ("belief", "layers", 1000, 16),
    ("value", "inputs", 10**9, 1 << 16),
    ("public_lstm", "value_lstm", 100_000, 4096),
])
def test_architectures_above_the_caps_are_refused_before_allocating(tiny, kind, field, value,
                                                                     cap):
    folder, paths = tiny
    path = _rewrite(paths[kind], os.path.join(folder, f"{kind}_{field}.pt"),
                    lambda ckpt: ckpt["architecture"].__setitem__(field, value))
    assert_raises_cleanly(f"""
import resource
{LOADERS[kind]}
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    load({path!r})
finally:
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown < 100_000, f"peak RSS grew by {{grown}} kB"
""", CHECKPOINT_ERROR, f"architecture field '{field}' = {value:,} is above the loader's "
                        f"cap of {cap:,}")


@pytest.mark.parametrize("kind, change, match", [
    # under the caps, but the header does not fit the weights: refused before allocating
    ("belief", dict(hidden=4000), "weight 'lstm.weight_ih_l0' has shape \\(32, 8\\), but the "
                                  "architecture makes it \\(16000, 8\\)"),
    ("public_lstm", dict(pub_dim=60000, hidden=4000), "describes a public-LSTM net of "
                                                     "[0-9,]+ parameters, above the loader's cap"),
    ("value", dict(hidden=4096), "weight '0.weight' has shape \\(8, 783\\)"),
    ("public_lstm", dict(bogus=1), "does not make a public-LSTM net: TypeError"),
])
def test_headers_that_do_not_fit_their_weights_are_refused_before_allocating(tiny, kind,
                                                                            change, match):
    folder, paths = tiny
    name = "_".join(change)
    path = _rewrite(paths[kind], os.path.join(folder, f"{kind}_fit_{name}.pt"),
                    lambda ckpt: ckpt["architecture"].update(change))
    assert_raises_cleanly(f"""
import re, resource
{LOADERS[kind]}
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    load({path!r})
except Exception as err:
    assert re.search({match!r}, str(err)), str(err)
    raise
finally:
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown < 100_000, f"peak RSS grew by {{grown}} kB"
""", CHECKPOINT_ERROR, "")


def test_the_caps_hold_every_shipped_model():
    import torch

    from lbs_pz.models.checkpoint import MODELS_DIR, check_architecture, shipped_names
    for name in shipped_names():
        ckpt = torch.load(os.path.join(MODELS_DIR, name + ".pt"), weights_only=True)
        check_architecture(ckpt["architecture"], name)


# --- non-finite estimates inside search ---------------------------------------------------------

class NanValue:
    def __call__(self, worlds):
        return np.full(len(worlds), np.nan, dtype=np.float32)


class LateNanValue(FirstLegal):
    """A user's blueprint whose value turns NaN once its checks are over."""
    name = "late-nan"
    has_value = True

    def __init__(self):
        self.calls = 0

    def value(self, batch):
        self.calls += 1
        return np.full(len(batch), np.nan if self.calls > 1 else 10.0)


def _position():
    state = HanabiState(CFG, seed=3)
    for _ in range(4):
        state.apply(RuleBot("strong").act(state))
    return state


@pytest.mark.parametrize("make", ["value", "blueprint"])
def test_a_non_finite_estimate_in_search_is_a_counted_fallback(make):
    state = _position()
    if make == "value":
        blueprint, value = RuleBot("strong"), NanValue()
    else:
        blueprint, value = PythonBlueprint(LateNanValue(), check_calls=1), None
        blueprint.value(HanabiBatch(CFG, 1))                  # its one checked call
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        agent = LBSAgent(blueprint, belief=make_belief("grounded"), value=value, depth=2,
                         rollouts=16)
        result = agent.search(state)
    assert result.fallback and result.fallback_reason == NON_FINITE
    assert result.move == result.blueprint_move == blueprint.act(state)
    assert not result.deviated
    assert agent.fallbacks == 1 and agent.fallback_reasons == {NON_FINITE: 1}
    assert any("non-finite estimate" in str(w.message) for w in caught)


def test_too_few_worlds_is_a_fallback_of_its_own_reason():
    state = _position()
    result = search_move(state, state.current_player, RuleBot("strong"),
                         np.zeros((0, 5), dtype=np.int64), min_worlds=4)
    assert result.fallback and result.fallback_reason == FEW_WORLDS
    assert result.move == result.blueprint_move
