"""RLlib PPO modules as Blueprints (`lbs_pz.agents.rllib_policy`) and the multi-agent PPO
run that makes them (`lbs_pz.train.rllib_ppo`, what examples/rllib_ppo.py runs).

A tiny module is really trained here (2 colours x 3 ranks, 3-card hands, 2 iterations of
256 env steps, sampling in this process) and loaded back through the safe loader."""

from __future__ import annotations

import os
import pickle
import random
import shutil

import numpy as np
import pytest

from lbs_pz.optional import available, rllib_available

if not rllib_available():
    pytest.skip("ray.rllib (or torch) is not importable: the [rllib] extra is not installed",
                allow_module_level=True)

from tests.helpers.engine import play_random, snapshot  # noqa: E402

from lbs_pz.agents import Blueprint, BlueprintError, blueprint_identity, spec_help  # noqa: E402
from lbs_pz.agents import load_blueprint  # noqa: E402
from lbs_pz.agents.rllib_policy import (ACTION_MASK, OBSERVATIONS, STATE_FILE,  # noqa: E402
                                        MaskedPPOTorchRLModule, RLlibBlueprint, rllib_spaces)
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState  # noqa: E402
from lbs_pz.search.agents import LBSAgent  # noqa: E402
from lbs_pz.train.rllib_ppo import RLlibPPORun, make_env, train  # noqa: E402

TINY = dict(players=2, colors=2, ranks=3, hand_size=3)
CONFIG = HanabiConfig(**TINY)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(folder, summary, progress lines, TensorBoard folder or "") of a 2-iteration run on
    the tiny game."""
    out = str(tmp_path_factory.mktemp("rllib") / "module")
    run = RLlibPPORun(**TINY, iterations=2, env_runners=0, train_batch_size=256,
                      minibatch_size=64, num_epochs=1, hidden=(32, 32), seed=0)
    lines = []
    board = str(tmp_path_factory.mktemp("board")) if available("tensorboard") else ""
    summary = train(run, out, progress=lines.append, tensorboard=board)
    return out, summary, lines, board


@pytest.fixture(scope="module")
def blueprint(trained):
    return load_blueprint(f"rllib:{trained[0]}")


def positions(n=40, seed=0):
    """Positions of the tiny game after random legal moves, the terminal ones included."""
    rng = random.Random(seed)
    return [play_random(HanabiState(CONFIG, seed=s), rng.randrange(0, 30), rng)
            for s in range(n)]


# --- the run -----------------------------------------------------------------------------

def test_a_tiny_run_reports_each_iteration_and_saves_a_module(trained):
    out, summary, lines, _ = trained
    assert len(lines) == 2 and all("steps/s" in line and "mean score" in line
                                   for line in lines), lines
    assert summary["iterations"] == 2 and summary["env_steps"] >= 512
    # the score is player_0's return; the others' leave out rewards before their first move
    score, returns = summary["mean_score"], summary["episode_return"]
    assert 0 <= score <= CONFIG.colors * CONFIG.ranks
    assert score <= returns + 1e-9 <= CONFIG.players * score + 2e-9
    assert summary["spec"] == f"rllib:{os.path.normpath(out)}"
    assert {"metadata.json", "class_and_ctor_args.pkl", STATE_FILE, "summary.json"} <= \
        set(os.listdir(out))


def test_the_env_creator_gives_rllib_the_masked_observation():
    env = make_env(TINY)
    obs, _ = env.reset(seed=3)
    (agent, first), = obs.items()
    assert set(first) == {OBSERVATIONS, ACTION_MASK}
    assert first[OBSERVATIONS].shape == (CONFIG.encoding_size,)
    assert first[ACTION_MASK].dtype == np.float32
    assert first[ACTION_MASK].shape == (CONFIG.num_moves,)
    assert env.observation_spaces[agent].contains(first)
    state = HanabiState(CONFIG, seed=3)
    assert np.array_equal(first[OBSERVATIONS], state.encode(0))
    assert np.array_equal(first[ACTION_MASK], state.legal_mask())
    obs, rewards, *_ = env.step({agent: int(np.flatnonzero(first[ACTION_MASK])[0])})
    assert list(obs) == ["player_1"] and list(rewards) == ["player_1"]


# --- the loader --------------------------------------------------------------------------

def test_the_loaded_module_is_the_trained_one(trained, blueprint):
    """The safe loader gives the module RLlib's own (pickle-running) loader gives."""
    rl_module = pytest.importorskip("ray.rllib.core.rl_module.rl_module")
    out, summary, _, _ = trained
    assert isinstance(blueprint, RLlibBlueprint) and isinstance(blueprint, Blueprint)
    assert blueprint.deterministic and not blueprint.has_private_memory and blueprint.has_value
    assert (blueprint.encoding_size, blueprint.num_moves) == (CONFIG.encoding_size,
                                                              CONFIG.num_moves)
    assert blueprint.game == CONFIG and blueprint.gamma == pytest.approx(0.99)
    reference = rl_module.RLModule.from_checkpoint(out)         # a file made by this test
    assert RLlibBlueprint(reference).fingerprint == blueprint.fingerprint == summary["fingerprint"]
    batch = HanabiBatch.from_states([s for s in positions() if not s.is_terminal])
    assert np.array_equal(RLlibBlueprint(reference).act_batch(batch), blueprint.act_batch(batch))


