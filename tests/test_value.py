"""The centralized value function used to bootstrap LBS-k."""

import numpy as np
import pytest

from lbs_pz.agents import RuleBot
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.search.agents import LBSAgent
from lbs_pz.search.beliefs import GroundedBelief
from lbs_pz.search.value import CentralValue, load_value, value_features
from lbs_pz.models.checkpoint import CheckpointError
from lbs_pz.train.value import ValueTrainConfig, generate_positions, train


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("value") / "v.pt")
    result = train(ValueTrainConfig(steps=40, games_per_step=32, val_games=60, out=path),
                   log=lambda *_: None)
    return path, result


def test_features_hold_the_observation_and_the_own_hand():
    state = HanabiState(HanabiConfig(), seed=2)
    feats = value_features([state])
    E = state.config.encoding_size
    np.testing.assert_array_equal(feats[0, :E], state.encode(state.current_player))
    hand = feats[0, E:].reshape(5, 25)
    assert hand.argmax(axis=1).tolist() == state.hand(state.current_player)


def test_positions_carry_each_games_final_score():
    x, y = generate_positions(HanabiConfig(), "strong", 4, seed=9)
    scores = RuleBot("strong").selfplay(HanabiConfig(), 4, seed=9)["score"]
    assert set(np.unique(y)) <= set(scores.tolist()) and len(x) == len(y) > 100


def test_training_beats_its_first_validation_and_round_trips(trained):
    path, result = trained
    first, last = result["history"][0][1], result["val_mse"]
    assert last < first
    net, config, ckpt = load_value(path)
    assert config == HanabiConfig() and ckpt["info"]["steps"] == 40
    value = CentralValue(path)
    states = [HanabiState(HanabiConfig(), seed=s) for s in range(5)]
    estimates = value(states)
    assert estimates.shape == (5,) and np.all((estimates > 5) & (estimates < 30))


def test_bad_checkpoints_are_clear_errors(tmp_path):
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="not a readable lbs_pz value"):
        load_value(str(junk))
    with pytest.raises(CheckpointError, match="does not exist"):
        load_value(str(tmp_path / "missing.pt"))


def test_lbs_k_bootstraps_with_the_value(trained):
    path, _ = trained
    bot = RuleBot("strong")
    agent = LBSAgent(bot, GroundedBelief(), value=CentralValue(path), rollouts=16, depth=2, seed=0)
    state = HanabiState(HanabiConfig(), seed=4)
    for _ in range(6):
        move = agent.act(state) if state.current_player == 0 else bot.act(state)
        assert move in state.legal_moves()
        state.apply(move)
    # Means are value estimates, not integer scores, once rollouts stop before the end.
    assert any(np.any(r.means % 1 != 0) for r in agent.history if r.rollouts)
