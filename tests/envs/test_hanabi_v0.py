"""The AEC environment against PettingZoo's own test suite, the engine and bad input.

PettingZoo's max_cycles_test does not apply: Hanabi games are bounded by the rules and
the environment takes no max_cycles argument (as hanabi_v5)."""

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import lbs_pz  # noqa: F401  (registers the environments)
from lbs_pz.engine import HanabiConfig, HanabiState
from lbs_pz.envs import hanabi_v0

VARIANTS = [
    dict(players=2), dict(players=3), dict(players=4), dict(players=5),
    dict(players=2, hand_size=6), dict(players=2, hand_size=7, max_information_tokens=4),
]


@pytest.mark.parametrize("kwargs", VARIANTS)
def test_pettingzoo_api_and_seed(kwargs):
    api_test(hanabi_v0.env(**kwargs), num_cycles=200)
    seed_test(lambda: hanabi_v0.env(**kwargs), num_cycles=200)


def test_render_modes():
    render_test(lambda render_mode=None: hanabi_v0.env(render_mode=render_mode))
    text = hanabi_v0.env(render_mode="ansi")
    text.reset(seed=0)
    assert "Fireworks" in text.render()


def test_registered_with_pettingzoo():
    env = pettingzoo.make("aec", "lbs_pz/Hanabi-v0", players=3)
    env.reset(seed=0)
    assert env.agents == ["player_0", "player_1", "player_2"]
    assert (env.observation_space("player_0")["observation"].shape
            == (HanabiConfig(players=3).encoding_size,))


def test_spaces_match_hanabi_v5_layout():
    env = hanabi_v0.env()
    space = env.observation_space("player_0")
    assert space["observation"].shape == (658,) and space["observation"].dtype == np.float32
    assert space["action_mask"].shape == (20,) and space["action_mask"].dtype == np.int8
    assert env.action_space("player_1").n == 20


def test_same_seed_and_actions_match_the_engine():
    env = hanabi_v0.raw_env(players=3)
    env.reset(seed=123)
    state = HanabiState(HanabiConfig(players=3), seed=123)
    rng = np.random.default_rng(0)
    while not state.is_terminal:
        agent = env.agent_selection
        assert agent == f"player_{state.current_player}"
        for seat, name in enumerate(env.possible_agents):
            obs = env.observe(name)
            np.testing.assert_array_equal(obs["observation"], state.encode(seat))
        np.testing.assert_array_equal(env.observe(agent)["action_mask"], state.legal_mask())
        assert env.infos[agent]["legal_moves"] == state.legal_moves()
        move = int(rng.choice(state.legal_moves()))
        before = state.score
        state.apply(move)
        env.step(move)
        assert env.rewards[agent] == state.score - before
        assert all(info["score"] == state.score for info in env.infos.values())
    assert all(env.terminations.values())


def test_last_life_costs_the_whole_score():
    env = hanabi_v0.raw_env(max_life_tokens=1)
    env.reset(seed=5)
    game = env.game
    # Play safe cards while we can, then misplay on purpose.
    while game.score == 0:
        playable = [i for i, card in enumerate(game.hand(game.current_player))
                    if game.fireworks[card // 5] == card % 5]
        move = game.config.hand_size + playable[0] if playable else game.legal_moves()[-1]
        env.step(move)
    score = game.score
    bad = [i for i, card in enumerate(game.hand(game.current_player))
           if game.fireworks[card // 5] != card % 5]
    env.step(game.config.hand_size + bad[0])
    assert game.is_terminal and game.score == 0
    assert all(r == -score for r in env.rewards.values())


def test_bad_input_is_a_clear_error():
    with pytest.raises(TypeError, match="unexpected keyword"):
        hanabi_v0.env(colours=5)
    with pytest.raises(ValueError, match="render_mode"):
        hanabi_v0.env(render_mode="video")
    with pytest.raises(ValueError, match="players"):
        hanabi_v0.env(players=6)
    raw = hanabi_v0.raw_env()
    raw.reset(seed=0)
    with pytest.raises(ValueError, match=r"illegal action 0 \(Discard 0\).*legal actions"):
        raw.step(0)  # discarding with all information tokens is illegal
    with pytest.raises(ValueError, match="illegal action 99"):
        raw.step(99)
    wrapped = hanabi_v0.env()
    wrapped.reset(seed=0)
    with pytest.raises(ValueError, match="illegal action 99"):
        wrapped.step(99)  # out of the action space: the same ValueError as raw_env


def test_illegal_action_through_env_ends_the_game():
    env = hanabi_v0.env()
    env.reset(seed=0)
    env.step(0)  # discarding with all information tokens is illegal
    assert all(env.terminations.values())
    assert env.rewards["player_0"] == -1 and env.rewards["player_1"] == 0


def test_stepping_a_finished_game():
    env = hanabi_v0.raw_env()
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    while not env.game.is_terminal:
        env.step(int(rng.choice(env.game.legal_moves())))
    for agent in list(env.agents):
        assert env.agent_selection in env.agents
        env.step(None)
    assert env.agents == []


def test_performance_benchmark_runs_fast(capsys):
    """PettingZoo's own performance_benchmark (5 s of random play through env())."""
    from pettingzoo.test import performance_benchmark

    performance_benchmark(hanabi_v0.env())
    out = capsys.readouterr().out
    line = next(row for row in out.splitlines() if "turns per second" in row)
    turns_per_second = float(line.split()[0])
    assert turns_per_second > 2_000  # hanabi_v5 manages ~1,800-4,800 here
