"""The centralized value function used to bootstrap LBS-k."""

import numpy as np
import pytest

from tests.helpers.paths import ROOT
from lbs_pz.agents import RuleBot
from lbs_pz.engine import HanabiBatch, HanabiConfig, HanabiState
from lbs_pz.engine.seeds import TRAIN, deal_seeds
from lbs_pz.models.checkpoint import CheckpointError, CheckpointMismatchError
from lbs_pz.search.agents import LBSAgent
from lbs_pz.search.beliefs import GroundedBelief
from lbs_pz.search.value import CentralValue, load_value, value_features
from lbs_pz.train.games import generate_positions, join_positions
from lbs_pz.train.value import ValueTrainConfig, train_value

from tests.helpers.scripts import load_script


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("value") / "v.pt")
    result = train_value(ValueTrainConfig(steps=40, games_per_step=32, val_games=60, out=path,
                                          progress=False), log=lambda *_: None)
    return path, result


def test_features_hold_the_observation_and_the_own_hand():
    state = HanabiState(HanabiConfig(), seed=2)
    feats = value_features([state])
    E = state.config.encoding_size
    np.testing.assert_array_equal(feats[0, :E], state.encode(state.current_player))
    hand = feats[0, E:].reshape(5, 25)
    assert hand.argmax(axis=1).tolist() == state.hand(state.current_player)


def test_positions_carry_each_games_final_score():
    bot = RuleBot("strong")
    x, y = generate_positions(HanabiConfig(), bot, 4, seed=9, first_game=3)
    games = HanabiBatch(HanabiConfig(), 4, seeds=deal_seeds(TRAIN, 9, 3, 4))  # the same deals
    moves = bot.rollout(games)
    assert len(x) == len(y) == moves.sum() and x.shape[1] == 658 + 5 * 25
    assert sorted(np.unique(y).tolist()) == sorted(set(games.scores().tolist()))
    # the first position of each game is its deal, seen by its first player
    first = HanabiBatch(HanabiConfig(), 4, seeds=deal_seeds(TRAIN, 9, 3, 4))
    assert (value_features(first)[:, :658] == x[:4, :658]).all()


def test_off_policy_positions_follow_one_random_move_and_do_not_depend_on_chunks():
    config, bot = HanabiConfig(), RuleBot("strong")
    on = generate_positions(config, bot, 16, seed=9, with_moves=True)
    same = generate_positions(config, bot, 16, seed=9, with_moves=True, off_policy=0.0)
    assert all(np.array_equal(a, b) for a, b in zip(on, same))
    off = generate_positions(config, bot, 16, seed=9, with_moves=True, off_policy=1.0)
    # the positions before each game's random move are dropped
    assert 0 < len(off[0]) < len(on[0])
    # and the random moves change how games end: some final scores are not the bot's
    assert set(np.unique(off[1]).tolist()) != set(np.unique(on[1]).tolist())
    # game i's draws are its own: two chunks give the positions of the 16 games at once
    chunks = [generate_positions(config, bot, n, seed=9, first_game=f, with_moves=True,
                                 off_policy=1.0) for f, n in ((0, 5), (5, 11))]
    assert all(np.array_equal(a, b) for a, b in zip(join_positions(chunks), off))
    with pytest.raises(ValueError, match="off_policy"):
        generate_positions(config, bot, 2, seed=9, off_policy=1.5)


def test_training_beats_its_first_validation_and_round_trips(trained):
    path, result = trained
    first, last = result["history"][0][1], result["val_mse"]
    assert last < first
    net, config, ckpt = load_value(path)
    assert config == HanabiConfig() and ckpt["info"]["steps"] == 40
    assert ckpt["kind"] == "value" and ckpt["trained_for"]["spec"] == "strong"
    assert ckpt["info"]["command"].startswith("lbs-pz train-value --steps 40")
    assert "TRAIN stream" in ckpt["info"]["deals"]
    value = CentralValue(path, blueprint=RuleBot("strong"))
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
    with pytest.raises(CheckpointError, match="holds a 'belief' model, not a 'value'"):
        load_value("belief_strong_2p")


def test_value_for_another_blueprint_or_variant_is_refused(trained):
    path, _ = trained
    with pytest.raises(CheckpointMismatchError, match="trained for blueprint 'strong'.*'medium'"
                       ".*lbs-pz train-value --blueprint SPEC.*allow_mismatch"):
        CentralValue(path, blueprint=RuleBot("medium"))
    value = CentralValue(path, blueprint=RuleBot("medium"), allow_mismatch=True)
    assert value.mismatches and value.trained_for["spec"] == "strong"
    small = HanabiConfig(max_information_tokens=7)     # same cards, another encoding
    with pytest.raises(CheckpointMismatchError, match="trained for the game 2p 5-card"):
        CentralValue(path)(HanabiBatch(small, 2, seeds=[1, 2]))
    with pytest.raises(CheckpointMismatchError, match="cannot|reads the features"):
        CentralValue(path, allow_mismatch=True)(HanabiBatch(small, 2, seeds=[1, 2]))
    # who starts changes nothing the value reads
    CentralValue(path)(HanabiBatch(HanabiConfig(random_start_player=True), 2, seeds=[1, 2]))


def test_shipped_value_is_found_for_the_blueprint_it_was_trained_for_only():
    value = CentralValue(blueprint=RuleBot("strong"))
    assert value.trained_for["spec"] == "strong" and value.checkpoint_path.endswith(
        "value_strong_2p.pt")
    weak = CentralValue(blueprint=RuleBot("weak"))
    assert weak.trained_for["spec"] == "weak" and weak.checkpoint_path.endswith(
        "value_weak_2p.pt")
    with pytest.raises(CheckpointMismatchError, match="no shipped value.*'simple'"):
        CentralValue(blueprint=RuleBot("simple"))


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


def test_value_ranking_pairs_the_claim_and_the_rollouts_in_the_same_worlds():
    """docs/experiments/value_ranking.py: with k past the end of every game the value is never
    used, so LBS-k's claimed gains equal the gains to the end world for world (same
    hands, same decks): every value error is exactly 0. At k = 1 they differ."""
    import os
    import torch
    value_ranking = load_script("docs/experiments/value_ranking.py")

    spec = "lstm:conventions_expert_value_2p"
    quiet = dict(log=lambda *_: None, per_game=6)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)            # small batches: one thread, even beside a busy core
    try:
        never = value_ranking.decisions(spec, "learned", 200, 3, 2, **quiet)
        once = value_ranking.decisions(spec, "learned", 1, 3, 2, **quiet)
        # a user's blueprint without a value: LBS-k rolls out to the end, nothing to rank
        example = os.path.join(ROOT, "examples", "my_blueprint.py")
        with pytest.warns(UserWarning, match="has no value"), \
                pytest.raises(ValueError, match="no value of its own"):
            value_ranking.decisions(f"py:{example}:HintPlayDiscard", "grounded", 1, 2, 1,
                                    **quiet)
    finally:
        torch.set_num_threads(threads)
    assert len(never) == 12
    for kinds, claimed, true, err_se in never:
        assert len(kinds) == len(claimed) == len(true) == len(err_se) > 0
        np.testing.assert_array_equal(claimed, true)
        assert not err_se.any()
    assert [k for k, *_ in once] == [k for k, *_ in never]       # the same decisions
    assert any(not np.array_equal(c, t) for _, c, t, _ in once)
    lines = []
    value_ranking.report(once, 0.05, log=lines.append)
    assert lines[-1].startswith("Per decision (") and "| all |" in "\n".join(lines)
