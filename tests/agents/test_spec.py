"""Blueprint specs (`lbs_pz.agents.load_blueprint`), identities, and the blueprint contract
checked at the boundary (`as_blueprint` / `PythonBlueprint`), with real small classes."""

from __future__ import annotations

import hashlib
import os
import pickle
import random
import textwrap

import numpy as np
import pytest

from tests.helpers.paths import ROOT
from tests.helpers.engine import sample_consistent_hand
from lbs_pz.agents import (
    Blueprint, BlueprintBase, BlueprintError, PythonBlueprint, RandomAgent, RuleBot,
    as_blueprint, blueprint_identity, load_blueprint,
)
from lbs_pz.agents.base import counterfactual_mask
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState

CONFIG = HanabiConfig()
EXAMPLE = os.path.join(ROOT, "examples", "my_blueprint.py")


class FirstLegal:
    name = "first-legal"

    def act(self, state, seat=None):
        return state.view(seat).legal_moves[0]


def batch_of(n=4, seed=0, config=CONFIG):
    return HanabiBatch(config, n, seeds=seed)


def write(tmp_path, text, name="my_bp.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


# --- specs ------------------------------------------------------------------------------------

def test_rule_bot_names():
    for name in ("random", "simple", "weak", "medium", "Strong"):
        bot = load_blueprint(name)
        assert isinstance(bot, RuleBot) and bot.spec == name.lower()
        ident = blueprint_identity(bot)
        assert ident["spec"] == name.lower() and len(ident["fingerprint"]) == 64
    ids = {blueprint_identity(RuleBot(n))["fingerprint"] for n in ("weak", "medium", "strong")}
    assert len(ids) == 3
    assert blueprint_identity(RuleBot("strong")) == blueprint_identity(load_blueprint("strong"))
    with pytest.raises(BlueprintError, match="unknown blueprint 'stronk'.*sb3:PATH"):
        load_blueprint("stronk")
    for bad in ("", "   ", None, "foo:bar", "sb3:", "py:nofile"):
        with pytest.raises(BlueprintError):
            load_blueprint(bad)


def test_shipped_models_are_found_for_the_strong_bot():
    """The shipped belief and value record the strong bot's identity (its name, switches
    and BOTS_VERSION); a change of the bot's moves bumps the version and must re-stamp them."""
    from lbs_pz.models import find_model

    strong = blueprint_identity(load_blueprint("strong"))
    assert find_model("belief", strong, CONFIG) == "belief_strong_2p"
    assert find_model("value", strong, CONFIG) == "value_strong_2p"
    assert find_model("belief", blueprint_identity(RuleBot("simple")), CONFIG) is None
    assert find_model("belief", blueprint_identity(RuleBot("medium")), CONFIG) == \
        "belief_medium_2p"


def test_py_file_spec(tmp_path):
    path = write(tmp_path, """
        class Mine:
            name = "mine"
            def act(self, state, seat=None):
                return state.view(seat).legal_moves[-1]
    """)
    bp = load_blueprint(f"py:{path}:Mine")
    assert isinstance(bp, PythonBlueprint) and isinstance(bp, Blueprint)
    assert bp.name == "mine" and bp.spec == f"py:{os.path.normpath(str(path))}:Mine"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert blueprint_identity(bp) == {"spec": bp.spec, "fingerprint": digest}
    batch = batch_of()
    moves = bp.act_batch(batch)
    assert moves.dtype == np.int64 and all(
        m == batch.get_state(i).legal_moves()[-1] for i, m in enumerate(moves))
    # a changed file is another blueprint
    path.write_text(path.read_text() + "\n# v2\n")
    assert blueprint_identity(load_blueprint(f"py:{path}:Mine"))["fingerprint"] != digest
    # it pickles as its spec (for worker processes)
    again = pickle.loads(pickle.dumps(bp))
    assert isinstance(again, PythonBlueprint) and again.spec == bp.spec


def test_py_module_spec(tmp_path, monkeypatch):
    write(tmp_path, """
        class Bot:
            name = "module-bot"
            def act(self, state, seat=None):
                return state.view(seat).legal_moves[0]
    """, name="lbs_test_user_bots.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    bp = load_blueprint("py:lbs_test_user_bots:Bot")
    assert bp.name == "module-bot" and bp.spec == "py:lbs_test_user_bots:Bot"
    assert bp.fingerprint == hashlib.sha256(
        (tmp_path / "lbs_test_user_bots.py").read_bytes()).hexdigest()
    # an object built in memory gets the identity of its class's source file
    from lbs_test_user_bots import Bot
    assert blueprint_identity(as_blueprint(Bot())) == blueprint_identity(bp)


def test_py_spec_errors_name_the_spec(tmp_path):
    good = write(tmp_path, """
        class Good:
            name = "good"
            def act(self, state, seat=None):
                return state.view(seat).legal_moves[0]
        class NoAct:
            name = "no-act"
        class NoSeat:
            name = "no-seat"
            def act(self, state):
                return 0
        class NeedsArgs:
            def __init__(self, depth):
                self.depth = depth
            def act(self, state, seat=None):
                return 0
    """)
    cases = {
        f"py:{tmp_path / 'missing.py'}:Good": "does not exist",
        f"py:{good}:Nope": r"has no 'Nope' \(classes with act there: Good, NeedsArgs, NoSeat\)",
        f"py:{good}:NoAct": "not a blueprint: it has no act method",
        f"py:{good}:NoSeat": r"does not take the seat; the required signature is "
                             r"`def act\(self, state, seat=None\) -> int`",
        f"py:{good}:NeedsArgs": "instantiated without arguments",
        "py:lbs_pz_no_such_module:Good": "cannot import module",
        f"py:{good}": "expected py:MODULE_OR_FILE.py:CLASS",
    }
    for spec, message in cases.items():
        with pytest.raises(BlueprintError, match=message) as info:
            load_blueprint(spec)
        assert spec in str(info.value)
    broken = write(tmp_path, "def broken(:\n", name="broken.py")
    with pytest.raises(BlueprintError, match="SyntaxError"):
        load_blueprint(f"py:{broken}:X")


def test_missing_weight_files_name_the_spec(tmp_path):
    for spec in (f"sb3:{tmp_path / 'none.zip'}", f"lstm:{tmp_path / 'none.pt'}"):
        with pytest.raises(BlueprintError, match="does not exist") as info:
            load_blueprint(spec)
        assert spec in str(info.value)
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"junk")
    with pytest.raises(BlueprintError, match="junk.pt"):
        load_blueprint(f"lstm:{junk}")


# --- as_blueprint -----------------------------------------------------------------------------

def test_as_blueprint_returns_library_blueprints_unchanged():
    for bp in (RuleBot("weak"), RandomAgent(3)):
        assert as_blueprint(bp) is bp
    wrapped = as_blueprint(FirstLegal())
    assert isinstance(wrapped, PythonBlueprint) and as_blueprint(wrapped) is wrapped
    assert wrapped.deterministic and not wrapped.has_private_memory and not wrapped.has_value
    assert wrapped.value(batch_of()) is None
    with pytest.raises(BlueprintError, match="is a class"):
        as_blueprint(FirstLegal)
    with pytest.raises(BlueprintError, match="not a blueprint"):
        as_blueprint(object())
    with pytest.raises(BlueprintError, match="name must be a non-empty str"):
        PythonBlueprint(FirstLegal(), name="")
    with pytest.raises(TypeError, match="HanabiBatch.from_states"):
        wrapped.act_batch([HanabiState(CONFIG, seed=0)])


def test_wrapper_plays_exactly_like_the_user_class():
    user = FirstLegal()
    bp = as_blueprint(user)
    config = HanabiConfig(players=3)
    worlds = [HanabiState(config, seed=s) for s in range(5)]
    batch = HanabiBatch.from_states(worlds)
    made = bp.rollout(batch, 6)
    for i, w in enumerate(worlds):
        steps = 0
        while steps < 6 and not w.is_terminal:
            w.apply(user.act(w, w.current_player))
            steps += 1
        assert batch.get_state(i).move_history == w.move_history and made[i] == steps
    assert made.max() == 6
    assert bp.act(worlds[0]) == user.act(worlds[0])
    bp.rollout(batch)
    assert batch.terminals().all() and list(bp.act_batch(batch)) == [-1] * 5


# --- the contract, case by case -----------------------------------------------------------------

def test_illegal_move_names_blueprint_position_move_and_legal_moves():
    class Bomber:
        name = "bomber"

        def act(self, state, seat=None):
            return 0 if state.num_moves_played < 3 else 19     # a hint, later without tokens
    state = HanabiState(CONFIG, seed=1)
    bp = as_blueprint(Bomber())
    batch = HanabiBatch.from_states([state])
    with pytest.raises(BlueprintError) as info:
        bp.rollout(batch)
    text = str(info.value)
    assert "blueprint 'bomber'" in text and "illegal move" in text
    assert "seat" in text and "to move" in text and "legal moves: [" in text
    assert "(Discard 0)" in text                                  # the history, by name
    # an impossible move id is named as such
    class OutOfRange(FirstLegal):
        name = "out-of-range"

        def act(self, state, seat=None):
            return 99
    with pytest.raises(BlueprintError, match=r"illegal move 99 \(no such move\)"):
        as_blueprint(OutOfRange()).act_batch(batch_of())


@pytest.mark.parametrize("value, what", [(None, "NoneType"), (True, "bool"), (1.0, "float"),
                                         ("5", "str")])
def test_non_int_moves_are_refused(value, what):
    class Wrong:
        name = "wrong"

        def act(self, state, seat=None):
            return value
    with pytest.raises(BlueprintError, match=f"act returned .*\\({what}\\).*must return a move id"):
        as_blueprint(Wrong()).act_batch(batch_of())


def test_numpy_int_moves_are_fine():
    class Numpy:
        name = "numpy"

        def act(self, state, seat=None):
            return np.int64(state.view(seat).legal_moves[0])
    moves = as_blueprint(Numpy()).act_batch(batch_of())
    assert moves.dtype == np.int64 and (moves >= 0).all()


def test_own_act_batch_is_checked():
    class Shape(FirstLegal):
        name = "shape"

        def act_batch(self, batch):
            return np.zeros((len(batch), 2), dtype=np.int64)

    class Illegal(FirstLegal):
        name = "illegal"

        def act_batch(self, batch):
            return np.full(len(batch), 19)           # reveal rank 5: illegal without tokens
    class Floats(FirstLegal):
        name = "floats"

        def act_batch(self, batch):
            return np.zeros(len(batch))

    class Good(FirstLegal):
        name = "good"

        def act_batch(self, batch):
            out = np.argmax(batch.legal_masks(), axis=1).astype(np.int64)
            out[batch.terminals()] = -1
            return out
    batch = batch_of()
    with pytest.raises(BlueprintError, match=r"'shape': act_batch returned int64 \(4, 2\)"):
        as_blueprint(Shape()).act_batch(batch)
    with pytest.raises(BlueprintError, match="'floats': act_batch returned float64"):
        as_blueprint(Floats()).act_batch(batch)
    # a batch where move 19 (reveal rank 5) is illegal: spend all hint tokens first
    spent = HanabiState(CONFIG, seed=0)
    while spent.information_tokens:
        spent.apply(max(spent.legal_moves()))            # a hint, while there are tokens
    with pytest.raises(BlueprintError, match=r"'illegal': act_batch returned the illegal move 19 "
                                             r".*world 0.*legal moves"):
        as_blueprint(Illegal()).act_batch(HanabiBatch.from_states([spent]))
    good = as_blueprint(Good()).act_batch(batch)
    assert np.array_equal(good, np.argmax(batch.legal_masks(), axis=1))


class _RolloutBase(FirstLegal):
    def act(self, state, seat=None):
        return state.view(seat).legal_moves[0]


def test_own_rollout_is_checked():
    class ReturnsNone(_RolloutBase):
        name = "none"

        def rollout(self, batch, max_moves=-1):
            batch.step(np.argmax(batch.legal_masks(), 1))
            return None

    class Lies(_RolloutBase):
        name = "lies"

        def rollout(self, batch, max_moves=-1):
            batch.step(np.argmax(batch.legal_masks(), 1))
            return np.full(len(batch), 2, dtype=np.int32)

    class Stuck(_RolloutBase):
        name = "stuck"

        def rollout(self, batch, max_moves=-1):
            return np.zeros(len(batch), dtype=np.int32)

    class WrongShape(_RolloutBase):
        name = "wrong-shape"

        def rollout(self, batch, max_moves=-1):
            return np.zeros(3, dtype=np.int32)

    class Short(_RolloutBase):
        name = "short"

        def rollout(self, batch, max_moves=-1):
            batch.step(np.argmax(batch.legal_masks(), 1))
            return np.ones(len(batch), dtype=np.int32)

    cases = [(ReturnsNone, 5, "returned None"),
             (Lies, 5, "says world 0 made 2 moves, but it made 1"),
             (Stuck, 5, "says world 0 made|did not advance"),
             (WrongShape, 5, r"returned int32 \(3,\)"),
             (Short, 5, "stopped world 0 after 1 moves, before 5 moves"),
             (Short, -1, "before the end of the game")]
    for cls, depth, message in cases:
        with pytest.raises(BlueprintError, match=f"blueprint '{cls.name}': rollout.*({message})"):
            as_blueprint(cls()).rollout(batch_of(), depth)

    class Honest(_RolloutBase):
        name = "honest"

        def rollout(self, batch, max_moves=-1):
            made = np.zeros(len(batch), dtype=np.int32)
            while not batch.terminals().all() and (max_moves < 0 or made.max() < max_moves):
                moves = np.argmax(batch.legal_masks(), 1)
                running = ~batch.terminals()
                moves[~running] = -1
                batch.step(moves)
                made[running] += 1
            return made
    bp = as_blueprint(Honest())
    assert list(bp.rollout(batch_of(), 3)) == [3] * 4
    assert list(bp.rollout(batch_of(), 0)) == [0] * 4


def test_stuck_rollout_is_named():
    class Stuck(_RolloutBase):
        name = "stuck"

        def rollout(self, batch, max_moves=-1):
            return np.zeros(len(batch), dtype=np.int32)
    with pytest.raises(BlueprintError, match="did not advance world 0"):
        as_blueprint(Stuck()).rollout(batch_of(), 4)


def test_value_is_checked():
    class Valued(FirstLegal):
        name = "valued"

        def __init__(self, out):
            self.out = out

        def value(self, batch):
            return self.out(batch)
    batch = batch_of()
    good = as_blueprint(Valued(lambda b: np.full(len(b), 12.5)))
    assert good.has_value and good.value(batch).dtype == np.float32
    assert list(good.value(batch)) == [12.5] * 4
    for out, message in ((lambda b: None, "returned None although has_value"),
                         (lambda b: np.zeros((len(b), 1)), r"float64 \(4, 1\)"),
                         (lambda b: np.array(["a"] * len(b)), "<U1"),
                         (lambda b: np.zeros(len(b), dtype=bool), "bool"),
                         (lambda b: np.full(len(b), np.nan), "non-finite")):
        with pytest.raises(BlueprintError, match=f"blueprint 'valued': value.*{message}"):
            as_blueprint(Valued(out)).value(batch)


def test_checks_stop_after_the_first_calls():
    class Lies(_RolloutBase):
        name = "lies"

        def rollout(self, batch, max_moves=-1):
            batch.step(np.argmax(batch.legal_masks(), 1))
            return np.ones(len(batch), dtype=np.int32)
    bp = PythonBlueprint(Lies(), check_calls=0)
    assert list(bp.rollout(batch_of(), 5)) == [1] * 4          # trusted from the start
    with pytest.raises(BlueprintError):
        PythonBlueprint(Lies(), check_calls=1).rollout(batch_of(), 5)


# --- the generic counterfactual filter ------------------------------------------------------------

def test_generic_counterfactual_mask_matches_acting_in_each_world():
    class Slow(BlueprintBase):                     # the weak bot without its C filter
        name = "weak-py"

        def act(self, state, seat=None):
            return RuleBot("weak").act(state, seat)
    state = HanabiState(CONFIG, seed=4)
    for _ in range(6):
        state.apply(RuleBot("weak").act(state))
    seat = 1 - state.current_player
    rng = random.Random(0)
    hands = [sample_consistent_hand(state, seat, rng) for _ in range(60)]
    hands = np.array([h for h in hands if h is not None][:40], dtype=np.int64)
    assert len(hands) >= 20
    move = RuleBot("weak").act(state)
    fast = counterfactual_mask(RuleBot("weak"), state, seat, move, hands)
    generic = counterfactual_mask(Slow(), state, seat, move, hands)
    assert np.array_equal(fast, generic) and generic.any()


# --- the README example -----------------------------------------------------------------------

def test_example_blueprint_loads_by_spec_and_plays_well():
    bp = load_blueprint(f"py:{EXAMPLE}:HintPlayDiscard")
    assert bp.name == "hint-play-discard"
    batch = batch_of(40, seed=11)
    while not batch.terminals().all():
        batch.step(bp.act_batch(batch))
    assert batch.scores().mean() > 14          # about 17 over 1,000 games (report)
