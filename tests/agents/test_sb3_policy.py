"""SB3 policies (MaskablePPO, PPO, DQN) as Blueprints: `lbs_pz.agents.sb3_policy`.

Tiny policies are really trained here (a few thousand env steps), saved with SB3's own
`save`, and loaded back through the adapter's safe loader."""

from __future__ import annotations

import base64
import io
import json
import pickle
import zipfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

from lbs_pz.agents import Blueprint  # noqa: E402
from lbs_pz.agents.sb3_policy import SB3Blueprint  # noqa: E402
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState  # noqa: E402
from lbs_pz.search.beliefs import GroundedBelief  # noqa: E402
from lbs_pz.models.checkpoint import CheckpointError  # noqa: E402

CONFIG = HanabiConfig(players=2)
SMALL = dict(net_arch=[32, 32])


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def maskable_zip(tmp_path_factory):
    """A MaskablePPO trained for 2,048 steps on the native VecEnv, saved with model.save."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from lbs_pz.wrappers.vec_env import HanabiVecEnv

    env = HanabiVecEnv(16, config=CONFIG, seed=0)
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=256, n_epochs=2,
                                    gamma=0.98, seed=0, device="cpu", policy_kwargs=SMALL)
    model.learn(2048)
    path = tmp_path_factory.mktemp("sb3") / "maskable.zip"
    model.save(path)
    return path, model


def _self_play_env():
    from stable_baselines3.common.vec_env import DummyVecEnv

    from lbs_pz.envs.self_play import HanabiSelfPlayEnv

    return DummyVecEnv([lambda: HanabiSelfPlayEnv(players=2)])


def positions(blueprint, games=4, seed=0):
    """Non-terminal states met while the blueprint plays `games` games."""
    out = []
    for g in range(games):
        state = HanabiState(CONFIG, seed=seed + g)
        while not state.is_terminal:
            out.append(state.clone())
            state.apply(blueprint.act(state))
    return out


# --- MaskablePPO ---------------------------------------------------------------------------

def test_loads_a_saved_maskable_ppo_and_acts_like_sb3(maskable_zip):
    path, model = maskable_zip
    blueprint = SB3Blueprint.load(path)
    assert isinstance(blueprint, Blueprint)
    assert blueprint.deterministic and not blueprint.has_private_memory and blueprint.has_value
    assert blueprint.algorithm == "MaskablePPO" and blueprint.gamma == pytest.approx(0.98)
    assert (blueprint.encoding_size, blueprint.num_moves) == (658, 20)
    states = positions(blueprint, games=3)
    obs = np.stack([s.encode() for s in states])
    masks = np.stack([s.legal_mask() for s in states]).astype(bool)
    expected, _ = model.predict(obs, action_masks=masks, deterministic=True)
    batch = HanabiBatch.from_states(states)
    assert np.array_equal(blueprint.act_batch(batch), expected)
    from_object = SB3Blueprint(model)          # an already-loaded model works the same
    assert np.array_equal(from_object.act_batch(batch), expected)
    assert np.array_equal(SB3Blueprint(model.policy).act_batch(batch), expected)
    with pytest.raises(TypeError, match="HanabiBatch.from_states"):
        blueprint.act_batch(states)


def test_spec_and_identity(maskable_zip):
    import hashlib

    from lbs_pz.agents import blueprint_identity, load_blueprint

    path, model = maskable_zip
    blueprint = load_blueprint(f"sb3:{path}")
    assert isinstance(blueprint, SB3Blueprint) and blueprint.spec == f"sb3:{path}"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert blueprint_identity(blueprint) == {"spec": f"sb3:{path}", "fingerprint": digest}
    in_memory = blueprint_identity(SB3Blueprint(model))      # no file: a hash of the weights
    assert in_memory["fingerprint"] != digest and in_memory["spec"].startswith("sb3:")
    assert blueprint_identity(SB3Blueprint(model))["fingerprint"] == in_memory["fingerprint"]


def test_only_legal_moves_and_no_peeking(maskable_zip):
    blueprint = SB3Blueprint.load(maskable_zip[0])
    rng = np.random.default_rng(0)
    checked = 0
    for state in positions(blueprint, games=4, seed=10):
        move = blueprint.act(state)
        assert state.is_legal(move)
        seat = state.current_player
        for hand in GroundedBelief().reset(state, seat).sample(2, rng):
            other = state.clone()
            other.set_hand(seat, [int(c) for c in hand])   # re-deals the deck as well
            assert blueprint.act(other) == move
            checked += 1
    assert checked > 50
    with pytest.raises(ValueError, match="turn"):
        state = HanabiState(CONFIG, seed=1)
        blueprint.act(state, 1 - state.current_player)


def test_masks_illegal_moves_even_when_the_policy_prefers_them(maskable_zip):
    blueprint = SB3Blueprint.load(maskable_zip[0])
    with torch.no_grad():                         # make "hint" moves the network's favourites
        blueprint.policy.action_net.bias[10:] += 1e3
    state = HanabiState(CONFIG, seed=2)
    while state.information_tokens > 0 and not state.is_terminal:
        state.apply(blueprint.act(state))           # hints until the tokens run out
    assert not state.is_terminal and not any(state.legal_mask()[10:])
    assert blueprint.act(state) < 10 and state.is_legal(blueprint.act(state))


def test_batched_rollout_equals_stepping_each_world(maskable_zip, monkeypatch):
    blueprint = SB3Blueprint.load(maskable_zip[0])
    worlds = [HanabiState(CONFIG, seed=s) for s in range(6)]
    stepped = [w.clone() for w in worlds]
    for w in stepped:
        while not w.is_terminal:
            w.apply(blueprint.act(w))
    forwards, original = [], blueprint._scores

    def counted(obs):                               # records the rows of every forward pass
        forwards.append(len(obs))
        return original(obs)

    monkeypatch.setattr(blueprint, "_scores", counted)
    batch = HanabiBatch.from_states(worlds)
    made = blueprint.rollout(batch)
    assert [batch.get_state(i).move_history for i in range(6)] == [w.move_history for w in stepped]
    assert list(made) == [w.num_moves_played for w in stepped]
    assert len(forwards) == max(made) and forwards[0] == len(worlds)   # one forward per step
    assert np.array_equal(batch.scores(), [w.score for w in stepped])
    assert np.array_equal(blueprint.act_batch(batch), -np.ones(len(worlds), dtype=np.int64))
    # k moves only
    partial = HanabiBatch.from_states(worlds)
    assert list(blueprint.rollout(partial, max_moves=3)) == [3] * len(worlds)
    assert [partial.get_state(i).move_history for i in range(6)] == \
        [w.move_history[:3] for w in stepped]


def test_value_is_the_score_plus_the_critic(maskable_zip):
    path, model = maskable_zip
    blueprint = SB3Blueprint.load(path)
    states = positions(blueprint, games=2, seed=20)
    values = blueprint.value(HanabiBatch.from_states(states))
    assert values.dtype == np.float32 and values.shape == (len(states),)
    assert np.all(np.isfinite(values))
    obs = torch.as_tensor(np.stack([s.encode() for s in states]))
    with torch.no_grad():
        critic = model.policy.predict_values(obs).numpy().ravel()
    scores = np.array([s.score for s in states])
    np.testing.assert_allclose(values, scores + critic, rtol=1e-5, atol=1e-5)
    assert np.all(np.abs(values - scores) < 25)       # score points, not a probability or logit
    done = HanabiBatch.from_states(states[:3])
    blueprint.rollout(done)
    assert done.terminals().all() and np.array_equal(blueprint.value(done), done.scores())


def test_lbs_runs_on_top_of_it(maskable_zip):
    from lbs_pz.search.agents import LBSAgent

    blueprint = SB3Blueprint.load(maskable_zip[0])
    agent = LBSAgent(blueprint, GroundedBelief(), rollouts=16, depth=1, seed=0)
    assert agent.value == blueprint.value
    state = HanabiState(CONFIG, seed=5)
    for _ in range(4):
        if state.is_terminal:
            break
        move = agent.act(state)
        assert state.is_legal(move)
        state.apply(move)


def test_wrong_game_size_is_a_clear_error(maskable_zip):
    blueprint = SB3Blueprint.load(maskable_zip[0])
    with pytest.raises(ValueError, match="observations of size 658"):
        blueprint.act(HanabiState(HanabiConfig(players=3), seed=0))


# --- PPO and DQN (trained without masks) -----------------------------------------------------

def test_ppo_and_dqn_zips(tmp_path):
    from stable_baselines3 import DQN, PPO

    ppo = PPO("MlpPolicy", _self_play_env(), n_steps=128, batch_size=64, n_epochs=1, seed=0,
              device="cpu", policy_kwargs=SMALL)
    ppo.learn(256)
    dqn = DQN("MlpPolicy", _self_play_env(), learning_starts=64, buffer_size=1000,
              train_freq=4, seed=0, device="cpu", gamma=0.95,
              policy_kwargs=dict(net_arch=[32], activation_fn=torch.nn.Tanh))
    dqn.learn(256)
    for model, algorithm in ((ppo, "PPO"), (dqn, "DQN")):
        path = tmp_path / f"{algorithm}.zip"
        model.save(path)
        blueprint = SB3Blueprint.load(path)
        assert blueprint.algorithm == algorithm and blueprint.gamma == pytest.approx(model.gamma)
        worlds = HanabiBatch(CONFIG, 4, seeds=0)
        blueprint.rollout(worlds)                    # batch.step raises on an illegal move
        assert worlds.terminals().all()
        states = HanabiBatch.from_states(positions(blueprint, games=2))
        assert np.array_equal(blueprint.act_batch(states), SB3Blueprint(model).act_batch(states))
        values = blueprint.value(states)
        assert np.all(np.isfinite(values)) and np.all(np.abs(values) < 50)
    # DQN's value: score + the largest *legal* Q
    state = states.get_state(len(states) // 2)
    with torch.no_grad():
        q = dqn.policy.q_net(torch.as_tensor(state.encode()[None])).numpy()[0]
    best = q[state.legal_mask().astype(bool)].max()
    assert blueprint.value(HanabiBatch.from_states([state]))[0] == \
        pytest.approx(state.score + best, abs=1e-4)


# --- bad files ----------------------------------------------------------------------------------

def _rewrite_zip(src, dst, replace):
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w") as b:
        for name in a.namelist():
            b.writestr(name, replace.get(name, a.read(name)))


class _Boom:
    def __reduce__(self):
        return (exec, ("raise SystemExit('code from the file ran')",))


def test_bad_files_are_clear_errors(maskable_zip, tmp_path):
    good = maskable_zip[0]
    with pytest.raises(CheckpointError, match="does not exist"):
        SB3Blueprint.load(tmp_path / "missing.zip")
    truncated = tmp_path / "truncated.zip"
    truncated.write_bytes(good.read_bytes()[:5000])
    with pytest.raises(CheckpointError, match="truncated or not a zip"):
        SB3Blueprint.load(truncated)
    text = tmp_path / "notes.zip"
    text.write_text("hello")
    with pytest.raises(CheckpointError, match="not a zip"):
        SB3Blueprint.load(text)
    foreign = tmp_path / "foreign.zip"
    with zipfile.ZipFile(foreign, "w") as z:
        z.writestr("readme.txt", "not a model")
    with pytest.raises(CheckpointError, match="not a Stable-Baselines3 model zip"):
        SB3Blueprint.load(foreign)
    torch_file = tmp_path / "weights.pt"
    torch.save({"w": torch.zeros(2)}, torch_file)     # a torch zip, not an SB3 one
    with pytest.raises(CheckpointError):
        SB3Blueprint.load(torch_file)

    # Code in policy.pth is refused (weights_only), never run.
    evil = tmp_path / "evil_weights.zip"
    buf = io.BytesIO()
    torch.save({"x": _Boom()}, buf)
    _rewrite_zip(good, evil, {"policy.pth": buf.getvalue()})
    with pytest.raises(CheckpointError, match="weights_only"):
        SB3Blueprint.load(evil)

    # A pickled policy class that is not an allowed SB3 class is refused, never unpickled.
    with zipfile.ZipFile(good) as z:
        data = json.loads(z.read("data"))
    data["policy_class"][":serialized:"] = base64.b64encode(pickle.dumps(_Boom())).decode()
    evil_class = tmp_path / "evil_class.zip"
    _rewrite_zip(good, evil_class, {"data": json.dumps(data)})
    with pytest.raises(CheckpointError, match="not supported"):
        SB3Blueprint.load(evil_class)

    # policy_kwargs pickled with an object in it: the pickle is disassembled, never loaded.
    data["policy_class"] = json.loads(zipfile.ZipFile(good).read("data"))["policy_class"]
    data["policy_kwargs"] = {":type:": "<class 'dict'>", "net_arch": [32, 32], "x": "<Boom>",
                             ":serialized:": base64.b64encode(pickle.dumps(
                                 {"net_arch": [32, 32], "x": _Boom()})).decode()}
    evil_kwargs = tmp_path / "evil_kwargs.zip"
    _rewrite_zip(good, evil_kwargs, {"data": json.dumps(data)})
    with pytest.raises(CheckpointError, match="builtins.exec"):
        SB3Blueprint.load(evil_kwargs)

    # Weights that do not fit the architecture in `data`.
    with zipfile.ZipFile(good) as z:
        data = json.loads(z.read("data"))
    data["policy_kwargs"]["net_arch"] = [16]
    mismatch = tmp_path / "mismatch.zip"
    _rewrite_zip(good, mismatch, {"data": json.dumps(data)})
    with pytest.raises(CheckpointError, match="does not fit"):
        SB3Blueprint.load(mismatch)

    with pytest.raises(TypeError, match="SB3 zip"):
        SB3Blueprint(42)