def test_act_batch_is_act_per_game_and_only_legal(blueprint):
    states = positions()
    assert any(s.is_terminal for s in states) and not all(s.is_terminal for s in states)
    batch = HanabiBatch.from_states(states)
    moves = blueprint.act_batch(batch)
    assert moves.dtype == np.int64 and moves.shape == (len(states),)
    for state, move in zip(states, moves):
        assert move == blueprint.act(state)
        assert (move == -1) if state.is_terminal else (move in state.legal_moves())


def test_it_never_changes_what_it_is_given(blueprint):
    states = [s for s in positions() if not s.is_terminal]
    before = [snapshot(s) for s in states]
    for state in states:
        blueprint.act(state)
    assert [snapshot(s) for s in states] == before
    batch = HanabiBatch.from_states(states)
    generation, encoded = batch.generation, batch.encode().copy()
    blueprint.act_batch(batch)
    blueprint.value(batch)
    assert batch.generation == generation and np.array_equal(batch.encode(), encoded)


def test_rollout_plays_to_the_end_and_value_is_score_plus_critic(blueprint):
    batch = HanabiBatch(CONFIG, 16, seeds=np.arange(16))
    values = blueprint.value(batch)
    assert values.dtype == np.float32 and values.shape == (16,) and np.isfinite(values).all()
    one = batch.copy()
    made = blueprint.rollout(one, 1)
    assert (made == 1).all()
    blueprint.rollout(batch)
    assert batch.terminals().all()
    assert np.array_equal(blueprint.value(batch), batch.scores().astype(np.float32))


def test_identity_is_stable_across_loads_and_layouts(trained, blueprint, tmp_path):
    out = trained[0]
    again = load_blueprint(f"rllib:{out}")
    assert blueprint_identity(again) == blueprint_identity(blueprint) == \
        {"spec": f"rllib:{os.path.normpath(out)}", "fingerprint": blueprint.fingerprint}
    # the same module inside an Algorithm checkpoint's layout: same weights, same fingerprint
    holder = tmp_path / "algo" / "learner_group" / "learner" / "rl_module"
    shutil.copytree(out, holder / "shared")
    (holder / "class_and_ctor_args.pkl").write_bytes(b"")        # the MultiRLModule's own
    nested = load_blueprint(f"rllib:{tmp_path / 'algo'}")
    assert nested.fingerprint == blueprint.fingerprint
    shutil.copytree(out, holder / "other")
    with pytest.raises(BlueprintError, match="holds 2 modules"):
        load_blueprint(f"rllib:{tmp_path / 'algo'}")


def test_lbs_searches_over_it(blueprint):
    state = next(s for s in positions(seed=1) if not s.is_terminal)
    lbs = LBSAgent(blueprint, rollouts=8, depth=1)
    assert lbs.act(state) in state.legal_moves()


def test_modules_of_rllib_s_own_classes_load_too(tmp_path):
    """RLlib's example ActionMaskingTorchRLModule (rebuilt as MaskedPPOTorchRLModule), its
    DefaultPPOTorchRLModule over a flat observation, and an inference-only module (no
    critic: no value)."""
    masking = pytest.importorskip("ray.rllib.examples.rl_modules.classes.action_masking_rlm")
    ppo = pytest.importorskip("ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module")
    spaces = pytest.importorskip("gymnasium.spaces")
    observation_space, action_space = rllib_spaces(CONFIG)
    small = {"fcnet_hiddens": [16], "vf_share_layers": False}
    modules = {
        "example": masking.ActionMaskingTorchRLModule(
            observation_space=observation_space, action_space=action_space, model_config=small),
        "flat": ppo.DefaultPPOTorchRLModule(
            observation_space=spaces.Box(0.0, 1.0, (CONFIG.encoding_size,), np.float32),
            action_space=action_space, model_config=small),
        "inference": MaskedPPOTorchRLModule(
            observation_space=observation_space, action_space=action_space,
            inference_only=True, model_config=small),
    }
    states = [s for s in positions(seed=2) if not s.is_terminal]
    for name, module in modules.items():
        module.save_to_path(str(tmp_path / name))
        loaded = load_blueprint(f"rllib:{tmp_path / name}")
        assert loaded.masked == (name != "flat") and loaded.game is None
        batch = HanabiBatch.from_states(states)
        moves = loaded.act_batch(batch)
        assert np.array_equal(moves, RLlibBlueprint(module).act_batch(batch)), name
        assert all(m in s.legal_moves() for m, s in zip(moves, states))
        assert loaded.has_value == (name != "inference")
        assert (loaded.value(batch) is None) == (name == "inference")


# --- what it refuses ---------------------------------------------------------------------

def test_a_folder_that_is_not_a_module_checkpoint_is_refused(trained, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file.pkl").write_bytes(b"x")
    for path, words in ((tmp_path / "missing", "does not exist"),
                        (tmp_path / "file.pkl", "is a file"),
                        (tmp_path / "empty", "not an RLlib module checkpoint")):
        with pytest.raises(BlueprintError, match=words):
            load_blueprint(f"rllib:{path}")
    broken = tmp_path / "broken"
    shutil.copytree(trained[0], broken)
    (broken / STATE_FILE).write_bytes(b"not a pickle")
    with pytest.raises(BlueprintError, match="not an RLlib module file"):
        load_blueprint(f"rllib:{broken}")


class _RunsCode:
    def __reduce__(self):
        return (os.system, ("touch RAN",))


def test_a_pickle_that_would_run_code_is_refused_unrun(trained, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("class_and_ctor_args.pkl", STATE_FILE):
        folder = tmp_path / name
        shutil.copytree(trained[0], folder)
        (folder / name).write_bytes(pickle.dumps({"class": _RunsCode()}))
        with pytest.raises(BlueprintError, match="posix.system|os.system|nt.system"):
            load_blueprint(f"rllib:{folder}")
        assert not (tmp_path / "RAN").exists()


def test_weights_that_do_not_fit_or_are_not_finite_are_refused(trained, tmp_path):
    with open(os.path.join(trained[0], STATE_FILE), "rb") as fh:
        state = pickle.load(fh)                       # a file made by this test
    key = next(k for k in state if k.endswith("weight"))
    for name, change, words in (("nan", lambda w: w * np.nan, "NaN or infinite"),
                                ("shape", lambda w: w[:-1], "shape")):
        folder = tmp_path / name
        shutil.copytree(trained[0], folder)
        with open(folder / STATE_FILE, "wb") as fh:
            pickle.dump({**state, key: change(state[key])}, fh)
        with pytest.raises(BlueprintError, match=words):
            load_blueprint(f"rllib:{folder}")


def test_a_game_of_other_sizes_or_another_variant_is_refused(blueprint):
    standard = HanabiState(HanabiConfig(), seed=0)
    with pytest.raises(BlueprintError, match="658 and 20"):
        blueprint.act(standard)
    with pytest.raises(BlueprintError, match="658 and 20"):
        blueprint.act_batch(HanabiBatch.from_state(standard, 2))
    other = HanabiConfig(**TINY, max_information_tokens=7, max_life_tokens=4)   # same sizes
    assert (other.encoding_size, other.num_moves) == (CONFIG.encoding_size, CONFIG.num_moves)
    with pytest.raises(BlueprintError, match="trained for 2p 3-card 2x3"):
        blueprint.act(HanabiState(other, seed=0))


def test_the_spec_help_names_rllib():
    assert "rllib:DIR" in spec_help()


def test_each_iteration_reaches_tensorboard(trained):
    """`train(..., tensorboard=DIR)`: each iteration's history entry as "rllib/KEY" scalars
    at its number, read back with TensorBoard's own reader."""
    _, summary, _, board = trained
    if not board:
        pytest.skip("tensorboard is not installed (the [tensorboard] extra)")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(board, size_guidance={"scalars": 0})
    acc.Reload()
    for key in ("env_steps", "seconds", "episode_return", "score"):
        points = [(e.step, e.value) for e in acc.Scalars(f"rllib/{key}")]
        want = [(i + 1, entry[key]) for i, entry in enumerate(summary["history"])]
        assert [p[0] for p in points] == [w[0] for w in want]
        assert np.allclose([p[1] for p in points], [w[1] for w in want], rtol=1e-6)
